/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef AWFS_LOOP_H
#define AWFS_LOOP_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stdint.h>

/* The default of -o spin=USEC: how long an idle listener polls. */
#define LOOP_SPIN_US_DEFAULT 50
#define LOOP_SPIN_US_MAX 10000

/*
 * Serve se until it is unmounted or told to exit (a signal). One listener,
 * the calling thread, reads /dev/fuse and serves most requests itself; after
 * each it polls the device for spin_us microseconds before it sleeps, so that
 * the next request of a busy caller finds it awake. With keepers, a keeper
 * thread on each other CPU awfs may use (of the first 8) keeps it from halting,
 * so the reply to a caller asleep there wakes it without a halt exit (no
 * keepers with spin_us 0, on one CPU, under a CPU quota, or when
 * io_uring's queues serve).
 * Requests that can wait on the disk (READ, FSYNC, FSYNCDIR, FALLOCATE,
 * LSEEK, COPY_FILE_RANGE) go to up to max_workers worker threads, started
 * when first needed, through a queue with a lane for each caller (uid),
 * taken in turn; the last quarter of them (one at least) serve only callers
 * with nothing running. Past files_high host inodes that keep an fd for
 * life (a source without file handles, inode.h), or inodes_high host inodes
 * in all, a trimmer thread asks the kernel to drop the least recently
 * looked-up files; 0: never.
 * Returns 0 after a clean stop, else -errno.
 */
/*
 * After mounting, before serving: route the session's I/O through awfs
 * (for the INIT reply's flags, loop.c). 0 or a negative errno.
 */
int loop_wrap_io(struct fuse_session *se);
/* The INIT handler's: the reply this thread sends next is INIT's. */
void loop_patch_next_reply(void);
/*
 * The OPEN and CREATE handlers': the reply this thread sends next opens
 * the file with the kernel's passthrough, on the backing file @id
 * (passthrough.h); 0 for none.
 */
void loop_set_backing(int id);
/*
 * Serve the session's first request, INIT, before the mount is announced
 * (what the kernel accepted, passthrough included, is known then). 0, or
 * a negative errno (-EPROTO: the first request was not INIT).
 */
int loop_init(struct fuse_session *se);
/*
 * In place of fuse_set_signal_handlers(): SIGHUP, SIGINT and SIGTERM end
 * the session (where not ignored when awfs started), and wake a sleeping
 * listener whenever they come; SIGPIPE ignored. 0 or a negative errno.
 */
int loop_set_signal_handlers(struct fuse_session *se);
void loop_remove_signal_handlers(void);
int loop_run(struct fuse_session *se, unsigned spin_us, bool keepers, unsigned max_workers,
	     uint64_t files_high, uint64_t inodes_high);

#endif
