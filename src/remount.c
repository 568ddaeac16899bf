/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * remount.c - replacing a dead awfs mount; see remount.h for the invariants.
 *
 * The order at start-up: remount_find_dead() (before the source is opened:
 * the dead mount covers it), then the new session's remount_mount() in
 * place of libfuse's own mount; at the end, after fuse_session_unmount(),
 * remount_unmount().
 */
#include "config.h"

#include "remount.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "mountinfo.h"
#include "util.h"

/*
 * Open the directory that a dead mount at @abs covers, without ever
 * uncovering it here: a child process detaches the dead mount in a private
 * mount namespace of its own, opens the directory beneath, and passes the fd
 * back over a socket. Returns 0 and sets *fd, or an errno value.
 */
static int open_beneath(const char *abs, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char c = 0;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	int sv[2], status, err = 0;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return errno;
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (pid == 0) {
		int dfd;

		close(sv[0]);
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    umount2(abs, MNT_DETACH) < 0 ||
		    (dfd = open(abs, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			_exit(1);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &dfd, sizeof(int));
		_exit(sendmsg(sv[1], &msg, 0) == 1 ? 0 : 1);
	}
	close(sv[1]);
	if (recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC) != 1 || !(cm = CMSG_FIRSTHDR(&msg)) ||
	    cm->cmsg_type != SCM_RIGHTS)
		err = EIO;
	else
		memcpy(fd, CMSG_DATA(cm), sizeof(int));
	close(sv[0]);
	waitpid(pid, &status, 0);
	return err;
}

/*
 * Not being able to tell where the mount point is (getcwd() failed) or what
 * is mounted there is "no dead mount": realpath() or the mount itself then
 * fails on its own terms.
 */
int remount_find_dead(const char *mountpoint, char *abs, size_t size, bool *dead, int *beneath)
{
	char cwd[PATH_MAX];
	struct awfs_mount m;
	struct statvfs sv;
	int err = 0;

	*dead = false;
	*beneath = -1;
	if (mountpoint[0] == '/')
		snprintf(abs, size, "%s", mountpoint);
	else if (getcwd(cwd, sizeof(cwd)))
		snprintf(abs, size, "%s/%s", cwd, mountpoint);
	else
		return 0;
	if (mountinfo_find(abs, &m) != 0)
		return 0;
	if (strcmp(m.fstype, "fuse.awfs") == 0) {
		/* statfs always reaches the daemon: no kernel cache answers it */
		if (statvfs(abs, &sv) < 0 && errno == ENOTCONN) {
			err = open_beneath(abs, beneath);
			if (err)
				fprintf(stderr, "awfs: cannot open the directory under the dead awfs mount at %s: %s\n",
					abs, strerror(err));
			*dead = !err;
		} else {
			fprintf(stderr, "awfs: an awfs is already mounted at %s (unmount it first: fusermount3 -u %s)\n",
				abs, abs);
			err = EBUSY;
		}
	}
	mountinfo_free(&m);
	return err;
}

/*
 * Mount on top of a dead awfs mount ourselves. libfuse's own mount would
 * stat() the mount point first, which a dead mount answers with ENOTCONN;
 * mount(2) resolves the path without asking the dead daemon anything.
 * Sets *out to the /dev/fuse fd of the new mount.
 */
static int mount_over_dead(const char *mnt, const char *src, int *out)
{
	char opts[256], *fsname;
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC), err = 0;

	if (fd < 0) {
		err = errno;
		fprintf(stderr, "awfs: cannot open /dev/fuse: %s\n", strerror(err));
		return err;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=%u,group_id=%u,default_permissions%s",
		 fd, (unsigned)getuid(), (unsigned)getgid(), geteuid() == 0 ? ",allow_other" : "");
	fsname = util_xstrdup(src);
	for (char *p = fsname; *p; p++)
		if (*p == ',')
			*p = '_';
	if (mount(fsname, mnt, "fuse.awfs", MS_NOSUID | MS_NODEV, opts) < 0) {
		err = errno;
		fprintf(stderr, "awfs: cannot mount on %s: %s\n", mnt, strerror(err));
		close(fd);
	} else {
		*out = fd;
	}
	free(fsname);
	return err;
}

/*
 * The /dev/fuse fd goes to libfuse as "/dev/fd/N", its way of serving a
 * mount made by someone else. EIO when libfuse refuses it (it says why).
 */
int remount_mount(struct fuse_session *se, const char *mnt, const char *src)
{
	char devfd[32];
	int fd = -1, err = mount_over_dead(mnt, src, &fd);

	if (err)
		return err;
	snprintf(devfd, sizeof(devfd), "/dev/fd/%d", fd);
	/* libfuse serves it but will not unmount it: remount_unmount() does */
	fcntl(fd, F_SETFD, 0);
	if (fuse_session_mount(se, devfd) != 0) {
		umount2(mnt, MNT_DETACH);
		return EIO;
	}
	return 0;
}

/* After our own unmount: take away the dead awfs mount we were stacked on. */
static void remove_dead_beneath(const char *mnt)
{
	struct awfs_mount m;
	struct statvfs sv;

	if (mountinfo_find(mnt, &m) != 0)
		return;
	if (strcmp(m.fstype, "fuse.awfs") == 0 && statvfs(mnt, &sv) < 0 && errno == ENOTCONN &&
	    umount2(mnt, MNT_DETACH) == 0)
		log_msg(AWFS_LOG_INFO, "removed the dead awfs mount that was beneath %s", mnt);
	mountinfo_free(&m);
}

void remount_unmount(const char *mnt)
{
	/* our mount, made by mount_over_dead(), then the dead one under it */
	if (umount2(mnt, 0) < 0 && errno != EINVAL)
		umount2(mnt, MNT_DETACH);
	remove_dead_beneath(mnt);
}
