/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * loop.c - awfs's request loop, in place of libfuse's multithreaded one.
 *
 * What a FUSE request costs on a VM is mostly wakeups: the caller sleeps
 * until the reply, and a daemon thread asleep in read(/dev/fuse) must be
 * woken for the request, each wakeup of an idle CPU an inter-processor
 * interrupt and a halt exit (perf: __wake_up and the idle loop, awfs's own
 * code under 2%). libfuse's loop parks every idle worker in read(), so every
 * request wakes one of them, in turn.
 *
 * Here one listener, the calling thread, is the only reader of /dev/fuse. It
 * serves requests itself and, after each, polls the device (non-blocking)
 * for spin_us before it sleeps in poll(): a caller issuing requests back to
 * back finds it awake. Requests that can wait on the disk go to workers
 * (each with its own condition variable, not a reader of the device), so a
 * slow fsync or cold read never holds up the others: when every worker is
 * busy they wait in a queue, a lane for each caller taken in turn, never on
 * the listener (dispatch()). A large request whose
 * payload libfuse left in the listener's splice pipe is served where it was
 * read. Signals reach the listener only (the workers block them), which
 * ends its poll() with EINTR.
 *
 * A third kind of thread, the trimmer, bounds what the kernel's cache of
 * inodes costs awfs. The kernel decides how many inodes it keeps; each
 * costs awfs memory, and an fd when the source gives no file handle
 * (inode.c: with one, the fds are a bounded cache and cost nothing here).
 * Past fd_high inodes that keep an fd, or mem_high inodes in all
 * (directories count, but only files are dropped: a directory would take
 * its subtree with it), the trimmer asks the kernel to drop the files
 * looked up least recently, under the name the kernel has each by now (a
 * notification, never from a request's own thread, as libfuse requires);
 * the kernel then forgets those it does not use, and their memory (and
 * fds) are freed. The trimmer is started the first time a mark is passed.
 *
 * A fourth, the watcher (watch.c), turns the host's changes in read-only
 * directories into invalidations. Both stop before the loop returns, the
 * listener serving meanwhile (helpers_stop()).
 *
 * A fifth, the keepers (-o keepers=on only), one pinned to each CPU, yield
 * their CPU in a loop while the listener is awake on another, so that the
 * CPU a caller sleeps on for its reply does not halt (keep_start(), the
 * first time the listener sleeps). They serve nothing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fuse.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "inode.h"
#include "log.h"
#include "loop.h"
#include "passthrough.h"
#include "uring.h"
#include "util.h"
#include "watch.h"

struct loop;

/*
 * The largest request a worker serves: every slow opcode's header and
 * arguments (COPY_FILE_RANGE, the largest, is 40 + 56 bytes). A worker gets
 * a copy of the request, not the listener's buffer: the buffers a large
 * WRITE has filled stay the listener's one, so the daemon's memory does not
 * grow by a touched megabyte per worker.
 */
#define SLOW_MAX 256

/*
 * Slow requests wait in a queue, never on the listener: one lane per caller
 * (the uid the kernel gives), taken in turn by the workers, so a caller
 * with a hundred requests waiting goes no faster than one with one. The
 * last quarter of the workers (one at least: reserve) serve only callers
 * that have nothing running: callers with work in progress share the
 * others, so agents that keep all their threads in fsync or
 * copy_file_range, under one uid or several, cannot make root's read wait
 * for one of theirs to end.
 *
 * An FSYNCDIR goes first in its lane and passes those limits: the kernel
 * holds the directory's lock while it waits, and every lookup in that
 * directory, anyone's, waits for it (FSYNC, FALLOCATE, COPY_FILE_RANGE and
 * LSEEK hold a file's lock, which only writers of that file need).
 *
 * What is queued is bounded: LANE_QUEUED requests a caller (each a blocked
 * thread of its own, which costs it far more in the kernel than the 300
 * bytes here), past which its next slow request fails at once with EAGAIN,
 * and LANES callers with work at once, past which callers share lanes (by
 * their uid's hash): a sandbox's callers are a few uids.
 */
#define LANES 64
#define LANE_QUEUED 4096
/*
 * With FUSE over io_uring each of a caller's slow requests, queued or
 * running, also holds a ring entry (uring.h): a caller may hold this many
 * at once, in all queues together; past that its next slow request fails
 * at once with EAGAIN, and the entries stay for the others.
 */
#define LANE_RING_HELD 128
#define JOBS_SPARE 64	/* finished requests kept for the next ones */

struct job {
	struct job *next;
	struct fuse_buf buf;	/* .mem = req */
	struct uring_ent *ent;	/* the ring entry to answer through, or NULL (/dev/fuse) */
	struct lane *lane;
	bool first;		/* FSYNCDIR: first in its lane, past the limits */
	uint64_t req[SLOW_MAX / sizeof(uint64_t)];
};

struct lane {
	bool used;		/* claimed by uid (queued or running > 0) */
	uint32_t uid;
	struct job *head, **tail;
	unsigned queued, running;
};

struct worker {
	struct loop *loop;
	pthread_t tid;
	pthread_cond_t wake;
	bool idle;		/* on the idle list, asleep */
	struct worker *next_idle;
};

/* Everything here but se and the arrays' sizes is under lock. */
struct loop {
	struct fuse_session *se;
	pthread_mutex_t lock;
	struct worker *idle;
	struct worker **workers;
	unsigned nworkers, max_workers, reserve;
	unsigned running;	/* requests being served */
	struct lane lanes[LANES];
	unsigned next_lane;	/* where the next turn starts */
	struct job *spare;
	unsigned nspare;
	int stop;
};

/*
 * The CPUs the process may run on, as the loop found them: a thread started
 * from a queue's thread (pinned to its CPU, uring.c) would inherit its one
 * CPU, so workers and the trimmer set this again first.
 */
static cpu_set_t loop_cpus;
static bool loop_cpus_known;

static void unpin(void)
{
	if (loop_cpus_known && sched_setaffinity(0, sizeof(loop_cpus), &loop_cpus) < 0) {
		/* left where it was started */
	}
}

/*
 * COPY_FILE_RANGE_64 (protocol 7.45), which Linux 6.18 sends first, is
 * COPY_FILE_RANGE with a reply that counts in 64 bits: libfuse 3.14 knows
 * only the older one, and the kernel turns to it after an ENOSYS; but the
 * first copies of several threads at once each get that ENOSYS, and the
 * kernel takes the second one for a refusal of the older request too
 * (it checks its flag, not the request it sent): from then on every copy
 * of the mount is the kernel's own splice, unbounded, through awfs's
 * READ and WRITE or the passthrough. Each is served as the older request,
 * whose arguments are the same; its reply, a 32-bit count and 32 zero
 * bits, reads as the 64-bit count on a little-endian machine.
 */
#define OP_COPY_FILE_RANGE_64 53

static void normalize(const struct fuse_buf *buf)
{
	struct fuse_in_header *in = buf->mem;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (!(buf->flags & FUSE_BUF_IS_FD) && buf->size >= sizeof(*in) && in->opcode == OP_COPY_FILE_RANGE_64)
		in->opcode = FUSE_COPY_FILE_RANGE;
#else
	(void)in;
#endif
}

/*
 * Requests that may wait on the disk: served off the listener. A handler
 * moved here must keep inode.h's thread contract: no listener-only field
 * (cfd through inode_fd(), readable, listings, opens), its own fd instead.
 */
static int is_slow(const struct fuse_buf *buf)
{
	const struct fuse_in_header *in = buf->mem;

	if (buf->flags & FUSE_BUF_IS_FD)
		return 0;	/* the payload is in this thread's pipe */
	if (buf->size > SLOW_MAX)
		return 0;
	switch (in->opcode) {
	case FUSE_READ:
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:
	case FUSE_FALLOCATE:
	case FUSE_LSEEK:
	case FUSE_COPY_FILE_RANGE:
		return 1;
	default:
		return 0;
	}
}

/*
 * The kernel's passthrough, which libfuse 3.14 cannot ask for (passthrough.h):
 * whether INIT offered it (FUSE_PASSTHROUGH, bit 37: in flags2, present
 * with FUSE_INIT_EXT); its reply accepts it (io_writev()).
 */
#define INIT_EXT (1u << 30)
#define INIT2_PASSTHROUGH (1u << (37 - 32))
#define INIT2_OVER_IO_URING (1u << (41 - 32))
#define INIT_MAX_PAGES (1u << 22)
#define OPEN_PASSTHROUGH (1u << 7)	/* FOPEN_PASSTHROUGH */
/* ... and what may go with it (the kernel fails the open, EIO, on any other: KEEP_CACHE) */
#define OPEN_PASSTHROUGH_MASK (OPEN_PASSTHROUGH | (1u << 0) /* DIRECT_IO */ | \
			       (1u << 5) /* NOFLUSH */ | (1u << 6) /* PARALLEL_DIRECT_WRITES */)

static bool init_offered, init_offered_uring;
static uint64_t dev_requests;	/* served from /dev/fuse after INIT (the unmount's line, with io_uring) */

static void note_init(const struct fuse_buf *buf)
{
	const struct fuse_in_header *in = buf->mem;
	const uint32_t *arg = (const uint32_t *)(in + 1);	/* major, minor, readahead, flags, flags2 */
	bool ext = buf->size >= sizeof(*in) + 5 * sizeof(uint32_t) && (arg[3] & INIT_EXT);

	init_offered = ext && (arg[4] & INIT2_PASSTHROUGH);
	init_offered_uring = ext && (arg[4] & INIT2_OVER_IO_URING);
}

/*
 * Serve one request. A thread keeps the fsuid of the last writer it wrote
 * for (host_as_writer(): a run of one caller's writes costs no switch):
 * every other request, and every request whose header is still in the
 * pipe (a large one: a WRITE, whose switch is then small beside its
 * payload), first gets the daemon's back.
 */
static void serve(struct fuse_session *se, const struct fuse_buf *buf)
{
	const struct fuse_in_header *in = buf->mem;

	if (!(buf->flags & FUSE_BUF_IS_FD) && buf->size >= sizeof(*in) && in->opcode == FUSE_INIT)
		note_init(buf);
	if ((buf->flags & FUSE_BUF_IS_FD) || buf->size < sizeof(*in) ||
	    (in->opcode != FUSE_WRITE && in->opcode != FUSE_FALLOCATE && in->opcode != FUSE_COPY_FILE_RANGE))
		host_writer_reset();
	fuse_session_process_buf(se, buf);
}

/*
 * Every request but the slow ones is served under this lock: inode.h's
 * listener-only state (inode_fd()'s cache, readable, listings, opens) is
 * then touched by one thread at a time, whether the request came through
 * /dev/fuse (the listener) or through an io_uring queue (a thread per CPU).
 */
static pthread_mutex_t serve_lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;	/* handed between CPUs: spin a little first */

/*
 * Serve a request and, when it came through a ring entry, make sure the
 * entry is answered (a handler that sent nothing: EIO, or the entry, and
 * the request's caller, would wait for ever).
 */
static void serve_job(struct fuse_session *se, const struct fuse_buf *buf, struct uring_ent *ent)
{
	uring_set_current(ent);
	serve(se, buf);
	if (ent && uring_current() == ent)
		uring_reply_error(ent, EIO);
	uring_set_current(NULL);
}

/* A request that is not slow, from /dev/fuse (@ent NULL) or a ring entry, under the lock. */
static void serve_fast(struct fuse_session *se, const struct fuse_buf *buf, struct uring_ent *ent)
{
	pthread_mutex_lock(&serve_lock);
	inode_listener_enter();
	serve_job(se, buf, ent);
	inode_listener_leave();
	pthread_mutex_unlock(&serve_lock);
}

/* The lane of @uid: its own, a free one, or (all taken) one shared by hash. */
static struct lane *lane_of(struct loop *l, uint32_t uid)
{
	unsigned h = (uid * 2654435761u) % LANES, free_at = LANES;

	for (unsigned k = 0; k < LANES; k++) {
		struct lane *ln = &l->lanes[(h + k) % LANES];

		if (ln->used && ln->uid == uid)
			return ln;
		if (!ln->used && free_at == LANES)
			free_at = (h + k) % LANES;
	}
	if (free_at == LANES)
		return &l->lanes[h];
	l->lanes[free_at] = (struct lane){ .used = true, .uid = uid };
	l->lanes[free_at].tail = &l->lanes[free_at].head;
	return &l->lanes[free_at];
}

/* Whether the first request of @ln may start now (under lock). */
static bool lane_may_run(const struct loop *l, const struct lane *ln)
{
	return ln->head && (ln->head->first || ln->running == 0 ||
			    l->running < l->max_workers - l->reserve);
}

/* The next request a worker may take, in turn between callers; NULL when none. */
static struct job *job_take(struct loop *l)
{
	for (unsigned k = 0; k < LANES; k++) {
		struct lane *ln = &l->lanes[(l->next_lane + k) % LANES];
		struct job *j = ln->head;

		if (!lane_may_run(l, ln))
			continue;
		ln->head = j->next;
		if (!ln->head)
			ln->tail = &ln->head;
		ln->queued--;
		ln->running++;
		l->running++;
		l->next_lane = (l->next_lane + k + 1) % LANES;
		return j;
	}
	return NULL;
}

/* @j was served: its lane runs one less, and is free when it has nothing left. */
static void job_done(struct loop *l, struct job *j)
{
	struct lane *ln = j->lane;

	l->running--;
	if (--ln->running == 0 && ln->queued == 0)
		ln->used = false;
	if (l->nspare < JOBS_SPARE) {
		j->next = l->spare;
		l->spare = j;
		l->nspare++;
	} else {
		free(j);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct loop *l = w->loop;
	struct job *j;

	pthread_setname_np(pthread_self(), "awfs-worker");
	unpin();

	pthread_mutex_lock(&l->lock);
	while (!l->stop) {
		j = job_take(l);
		if (j) {
			pthread_mutex_unlock(&l->lock);
			serve_job(l->se, &j->buf, j->ent);
			pthread_mutex_lock(&l->lock);
			job_done(l, j);
			continue;
		}
		w->idle = true;
		w->next_idle = l->idle;
		l->idle = w;
		while (w->idle && !l->stop)
			pthread_cond_wait(&w->wake, &l->lock);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* A new worker, which looks for work at once; NULL when none can be started. */
static struct worker *worker_start(struct loop *l)
{
	struct worker *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int err;

	if (!w)
		return NULL;
	w->loop = l;
	pthread_cond_init(&w->wake, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);	/* inherited: signals go to the listener */
	err = pthread_create(&w->tid, NULL, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&w->wake);
		free(w);
		return NULL;
	}
	return w;
}

/* Answer the request in @buf with -@err, from where it was read (its lane is full). */
static void reply_now(struct loop *l, const struct fuse_buf *buf, struct uring_ent *ent, int err)
{
	const struct fuse_in_header *in = buf->mem;
	struct fuse_out_header out = { .len = sizeof(out), .error = -err, .unique = in->unique };

	if (ent) {
		uring_reply_error(ent, err);
		return;
	}
	while (write(fuse_session_fd(l->se), &out, sizeof(out)) < 0 && errno == EINTR)
		;
}

/*
 * Wake a worker for a request just queued, or start one (listener; under
 * lock). False only when there is no worker at all and none can be started.
 */
static bool worker_wake(struct loop *l)
{
	struct worker *w = l->idle;

	if (w) {
		l->idle = w->next_idle;
		w->idle = false;
		pthread_cond_signal(&w->wake);
		return true;
	}
	if (l->nworkers < l->max_workers) {
		/* a new thread inherits this one's credentials: the daemon's, not a writer's it kept */
		host_writer_reset();
		w = worker_start(l);
		if (w)
			l->workers[l->nworkers++] = w;	/* only the listener adds */
	}
	return l->nworkers > 0;
}

/*
 * Queue a copy of the slow request in @buf in its caller's lane (the
 * listener, or the ring queue's thread it came through: then @ent). A
 * worker is woken when the caller may run one more; otherwise the request
 * waits for one of its caller's to end. @room: what its ring queue's
 * entries allow (each request here holds one, uring.h): short of them, a
 * caller with requests already waiting or running is refused, as at a
 * full lane; a caller with none is queued unless the queue is full.
 */
static void dispatch(struct loop *l, const struct fuse_buf *buf, struct uring_ent *ent, enum uring_room room)
{
	const struct fuse_in_header *in = buf->mem;
	struct lane *ln;
	struct job *j;

	pthread_mutex_lock(&l->lock);
	ln = lane_of(l, in->uid);
	if (ln->queued >= LANE_QUEUED || room == URING_FULL ||
	    (ent && ln->queued + ln->running >= LANE_RING_HELD) ||
	    (room == URING_SHORT && ln->queued + ln->running > 0)) {
		if (ln->queued + ln->running == 0)
			ln->used = false;	/* claimed by lane_of() for nothing */
		pthread_mutex_unlock(&l->lock);
		reply_now(l, buf, ent, EAGAIN);
		return;
	}
	j = l->spare;
	if (j) {
		l->spare = j->next;
		l->nspare--;
	} else {
		j = util_xmalloc(sizeof(*j));
	}
	memcpy(j->req, buf->mem, buf->size);	/* is_slow(): at most SLOW_MAX */
	j->buf = (struct fuse_buf){ .size = buf->size, .mem = j->req };
	j->ent = ent;
	j->lane = ln;
	j->first = in->opcode == FUSE_FSYNCDIR;
	if (j->first) {
		j->next = ln->head;
		ln->head = j;
		if (!j->next)
			ln->tail = &j->next;
	} else {
		j->next = NULL;
		*ln->tail = j;
		ln->tail = &j->next;
	}
	ln->queued++;
	if (lane_may_run(l, ln) && !worker_wake(l)) {
		/* no thread at all (the system's limit): served here, as a last resort */
		j = job_take(l);
		pthread_mutex_unlock(&l->lock);
		pthread_mutex_lock(&serve_lock);	/* the listener's state: one thread at a time */
		serve_job(l->se, &j->buf, j->ent);
		pthread_mutex_unlock(&serve_lock);
		pthread_mutex_lock(&l->lock);
		job_done(l, j);
	}
	pthread_mutex_unlock(&l->lock);
}

/*
 * Keepers: a thread on each CPU awfs may run on (KEEP_MAX at most), pinned
 * there, that yields the CPU in a loop while the listener is awake on
 * another CPU, and sleeps on a futex while the listener sleeps or polls on
 * its own CPU. On a VM a CPU with nothing to run halts, and waking it costs
 * an inter-processor interrupt and a halt exit: the reply to a caller
 * asleep on another CPU paid that on every request (a stat() with zero
 * timeouts, cache=never, as root: 66 us through the listener on the other
 * CPU, 35 us with both on one CPU or with a thread yielding on the
 * caller's; docs/performance.md). A keeper yields (sched_yield), so any
 * other task on its CPU's run queue goes first: it costs a caller nothing
 * but CPU time that would otherwise be idle. (As SCHED_IDLE, which would
 * give way across cgroups too, the same stat() took 79-107 us: not used.) Not
 * on the listener's CPU: the listener never blocks while it polls, and
 * beside a keeper that never blocks either the scheduler gave each half of
 * the CPU (a find over 20,000 files took 0.4 s instead of 0.17 s one run in
 * five). Nor while the listener has been stuck in one request for over
 * KEEP_STALE_NS (a hung source): then a keeper naps that long at a time. A
 * keeper touches no file, no request and no state but the words it reads.
 *
 * Off unless asked for (-o keepers=on): a CPU that never halts is host CPU
 * spent, and where a VM's CPUs share the host's with other work the
 * keeper's spinning is taken from the listener's and the callers' own
 * time (with a cgroup quota of one CPU for two standing in for such a
 * host, a create, find, cat and stat workload 1.6 times slower:
 * docs/performance.md).
 */
#define KEEP_MAX 8
#define KEEP_STALE_NS 1000000u

static struct {
	uint32_t word;		/* the futex word: 0 while the listener sleeps, else 1 + its CPU */
	int stop;
	unsigned n;
	uint64_t beat;		/* util_now_ns() at the listener's last turn for a request */
	bool armed;		/* to start the first time the listener goes to sleep */
	pthread_t tid[KEEP_MAX];
} keep;

static void *keep_main(void *arg)
{
	uint32_t mine = (uint32_t)(uintptr_t)arg + 1, w;
	const struct timespec nap = { 0, KEEP_STALE_NS };

	while (!__atomic_load_n(&keep.stop, __ATOMIC_ACQUIRE)) {
		uint64_t beat = __atomic_load_n(&keep.beat, __ATOMIC_RELAXED), t = util_now_ns();

		w = __atomic_load_n(&keep.word, __ATOMIC_ACQUIRE);
		if (w == 0 || w == mine)	/* until the listener wakes, or moves */
			(void)syscall(SYS_futex, &keep.word, FUTEX_WAIT_PRIVATE, w, NULL, NULL, 0);
		else if (t > beat && t - beat > KEEP_STALE_NS)
			nanosleep(&nap, NULL);
		else
			sched_yield();
	}
	return NULL;
}

/* The listener is awake (and where), or goes to sleep: the keepers follow. */
static void keep_set(bool awake)
{
	int cpu;
	uint32_t w;

	if (keep.n == 0)
		return;
	cpu = awake ? sched_getcpu() : -1;
	w = !awake ? 0 : cpu >= 0 && cpu < CPU_SETSIZE ? (uint32_t)cpu + 1 : CPU_SETSIZE + 1;
	if (__atomic_load_n(&keep.word, __ATOMIC_RELAXED) == w)
		return;
	__atomic_store_n(&keep.word, w, __ATOMIC_RELEASE);
	if (w)
		(void)syscall(SYS_futex, &keep.word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/*
 * Keepers, when the listener polls at all and there is another CPU. They
 * start the first time the listener goes to sleep, not before it serves:
 * the mount's first requests (and the mount's latency) do not wait for
 * them, and a mount that never gets a burst of requests does without.
 * Called by the listener only.
 */
static void keep_arm(bool wanted, unsigned spin_us)
{
	keep.armed = wanted && spin_us > 0 && CPU_COUNT(&loop_cpus) >= 2;
}

/* One keeper a CPU of the loop's (loop_cpus), unless a CPU quota applies. */
static void keep_start(void)
{
	char why[PATH_MAX + 96];
	sigset_t all, old;

	/*
	 * Under a CPU quota (docker run --cpus, a unit's CPUQuota=) the time a
	 * keeper yields away is still charged to the group, and the caller's
	 * own work would be throttled for it: none then.
	 */
	if (util_cpu_quota("/", why, sizeof(why))) {
		log_msg(AWFS_LOG_INFO, "no keeper threads: a CPU quota applies (%s)", why);
		return;
	}
	__atomic_store_n(&keep.beat, util_now_ns(), __ATOMIC_RELAXED);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (unsigned cpu = 0; cpu < CPU_SETSIZE && keep.n < KEEP_MAX; cpu++) {
		pthread_attr_t attr;
		cpu_set_t one;
		char name[16];

		if (!CPU_ISSET(cpu, &loop_cpus) || pthread_attr_init(&attr) != 0)
			continue;
		/* on its CPU from its first instruction, or not at all */
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (pthread_attr_setaffinity_np(&attr, sizeof(one), &one) == 0 &&
		    pthread_create(&keep.tid[keep.n], &attr, keep_main, (void *)(uintptr_t)cpu) == 0) {
			snprintf(name, sizeof(name), "awfs-keep%u", cpu);
			pthread_setname_np(keep.tid[keep.n], name);
			keep.n++;
		}	/* else its CPU halts as before */
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	keep_set(true);
}

static void keep_stop(void)
{
	keep.armed = false;
	__atomic_store_n(&keep.stop, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&keep.word, CPU_SETSIZE + 1, __ATOMIC_RELEASE);
	(void)syscall(SYS_futex, &keep.word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	for (unsigned i = 0; i < keep.n; i++)
		pthread_join(keep.tid[i], NULL);
	keep.n = 0;
}

/*
 * The stop signals (SIGHUP, SIGINT, SIGTERM). A handler that only marks
 * the session exited, as libfuse's does, loses a signal that comes after
 * the listener last read that mark and before it sleeps in poll(): the
 * listener then sleeps on until the next request, which on an idle mount
 * never comes (a SIGTERM right after a request hung 2 mounts in 100 under
 * load, with keepers). So the handler also writes an eventfd that
 * receive() polls beside /dev/fuse: a signal at any point wakes it. The
 * helper threads block every signal, so the handler runs on the listener.
 */
static const int stop_signals[] = { SIGHUP, SIGINT, SIGTERM };
static struct fuse_session *stop_se;
static int stop_fd = -1;

static void on_stop_signal(int sig)
{
	int saved = errno;
	uint64_t one = 1;

	(void)sig;
	fuse_session_exit(stop_se);
	if (stop_fd >= 0)	/* full (2^64 - 2 signals): the mark is set, a request still ends the wait */
		(void)!write(stop_fd, &one, sizeof(one));
	errno = saved;
}

int loop_set_signal_handlers(struct fuse_session *se)
{
	struct sigaction sa, old;

	stop_se = se;
	stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (stop_fd < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop_signal;
	for (size_t i = 0; i < AWFS_ARRAY_LEN(stop_signals); i++) {
		/* as libfuse: a signal its starter set to be ignored stays ignored */
		if (sigaction(stop_signals[i], NULL, &old) < 0)
			return -errno;
		if (old.sa_handler == SIG_DFL && sigaction(stop_signals[i], &sa, NULL) < 0)
			return -errno;
	}
	sa.sa_handler = SIG_IGN;	/* a write to a closed pipe: EPIPE, not death */
	if (sigaction(SIGPIPE, NULL, &old) < 0 || (old.sa_handler == SIG_DFL && sigaction(SIGPIPE, &sa, NULL) < 0))
		return -errno;
	return 0;
}

void loop_remove_signal_handlers(void)
{
	struct sigaction sa, cur;
	int fd = stop_fd;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_DFL;
	for (size_t i = 0; i < AWFS_ARRAY_LEN(stop_signals); i++)	/* only those set here */
		if (sigaction(stop_signals[i], NULL, &cur) == 0 && cur.sa_handler == on_stop_signal)
			(void)sigaction(stop_signals[i], &sa, NULL);
	stop_fd = -1;
	if (fd >= 0)
		close(fd);
}

/*
 * The next request into *buf, as fuse_session_receive_buf() returns it: > 0
 * its size, 0 when the session ended, -EINTR after a signal, else -errno.
 */
static int receive(struct loop *l, struct fuse_buf *buf, uint64_t spin_ns)
{
	struct pollfd pfd[2] = {
		{ .fd = fuse_session_fd(l->se), .events = POLLIN },
		{ .fd = stop_fd, .events = POLLIN },	/* a stop signal (negative: none) */
	};
	uint64_t start = util_now_ns();
	uint64_t t;
	int res;

	__atomic_store_n(&keep.beat, start, __ATOMIC_RELAXED);	/* served one: the keepers go on */
	for (;;) {
		res = fuse_session_receive_buf(l->se, buf);
		if (res != -EAGAIN)
			return res;
		if (fuse_session_exited(l->se))
			return 0;
		t = util_now_ns();
		if (t - start < spin_ns) {
			__atomic_store_n(&keep.beat, t, __ATOMIC_RELAXED);	/* polling, not stuck */
			sched_yield();	/* a caller runnable on this CPU goes first */
			keep_set(true);	/* the keepers of the other CPUs, if it moved */
			continue;
		}
		if (keep.armed) {
			keep.armed = false;
			keep_start();
		}
		keep_set(false);
		res = poll(pfd, 2, -1);
		keep_set(true);
		if ((res < 0 && errno == EINTR) || (res > 0 && pfd[1].revents))
			return -EINTR;	/* the caller reads the session's mark */
		start = util_now_ns();
	}
}

#define TRIM_BATCH 256

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int started, poked, stop, done;
	pthread_t tid;
	struct fuse_session *se;
	uint64_t fd_high;
} trim = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static void *trim_main(void *arg);

/*
 * The inode table's pressure hook: called on each host inode added past
 * high. The trimmer starts here, the first time: a mount that never holds
 * that many never has one (a thread less to start and stop).
 */
static void trim_poke(void)
{
	pthread_mutex_lock(&trim.lock);
	if (!trim.started && !trim.stop) {
		sigset_t all, old;
		int err;

		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		err = pthread_create(&trim.tid, NULL, trim_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err) {
			/* no trimmer: lookups past the fd limit fail with EMFILE */
			inode_set_pressure(UINT64_MAX, UINT64_MAX, NULL);
			log_msg(AWFS_LOG_ERR, "cannot start the trimmer: %s; the kernel's inodes are kept without bound (without file handles, lookups past the open file limit fail: EMFILE)",
				strerror(err));
			pthread_mutex_unlock(&trim.lock);
			return;
		}
		trim.started = 1;
	}
	if (!trim.poked) {
		trim.poked = 1;
		pthread_cond_signal(&trim.wake);
	}
	pthread_mutex_unlock(&trim.lock);
}

static void trim_round(void)
{
	static struct inode_ref v[TRIM_BATCH];
	static int told;
	uint64_t files = inode_host_files(), want = inode_over();
	const struct timespec settle = { 0, 5 * 1000 * 1000 };
	size_t n;

	if (want == 0)
		return;
	if (want > files && inode_fixed() > trim.fd_high && !told) {
		told = 1;
		log_msg(AWFS_LOG_WARN, "the kernel holds %llu directories, more than the %llu fds awfs keeps for files and directories of a source without file handles: files are dropped as soon as they are looked up, and past the open file limit lookups fail (EMFILE); raise the limit (ulimit -Hn, LimitNOFILE=)",
			(unsigned long long)inode_host_dirs(), (unsigned long long)trim.fd_high);
	}
	/* down to 3/4 of the marks, oldest files first: directories stay */
	if (want > files)
		want = files;
	for (; want > 0; want -= n) {
		n = inode_oldest(v, want < TRIM_BATCH ? (size_t)want : TRIM_BATCH);
		if (n == 0)
			break;
		for (size_t i = 0; i < n; i++) {
			/* -ENOENT: the kernel dropped it already; nothing else to do */
			if (!__atomic_load_n(&trim.stop, __ATOMIC_RELAXED)) {
				(void)fuse_lowlevel_notify_inval_entry(trim.se, v[i].parent_id,
								       v[i].name, strlen(v[i].name));
				if (v[i].name2)	/* a hard link: the kernel keeps it by both */
					(void)fuse_lowlevel_notify_inval_entry(trim.se, v[i].parent_id2,
									       v[i].name2, strlen(v[i].name2));
			}
			free(v[i].name);
			free(v[i].name2);
		}
		if (__atomic_load_n(&trim.stop, __ATOMIC_RELAXED))
			return;
	}
	nanosleep(&settle, NULL);	/* let the FORGETs in before counting again */
}

static void *trim_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "awfs-trim");	/* top -H, /proc/PID/task */
	unpin();
	pthread_mutex_lock(&trim.lock);
	while (!trim.stop) {
		if (!trim.poked) {
			pthread_cond_wait(&trim.wake, &trim.lock);
			continue;
		}
		trim.poked = 0;
		pthread_mutex_unlock(&trim.lock);
		trim_round();
		pthread_mutex_lock(&trim.lock);
	}
	trim.done = 1;
	pthread_mutex_unlock(&trim.lock);
	return NULL;
}

/* Arm the trimmer: it starts past either mark (trim_poke()). */
static void trim_arm(struct fuse_session *se, uint64_t fd_high, uint64_t mem_high)
{
	trim.se = se;
	trim.fd_high = fd_high;
	trim.started = trim.stop = trim.poked = trim.done = 0;
	inode_set_pressure(fd_high, mem_high, trim_poke);
}

/* The trimmer has stopped, or never started. */
static int trim_done(void)
{
	int done;

	pthread_mutex_lock(&trim.lock);
	done = !trim.started || trim.done;
	pthread_mutex_unlock(&trim.lock);
	return done;
}

/*
 * Stop the threads that notify the kernel (the trimmer, the watcher). A
 * notification waits for the directory's lock, which a request in that
 * directory may hold until it is answered: so while they finish, the
 * listener goes on serving (after a signal libfuse has marked the session
 * exited; it is marked again after), until the device is gone.
 */
static void helpers_stop(struct loop *l, struct fuse_buf *buf)
{
	const struct timespec pause = { 0, 1000 * 1000 };
	int exited = fuse_session_exited(l->se), res;

	inode_set_pressure(UINT64_MAX, UINT64_MAX, NULL);	/* no trimmer starts from here on */
	pthread_mutex_lock(&trim.lock);
	__atomic_store_n(&trim.stop, 1, __ATOMIC_RELAXED);
	pthread_cond_signal(&trim.wake);
	pthread_mutex_unlock(&trim.lock);
	watch_stop();
	if (exited)
		fuse_session_reset(l->se);
	while (!trim_done() || !watch_done()) {
		res = fuse_session_receive_buf(l->se, buf);
		if (res > 0) {
			__atomic_add_fetch(&dev_requests, 1, __ATOMIC_RELAXED);
			normalize(buf);
			serve_fast(l->se, buf, NULL);
		}
		else if (res == -EAGAIN || res == -EINTR)
			nanosleep(&pause, NULL);
		else
			break;	/* unmounted: the notification fails at once */
	}
	if (trim.started)	/* stop is set: started no longer changes */
		pthread_join(trim.tid, NULL);
	if (exited)
		fuse_session_exit(l->se);
}

/*
 * The session's I/O is libfuse's own but for one reply, INIT's: it gets
 * FUSE_HANDLE_KILLPRIV_V2, which libfuse 3.14 cannot ask for. With it the
 * kernel leaves clearing set-user-ID and set-group-ID bits on write and
 * truncate to awfs (ops.c does it for every caller but root) and marks the
 * super block SB_NOSEC: it stops asking for security.capability (a GETXATTR
 * round trip) before every write once it has seen a file has none, which
 * it would otherwise do now that awfs serves the host's POSIX ACLs.
 */
static __thread bool patch_next;	/* set by ops.c's init handler, on INIT's thread */
static __thread int backing_next;	/* set by ops.c before an OPEN's or CREATE's reply */

void loop_patch_next_reply(void)
{
	patch_next = true;
}

void loop_set_backing(int id)
{
	backing_next = id;
}

/*
 * INIT's reply, as the protocol has it from 7.40 (libfuse 3.14's ends at
 * flags2, its unused words zero): passthrough is accepted with the
 * stacking depth passthrough.c asks for, in the word after flags2.
 */
struct init_out {
	uint32_t major, minor, max_readahead, flags;
	uint16_t max_background, congestion_threshold;
	uint32_t max_write, time_gran;
	uint16_t max_pages, map_alignment;
	uint32_t flags2, max_stack_depth;
	uint32_t unused[6];
};

/* -errno as a system call says it: -1 and errno. */
static ssize_t errno_of(ssize_t res)
{
	if (res >= 0)
		return res;
	errno = (int)-res;
	return -1;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct fuse_out_header head;
	struct init_out out;
	unsigned char open_out[256];
	int id = backing_next;

	(void)userdata;
	backing_next = 0;
	if (patch_next && count == 2 && iov[1].iov_len <= sizeof(out) &&
	    iov[1].iov_len >= offsetof(struct init_out, flags) + sizeof(out.flags) &&
	    ((const struct fuse_out_header *)iov[0].iov_base)->error == 0) {
		uint32_t depth = pt_negotiate(init_offered);
		bool ring;

		memset(&out, 0, sizeof(out));
		memcpy(&out, iov[1].iov_base, iov[1].iov_len);
		out.flags |= FUSE_HANDLE_KILLPRIV_V2;
		/* the payload buffers are sized from what this reply says */
		ring = uring_negotiate(init_offered_uring, out.max_write,
				       (out.flags & INIT_MAX_PAGES) ? (out.max_pages ? out.max_pages : 1) : 32);
		if (depth || ring) {
			out.flags |= INIT_EXT;
			if (depth) {
				out.flags2 |= INIT2_PASSTHROUGH;
				out.max_stack_depth = depth;
			}
			if (ring)
				out.flags2 |= INIT2_OVER_IO_URING;
			/* the whole 7.40 reply: the depth lies past a shorter one */
			memcpy(&head, iov[0].iov_base, sizeof(head));
			head.len = (uint32_t)(sizeof(head) + sizeof(out));
			iov[0].iov_base = &head;
			iov[1].iov_len = sizeof(out);
		}
		iov[1].iov_base = &out;
		patch_next = false;
	}
	/* OPEN's reply is a fuse_open_out; CREATE's ends with one */
	if (id > 0 && count == 2 && iov[1].iov_len >= sizeof(struct fuse_open_out) &&
	    iov[1].iov_len <= sizeof(open_out) &&
	    ((const struct fuse_out_header *)iov[0].iov_base)->error == 0) {
		struct fuse_open_out o;
		size_t at = iov[1].iov_len - sizeof(o);

		memcpy(open_out, iov[1].iov_base, iov[1].iov_len);
		memcpy(&o, open_out + at, sizeof(o));
		o.open_flags = (o.open_flags | OPEN_PASSTHROUGH) & OPEN_PASSTHROUGH_MASK;
		o.padding = (uint32_t)id;	/* backing_id, from protocol 7.40 */
		memcpy(open_out + at, &o, sizeof(o));
		iov[1].iov_base = open_out;
	}
	/* the reply to a request that came through a ring goes back through it */
	if (uring_current() && count >= 1 && iov[0].iov_len >= sizeof(struct fuse_out_header) &&
	    uring_owns(uring_current(), ((const struct fuse_out_header *)iov[0].iov_base)->unique))
		return errno_of(uring_reply(uring_current(), iov, count));
	return writev(fd, iov, count);
}

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	(void)userdata;
	return read(fd, buf, len);
}

static ssize_t io_splice(int fdin, off_t *offin, int fdout, off_t *offout, size_t len,
			 unsigned int flags, void *userdata)
{
	(void)userdata;
	return splice(fdin, offin, fdout, offout, len, flags);
}

/*
 * A reply libfuse splices to the device (READ's, from the host file through
 * a pipe: header first): for a request that came through a ring, read from
 * the pipe into the entry instead.
 */
static ssize_t io_splice_send(int fdin, off_t *offin, int fdout, off_t *offout, size_t len,
			      unsigned int flags, void *userdata)
{
	(void)userdata;
	if (uring_current() && !offin)
		return errno_of(uring_reply_pipe(uring_current(), fdin, len));
	return splice(fdin, offin, fdout, offout, len, flags);
}

int loop_wrap_io(struct fuse_session *se)
{
	static const struct fuse_custom_io io = {
		.writev = io_writev,
		.read = io_read,
		.splice_receive = io_splice,
		.splice_send = io_splice_send,
	};

	return fuse_session_custom_io(se, &io, fuse_session_fd(se));
}

int loop_init(struct fuse_session *se)
{
	struct fuse_buf buf = { .mem = NULL };
	const struct fuse_in_header *in;
	int res;

	do
		res = fuse_session_receive_buf(se, &buf);
	while ((res == -EINTR || res == -EAGAIN) && !fuse_session_exited(se));
	if (res <= 0) {
		free(buf.mem);
		return res < 0 ? res : -ENODEV;
	}
	in = buf.mem;
	if ((buf.flags & FUSE_BUF_IS_FD) || buf.size < sizeof(*in) || in->opcode != FUSE_INIT)
		res = -EPROTO;
	else
		res = 0;
	/* whatever it is, it is answered (libfuse refuses anything before INIT) */
	serve(se, &buf);
	free(buf.mem);
	return res;
}

/* The loop ring requests are served in (one mount, one loop). */
static struct loop *ring_loop;

/* A request from an io_uring queue (its thread): as the listener does, under the same lock. */
static void ring_serve(const struct fuse_buf *buf, struct uring_ent *ent, enum uring_room room)
{
	normalize(buf);
	if (is_slow(buf)) {
		dispatch(ring_loop, buf, ent, room);
		return;
	}
	serve_fast(ring_loop->se, buf, ent);
}

int loop_run(struct fuse_session *se, unsigned spin_us, bool keepers, unsigned max_workers,
	     uint64_t files_high, uint64_t inodes_high)
{
	struct loop l = { .se = se, .max_workers = max_workers ? max_workers : 1 };
	struct fuse_buf buf = { .mem = NULL };
	int fd = fuse_session_fd(se), flags, res = 0;
	unsigned i;

	if (spin_us > LOOP_SPIN_US_MAX)
		spin_us = LOOP_SPIN_US_MAX;
	/* a quarter of the workers (one at least) serve only callers with none */
	l.reserve = l.max_workers / 4 ? l.max_workers / 4 : 1;
	if (l.reserve >= l.max_workers)
		l.reserve = 0;	/* one worker: it serves everyone */
	l.workers = calloc(l.max_workers, sizeof(*l.workers));
	if (!l.workers)
		return -ENOMEM;
	pthread_mutex_init(&l.lock, NULL);
	if (files_high || inodes_high)
		trim_arm(se, files_high ? files_high : UINT64_MAX, inodes_high ? inodes_high : UINT64_MAX);
	res = -watch_start(se);
	if (res)
		goto out;
	/* the queues, when INIT accepted io_uring: a failure gives it up (requests come here) */
	loop_cpus_known = sched_getaffinity(0, sizeof(loop_cpus), &loop_cpus) == 0;
	ring_loop = &l;
	uring_start(se, ring_serve, spin_us);
	if (loop_cpus_known && !uring_on())
		keep_arm(keepers, spin_us);	/* the rings' threads are on every CPU already */
	/* non-blocking: receive() polls, then sleeps in poll() */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		res = -errno;
		goto out;
	}
	while (!fuse_session_exited(se)) {
		res = receive(&l, &buf, (uint64_t)spin_us * 1000u);
		if (res == -EINTR)
			continue;
		if (res <= 0)
			break;
		__atomic_add_fetch(&dev_requests, 1, __ATOMIC_RELAXED);
		normalize(&buf);
		if (is_slow(&buf))
			dispatch(&l, &buf, NULL, URING_ROOM);
		else
			serve_fast(se, &buf, NULL);
	}
	host_writer_reset();	/* the listener goes on as the daemon (the unmount) */
	if (res > 0 || res == -EINTR)	/* unmounted, or stopped by a signal */
		res = 0;
out:
	keep_stop();	/* the listener serves on while the helpers stop, without them */
	helpers_stop(&l, &buf);
	uring_stop();	/* before the workers: no queue dispatches to them any more */
	pthread_mutex_lock(&l.lock);
	l.stop = 1;
	for (i = 0; i < l.nworkers; i++)
		pthread_cond_signal(&l.workers[i]->wake);
	pthread_mutex_unlock(&l.lock);
	for (i = 0; i < l.nworkers; i++) {
		pthread_join(l.workers[i]->tid, NULL);
		pthread_cond_destroy(&l.workers[i]->wake);
		free(l.workers[i]);
	}
	free(l.workers);
	uring_free();	/* after the workers: none hands an entry back any more */
	uring_report(dev_requests);
	/* what was still queued: the session is over, its callers see it gone */
	for (i = 0; i < LANES; i++)
		for (struct job *j = l.lanes[i].head, *nx; j; j = nx) {
			nx = j->next;
			free(j);
		}
	for (struct job *j = l.spare, *nx; j; j = nx) {
		nx = j->next;
		free(j);
	}
	free(buf.mem);
	pthread_mutex_destroy(&l.lock);
	fuse_session_reset(se);
	return res;
}
