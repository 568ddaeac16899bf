/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uring.h - FUSE over io_uring (Linux 6.14 and later, protocol 7.42),
 * spoken without libfuse.
 *
 * With it the kernel hands requests to the daemon through io_uring rings,
 * one queue per possible CPU: a request goes to the queue of the CPU its
 * caller runs on, into a buffer (an "entry") the daemon registered, and
 * the daemon's reply goes back in the same buffer with the command that
 * also asks for the next request (COMMIT_AND_FETCH). FORGET and INTERRUPT,
 * and notifications, still cross /dev/fuse: loop.c's listener stays.
 *
 * The kernel offers it only when the fuse module's enable_uring parameter
 * is 1 (off by default). Asking for it at INIT commits the connection:
 * every request then waits until each queue has an entry, so awfs asks only
 * after its rings are set up, and gives it up (uring_abandon()) when a
 * queue cannot be served.
 */
#ifndef AWFS_URING_H
#define AWFS_URING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

struct uring_ent;

/* What the mount's requests come through. */
enum uring_mode {
	URING_UNDECIDED,	/* before INIT */
	URING_ON,		/* the kernel's io_uring queues */
	URING_OFF_OPTION,	/* -o io_uring=off */
	URING_OFF_KERNEL,	/* not offered: too old, or enable_uring is 0 */
	URING_OFF_SETUP,	/* offered, but a ring could not be set up (io_uring_disabled, memory) */
	URING_OFF_FAILED,	/* accepted, but a queue could not be started or registered */
};

/* Before the mount: whether io_uring is wanted (-o io_uring=), and the device fd. */
void uring_configure(bool wanted, int devfd);
/*
 * INIT (loop.c, on its thread): the kernel offered io_uring or not, and the
 * reply's max_write and max_pages (the kernel sizes the payload buffers it
 * asks for from them). Sets up the rings; true: accept it in the reply.
 */
bool uring_negotiate(bool offered, uint32_t max_write, uint32_t max_pages);
/* The mode in words, for the mount line, and in a word, for the audit record. */
const char *uring_mode_text(void);
const char *uring_mode_word(void);
bool uring_on(void);

/*
 * Whether a request may keep its entry past the serving thread's return
 * (a worker serves it, or it waits in its caller's lane): each such one
 * is an entry less for every caller on that CPU.
 */
enum uring_room {
	URING_ROOM,	/* yes */
	URING_SHORT,	/* only a caller with none held already */
	URING_FULL,	/* no: the entries left must come back at once */
};

/*
 * What a queue thread does with each request, in @buf (its header, its
 * operation's header and its payload, contiguous, as read(/dev/fuse)
 * gives them), and @room. The reply goes back through the entry
 * (uring_current(), the session's writev) from whatever thread sends it.
 */
typedef void (*uring_serve_fn)(const struct fuse_buf *buf, struct uring_ent *ent, enum uring_room room);

/*
 * After INIT, in the process that serves: start a thread per queue, each
 * registering its entries, spinning @spin_us for the next request before it
 * sleeps. 0, or -errno after giving io_uring up (requests then come through
 * /dev/fuse).
 */
int uring_start(struct fuse_session *se, uring_serve_fn serve, unsigned spin_us);
/* At the end of serving: stop the queue threads (no request is served through them after). */
void uring_stop(void);
/* Then, when no worker holds an entry any more: free the rings and entries. */
void uring_free(void);
/* At unmount: log how many requests came through the queues and through /dev/fuse. */
void uring_report(uint64_t dev_requests);

/*
 * The entry whose request this thread serves now (NULL: none, a request
 * from /dev/fuse, or one already answered: uring_reply() clears it); set
 * around a request by whoever serves it.
 */
struct uring_ent *uring_current(void);
void uring_set_current(struct uring_ent *ent);
/*
 * The reply to @ent's request, as writev() would send it to /dev/fuse
 * (iov[0]: the fuse_out_header), or a splice of @len bytes from a pipe.
 * Copied into the entry and committed (from a worker: handed to the queue's
 * thread, which alone submits). The bytes taken, or -errno.
 */
ssize_t uring_reply(struct uring_ent *ent, const struct iovec *iov, int count);
ssize_t uring_reply_pipe(struct uring_ent *ent, int pipefd, size_t len);
/* Answer @ent's request with -@err (a request that got no reply: EIO). */
void uring_reply_error(struct uring_ent *ent, int err);
/* Whether @unique is the request @ent holds (a reply for it goes through it). */
bool uring_owns(const struct uring_ent *ent, uint64_t unique);

#endif
