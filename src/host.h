/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host.h - every access awfs makes to the host tree.
 *
 * Invariants (this is the only file that touches the host tree):
 *  - every call is relative to a pinned fd: *at() with O_NOFOLLOW /
 *    AT_SYMLINK_NOFOLLOW, or the fd's own /proc/self/fd entry; no host path
 *    string is ever resolved, so a symlink on the host is never followed;
 *  - every function that can fail returns 0 or a positive errno value,
 *    never -1; the questions answer in their own terms
 *    (host_can_switch(): a bool; host_dir_folds_case(): enum host_case;
 *    host_acls(): enum host_acls; host_acls_absent() and
 *    host_is_other_fuse(): a bool);
 *  - a name passed in has already been checked to be one component
 *    (the kernel guarantees it for FUSE requests).
 */
#ifndef AWFS_HOST_H
#define AWFS_HOST_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

/* (Re)open /proc/self/fd for later re-opens; call again after a fork. 0 or errno. */
int host_init(void);

/* Open the source directory (given by the administrator) as an O_PATH fd. */
int host_open_root(const char *path, int *fd, struct stat *st);
/* Look up @name in @dirfd without following it: an O_PATH fd and its stat. */
int host_lookup(int dirfd, const char *name, int *fd, struct stat *st);
/* Stat @name in @dirfd without following it (no fd kept). */
int host_stat_at(int dirfd, const char *name, struct stat *st);
/*
 * Whether the relative path @rel names an object beneath @dirfd reached
 * through no symlink (its last component none either) and no other mount (openat2's RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV): 0, or the errno (ELOOP: a link
 * on the way; EXDEV: it would leave; ENOENT; ENOSYS before Linux 5.6).
 */
int host_beneath(int dirfd, const char *rel);
/* Stat the object behind an O_PATH fd. */
int host_stat(int fd, struct stat *st);
/* Open the object behind an O_PATH fd with @flags (never O_CREAT). */
int host_reopen(int fd, int flags, int *out);
/*
 * Open @name in @dirfd with @flags (never O_CREAT or O_TRUNC) if it is still
 * the object (@dev, @ino): the quicker way to host_reopen() a file whose
 * name is known. ESTALE when the name holds something else now.
 */
int host_open_named(int dirfd, const char *name, dev_t dev, ino_t ino, int flags, int *out);
/*
 * Open the file pinned by @fd, (@dev, @ino), with @flags: by @name in @dirfd
 * when that still names it (host_open_named(); @dirfd -1: no name known),
 * else through the pin (host_reopen()).
 */
int host_open_pinned(int fd, int dirfd, const char *name, dev_t dev, ino_t ino, int flags,
		     int *out);
/*
 * Make the O_PATH fd @fd of the regular file (@dev, @ino) an O_RDONLY fd of
 * the same file, under the same number; @dirfd and @name as for
 * host_open_pinned().
 */
int host_make_readable(int fd, int dirfd, const char *name, dev_t dev, ino_t ino);
/* Open a directory stream on the directory behind an O_PATH fd. */
int host_opendir(int fd, DIR **dir);

/*
 * Run this thread's next host calls as the caller: fsuid/fsgid @uid/@gid,
 * its @ngroups supplementary @groups and, unless it is root, no effective
 * capability (see host.c). New objects are the caller's; the host checks
 * permissions. No-op for a caller that is root with gid 0, or when awfs does
 * not run as root. Aborts (the mount fails closed) if the switch fails.
 */
void host_as_caller(uid_t uid, gid_t gid, size_t ngroups, const gid_t *groups);
/* Back to the daemon's own identity and capabilities (and no groups). */
void host_as_daemon(void);
/* Whether this thread can switch to another caller and back (checked before mounting). */
bool host_can_switch(void);
/*
 * Run this thread's next data calls on an open handle (writes, fallocate,
 * copy_file_range) with fsuid @uid and fsgid @gid: what a file system
 * grants by the writer's identity (ext4's blocks reserved for its resuid,
 * root by default, and resgid; the kernel's keeping of a set-group-ID bit
 * for a writer in the file's group) follows the writer, not the daemon.
 * Nothing else changes: a data call on a handle checks no permission. The
 * thread stays that writer until host_writer_reset() (loop.c calls it
 * before every request but the data calls; host_as_caller() and
 * host_kill_suid() before their own calls), so a run of one caller's
 * writes costs no switch. Returns whether it runs as another fsuid than
 * root's (not for root, nor when awfs does not run as root); aborts if
 * the switch fails.
 */
bool host_as_writer(uid_t uid, gid_t gid);
/* Back to the daemon's fsuid (no-op unless host_as_writer() switched). */
void host_writer_reset(void);
/*
 * Register the open host file @fd with the FUSE device @devfd as a backing
 * file (FUSE_DEV_IOC_BACKING_OPEN); *id its id. The kernel keeps a copy of
 * this thread's credentials then, and runs every read, write and mapping
 * of the file's passthrough handles with them: so the call is made with
 * fsuid @uid, fsgid @gid, no supplementary group and no effective
 * capability but CAP_SYS_ADMIN, which the ioctl requires and which is
 * raised for it alone (see host.c). @uid 0 is not accepted (EPERM): root's
 * fsuid would follow every writer of the file. For handles that only read.
 */
int host_backing_open(int devfd, int fd, uid_t uid, gid_t gid, int *id);
/*
 * The same, as the caller this thread serves now, inside host_as_caller()
 * for a caller other than root (EPERM elsewhere): its fsuid, fsgid and
 * groups, CAP_SYS_ADMIN raised for the ioctl; it ends the switch
 * (host_as_daemon()), so the capability is never effective for a call
 * made as the caller after it.
 */
int host_backing_open_as_caller(int devfd, int fd, int *id);
/* Release the backing id @id of @devfd (FUSE_DEV_IOC_BACKING_CLOSE). */
int host_backing_close(int devfd, int id);
/* Create @name (always O_EXCL: never opens an existing object); *fh an fd of it. */
int host_create(int dirfd, const char *name, int flags, mode_t mode, int *fh);
/* A regular file with no name in the directory @dirfd, open for reading and writing at *fh. */
int host_tmpfile(int dirfd, mode_t mode, int *fh);
int host_mkdir(int dirfd, const char *name, mode_t mode);
int host_mknod(int dirfd, const char *name, mode_t mode, dev_t rdev);
int host_symlink(const char *target, int dirfd, const char *name);
int host_link(int fd, int dirfd, const char *name);
int host_unlink(int dirfd, const char *name);
int host_rmdir(int dirfd, const char *name);
int host_rename(int olddir, const char *oldname, int newdir, const char *newname, unsigned flags);
/*
 * Make @relpath below @dirfd (mkdir -p; the last component an empty file when
 * @file), never following a symlink; new entries get @like's owner, group
 * and mode (without execute bits for the file).
 */
int host_make_target(int dirfd, const char *relpath, bool file, const struct stat *like);

int host_readlink(int fd, char *buf, size_t size, size_t *len);
int host_chmod(int fd, mode_t mode);
int host_chown(int fd, uid_t uid, gid_t gid);
/* Truncate through @fh when >= 0, else through the O_PATH fd. */
int host_truncate(int fd, int fh, off_t size);
/* Set times through @fh when >= 0, else through the O_PATH fd. */
int host_utimens(int fd, int fh, const struct timespec ts[2], bool is_symlink);
int host_statfs(int fd, struct statvfs *sv);
/* Add an inotify watch (@ifd, @mask) on the directory pinned by @fd; sets *wd. */
int host_add_watch(int ifd, int fd, uint32_t mask, int *wd);

int host_getxattr(int fd, bool is_symlink, const char *name, void *buf, size_t size, size_t *len);
int host_listxattr(int fd, bool is_symlink, char *buf, size_t size, size_t *len);
int host_setxattr(int fd, bool is_symlink, const char *name, const void *val, size_t size, int flags);
int host_removexattr(int fd, bool is_symlink, const char *name);

/*
 * A truncating open, a write or a truncate by @uid: clear set-user-ID (and
 * set-group-ID with group execute) of the regular file pinned by @fd, as
 * the kernel does for a caller that is not root; the kernel leaves it to
 * awfs (FUSE_HANDLE_KILLPRIV_V2). Through @fh when >= 0, else the pin.
 */
void host_kill_suid(int fd, int fh, uid_t uid);
/* Make @fh's O_APPEND match the caller's file (@append non-zero: set). */
void host_match_append(int fh, int append);
int host_fsync(int fh, bool datasync);
int host_fallocate(int fh, int mode, off_t off, off_t len);
int host_copy_file_range(int fin, off_t off_in, int fout, off_t off_out, size_t len,
			 unsigned flags, size_t *copied);
int host_lseek(int fh, off_t off, int whence, off_t *out);
/* How a host directory matches names (-1, 0, 1: a caller may test < 0 and 0). */
enum host_case {
	HOST_CASE_UNKNOWN = -1,	/* cannot tell: never to be taken for exact */
	HOST_CASE_EXACT = 0,	/* byte for byte, as rules match them */
	HOST_CASE_FOLDS = 1,	/* case-insensitively */
};
/*
 * Whether names in the directory behind @fd are matched case-insensitively
 * on the host: a casefolded ext4/f2fs directory, or a file system that folds
 * case (vfat, exfat, ntfs, cifs/smb, hfs+): HOST_CASE_FOLDS, and *what set
 * to a word for messages; HOST_CASE_UNKNOWN when it cannot tell (errno set:
 * the directory could not be opened to ask, EMFILE say).
 */
enum host_case host_dir_folds_case(int fd, const char **what);
/* What a file system's answer to an ACL read means. */
enum host_acls {
	HOST_ACLS_KEPT = 0,	/* it keeps them (or cannot tell): the kernel checks them */
	HOST_ACLS_NONE = 1,	/* none, and its permission check is the modes': "no ACL" */
	HOST_ACLS_FOREIGN = 2,	/* none, and it checks more than the modes (nfs, a FUSE fs) */
};
/*
 * What the file system of the object behind @fd says to an ACL read:
 * HOST_ACLS_KEPT unless reading the access ACL fails with EOPNOTSUPP;
 * then HOST_ACLS_NONE where the modes are its whole permission check
 * (ramfs, tmpfs without ACLs, virtiofs in a guest exported without xattrs)
 * and HOST_ACLS_FOREIGN elsewhere, with *what naming it for messages.
 */
enum host_acls host_acls(int fd, const char **what);
/*
 * Whether an ACL read of the object behind @fd that the host answered
 * EOPNOTSUPP means "no ACL" (its file system's permission check is the
 * modes'), as for HOST_ACLS_NONE.
 */
bool host_acls_absent(int fd);
/*
 * Whether the object behind @fd is on a FUSE file system other than
 * virtiofs, whose daemon may check callers beyond the modes and ACLs it
 * serves (*what names it for messages).
 */
bool host_is_other_fuse(int fd, const char **what);
/* The host path of the object behind @fd (for messages only, never opened). */
int host_fd_path(int fd, char *buf, size_t size);

#endif
