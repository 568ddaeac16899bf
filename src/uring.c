/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uring.c - FUSE over io_uring, spoken with io_uring's own system calls
 * (uring.h says what it is; loop.c decides who serves each request).
 *
 * One thread per queue, and only it submits to its ring: the kernel copies
 * a request into an entry in the task that submitted the entry's last
 * command, so an entry committed by a worker would be filled next in that
 * worker's context, after whatever fsync the worker is in by then. A
 * worker's reply is therefore written into the entry and handed back
 * (a list and an eventfd the ring polls); the queue's thread commits it.
 *
 * Each ring is restricted, before it is enabled, to the two operations awfs
 * submits: URING_CMD (to /dev/fuse) and POLL_ADD (the eventfd). Nothing
 * submitted to it reads or writes a host file (docs/security.md).
 *
 * Entries: DEPTH a queue, registered when its thread starts. A request a
 * worker serves, or that waits in its caller's lane (a slow one), holds its
 * entry until it is answered. A request that finds no free entry waits in
 * the kernel's queue, first come first served whoever sent it, and only a
 * commit takes one from there (an entry registered later does not). Past
 * DEPTH - KEEP held, loop.c refuses the slow requests of callers who
 * already have some held (EAGAIN, as a full lane), and a caller with none
 * may take all but the last entry, which always comes back at once: the
 * kernel's queue drains through it. (A caller holds LANE_RING_HELD at most
 * besides, loop.c: one uid cannot come near the bound.)
 * An entry's payload buffer is as large as the kernel's largest request
 * (a megabyte of address space, resident only where used); what a large
 * request or reply made resident past KEEP_RESIDENT is given back before
 * the entry is committed.
 */
#include "config.h"

#include "uring.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/fuse.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

/* Protocol 7.42's structures (the installed linux/fuse.h may predate them). */
struct ring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id;	/* the request's unique */
	uint32_t payload_sz;
	uint32_t padding;
	uint64_t reserved;
};

struct ring_header {
	char in_out[128];	/* fuse_in_header in, fuse_out_header out */
	char op_in[128];	/* the operation's own header */
	struct ring_ent_in_out ent;
};

struct ring_cmd {		/* in the SQE's 80-byte command area */
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};

enum { CMD_REGISTER = 1, CMD_COMMIT_AND_FETCH = 2 };

#define DEPTH 256
#define KEEP 4
#define KEEP_RESIDENT (16 * 1024)
#define SQ_SIZE 512		/* > DEPTH + 1: each command is submitted at once */
#define CQ_SIZE 1024
#define SQE_SIZE 128		/* IORING_SETUP_SQE128 */
#define HEADER_PAGE 4096	/* the entry's ring_header */
#define HEAD_ROOM 4096		/* before the payload: the request is made contiguous there */
#define POLL_TAG 0		/* the eventfd's poll; entries are never at address 0 or 1 */
#define ABANDON_TAG 1		/* the registration that gives io_uring up */

struct uring_queue;

struct uring_ent {
	struct uring_queue *q;
	struct ring_header *hdr;
	char *payload;
	size_t touched;		/* payload bytes that may be resident */
	uint64_t commit_id;
	uint32_t last_cmd;
	struct iovec iov[2];
	struct uring_ent *next_done;
};

struct uring_queue {
	unsigned qid;
	int fd, efd;
	pthread_t tid;
	bool started;
	void *ring;
	size_t ring_len;
	char *sqes;
	size_t sqes_len;
	unsigned *sq_head, *sq_tail, *sq_mask, *sq_array, sq_entries, tail;
	unsigned *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
	struct uring_ent **ents;
	char *area;		/* every entry's buffers, one mapping */
	size_t area_len;
	unsigned nents, nheld;	/* registered (less those the kernel refused); held by workers and lanes */
	unsigned most_held;
	pthread_mutex_t done_lock;
	struct uring_ent *done;	/* answered by workers, to commit */
};

static struct {
	bool wanted;
	int devfd;
	enum uring_mode mode;
	char why[240];
	size_t payload_sz;
	size_t page;
	unsigned nq;
	struct uring_queue *qs;
	uring_serve_fn serve;
	unsigned spin_us;
	int stop;
	int failed_logged;
	uint64_t served;	/* requests that came through the queues */
	unsigned most;		/* the most entries held at once in a queue */
} ur = { .devfd = -1 };

static __thread struct uring_ent *current;
static int lost_logged;

static long ring_enter(int fd, unsigned submit, unsigned wait, unsigned flags)
{
	return syscall(SYS_io_uring_enter, fd, submit, wait, flags, NULL, 0);
}

/* Possible CPUs: the kernel makes a queue for each (num_possible_cpus()). */
static unsigned possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	unsigned lo, hi, n = 0;
	int c;

	if (f) {
		while (fscanf(f, "%u", &lo) == 1) {
			hi = lo;
			c = fgetc(f);
			if (c == '-') {
				if (fscanf(f, "%u", &hi) != 1)
					break;
				c = fgetc(f);
			}
			n += hi - lo + 1;
			if (c != ',')
				break;
		}
		fclose(f);
	}
	if (n == 0) {
		long conf = sysconf(_SC_NPROCESSORS_CONF);

		n = conf > 0 ? (unsigned)conf : 1;
	}
	return n;
}

static void queue_free(struct uring_queue *q)
{
	for (unsigned i = 0; q->ents && i < DEPTH; i++)
		free(q->ents[i]);
	free(q->ents);
	q->ents = NULL;
	q->nents = 0;
	if (q->area)
		munmap(q->area, q->area_len);
	q->area = NULL;
	if (q->sqes)
		munmap(q->sqes, q->sqes_len);
	if (q->ring)
		munmap(q->ring, q->ring_len);
	if (q->fd >= 0)
		close(q->fd);
	if (q->efd >= 0)
		close(q->efd);
	q->sqes = NULL;
	q->ring = NULL;
	q->fd = q->efd = -1;
	pthread_mutex_destroy(&q->done_lock);
}

/* A ring for @q, restricted to what awfs submits, then enabled. 0 or -errno. */
static int queue_setup(struct uring_queue *q)
{
	struct io_uring_params p;
	struct io_uring_restriction res[2];
	size_t sq_len, cq_len;
	char *r;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE | IORING_SETUP_R_DISABLED;
	p.cq_entries = CQ_SIZE;
	q->fd = (int)syscall(SYS_io_uring_setup, SQ_SIZE, &p);
	if (q->fd < 0)
		return -errno;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP))
		return -ENOSYS;	/* before 5.4: far older than the kernels that have FUSE over io_uring */
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	q->ring_len = sq_len > cq_len ? sq_len : cq_len;
	q->ring = mmap(NULL, q->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, q->fd,
		       IORING_OFF_SQ_RING);
	if (q->ring == MAP_FAILED) {
		q->ring = NULL;
		return -errno;
	}
	q->sqes_len = (size_t)p.sq_entries * SQE_SIZE;
	q->sqes = mmap(NULL, q->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, q->fd,
		       IORING_OFF_SQES);
	if (q->sqes == MAP_FAILED) {
		q->sqes = NULL;
		return -errno;
	}
	r = q->ring;
	q->sq_head = (unsigned *)(r + p.sq_off.head);
	q->sq_tail = (unsigned *)(r + p.sq_off.tail);
	q->sq_mask = (unsigned *)(r + p.sq_off.ring_mask);
	q->sq_array = (unsigned *)(r + p.sq_off.array);
	q->sq_entries = p.sq_entries;
	q->tail = *q->sq_tail;
	q->cq_head = (unsigned *)(r + p.cq_off.head);
	q->cq_tail = (unsigned *)(r + p.cq_off.tail);
	q->cq_mask = (unsigned *)(r + p.cq_off.ring_mask);
	q->cqes = (struct io_uring_cqe *)(r + p.cq_off.cqes);
	memset(res, 0, sizeof(res));
	res[0].opcode = IORING_RESTRICTION_SQE_OP;
	res[0].sqe_op = IORING_OP_URING_CMD;
	res[1].opcode = IORING_RESTRICTION_SQE_OP;
	res[1].sqe_op = IORING_OP_POLL_ADD;
	if (syscall(SYS_io_uring_register, q->fd, IORING_REGISTER_RESTRICTIONS, res, 2) < 0 ||
	    syscall(SYS_io_uring_register, q->fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0)
		return -errno;
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->efd < 0)
		return -errno;
	return 0;
}

void uring_configure(bool wanted, int devfd)
{
	ur.wanted = wanted;
	ur.devfd = devfd;
}

bool uring_negotiate(bool offered, uint32_t max_write, uint32_t max_pages)
{
	size_t sz;
	int err = 0;

	if (!ur.wanted) {
		ur.mode = URING_OFF_OPTION;
		return false;
	}
	if (!offered) {
		ur.mode = URING_OFF_KERNEL;
		return false;
	}
	/* the kernel's max_payload_sz: a smaller buffer is refused at registration */
	ur.page = sysconf(_SC_PAGESIZE) > 0 ? (size_t)sysconf(_SC_PAGESIZE) : 4096;
	sz = 8192;
	if (max_write > sz)
		sz = max_write;
	if ((size_t)max_pages * ur.page > sz)
		sz = (size_t)max_pages * ur.page;
	ur.payload_sz = (sz + ur.page - 1) & ~(ur.page - 1);
	ur.nq = possible_cpus();
	ur.qs = calloc(ur.nq, sizeof(*ur.qs));
	if (!ur.qs)
		err = -ENOMEM;
	for (unsigned i = 0; ur.qs && i < ur.nq; i++) {
		ur.qs[i].qid = i;
		ur.qs[i].fd = ur.qs[i].efd = -1;
		pthread_mutex_init(&ur.qs[i].done_lock, NULL);
	}
	for (unsigned i = 0; !err && i < ur.nq; i++)
		err = queue_setup(&ur.qs[i]);
	if (err) {
		snprintf(ur.why, sizeof(ur.why),
			 "requests: through /dev/fuse, the kernel offers FUSE over io_uring but awfs cannot set up a ring: %s%s",
			 strerror(-err), err == -EPERM ? ", refused by kernel.io_uring_disabled or a seccomp filter" : "");
		for (unsigned i = 0; ur.qs && i < ur.nq; i++)
			queue_free(&ur.qs[i]);
		free(ur.qs);
		ur.qs = NULL;
		ur.mode = URING_OFF_SETUP;
		return false;
	}
	ur.mode = URING_ON;
	snprintf(ur.why, sizeof(ur.why), "requests: FUSE over io_uring, %u queues, one per CPU", ur.nq);
	return true;
}

static const struct {
	const char *text, *word;
} modes[] = {
	[URING_UNDECIDED] = { "requests: through /dev/fuse", "/dev/fuse" },
	[URING_ON] = { NULL, "io_uring" },
	[URING_OFF_OPTION] = { "requests: through /dev/fuse, as -o io_uring=off asks", "/dev/fuse (io_uring=off)" },
	[URING_OFF_KERNEL] = { "requests: through /dev/fuse, this kernel offers no FUSE over io_uring: it needs Linux 6.14 or later, CONFIG_FUSE_IO_URING, and the fuse module's enable_uring set to 1",
			       "/dev/fuse (io_uring not offered by the kernel)" },
	[URING_OFF_SETUP] = { NULL, "/dev/fuse (no io_uring ring)" },
	[URING_OFF_FAILED] = { NULL, "/dev/fuse (io_uring failed)" },
};

const char *uring_mode_text(void)
{
	return modes[ur.mode].text ? modes[ur.mode].text : ur.why;
}

const char *uring_mode_word(void)
{
	return modes[ur.mode].word;
}

bool uring_on(void)
{
	return ur.mode == URING_ON;
}

/* The next SQE of @q's ring, cleared (its thread only). */
static struct io_uring_sqe *sqe_next(struct uring_queue *q)
{
	unsigned head = __atomic_load_n(q->sq_head, __ATOMIC_ACQUIRE), idx;
	struct io_uring_sqe *sqe;

	if (q->tail - head >= q->sq_entries)
		return NULL;	/* cannot be: every command is submitted at once */
	idx = q->tail & *q->sq_mask;
	sqe = (struct io_uring_sqe *)(q->sqes + (size_t)idx * SQE_SIZE);
	memset(sqe, 0, SQE_SIZE);
	q->sq_array[idx] = idx;
	q->tail++;
	return sqe;
}

/* Submit what sqe_next() prepared. 0 or -errno. */
static int submit(struct uring_queue *q)
{
	long res;

	__atomic_store_n(q->sq_tail, q->tail, __ATOMIC_RELEASE);
	do
		res = ring_enter(q->fd, 1, 0, 0);
	while (res < 0 && errno == EINTR);
	return res < 0 ? -errno : 0;
}

/* Send @e's command @cmd (REGISTER, or COMMIT_AND_FETCH of its reply). */
static int send_cmd(struct uring_queue *q, struct uring_ent *e, uint32_t cmd)
{
	struct io_uring_sqe *sqe = sqe_next(q);
	struct ring_cmd *c;

	if (!sqe)
		return -EBUSY;
	e->last_cmd = cmd;
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = ur.devfd;
	sqe->cmd_op = cmd;
	sqe->user_data = (uint64_t)(uintptr_t)e;
	c = (struct ring_cmd *)sqe->cmd;
	c->qid = (uint16_t)q->qid;
	if (cmd == CMD_REGISTER) {
		sqe->addr = (uint64_t)(uintptr_t)e->iov;
		sqe->len = 2;
	} else {
		c->commit_id = e->commit_id;
	}
	return submit(q);
}

static int arm_poll(struct uring_queue *q)
{
	struct io_uring_sqe *sqe = sqe_next(q);

	if (!sqe)
		return -EBUSY;
	sqe->opcode = IORING_OP_POLL_ADD;
	sqe->fd = q->efd;
	sqe->poll32_events = POLLIN;
	sqe->len = IORING_POLL_ADD_MULTI;
	sqe->user_data = POLL_TAG;
	return submit(q);
}

/* @q's DEPTH entries, registered (its thread). 0 or -errno. */
static int register_entries(struct uring_queue *q)
{
	size_t each = HEADER_PAGE + HEAD_ROOM + ur.payload_sz;
	int err = 0;

	q->ents = calloc(DEPTH, sizeof(*q->ents));
	if (!q->ents)
		return -ENOMEM;
	/* one mapping (a VMA a queue, not one an entry); untouched pages cost nothing */
	q->area_len = each * DEPTH;
	q->area = mmap(NULL, q->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (q->area == MAP_FAILED) {
		q->area = NULL;
		return -ENOMEM;
	}
	for (unsigned i = 0; i < DEPTH && !err; i++) {
		struct uring_ent *e = calloc(1, sizeof(*e));
		char *m = q->area + each * i;

		if (!e)
			return -ENOMEM;
		q->ents[i] = e;	/* freed with the queue, registered or not */
		e->q = q;
		e->hdr = (struct ring_header *)m;
		e->payload = m + HEADER_PAGE + HEAD_ROOM;
		e->iov[0] = (struct iovec){ .iov_base = e->hdr, .iov_len = sizeof(*e->hdr) };
		e->iov[1] = (struct iovec){ .iov_base = e->payload, .iov_len = ur.payload_sz };
		q->ents[i] = e;
		err = send_cmd(q, e, CMD_REGISTER);
		if (!err)
			q->nents++;
	}
	return err;
}

/* A failure that leaves a queue unserved: io_uring is given up (abandon()), or was never ready. */
static void say_failed(const char *what, int err)
{
	if (__atomic_exchange_n(&ur.failed_logged, 1, __ATOMIC_RELAXED))
		return;
	log_msg(AWFS_LOG_ERR, "FUSE over io_uring: %s: %s; requests come through /dev/fuse", what,
		strerror(-err));
	snprintf(ur.why, sizeof(ur.why), "requests: through /dev/fuse, FUSE over io_uring failed: %s: %s", what,
		 strerror(-err));
	ur.mode = URING_OFF_FAILED;
}

/*
 * What a large request or reply left resident in @e's payload past @used
 * bytes goes back to the system: before a commit (past the reply), and when
 * a request arrives (past it). Never between: once committed, the kernel
 * may be writing the next request there.
 */
static void trim_resident(struct uring_ent *e, size_t used)
{
	size_t keep;

	if (e->touched <= KEEP_RESIDENT || e->touched <= used)
		return;
	keep = used > KEEP_RESIDENT ? (used + ur.page - 1) & ~(ur.page - 1) : KEEP_RESIDENT;
	if (e->touched > keep)
		madvise(e->payload + keep, e->touched - keep, MADV_DONTNEED);
	e->touched = used;
}

/* Give @e's reply to the kernel: now on @e's queue thread, else through it. */
static void commit(struct uring_ent *e)
{
	struct uring_queue *q = e->q;
	uint32_t used = e->hdr->ent.payload_sz;
	uint64_t one = 1;

	trim_resident(e, used);
	if (pthread_equal(pthread_self(), q->tid)) {
		int err;

		q->nheld--;
		err = send_cmd(q, e, CMD_COMMIT_AND_FETCH);
		if (err)
			say_failed("a reply could not be committed", err);
		return;
	}
	pthread_mutex_lock(&q->done_lock);
	e->next_done = q->done;
	q->done = e;
	pthread_mutex_unlock(&q->done_lock);
	if (write(q->efd, &one, sizeof(one)) < 0) {
		/* the counter is full: a wakeup is pending anyway */
	}
}

struct uring_ent *uring_current(void)
{
	return current;
}

void uring_set_current(struct uring_ent *e)
{
	current = e;
}

bool uring_owns(const struct uring_ent *e, uint64_t unique)
{
	return e && e->commit_id == unique;
}

/* The reply's bytes: the first 16 are its header, the rest its payload. */
ssize_t uring_reply(struct uring_ent *e, const struct iovec *iov, int count)
{
	struct fuse_out_header out;
	size_t at = 0, len = 0;
	int err = 0;

	for (int i = 0; i < count; i++) {
		const char *p = iov[i].iov_base;
		size_t n = iov[i].iov_len;

		if (at < sizeof(out)) {
			size_t h = n < sizeof(out) - at ? n : sizeof(out) - at;

			memcpy((char *)&out + at, p, h);
			at += h;
			p += h;
			n -= h;
		}
		if (len + n > ur.payload_sz) {
			err = -EINVAL;
			break;
		}
		if (p != e->payload + len)
			memcpy(e->payload + len, p, n);
		len += n;
	}
	if (at < sizeof(out))
		return -EINVAL;	/* not a reply: nothing sent */
	if (current == e)
		current = NULL;
	if (err) {
		out.error = -EIO;
		len = 0;
	}
	out.len = (uint32_t)(sizeof(out) + len);
	memcpy(e->hdr->in_out, &out, sizeof(out));
	e->hdr->ent.payload_sz = (uint32_t)len;
	if (len > e->touched)
		e->touched = len;
	commit(e);
	return err ? err : (ssize_t)(sizeof(out) + len);
}

/* Read @len bytes of @fd into @buf. 0 or -errno. */
static int read_all(int fd, char *buf, size_t len)
{
	while (len > 0) {
		ssize_t res = read(fd, buf, len);

		if (res < 0 && errno == EINTR)
			continue;
		if (res <= 0)
			return res < 0 ? -errno : -EIO;
		buf += res;
		len -= (size_t)res;
	}
	return 0;
}

ssize_t uring_reply_pipe(struct uring_ent *e, int pipefd, size_t len)
{
	struct fuse_out_header out;
	struct iovec iov[2];
	int err;

	/* the header first, then the data, straight into the entry's payload */
	if (len < sizeof(out) || len - sizeof(out) > ur.payload_sz)
		return -EINVAL;
	err = read_all(pipefd, (char *)&out, sizeof(out));
	if (!err)
		err = read_all(pipefd, e->payload, len - sizeof(out));
	if (err) {
		uring_reply_error(e, EIO);	/* the request is answered, whatever the pipe did */
		return err;
	}
	iov[0] = (struct iovec){ .iov_base = &out, .iov_len = sizeof(out) };
	iov[1] = (struct iovec){ .iov_base = e->payload, .iov_len = len - sizeof(out) };
	return uring_reply(e, iov, 2);
}

void uring_reply_error(struct uring_ent *e, int err)
{
	struct fuse_out_header out = { .len = sizeof(out), .error = -err, .unique = e->commit_id };
	struct iovec iov = { .iov_base = &out, .iov_len = sizeof(out) };

	uring_reply(e, &iov, 1);
}

/*
 * A request arrived in @e: made contiguous before its payload, and served.
 * When it returns, the entry is answered (a request served here) or held
 * (a worker has it, or its caller's lane).
 */
static void request(struct uring_queue *q, struct uring_ent *e)
{
	struct fuse_in_header in;
	uint32_t psz = e->hdr->ent.payload_sz;
	size_t op;
	char *start;
	struct fuse_buf buf;
	enum uring_room room;

	/* were it held too: KEEP left that come back at once, or only this one's */
	room = q->nheld + 1 + KEEP <= q->nents ? URING_ROOM : q->nheld + 2 <= q->nents ? URING_SHORT : URING_FULL;
	q->nheld++;
	__atomic_add_fetch(&ur.served, 1, __ATOMIC_RELAXED);
	memcpy(&in, e->hdr->in_out, sizeof(in));
	e->commit_id = e->hdr->ent.commit_id;
	trim_resident(e, psz);
	if (psz > e->touched)
		e->touched = psz;
	if (psz > ur.payload_sz || in.len < sizeof(in) + psz || in.len - sizeof(in) - psz > sizeof(e->hdr->op_in)) {
		uring_reply_error(e, EIO);	/* a request awfs cannot read */
		return;
	}
	op = in.len - sizeof(in) - psz;
	start = e->payload - op - sizeof(in);
	memcpy(start, &in, sizeof(in));
	memcpy(start + sizeof(in), e->hdr->op_in, op);
	buf = (struct fuse_buf){ .size = in.len, .mem = start };
	ur.serve(&buf, e, room);
	if (q->nheld > q->most_held)
		q->most_held = q->nheld;
}

/* Commit what workers answered. */
static void drain_done(struct uring_queue *q)
{
	struct uring_ent *e, *next;
	uint64_t v;

	if (read(q->efd, &v, sizeof(v)) < 0) {
		/* nothing counted: a list filled meanwhile is still drained below */
	}
	pthread_mutex_lock(&q->done_lock);
	e = q->done;
	q->done = NULL;
	pthread_mutex_unlock(&q->done_lock);
	for (; e; e = next) {
		next = e->next_done;
		commit(e);	/* on the queue's thread now */
	}
}

/* Ask the kernel to give io_uring up for this connection: a registration it refuses. */
static void abandon(struct uring_queue *q)
{
	struct ring_header h;
	char one;
	struct iovec iov[2] = { { &h, sizeof(h) }, { &one, 1 } };
	struct io_uring_sqe *sqe = sqe_next(q);
	struct ring_cmd *c;

	if (!sqe)
		return;
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = ur.devfd;
	sqe->cmd_op = CMD_REGISTER;
	sqe->addr = (uint64_t)(uintptr_t)iov;
	sqe->len = 2;
	sqe->user_data = ABANDON_TAG;
	c = (struct ring_cmd *)sqe->cmd;
	c->qid = UINT16_MAX;	/* no such queue: EINVAL, and the connection turns to /dev/fuse */
	submit(q);
}

/* Completions of @q's commands, and requests, until the connection or the mount ends. */
static void *queue_main(void *arg)
{
	struct uring_queue *q = arg;
	char name[16];
	cpu_set_t set;
	int err;
	bool gone = false;

	snprintf(name, sizeof(name), "awfs-ring%u", q->qid);
	pthread_setname_np(pthread_self(), name);
	/*
	 * On its CPU: the kernel puts a caller's request in the queue of the
	 * CPU the caller runs on, so the caller's CPU serves it, with no
	 * wakeup of another (halved create and open times here, against
	 * unpinned threads that were slower than /dev/fuse). A CPU outside
	 * awfs's allowed set (taskset, a cpuset) refuses: the thread then
	 * runs where the scheduler puts it.
	 */
	CPU_ZERO(&set);
	CPU_SET(q->qid, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		/* served from elsewhere */
	}
	err = arm_poll(q);
	if (!err)
		err = register_entries(q);
	if (err) {
		say_failed("a queue's entries could not be registered", err);
		/* with none, nobody would serve this CPU's requests: the kernel is told to give io_uring up */
		if (q->nents == 0)
			abandon(q);
	}
	while (!__atomic_load_n(&ur.stop, __ATOMIC_ACQUIRE) && !gone) {
		unsigned head = *q->cq_head, tail = __atomic_load_n(q->cq_tail, __ATOMIC_ACQUIRE);

		if (head == tail) {
			uint64_t start = util_now_ns(), spin = (uint64_t)ur.spin_us * 1000u;

			while (head == tail && util_now_ns() - start < spin) {
				sched_yield();	/* the kernel's task work (a request's copy) runs on the way back */
				tail = __atomic_load_n(q->cq_tail, __ATOMIC_ACQUIRE);
			}
			if (head == tail) {
				if (ring_enter(q->fd, 0, 1, IORING_ENTER_GETEVENTS) < 0 && errno != EINTR &&
				    errno != EAGAIN && errno != EBUSY) {
					say_failed("waiting on a ring", -errno);
					break;
				}
				continue;
			}
		}
		while (head != tail) {
			struct io_uring_cqe c = q->cqes[head & *q->cq_mask];
			struct uring_ent *e = (struct uring_ent *)(uintptr_t)c.user_data;

			__atomic_store_n(q->cq_head, ++head, __ATOMIC_RELEASE);
			if (c.user_data == POLL_TAG) {
				drain_done(q);
				if (!(c.flags & IORING_CQE_F_MORE) && arm_poll(q) != 0)
					say_failed("the eventfd's poll could not be armed again", -EBUSY);
				continue;
			}
			if (c.res == 0) {
				request(q, e);
			} else if (c.res == -EAGAIN || c.res == -EINTR) {
				send_cmd(q, e, e->last_cmd);
			} else if (c.res == -ENOTCONN || c.res == -ECONNABORTED || c.res == -ECANCELED) {
				gone = true;	/* the connection ended: the mount is going */
			} else if (c.user_data != ABANDON_TAG) {
				/* the entry is the kernel's no more: one less to count on */
				q->nents--;
				if (!__atomic_exchange_n(&lost_logged, 1, __ATOMIC_RELAXED))
					log_msg(AWFS_LOG_WARN, "FUSE over io_uring: the kernel refused %s of queue %u: %s; %u entries left in it",
						e->last_cmd == CMD_REGISTER ? "an entry" : "a reply", q->qid,
						strerror(-c.res), q->nents);
			}
		}
	}
	return NULL;
}

int uring_start(struct fuse_session *se, uring_serve_fn serve, unsigned spin_us)
{
	sigset_t all, old;
	int err = 0;

	(void)se;
	if (ur.mode != URING_ON)
		return 0;
	ur.serve = serve;
	ur.spin_us = spin_us;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);	/* inherited: signals go to the listener */
	for (unsigned i = 0; i < ur.nq && !err; i++) {
		err = -pthread_create(&ur.qs[i].tid, NULL, queue_main, &ur.qs[i]);
		ur.qs[i].started = !err;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		/* a queue nobody serves would hold every request: give io_uring up */
		say_failed("a queue's thread could not be started", err);
		for (unsigned i = 0; i < ur.nq; i++)
			if (!ur.qs[i].started) {	/* a ring no thread submits to */
				abandon(&ur.qs[i]);
				break;
			}
		return err;
	}
	return 0;
}

void uring_stop(void)
{
	uint64_t one = 1;

	if (!ur.qs)
		return;
	__atomic_store_n(&ur.stop, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < ur.nq; i++)
		if (ur.qs[i].started && write(ur.qs[i].efd, &one, sizeof(one)) < 0) {
			/* full: a wakeup is pending */
		}
	for (unsigned i = 0; i < ur.nq; i++)
		if (ur.qs[i].started) {
			pthread_join(ur.qs[i].tid, NULL);
			ur.qs[i].started = false;
		}
}

void uring_report(uint64_t dev_requests)
{
	if (ur.mode != URING_ON && ur.mode != URING_OFF_FAILED)
		return;
	log_msg(AWFS_LOG_INFO, "FUSE over io_uring: %" PRIu64 " requests came through the queues, at most %u of a queue's %u entries held at once; %" PRIu64 " through /dev/fuse",
		__atomic_load_n(&ur.served, __ATOMIC_RELAXED), ur.most, DEPTH, dev_requests);
}

void uring_free(void)
{
	if (!ur.qs)
		return;
	for (unsigned i = 0; i < ur.nq; i++) {
		if (ur.qs[i].most_held > ur.most)
			ur.most = ur.qs[i].most_held;
		queue_free(&ur.qs[i]);
	}
	free(ur.qs);
	ur.qs = NULL;
}
