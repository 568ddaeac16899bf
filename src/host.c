/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host.c - the only file that touches the host tree.
 *
 * Why /proc/self/fd: an O_PATH fd cannot be read, written, chmod'ed or
 * xattr'ed directly. Re-opening or naming it through /proc/self/fd/N reaches
 * exactly the object the fd pins (the magic link is bound to the fd, not to
 * a path), so no name on the host is resolved again and a symlink planted by
 * someone else after the lookup cannot redirect us. The directory fd for
 * /proc/self/fd is opened once at start, so a later chroot or mount
 * namespace change cannot swap it.
 */
#include "host.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "mountinfo.h"

static int proc_fd = -1;
static bool is_root;
static __thread bool switched;	/* this thread runs as a caller (host_as_caller) */
static __thread uid_t writer;	/* ... with this fsuid for data calls (host_as_writer), or 0 */
static __thread gid_t writer_gid;	/* ... and this fsgid */
static __thread bool caps_dropped;	/* ... with no effective capability; */
static __thread struct __user_cap_data_struct saved_caps[2];	/* ... the daemon's */

#define ERR(expr) ((expr) < 0 ? errno : 0)

int host_init(void)
{
	/*
	 * /proc/self is resolved at open time: after a fork (daemonizing) the
	 * fd would still name the parent's fd table, so call this again there.
	 */
	if (proc_fd >= 0)
		close(proc_fd);
	proc_fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	is_root = geteuid() == 0;
	return proc_fd < 0 ? errno : 0;
}

static void fd_name(int fd, char buf[16])
{
	snprintf(buf, 16, "%d", fd);
}

int host_open_root(const char *path, int *fd, struct stat *st)
{
	*fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return errno;
	if (fstat(*fd, st) < 0) {
		int e = errno;

		close(*fd);
		*fd = -1;
		return e;
	}
	return 0;
}

int host_lookup(int dirfd, const char *name, int *fd, struct stat *st)
{
	*fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0)
		return errno;
	if (fstatat(*fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		int e = errno;

		close(*fd);
		*fd = -1;
		return e;
	}
	return 0;
}

int host_stat_at(int dirfd, const char *name, struct stat *st)
{
	return ERR(fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW));
}

int host_beneath(int dirfd, const char *rel)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,	/* no O_NOFOLLOW: a link at the end is a link too (ELOOP) */
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

int host_stat(int fd, struct stat *st)
{
	return ERR(fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW));
}

/*
 * O_NONBLOCK for every open but O_PATH: an open for writing waits while
 * another host process holds a lease on the file (up to lease-break-time,
 * 45 s), and awfs's listener must never wait on the host for one caller.
 * The flag is cleared again when the caller did not ask for it.
 */
int host_reopen(int fd, int flags, int *out)
{
	char name[16];
	int nb = (flags & O_PATH) ? 0 : O_NONBLOCK;

	fd_name(fd, name);
	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY);
	*out = openat(proc_fd, name, flags | nb | O_NOCTTY | O_CLOEXEC);
	if (*out < 0)
		return errno;
	if (nb && !(flags & O_NONBLOCK) &&
	    fcntl(*out, F_SETFL, flags & (O_APPEND | O_DIRECT | O_NOATIME)) < 0) {
		int e = errno;

		close(*out);
		*out = -1;
		return e;
	}
	return 0;
}

/*
 * An openat() by name walks one component; a re-open through /proc/self/fd
 * walks procfs as well (4.1 against 2.5 us a call, openat + fstat, here).
 * The name may hold another object by now (renamed on the host, or through
 * awfs since the lookup): O_NOFOLLOW never follows a symlink, O_NONBLOCK
 * never waits on a fifo (cleared again when the caller did not ask for it;
 * on a regular file it changes nothing), O_TRUNC is refused so that nothing
 * is done to an object before it is known, and a different (dev, ino) is
 * closed untouched.
 */
int host_open_named(int dirfd, const char *name, dev_t dev, ino_t ino, int flags, int *out)
{
	struct stat st;
	int fd;

	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_DIRECTORY | O_PATH);
	if (flags & O_TRUNC)
		return EINVAL;
	fd = openat(dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (fstat(fd, &st) < 0 || st.st_dev != dev || st.st_ino != ino ||
	    (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags & (O_APPEND | O_DIRECT | O_NOATIME)) < 0)) {
		close(fd);
		return ESTALE;
	}
	*out = fd;
	return 0;
}

int host_open_pinned(int fd, int dirfd, const char *name, dev_t dev, ino_t ino, int flags,
		     int *out)
{
	if (dirfd >= 0) {
		int err = host_open_named(dirfd, name, dev, ino, flags, out);

		/* refused by the host's permissions: that is the answer, not a reason to re-open */
		if (err == 0 || err == EACCES || err == EPERM)
			return err;
	}
	return host_reopen(fd, flags, out);
}

/*
 * dup3() puts the new description under the old number in one step: a
 * concurrent user of the number (a log line reading its path) sees the one
 * or the other, both the same file, never a closed or reused number.
 */
int host_make_readable(int fd, int dirfd, const char *name, dev_t dev, ino_t ino)
{
	int r = -1, err = host_open_pinned(fd, dirfd, name, dev, ino, O_RDONLY, &r);

	if (err)
		return err;
	err = ERR(dup3(r, fd, O_CLOEXEC));
	close(r);
	return err;
}

int host_opendir(int fd, DIR **dir)
{
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return errno;
	*dir = fdopendir(dfd);
	if (!*dir) {
		int e = errno;

		close(dfd);
		return e;
	}
	return 0;
}

/*
 * A request's host calls run as its caller: fsuid, fsgid and supplementary
 * groups are per thread on Linux (groups when set with the raw system call,
 * not glibc's setgroups(), which sets them for every thread), and so are
 * capabilities. While a thread serves a caller other than root its
 * effective capability set is empty: the host then makes every permission
 * check itself, mode bits, ACLs (group entries with all the caller's
 * groups), sticky directories, protected_hardlinks and set-group-ID
 * clearing included, exactly as for the caller. awfs never lends them: a
 * check the kernel made on the FUSE side may have been made on stale
 * attributes, or not at all (an O_CREAT open of a name the kernel believed
 * absent). The set is emptied explicitly, not left to the kernel's fsuid
 * fix-up, which SECBIT_NO_SETUID_FIXUP turns off and which would leave the
 * capabilities outside the file-system set (CAP_SYS_RESOURCE, say).
 *
 * A caller that is root keeps the daemon's capabilities (root is not
 * refused anything the host would allow it); only its fsgid is taken, so
 * what it creates has its group.
 */
void host_as_caller(uid_t uid, gid_t gid, size_t ngroups, const gid_t *groups)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { { 0, 0, 0 }, { 0, 0, 0 } };

	host_writer_reset();
	if (!is_root || (uid == 0 && gid == 0))
		return;	/* already who the caller is: the syscalls saved */
	/* the daemon's set, taken before the fsuid fix-up below changes it */
	if (uid != 0 && syscall(SYS_capget, &hdr, saved_caps) != 0)
		abort();
	switched = true;
	if (syscall(SYS_setgroups, uid ? ngroups : 0, groups) < 0)
		abort();	/* never a call with the daemon's own groups */
	setfsgid(gid);
	setfsuid(uid);
	/* setfsuid() reports no failure: read it back, and never run a call as root by mistake */
	if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid)
		abort();
	if (uid != 0) {
		data[0].permitted = saved_caps[0].permitted;
		data[1].permitted = saved_caps[1].permitted;
		if (syscall(SYS_capset, &hdr, data) != 0)
			abort();
		caps_dropped = true;
	}
}

void host_as_daemon(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };

	if (!switched)
		return;
	setfsuid(0);
	setfsgid(0);
	if (caps_dropped && syscall(SYS_capset, &hdr, saved_caps) != 0)
		abort();
	caps_dropped = false;
	if (syscall(SYS_setgroups, 0, NULL) < 0)
		abort();
	switched = false;
}

bool host_as_writer(uid_t uid, gid_t gid)
{
	if (!is_root)
		return false;
	if (uid == 0) {
		host_writer_reset();
		return false;
	}
	if (writer == uid && writer_gid == gid)
		return true;	/* this thread's last data call was this writer's: no switch */
	if (switched)
		abort();	/* never inside host_as_caller(): its groups would stay */
	/*
	 * The fsuid fix-up drops the file-system capabilities while the fsuid
	 * is not 0 and raises them again at setfsuid(0). Without CAP_FSETID
	 * the kernel then clears set-id bits on a write itself, as for the
	 * same writer on the host: set-group-ID without group execute only
	 * where the writer is not in the file's group, by its fsgid (its
	 * supplementary groups are not read for a write: stricter than the
	 * host for a file of one of those groups).
	 */
	setfsgid(gid);
	setfsuid(uid);
	/* never a write as root by mistake: read it back before the call */
	if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid)
		abort();
	writer = uid;
	writer_gid = gid;
	return true;
}

void host_writer_reset(void)
{
	if (!writer)
		return;
	/* setfsuid() reports no failure: what it returns is the fsuid before */
	if ((uid_t)setfsuid(0) != writer || (uid_t)setfsuid((uid_t)-1) != 0)
		abort();
	setfsgid(0);
	if ((gid_t)setfsgid((gid_t)-1) != 0)
		abort();
	writer = 0;
}

/* The kernel's passthrough ioctls (linux/fuse.h from 6.9 on; Debian 12's headers are older). */
struct backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};
#define BACKING_OPEN _IOW(229, 1, struct backing_map)
#define BACKING_CLOSE _IOW(229, 2, uint32_t)

/*
 * The credentials the kernel copies at the ioctl are those of every later
 * read and write of the file through a passthrough handle
 * (fs/backing-file.c overrides the writer's with them): their fsuid,
 * fsgid and groups decide ext4's reserved blocks (resuid, resgid) and
 * whether a set-group-ID bit stays on a write; CAP_FSETID would keep
 * set-id bits, CAP_SYS_RESOURCE would pass quotas and the reserve. So the
 * ioctl runs as the opener, with one capability: CAP_SYS_ADMIN, which
 * fuse_backing_open() demands (capable(), in the initial namespace) and
 * which no data path of a file system consults; CAP_SYS_RESOURCE is not
 * even permitted to the daemon (privs.h). It is effective for the ioctl
 * alone, on this thread.
 *
 * Two ways in. A create or an open made as the caller (host_as_caller())
 * registers its file as the last call of that switch, which the
 * registration ends: the credentials are the caller's own, groups
 * included, exactly those the host checked the open with, and the
 * registration costs one capability raise and the ioctl
 * (host_backing_open_as_caller()). A read-only open served from the
 * inode's own fd switches to the opener's fsuid and fsgid for the ioctl
 * alone, without the groups (host_backing_open(): reading the groups of a
 * request costs a read of /proc): no read path consults a backing file's
 * credentials, so for such a handle they are a bound, not a check.
 */
static int backing_ioctl(int devfd, int fd, struct __user_cap_data_struct data[2], int *id)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct backing_map map = { .fd = fd };
	int res;

	data[0].effective = (uint32_t)1 << CAP_SYS_ADMIN;
	data[1].effective = 0;
	if (syscall(SYS_capset, &hdr, data) != 0)
		return errno;	/* not permitted: a daemon that dropped it (privs.h) */
	res = ioctl(devfd, BACKING_OPEN, &map);
	if (res < 0)
		return errno;
	*id = res;
	return 0;
}

int host_backing_open_as_caller(int devfd, int fd, int *id)
{
	struct __user_cap_data_struct data[2];
	int err;

	if (!is_root || !switched || !caps_dropped)
		return EPERM;	/* only inside host_as_caller() for a caller other than root */
	data[0].permitted = saved_caps[0].permitted;
	data[1].permitted = saved_caps[1].permitted;
	data[0].inheritable = data[1].inheritable = 0;
	err = backing_ioctl(devfd, fd, data, id);
	/* the switch ends here: nothing runs as the caller with CAP_SYS_ADMIN raised */
	host_as_daemon();
	return err;
}

int host_backing_open(int devfd, int fd, uid_t uid, gid_t gid, int *id)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2], daemon[2];
	int err;

	if (!is_root || uid == 0)
		return EPERM;
	host_writer_reset();
	if (switched || syscall(SYS_capget, &hdr, daemon) != 0)
		abort();	/* never inside host_as_caller() */
	memcpy(data, daemon, sizeof(data));
	setfsgid(gid);
	setfsuid(uid);
	/* setfsuid() reports no failure: read it back, never register as root by mistake */
	if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid)
		abort();
	err = backing_ioctl(devfd, fd, data, id);
	setfsuid(0);
	setfsgid(0);
	/* the daemon's own set back (the fix-up raised the file-system ones at setfsuid(0)) */
	if (syscall(SYS_capset, &hdr, daemon) != 0 || (uid_t)setfsuid((uid_t)-1) != 0)
		abort();
	return err;
}

/* The close demands CAP_SYS_ADMIN too: raised for it alone, as above. */
int host_backing_close(int devfd, int id)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	uint32_t n = (uint32_t)id;
	uint32_t had;
	int err;

	if (!is_root)
		return EPERM;
	host_writer_reset();
	if (syscall(SYS_capget, &hdr, data) != 0)
		abort();
	had = data[0].effective;
	data[0].effective |= (uint32_t)1 << CAP_SYS_ADMIN;
	if (syscall(SYS_capset, &hdr, data) != 0)
		return errno;
	err = ERR(ioctl(devfd, BACKING_CLOSE, &n));
	data[0].effective = had;
	if (syscall(SYS_capset, &hdr, data) != 0)
		abort();
	return err;
}

bool host_can_switch(void)
{
	static const gid_t none[1] = { 65534 };
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	bool ok;

	if (!is_root)
		return true;
	if (syscall(SYS_setgroups, 1, none) < 0)
		return false;
	setfsgid(65534);
	setfsuid(65534);
	ok = (uid_t)setfsuid((uid_t)-1) == 65534 && (gid_t)setfsgid((gid_t)-1) == 65534 &&
	     syscall(SYS_capget, &hdr, data) == 0 && syscall(SYS_capset, &hdr, data) == 0;
	setfsuid(0);
	setfsgid(0);
	(void)syscall(SYS_setgroups, 0, NULL);
	return ok;
}

/*
 * Always O_EXCL: a CREATE arrives when the kernel believes the name absent,
 * and that belief may be stale (a negative entry cached under a directory
 * view held across a rename, or the host's own change). Opening what the
 * name holds now would skip the check the kernel makes before an open of an
 * existing object, and would wait on a FIFO; the caller gets EEXIST and
 * decides (ops.c turns it into ESTALE, which makes the kernel look again).
 */
int host_create(int dirfd, const char *name, int flags, mode_t mode, int *fh)
{
	*fh = openat(dirfd, name, (flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC) & ~O_NOCTTY,
		     mode);
	return *fh < 0 ? errno : 0;
}

int host_tmpfile(int dirfd, mode_t mode, int *fh)
{
	*fh = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
	return *fh < 0 ? errno : 0;
}

int host_mkdir(int dirfd, const char *name, mode_t mode)
{
	return ERR(mkdirat(dirfd, name, mode));
}

int host_mknod(int dirfd, const char *name, mode_t mode, dev_t rdev)
{
	return ERR(mknodat(dirfd, name, mode, rdev));
}

int host_symlink(const char *target, int dirfd, const char *name)
{
	return ERR(symlinkat(target, dirfd, name));
}

int host_link(int fd, int dirfd, const char *name)
{
	char src[16];

	/* AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH; the fd link does not */
	fd_name(fd, src);
	return ERR(linkat(proc_fd, src, dirfd, name, AT_SYMLINK_FOLLOW));
}

int host_unlink(int dirfd, const char *name)
{
	return ERR(unlinkat(dirfd, name, 0));
}

int host_rmdir(int dirfd, const char *name)
{
	return ERR(unlinkat(dirfd, name, AT_REMOVEDIR));
}

int host_rename(int olddir, const char *oldname, int newdir, const char *newname, unsigned flags)
{
	return ERR(syscall(SYS_renameat2, olddir, oldname, newdir, newname, flags));
}

/*
 * Give the fresh object open at @fd the owner and the exact mode asked for
 * (mkdir/open apply the umask): through the fd, never the name, which a
 * writer of the parent may have swapped for a hard link to its own file.
 */
static int settle_new(int fd, uid_t uid, gid_t gid, mode_t mode)
{
	char fdname[16];

	if (is_root && fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return errno;
	fd_name(fd, fdname);
	return ERR(fchmodat(proc_fd, fdname, mode, 0));
}

/*
 * The directory mkdirat() just made as @name, opened. mkdirat gives no fd,
 * so the name is opened and what it holds checked: still ours (our uid,
 * permission bits 0700 as made; a set-group-ID parent adds S_ISGID, and
 * some file systems count no links for directories, so neither is looked
 * at), or a writer of the parent replaced it in between with its own, and
 * the target is refused rather than given the root's owner. Only awfs's
 * user can make a directory owned by awfs's user.
 */
static int open_made_dir(int dirfd, const char *name, int *fd)
{
	struct stat st;

	*fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0)
		return errno;
	if (fstat(*fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 0777) != 0700) {
		close(*fd);
		*fd = -1;
		return EAGAIN;	/* replaced while it was made */
	}
	return 0;
}

int host_make_target(int dirfd, const char *relpath, bool file, const struct stat *like)
{
	char buf[4096];
	char *save = NULL, *tok, *next_tok;
	mode_t dmode = like->st_mode & 07777;
	int cur, err = 0;

	if (strlen(relpath) >= sizeof(buf))
		return ENAMETOOLONG;
	cur = dup(dirfd);
	if (cur < 0)
		return errno;
	memcpy(buf, relpath, strlen(relpath) + 1);	/* the length was checked above */
	for (tok = strtok_r(buf, "/", &save); tok; tok = next_tok) {
		bool last;
		int next = -1;

		next_tok = strtok_r(NULL, "/", &save);
		last = next_tok == NULL;
		if (last && file) {
			/* an empty file; never through an existing name or a symlink */
			int fd = openat(cur, tok, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

			if (fd < 0) {
				err = errno;
				break;
			}
			err = settle_new(fd, like->st_uid, like->st_gid, dmode & 0666);
			close(fd);
			break;
		}
		if (mkdirat(cur, tok, 0700) == 0) {
			err = open_made_dir(cur, tok, &next);
			if (!err && (err = settle_new(next, like->st_uid, like->st_gid, dmode)) != 0)
				close(next);
		} else if (errno != EEXIST) {
			err = errno;
		} else if ((next = openat(cur, tok, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			/* ENOTDIR / ELOOP: a file or a symlink is in the way */
			err = errno;
		}
		if (err)
			break;
		close(cur);
		cur = next;
	}
	close(cur);
	return err;
}

int host_readlink(int fd, char *buf, size_t size, size_t *len)
{
	ssize_t n = readlinkat(fd, "", buf, size);

	if (n < 0)
		return errno;
	*len = (size_t)n;
	return 0;
}

int host_chmod(int fd, mode_t mode)
{
	char name[16];

	fd_name(fd, name);
	return ERR(fchmodat(proc_fd, name, mode, 0));
}

int host_chown(int fd, uid_t uid, gid_t gid)
{
	return ERR(fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW));
}

int host_truncate(int fd, int fh, off_t size)
{
	int wfd, err;

	if (fh >= 0)
		return ERR(ftruncate(fh, size));
	err = host_reopen(fd, O_WRONLY, &wfd);
	if (err)
		return err;
	err = ERR(ftruncate(wfd, size));
	close(wfd);
	return err;
}

int host_utimens(int fd, int fh, const struct timespec ts[2], bool is_symlink)
{
	char name[16];

	if (fh >= 0)
		return ERR(futimens(fh, ts));
	if (is_symlink)
		return ERR(utimensat(fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW));
	fd_name(fd, name);
	return ERR(utimensat(proc_fd, name, ts, 0));
}

int host_statfs(int fd, struct statvfs *sv)
{
	return ERR(fstatvfs(fd, sv));
}

/* The path of @fd's magic link, for the calls that take a path, not an fd. */
static void proc_path(int fd, char buf[32])
{
	snprintf(buf, 32, "/proc/self/fd/%d", fd);
}

int host_add_watch(int ifd, int fd, uint32_t mask, int *wd)
{
	char p[32];

	proc_path(fd, p);	/* inotify takes a path: the pinned directory's */
	*wd = inotify_add_watch(ifd, p, mask);
	return *wd < 0 ? errno : 0;
}

/*
 * Extended attributes go through /proc/self/fd/N with the following
 * variants of the calls (the magic link leads to the pinned object). A
 * symlink's own xattrs are not reachable that way; awfs reports EPERM for
 * them, as Linux does for user.* xattrs on symlinks.
 */

int host_getxattr(int fd, bool is_symlink, const char *name, void *buf, size_t size, size_t *len)
{
	char p[32];
	ssize_t n;

	if (is_symlink)
		return ENODATA;
	proc_path(fd, p);
	n = getxattr(p, name, buf, size);
	if (n < 0)
		return errno;
	*len = (size_t)n;
	return 0;
}

int host_listxattr(int fd, bool is_symlink, char *buf, size_t size, size_t *len)
{
	char p[32];
	ssize_t n;

	if (is_symlink) {
		*len = 0;
		return 0;
	}
	proc_path(fd, p);
	n = listxattr(p, buf, size);
	if (n < 0)
		return errno;
	*len = (size_t)n;
	return 0;
}

int host_setxattr(int fd, bool is_symlink, const char *name, const void *val, size_t size, int flags)
{
	char p[32];

	if (is_symlink)
		return EPERM;
	proc_path(fd, p);
	return ERR(setxattr(p, name, val, size, flags));
}

int host_removexattr(int fd, bool is_symlink, const char *name)
{
	char p[32];

	if (is_symlink)
		return EPERM;
	proc_path(fd, p);
	return ERR(removexattr(p, name));
}

void host_kill_suid(int fd, int fh, uid_t uid)
{
	struct stat st;
	mode_t kill;

	if (uid == 0 || host_stat(fh >= 0 ? fh : fd, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	kill = st.st_mode & (S_ISUID | ((st.st_mode & S_IXGRP) ? S_ISGID : 0));
	if (!kill)
		return;
	host_writer_reset();	/* the daemon's CAP_FOWNER, not a writer's fsuid */
	if (fh >= 0)
		(void)fchmod(fh, st.st_mode & 07777 & ~kill);
	else
		(void)host_chmod(fd, st.st_mode & 07777 & ~kill);
}

void host_match_append(int fh, int append)
{
	int fl = fcntl(fh, F_GETFL);

	if (fl >= 0 && !!(fl & O_APPEND) != !!append)
		(void)fcntl(fh, F_SETFL, append ? fl | O_APPEND : fl & ~O_APPEND);
}

int host_fsync(int fh, bool datasync)
{
	return ERR(datasync ? fdatasync(fh) : fsync(fh));
}

int host_fallocate(int fh, int mode, off_t off, off_t len)
{
	return ERR(fallocate(fh, mode, off, len));
}

int host_copy_file_range(int fin, off_t off_in, int fout, off_t off_out, size_t len,
			 unsigned flags, size_t *copied)
{
	ssize_t n = copy_file_range(fin, &off_in, fout, &off_out, len, flags);

	if (n < 0)
		return errno;
	*copied = (size_t)n;
	return 0;
}

int host_lseek(int fh, off_t off, int whence, off_t *out)
{
	*out = lseek(fh, off, whence);
	return *out < 0 ? errno : 0;
}

enum host_case host_dir_folds_case(int fd, const char **what)
{
	static const struct {
		unsigned long magic;
		const char *name;
	} folding[] = {
		{ 0x4d44, "vfat" }, { 0x2011bab0, "exfat" }, { 0x5346544e, "ntfs" },
		{ 0x7366746e, "ntfs3" }, { 0xff534d42, "cifs" }, { 0xfe534d42, "smb2" },
		{ 0x517b, "smb" }, { 0x482b, "hfs+" },
	};
	struct statfs sf;
	char name[16];
	int dfd, flags = 0;

	if (fstatfs(fd, &sf) == 0)
		for (size_t i = 0; i < sizeof(folding) / sizeof(folding[0]); i++)
			if ((unsigned long)sf.f_type == folding[i].magic) {
				*what = folding[i].name;
				return HOST_CASE_FOLDS;
			}
	/* FS_IOC_GETFLAGS needs a real open; an O_PATH fd is refused */
	fd_name(fd, name);
	dfd = openat(proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (dfd < 0)
		return HOST_CASE_UNKNOWN;
	if (ioctl(dfd, FS_IOC_GETFLAGS, &flags) < 0)
		flags = 0;
	close(dfd);
	if (flags & FS_CASEFOLD_FL) {
		*what = "casefold";
		return HOST_CASE_FOLDS;
	}
	return HOST_CASE_EXACT;
}

/*
 * Whether the FUSE file system of device @dev is virtiofs (by its type in
 * mountinfo, remembered per device: an ACL read reaches this on every
 * permission check the kernel has not cached, and reading mountinfo each
 * time would cost more than the request). Called before serving and on
 * the listener thread only (getxattr, loop.c), so the table needs no lock.
 * A device number is freed only when its last mount and the last fd on it
 * are gone; one reused while awfs runs keeps the old answer.
 */
static bool fuse_is_virtiofs(dev_t dev, char *type, size_t size)
{
	static struct {
		dev_t dev;
		bool virtiofs;
	} seen[16];
	static size_t nseen;
	bool virtiofs;

	for (size_t i = 0; i < nseen; i++)
		if (seen[i].dev == dev)
			return seen[i].virtiofs;
	virtiofs = mountinfo_fstype_of(dev, type, size) == 0 && strcmp(type, "virtiofs") == 0;
	if (nseen < sizeof(seen) / sizeof(seen[0])) {
		seen[nseen].dev = dev;
		seen[nseen].virtiofs = virtiofs;
		nseen++;
	}
	return virtiofs;
}

/*
 * What a file system's permission check is. FS_MODES: the kernel's own on
 * its modes (and its ACLs, where it keeps any), so that where it keeps no
 * ACLs "no ACL" is the whole truth. Elsewhere the host may check more than
 * the modes (NFSv4, CIFS, procfs; a FUSE daemon other than virtiofsd), and
 * awfs, which opens for reading as itself after the kernel's check, could
 * not repeat it: where such a file system answers EOPNOTSUPP, the access
 * fails (host_is_other_fuse() names the FUSE ones, which may not).
 */
enum fs_kind {
	FS_MODES,
	FS_OTHER_FUSE,
	FS_OWN,
};

static enum fs_kind fs_kind(int fd, const char **what)
{
	struct statfs sf;
	struct stat st;
	char type[64];

	*what = "a file system of its own kind";
	if (fstatfs(fd, &sf) < 0)
		return FS_OWN;
	switch ((unsigned long)sf.f_type) {
	case RAMFS_MAGIC:
		*what = "ramfs";
		return FS_MODES;
	case TMPFS_MAGIC:
		*what = "tmpfs";
		return FS_MODES;
	case FUSE_SUPER_MAGIC:
		/* virtiofs in a guest: the guest kernel checks the modes, virtiofsd nothing */
		*what = "a FUSE file system";
		if (fstat(fd, &st) < 0 || !fuse_is_virtiofs(st.st_dev, type, sizeof(type)))
			return FS_OTHER_FUSE;
		*what = "virtiofs";
		return FS_MODES;
	case PROC_SUPER_MAGIC:
		*what = "procfs";
		return FS_OWN;
	case NFS_SUPER_MAGIC:
		*what = "nfs";
		return FS_OWN;
	default:
		return FS_OWN;
	}
}

/*
 * Only "not supported" says the file system keeps no ACLs: ENODATA (no ACL
 * on this object) and a value both say it keeps them, and any other
 * failure (EACCES, EIO) cannot tell, so the kernel had better ask.
 */
enum host_acls host_acls(int fd, const char **what)
{
	char p[32];

	*what = NULL;
	proc_path(fd, p);
	if (getxattr(p, "system.posix_acl_access", NULL, 0) >= 0 || errno != EOPNOTSUPP)
		return HOST_ACLS_KEPT;
	return fs_kind(fd, what) == FS_MODES ? HOST_ACLS_NONE : HOST_ACLS_FOREIGN;
}

bool host_is_other_fuse(int fd, const char **what)
{
	return fs_kind(fd, what) == FS_OTHER_FUSE;
}

bool host_acls_absent(int fd)
{
	const char *what;

	return fs_kind(fd, &what) == FS_MODES;
}

int host_fd_path(int fd, char *buf, size_t size)
{
	char name[16];
	ssize_t n;

	fd_name(fd, name);
	n = readlinkat(proc_fd, name, buf, size - 1);
	if (n < 0)
		return errno;
	buf[n] = '\0';
	return 0;
}
