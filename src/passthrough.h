/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * passthrough.h - the kernel's FUSE passthrough, spoken without libfuse.
 *
 * With it (Linux 6.9 and later, protocol 7.40) an open file's reads,
 * writes, splices and mappings go from the kernel straight to a host file
 * awfs registered (a "backing file"); its open, release, fsync, fallocate,
 * copy_file_range, lseek and every attribute change still come to awfs.
 * libfuse 3.14 knows nothing of it: loop.c accepts it in INIT's reply and
 * puts the backing id into OPEN's and CREATE's (loop_set_backing()).
 *
 * The kernel gives every open file of an inode the same backing file, and
 * its I/O runs with the credentials of whoever registered it: ops.c's
 * open_backing() says which files get one and with whose credentials
 * (docs/security.md, "awfs never lends its power").
 */
#ifndef AWFS_PASSTHROUGH_H
#define AWFS_PASSTHROUGH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What the mount does with its open files' data. */
enum pt_mode {
	PT_UNDECIDED,	/* before INIT */
	PT_ON,		/* the kernel's passthrough */
	PT_OFF_OPTION,	/* -o passthrough=off */
	PT_OFF_KERNEL,	/* the kernel did not offer it */
	PT_OFF_PRIV,	/* awfs is not root: registering needs CAP_SYS_ADMIN */
	PT_OFF_RECORD,	/* the change record is on: it must see every write */
	PT_OFF_FAILED,	/* offered and accepted, but the first registration failed */
};

/*
 * Before the mount: whether passthrough is wanted (-o passthrough=),
 * whether the change record is on (then there is none: a passthrough
 * handle's writes never reach awfs, and a shared mapping goes on writing
 * to the host file after its handle's release), the session's device fd,
 * and the source's root (its file system decides the stacking depth asked
 * for).
 */
void pt_configure(bool wanted, bool record, int devfd, int root_fd);
/*
 * INIT (loop.c, on its thread): the kernel offered passthrough or not;
 * returns the max_stack_depth to answer with (0: not accepted).
 */
uint32_t pt_negotiate(bool offered);
/* The mode in words, for the mount line (never NULL). */
const char *pt_mode_text(void);
/* The mode in one word, for the audit's mount record. */
const char *pt_mode_word(void);
bool pt_on(void);

/*
 * Register the open host file @fd, on the device @dev, as a backing file,
 * with the fsuid @uid and fsgid @gid (the kernel keeps a copy of them for
 * the file's I/O: host_backing_open()). Returns the id (> 0), or -errno:
 * a failure that would repeat for every file (no CAP_SYS_ADMIN, an ioctl
 * this kernel lacks) turns passthrough off for the mount, one for every
 * file of a file system stacked too deep (ELOOP: an overlayfs mounted
 * below the source) turns it off for that device; both are said once in
 * the log. Listener thread only.
 */
int pt_register(int fd, dev_t dev, uid_t uid, gid_t gid);
/* The same as the caller the thread serves now (inside host_as_caller(): host_backing_open_as_caller()). */
int pt_register_as_caller(int fd, dev_t dev);
/* Release the backing id @id (its last handle is gone). */
void pt_unregister(int id);
/* One more handle served by passthrough (the unmount line's count). */
void pt_count_handle(void);
/* At unmount: log the counts (the kernel drops what is still registered with the connection). */
void pt_fini(void);

#endif
