/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * awfs-adversary - an agent-side invariant fuzzer: unprivileged processes
 * issue random, colliding file operations on an awfs mount while an oracle
 * checks, after every operation, what awfs must never let an agent do.
 *
 *   awfs-adversary [options] ROOT SECONDS SEED NPROC
 *
 * Run as root on a mount of the fixture of tests/adversary/run.sh, mounted
 * over its source (so nothing outside the mount holds its secrets). NPROC
 * workers fork, drop to unprivileged uids (1000 and 65534 in turn, or -u),
 * and each runs for SECONDS an operation stream drawn from a xorshift
 * generator: operation k of worker i is drawn from (SEED, i, k) alone, so
 * a seed names the same stream on every run (what the operations meet
 * still depends on how the workers interleave). Names come from a small
 * set, so operations collide: renames and RENAME_EXCHANGE/NOREPLACE/
 * WHITEOUT between the writable, read-only and masked directories, symlink
 * swaps, hard links, opens with and without O_CREAT/O_EXCL/O_TRUNC/O_APPEND,
 * openat() through directory fds held open across renames, FIFOs opened
 * without O_NONBLOCK, truncates, user.* xattrs, mmap writes, chmod/chown,
 * mkdir/rmdir/unlink, readdir, readlink, reads. A composite "stale view"
 * operation (a directory fd kept across a rename between two allow_write
 * rules, the new parent listed, then a root-owned file or a FIFO put under
 * the new name and opened with O_CREAT through the old fd) is weighted up:
 * it is the shape of the bugs that made this tool.
 *
 * Every operation runs under an interval timer whose SIGALRM handler has
 * no SA_RESTART: a worker blocked in a FIFO open gets EINTR. A worker may
 * block itself; what must never happen is that other callers stall.
 *
 * Invariants (the test script checks the host side: the read-only and
 * masked trees unchanged, owners in the writable tree, the daemon's fds
 * and memory):
 *  - no masked byte is read: every read(), mapping, directory entry name,
 *    readlink() and xattr name or value is searched for AWFS_SECRET_,
 *    AWFS_ROOTONLY_ and the strings of -f (some forbidden to one uid only);
 *    a masked directory (-m) lists nothing;
 *  - host permissions hold: an open of a file no worker owns succeeds only
 *    if its mode grants the access; a truncate, setxattr or hard link of
 *    one, a chmod of another uid's object, a chown away from the caller,
 *    fails (judged on an O_PATH fd, so no rename can race the judgement);
 *  - the policy holds: nothing is created, removed, renamed, linked or
 *    opened for writing directly in a read-only or masked directory (-r,
 *    -m), and what a worker creates is its own, never root's (a whiteout
 *    included);
 *  - liveness: two canaries (an unprivileged uid and root) stat, list and
 *    read on the mount every 100 ms; one operation of theirs taking longer
 *    than 2 s (-t) ends the run: one caller is stalling every other;
 *  - every worker stops by itself within 10 s of the end.
 *
 * A violation prints "VIOLATION: what (seed, worker, uid)" and that
 * worker's last operations (on a stall: every worker's), then the run stops
 * with exit 1; with -k it goes on and reports each distinct violation once.
 * A clean run prints the operations by kind and the errors by errno and
 * exits 0. Exit 2: a usage or set-up error.
 *
 * This file is over 1,000 lines because it is one program that must build
 * alone (libc and pthread only) from one source file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* also given by the build (AM_CFLAGS) */
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
#define RENAME_WHITEOUT (1 << 2)
#endif

#define MAX_WORKERS 32
#define MAX_PROCS (MAX_WORKERS + 2)	/* the workers, then the two canaries */
#define MAX_LIST 32
#define MAX_FORBID 64
#define RING 32
#define RING_LEN 240
#define POOL 4
#define BUF_MAX (64 * 1024)
#define PATH_LEN 512
#define NERR 134
#define MAX_SEEN 48
#define GRACE_S 10
#define HELD 256		/* -S: opens of the denials file a worker holds */

/* ------------------------------------------------------------ kinds */

enum kind {
	K_READ, K_OPEN, K_OPENAT, K_DIRFD, K_RENAME, K_SYMSWAP, K_LINK, K_MKFIFO,
	K_FIFOOPEN, K_TRUNC, K_XATTR, K_MMAP, K_CHMOD, K_CHOWN, K_MKDIR, K_RMDIR,
	K_UNLINK, K_READDIR, K_READLINK, K_STAT, K_STALE, K_STALEFIFO, K_ROHANDLE,
	/* saturation (-S): weight 0 unless asked for */
	K_COPYBIG, K_SYNCBIG, K_LISTBIG, K_HOLDINFO, K_FLOOD, K_NKINDS
};

struct worker;
typedef void (*op_fn)(struct worker *w);

struct kind_info {
	const char *name;
	int weight;
	op_fn fn;
};

/* ------------------------------------------------------------ shared state */

/*
 * One per process, in memory shared with the supervisor. The owner writes
 * its counters and ring; the supervisor reads the ring while the owner may
 * be stuck in the kernel (that is when it is needed), and the counters
 * after the owner has exited.
 */
struct slot {
	pid_t pid;
	uid_t uid;
	int exited;
	long ops;			/* system calls recorded */
	long kind_n[K_NKINDS];
	long err_n[NERR + 1];
	unsigned ring_next;
	char ring[RING][RING_LEN];
	_Atomic int64_t busy_since;	/* start of the call in progress, 0 idle */
	char busy_what[RING_LEN];	/* canary: that call */
	long rounds;			/* canary rounds done */
	int64_t slowest_ns;		/* canary: the slowest call */
};

struct seen {
	char key[96];
	long n;
};

struct shared {
	pthread_mutex_t lock;	/* robust, process-shared: the output and seen[] */
	atomic_int stop;
	atomic_int nviol;
	int nseen;
	struct seen seen[MAX_SEEN];
	struct slot slot[MAX_PROCS];
};

static struct shared *S;

struct forbidden {
	const char *s;
	uid_t uid;		/* forbidden to this uid only; (uid_t)-1: to all */
};

static struct {
	const char *root;
	int seconds;
	uint64_t seed;
	int nproc;
	uid_t uids[8];
	int nuids;
	uid_t canary_uid;
	const char *wdirs[MAX_LIST], *rdirs[MAX_LIST], *mdirs[MAX_LIST], *victims[MAX_LIST];
	const char *singles[MAX_LIST];	/* single-file rules in the root (-s) */
	int ns;
	int nw, nr, nm, nv;
	struct forbidden forbid[MAX_FORBID];
	int nforbid;
	const char *canary_file, *canary_dir;
	int alarm_ms, stall_ms;
	bool keep_going;
	bool saturate;		/* -S: the saturation kinds too */
	bool excluded[K_NKINDS];
	bool protected_hardlinks;
	int64_t start, deadline;
} C = {
	.wdirs = { "rw", "rw/sub", "mem-a", "mem-b" }, .nw = 4,
	.rdirs = { ".", "ro", "ro/dir", "rw/.git" }, .nr = 4,
	.mdirs = { "secret", "rw/masked", "ro/hidden" }, .nm = 3,
	.victims = { "secret600", "rootro644", "acl644" }, .nv = 3,
	.forbid = { { "AWFS_SECRET_", (uid_t)-1 }, { "AWFS_ROOTONLY_", (uid_t)-1 } }, .nforbid = 2,
	.uids = { 1000, 65534 }, .nuids = 2, .canary_uid = 65534,
	.canary_file = "ro/canary", .canary_dir = "ro/dir",
	.alarm_ms = 500, .stall_ms = 2000,
};

/* What one worker process keeps to itself. */
struct worker {
	int idx;
	struct slot *slot;
	uid_t uid;
	gid_t gid;
	uint64_t rng;
	int pool[POOL];			/* directory fds, kept across renames */
	char pool_what[POOL][PATH_LEN];	/* where each was opened */
	int held[HELD];			/* -S: opens of the denials file, oldest replaced */
	unsigned nheld;
	sigjmp_buf bus;			/* a mapping truncated under us */
	volatile sig_atomic_t in_map;
	char buf[BUF_MAX];
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ------------------------------------------------------------ random */

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t rnd64(struct worker *w)
{
	uint64_t x = w->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return w->rng = x;
}

static unsigned rnd(struct worker *w, unsigned n)
{
	return (unsigned)(rnd64(w) % n);
}

static bool coin(struct worker *w, unsigned percent)
{
	return rnd(w, 100) < percent;
}

/* Operation @k of this worker draws from (seed, worker, k) alone. */
static void reseed(struct worker *w, long k)
{
	w->rng = splitmix(splitmix(C.seed * 1000003 + (uint64_t)w->idx) ^ (uint64_t)k);
	if (!w->rng)
		w->rng = 1;
}

/* ------------------------------------------------------------ output */

static void out_lock(void)
{
	if (pthread_mutex_lock(&S->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&S->lock);	/* a killed printer: go on */
}

static void out_unlock(void)
{
	pthread_mutex_unlock(&S->lock);
}

/* Print a whole message with one write, so processes do not interleave. */
static void out_write(char *text, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off < len && (n = write(1, text + off, len - off)) > 0)
		off += (size_t)n;
	free(text);
}

/* True the first time @key is seen: a violation is printed once. */
static bool seen_first(const char *key)
{
	for (int i = 0; i < S->nseen; i++) {
		if (strcmp(S->seen[i].key, key) == 0) {
			S->seen[i].n++;
			return false;
		}
	}
	if (S->nseen < MAX_SEEN) {
		snprintf(S->seen[S->nseen].key, sizeof(S->seen[0].key), "%s", key);
		S->seen[S->nseen++].n = 1;
	}
	return true;
}

static double elapsed(void)
{
	return (now_ns() - C.start) / 1e9;
}

/* The last @max operations of worker @idx, oldest first. */
static void ring_print(FILE *f, const struct slot *s, int idx, unsigned max)
{
	unsigned n = s->ring_next, first = n > max ? n - max : 0;

	fprintf(f, "  last %u operations of worker %d (uid %u, pid %d), oldest first:\n",
		n - first, idx, s->uid, (int)s->pid);
	for (unsigned i = first; i < n; i++) {
		const char *e = s->ring[i % RING];
		bool open = i == n - 1 && !strstr(e, " = ");

		fprintf(f, "    %s%s\n", e, open ? "   <- in progress" : "");
	}
}

/* ------------------------------------------------------------ recording */

static void on_alarm(int sig)
{
	(void)sig;	/* only there to interrupt: no SA_RESTART */
}

/*
 * Arm (@ms > 0) or disarm the timer. It repeats: a tick that lands before
 * the call blocks (the worker preempted between arming and calling) would
 * otherwise leave the call to block for good.
 */
static void timer_set(int ms)
{
	struct timeval tv = { ms / 1000, (long)(ms % 1000) * 1000 };
	struct itimerval it = { tv, tv };

	setitimer(ITIMER_REAL, &it, NULL);
}

/* Start a call's entry in the ring (what is about to be done) and the timer. */
static void __attribute__((format(printf, 2, 3))) op_begin(struct worker *w, const char *fmt, ...)
{
	struct slot *s = w->slot;
	char *e = s->ring[s->ring_next % RING];
	int64_t t = now_ns();
	int n = snprintf(e, RING_LEN, "#%ld %.3fs ", s->ops, (t - C.start) / 1e9);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e + n, RING_LEN - (size_t)n, fmt, ap);
	va_end(ap);
	s->ops++;
	s->ring_next++;
	atomic_store(&s->busy_since, t);
	timer_set(C.alarm_ms);
}

/* End the entry with the call's result; count errors by errno. */
static long op_end(struct worker *w, long rc)
{
	int err = errno;
	struct slot *s = w->slot;
	char *e = s->ring[(s->ring_next - 1) % RING];
	size_t len = strlen(e);

	timer_set(0);
	atomic_store(&s->busy_since, 0);
	if (rc < 0) {
		const char *name = strerrorname_np(err);

		snprintf(e + len, RING_LEN - len, " = %s", name ? name : "E?");
		s->err_n[err >= 0 && err < NERR ? err : NERR]++;
	} else {
		snprintf(e + len, RING_LEN - len, " = %ld", rc);
	}
	errno = err;
	return rc;
}

/*
 * A broken invariant: printed once per @key with the worker's ring. Ends
 * the worker (the supervisor then ends the run) unless -k.
 */
static void __attribute__((format(printf, 3, 4)))
violation(struct worker *w, const char *key, const char *fmt, ...)
{
	char msg[768], *text = NULL;
	size_t len = 0;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	atomic_fetch_add(&S->nviol, 1);
	out_lock();
	if (seen_first(key) && (f = open_memstream(&text, &len))) {
		fprintf(f, "VIOLATION: %s (seed %" PRIu64 ", worker %d, uid %u, op #%ld, at %.2f s)\n", msg,
			C.seed, w->idx, w->uid, w->slot->ops - 1, elapsed());
		ring_print(f, w->slot, w->idx, RING);
		fclose(f);
		out_write(text, len);
	}
	out_unlock();
	if (!C.keep_going) {
		timer_set(0);
		_exit(1);
	}
}

/* ------------------------------------------------------------ the oracle */

/* The forbidden string in @p[0..len) for this uid, as the token found there. */
static bool forbidden_in(uid_t uid, const char *p, size_t len, char *tok, size_t toklen)
{
	for (int i = 0; i < C.nforbid; i++) {
		const struct forbidden *f = &C.forbid[i];
		const char *hit;
		size_t n = 0;

		if (f->uid != (uid_t)-1 && f->uid != uid)
			continue;
		hit = memmem(p, len, f->s, strlen(f->s));
		if (!hit)
			continue;
		while (n + 1 < toklen && hit + n < p + len && (isalnum((unsigned char)hit[n]) || hit[n] == '_'))
			n++;
		memcpy(tok, hit, n);
		tok[n] = '\0';
		return true;
	}
	return false;
}

/* Search what a call returned (@what: read, readdir, ...) for forbidden strings. */
static void scan(struct worker *w, const char *p, size_t len, const char *what, const char *where)
{
	char tok[64], key[96];

	if (!forbidden_in(w->uid, p, len, tok, sizeof(tok)))
		return;
	/* "D2(rw/e):s" was reached through an old directory fd */
	snprintf(key, sizeof(key), "leak %s%s %s", what, where[0] == 'D' && strchr(where, ':') ? " via dirfd" : "",
		 tok);
	violation(w, key, "%s of %s returned the forbidden string %s", what, where, tok);
}

static bool worker_uid(uid_t uid)
{
	for (int i = 0; i < C.nuids; i++)
		if (C.uids[i] == uid)
			return true;
	return false;
}

/* Does the mode of @st grant this worker @need (R_OK, W_OK)? */
static bool mode_allows(const struct worker *w, const struct stat *st, int need)
{
	unsigned bits = st->st_mode;

	if (st->st_uid == w->uid)
		bits >>= 6;
	else if (st->st_gid == w->gid)
		bits >>= 3;
	return (!(need & R_OK) || (bits & 4)) && (!(need & W_OK) || (bits & 2));
}

/*
 * An object the host would refuse @need on: owned by no worker (a worker
 * could chmod its own between the call and the fstat; nobody can chmod
 * root's here) and not granted by its mode.
 */
static bool host_refuses(const struct worker *w, const struct stat *st, int need)
{
	return !worker_uid(st->st_uid) && !mode_allows(w, st, need);
}

static bool in_list(const char *const *l, int n, const char *s, size_t len)
{
	for (int i = 0; i < n; i++)
		if (strlen(l[i]) == len && strncmp(l[i], s, len) == 0)
			return true;
	return false;
}

/*
 * Is @path an entry directly in a read-only or masked directory? Those are
 * fixed (nothing can rename them), so a change there that succeeded is a
 * policy violation whatever raced it. "." and ".." lead elsewhere.
 */
static bool guarded(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	size_t dlen = slash ? (size_t)(slash - path) : 1;

	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	if (!slash)
		path = ".";
	return in_list(C.rdirs, C.nr, path, dlen) || in_list(C.mdirs, C.nm, path, dlen);
}

/* @path without a leading "./" */
static const char *bare(const char *path)
{
	return strncmp(path, "./", 2) == 0 ? path + 2 : path;
}

/* Is @path a single-file rule of the root (-s)? */
static bool single(const char *path)
{
	return in_list(C.singles, C.ns, bare(path), strlen(bare(path)));
}

/*
 * Is @path, in the root, a name awfs takes a temporary under there (beside
 * a single-file rule: a rule's name and a suffix, or sed -i's): made,
 * written and removed through awfs, but never on the host under that name.
 */
static bool temp_name(const char *path)
{
	const char *n = bare(path);

	if (strchr(n, '/') || C.ns == 0)
		return false;
	for (int i = 0; i < C.ns; i++) {
		size_t len = strlen(C.singles[i]);

		if (strncmp(n, C.singles[i], len) == 0 && n[len] == '.' && n[len + 1])
			return true;
	}
	return strncmp(n, "sed", 3) == 0 && strlen(n) == 9;
}

/* A change of the entry @path (its directory's) succeeded: not in a guarded directory. */
static void judge_change(struct worker *w, const char *op, const char *path)
{
	char key[96];

	if (!guarded(path))
		return;
	if ((strcmp(op, "create") == 0 || strcmp(op, "unlink") == 0) && temp_name(path))
		return;	/* a temporary: awfs keeps it, the host never has the name */
	snprintf(key, sizeof(key), "policy %s", op);
	violation(w, key, "%s of %s succeeded in a read-only or masked directory", op, path);
}

/*
 * A change of the object @path succeeded: an object in a guarded directory
 * is read-only or masked, unless it is itself a writable root (mem-a in
 * the read-only root directory).
 */
static void judge_object(struct worker *w, const char *op, const char *path)
{
	char key[96];

	if (!guarded(path) || in_list(C.wdirs, C.nw, path, strlen(path)) || single(path) || temp_name(path))
		return;
	snprintf(key, sizeof(key), "policy %s", op);
	violation(w, key, "%s of %s succeeded: it is read-only or masked", op, path);
}

/* What a worker just created at @path must be its own (the type it made). */
static void judge_made(struct worker *w, const char *op, const char *path, mode_t type)
{
	struct stat st;
	char key[96];

	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) || (st.st_mode & S_IFMT) != type)
		return;
	if (worker_uid(st.st_uid))
		return;	/* another worker's may have replaced ours: not judged */
	snprintf(key, sizeof(key), "owner %s", op);
	violation(w, key, "%s of %s made an object owned by uid %u, not by the caller", op, path,
		  st.st_uid);
}

/* ------------------------------------------------------------ names */

static const char *const names[] = {
	"a", "b", "e", "d0", "s", "ff", "l", "file", "m", "config", "x.pem", "top.key",
	"masked", ".git", "..", "summary.md", "summary.md.tmp.1", "sedAAAAAA",
};
static const char *const dirnames[] = { "e", "d0", "a" };

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *pick(struct worker *w, const char *const *l, size_t n)
{
	return l[rnd(w, (unsigned)n)];
}

/* A directory: mostly writable, some nested below, some read-only or masked. */
static void pick_dir(struct worker *w, char *out)
{
	unsigned r = rnd(w, 100);
	const char *base = C.wdirs[rnd(w, (unsigned)C.nw)];

	if (r < 50)
		snprintf(out, PATH_LEN, "%s", base);
	else if (r < 68)
		snprintf(out, PATH_LEN, "%s/%s", base, pick(w, dirnames, NELEM(dirnames)));
	else if (r < 74)
		snprintf(out, PATH_LEN, "%s/%s/%s", base, pick(w, dirnames, NELEM(dirnames)),
			 pick(w, dirnames, NELEM(dirnames)));
	else if (r < 88)
		snprintf(out, PATH_LEN, "%s", C.rdirs[rnd(w, (unsigned)C.nr)]);
	else
		snprintf(out, PATH_LEN, "%s", C.mdirs[rnd(w, (unsigned)C.nm)]);
}

static const char *pick_name(struct worker *w, bool victims)
{
	if (victims && C.nv && coin(w, 15))
		return C.victims[rnd(w, (unsigned)C.nv)];
	return pick(w, names, NELEM(names));
}

static void pick_path(struct worker *w, char *out, bool victims)
{
	char dir[PATH_LEN];

	pick_dir(w, dir);
	snprintf(out, PATH_LEN, "%.200s/%s", dir, pick_name(w, victims));
}

static void flags_str(int flags, char *out, size_t size)
{
	static const struct {
		int flag;
		const char *name;
	} f[] = {
		{ O_CREAT, "CREAT" }, { O_EXCL, "EXCL" }, { O_TRUNC, "TRUNC" }, { O_APPEND, "APPEND" },
		{ O_NONBLOCK, "NONBLOCK" }, { O_NOFOLLOW, "NOFOLLOW" }, { O_DIRECTORY, "DIRECTORY" },
		{ O_PATH, "PATH" },
	};
	static const char *const acc[] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACC3" };
	size_t n = (size_t)snprintf(out, size, "%s", acc[flags & O_ACCMODE]);

	for (size_t i = 0; i < NELEM(f) && n < size; i++)
		if (flags & f[i].flag)
			n += (size_t)snprintf(out + n, size - n, "|O_%s", f[i].name);
}

/* Random open flags: any access mode, each modifier now and then. */
static int pick_flags(struct worker *w)
{
	static const int acc[] = { O_RDONLY, O_WRONLY, O_RDWR };
	int flags = acc[rnd(w, 3)];

	flags |= coin(w, 50) ? O_CREAT : 0;
	flags |= coin(w, 20) ? O_EXCL : 0;
	flags |= coin(w, 20) ? O_TRUNC : 0;
	flags |= coin(w, 25) ? O_APPEND : 0;
	flags |= coin(w, 50) ? O_NONBLOCK : 0;
	flags |= coin(w, 15) ? O_NOFOLLOW : 0;
	return flags;
}

static mode_t pick_mode(struct worker *w)
{
	static const mode_t modes[] = { 0777, 0755, 0700, 0666, 0644, 0600, 0000 };

	return modes[rnd(w, NELEM(modes))];
}

/* ------------------------------------------------------------ building blocks */

/* Read all of @fd (up to BUF_MAX) and search it. */
static void read_scan(struct worker *w, int fd, const char *where)
{
	size_t off = 0;
	ssize_t n = 0;

	op_begin(w, "read(%s)", where);
	while (off < BUF_MAX && (n = read(fd, w->buf + off, BUF_MAX - off)) > 0)
		off += (size_t)n;
	op_end(w, n < 0 && off == 0 ? -1 : (long)off);
	scan(w, w->buf, off, "read", where);
}

static void write_some(struct worker *w, int fd, const char *where)
{
	char data[64];
	int len = snprintf(data, sizeof(data), "adversary %d op %ld\n", w->idx, w->slot->ops);

	op_begin(w, "write(%s, %d)", where, len);
	op_end(w, write(fd, data, (size_t)len));
}

/* What a successful open of @where with @flags must not have been granted. */
static void judge_open(struct worker *w, int fd, int flags, const char *where, bool by_path)
{
	int need = ((flags & O_ACCMODE) != O_WRONLY ? R_OK : 0) |
		   ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) ? W_OK : 0);
	bool made = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	char fs[96], key[96];
	struct stat st, lst;

	if ((flags & O_PATH) || fstat(fd, &st))
		return;
	flags_str(flags, fs, sizeof(fs));
	if (S_ISREG(st.st_mode) && host_refuses(w, &st, need)) {
		snprintf(key, sizeof(key), "host-perm open %s %04o", need & W_OK ? "write" : "read",
			 st.st_mode & 07777);
		violation(w, key, "open(%s, %s) granted a file owned by uid %u, mode %04o, that the host refuses uid %u",
			  where, fs, st.st_uid, st.st_mode & 07777, w->uid);
	}
	if (made && st.st_uid != w->uid)
		violation(w, "owner create", "open(%s, %s) created a file owned by uid %u, not %u",
			  where, fs, st.st_uid, w->uid);
	if (by_path && made)
		judge_change(w, "create", where);
	/* a host symlink in a read-only directory may lead out of it */
	if (by_path && (need & W_OK) && fstatat(AT_FDCWD, where, &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISLNK(lst.st_mode))
		judge_object(w, "open for writing", where);
}

/*
 * Open @name (at @dirfd, described as @dwhat), then use it: check what was
 * granted, read it and search the bytes, maybe write.
 */
static void open_use(struct worker *w, int dirfd, const char *dwhat, const char *name, int flags,
		     mode_t mode)
{
	char fs[96], where[PATH_LEN + 64];
	int fd;

	flags_str(flags, fs, sizeof(fs));
	if (dirfd == AT_FDCWD)
		snprintf(where, sizeof(where), "%s", name);
	else
		snprintf(where, sizeof(where), "%s:%s", dwhat, name);
	op_begin(w, "open(%s, %s, %04o)", where, fs, mode);
	fd = (int)op_end(w, openat(dirfd, name, flags, mode));
	if (fd < 0)
		return;
	judge_open(w, fd, flags, where, dirfd == AT_FDCWD);
	if ((flags & O_ACCMODE) != O_WRONLY && !(flags & O_PATH))
		read_scan(w, fd, where);
	if ((flags & O_ACCMODE) != O_RDONLY && coin(w, 50))
		write_some(w, fd, where);
	close(fd);
}

/* Open @path O_PATH (the object judged, pinned) and fstat it; -1 if none. */
static int pin(struct worker *w, const char *path, struct stat *st, bool nofollow)
{
	int fd;

	op_begin(w, "open(%s, O_PATH%s)", path, nofollow ? "|O_NOFOLLOW" : "");
	fd = (int)op_end(w, open(path, O_PATH | (nofollow ? O_NOFOLLOW : 0)));
	if (fd >= 0 && fstat(fd, st)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void proc_path(int fd, char *out)
{
	snprintf(out, 32, "/proc/self/fd/%d", fd);
}

static void list_scan(struct worker *w, DIR *d, const char *where, bool masked)
{
	struct dirent *de;
	long n = 0;

	op_begin(w, "readdir(%s)", where);
	errno = 0;
	while ((de = readdir(d))) {
		n++;
		scan(w, de->d_name, strlen(de->d_name), "readdir", where);
		if (masked && strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			violation(w, "masked listing", "readdir of the masked directory %s listed \"%s\"",
				  where, de->d_name);
	}
	op_end(w, errno ? -1 : n);
}

static void list_path(struct worker *w, const char *path)
{
	bool masked = in_list(C.mdirs, C.nm, path, strlen(path));
	DIR *d;

	op_begin(w, "opendir(%s)", path);
	d = opendir(path);
	op_end(w, d ? 0 : -1);
	if (!d)
		return;
	list_scan(w, d, path, masked);
	closedir(d);
}

/* ------------------------------------------------------------ operations */

/* The names the stale view opens through the old fd. */
static const char *const snames[] = { "s", "ff", "a" };

static bool is_victim(const char *path)
{
	struct stat st;

	return fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	       st.st_uid == 0;
}

/*
 * A root-owned file in a writable place, by the name it has now: where the
 * fixture put one, else where a rename left one (under any name, in a
 * writable root or one level down). The victims wander; without this the
 * reads would soon miss them.
 */
static bool find_victim(struct worker *w, char *out)
{
	unsigned b0 = rnd(w, (unsigned)C.nw), v0 = rnd(w, (unsigned)C.nv);

	for (int i = 0; i < C.nw; i++) {
		const char *base = C.wdirs[(b0 + (unsigned)i) % (unsigned)C.nw];

		for (int j = 0; j < C.nv; j++) {
			snprintf(out, PATH_LEN, "%s/%s", base, C.victims[(v0 + (unsigned)j) % (unsigned)C.nv]);
			if (is_victim(out))
				return true;
		}
	}
	for (int i = 0; i < C.nw; i++) {
		for (size_t j = 0; j < NELEM(names); j++) {
			snprintf(out, PATH_LEN, "%s/%s", C.wdirs[(b0 + (unsigned)i) % (unsigned)C.nw], names[j]);
			if (is_victim(out))
				return true;
		}
	}
	for (int i = 0; i < C.nw; i++) {
		const char *base = C.wdirs[(b0 + (unsigned)i) % (unsigned)C.nw];

		for (size_t d = 0; d < NELEM(dirnames); d++) {
			for (int j = 0; j < C.nv + (int)NELEM(names); j++) {
				const char *v = j < C.nv ? C.victims[j] : names[j - C.nv];

				snprintf(out, PATH_LEN, "%s/%s/%s", base, dirnames[d], v);
				if (is_victim(out))
					return true;
			}
		}
	}
	return false;
}


/* A path to open: now and then a root-owned file wherever it is now. */
static void pick_target(struct worker *w, char *p)
{
	if (!coin(w, 20) || !find_victim(w, p))
		pick_path(w, p, true);
}

static void k_read(struct worker *w)
{
	char p[PATH_LEN];
	int flags = O_RDONLY | (coin(w, 50) ? O_NONBLOCK : 0) | (coin(w, 15) ? O_NOFOLLOW : 0);

	pick_target(w, p);
	open_use(w, AT_FDCWD, NULL, p, flags, 0);
}

static void k_open(struct worker *w)
{
	char p[PATH_LEN];
	int flags;

	pick_target(w, p);
	flags = pick_flags(w);
	open_use(w, AT_FDCWD, NULL, p, flags, pick_mode(w));
}

/* A directory fd of the pool, opening one if the slot is empty. */
static int pool_get(struct worker *w, int *slot);

static void k_openat(struct worker *w)
{
	int slot, dfd = pool_get(w, &slot);
	const char *name = pick_name(w, true);
	int flags = pick_flags(w);

	if (dfd >= 0)
		open_use(w, dfd, w->pool_what[slot], name, flags, pick_mode(w));
}

static void pool_put(struct worker *w, int slot, int fd, const char *what)
{
	if (w->pool[slot] >= 0)
		close(w->pool[slot]);
	w->pool[slot] = fd;
	snprintf(w->pool_what[slot], PATH_LEN, "D%d(%.200s)", slot, what);
}

static void k_dirfd(struct worker *w)
{
	char p[PATH_LEN];
	int slot = (int)rnd(w, POOL), flags = O_DIRECTORY | (coin(w, 25) ? O_PATH : O_RDONLY);
	int fd;

	if (coin(w, 70))
		pick_dir(w, p);
	else
		pick_path(w, p, false);
	op_begin(w, "open(%s, %s) -> D%d", p, flags & O_PATH ? "O_PATH|O_DIRECTORY" : "O_DIRECTORY", slot);
	fd = (int)op_end(w, open(p, flags));
	if (fd >= 0)
		pool_put(w, slot, fd, p);
}

static int pool_get(struct worker *w, int *slot)
{
	*slot = (int)rnd(w, POOL);
	if (w->pool[*slot] < 0)
		k_dirfd(w);
	for (int i = 0; i < POOL; i++)
		if (w->pool[(*slot + i) % POOL] >= 0)
			return w->pool[*slot = (*slot + i) % POOL];
	return -1;
}

static const char *rflags_str(unsigned flags)
{
	return flags == RENAME_NOREPLACE ? "NOREPLACE" : flags == RENAME_EXCHANGE ? "EXCHANGE" :
	       flags == RENAME_WHITEOUT ? "WHITEOUT" : "0";
}

static unsigned pick_rflags(struct worker *w)
{
	unsigned r = rnd(w, 100);

	return r < 50 ? 0 : r < 70 ? RENAME_NOREPLACE : r < 88 ? RENAME_EXCHANGE : RENAME_WHITEOUT;
}

/* A whiteout left at @path by our rename must be ours, never root's. */
static void judge_whiteout(struct worker *w, const char *path)
{
	struct stat st;

	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode) &&
	    !worker_uid(st.st_uid))
		violation(w, "owner whiteout",
			  "renameat2(%s, WHITEOUT) left a device %u,%u owned by uid %u, not by the caller",
			  path, major(st.st_rdev), minor(st.st_rdev), st.st_uid);
}

static void k_rename(struct worker *w)
{
	char src[PATH_LEN], dst[PATH_LEN];
	unsigned flags = pick_rflags(w);
	long rc;

	/* seldom a victim: moved out of reach, it is lost to the other operations */
	pick_path(w, src, coin(w, 30));
	pick_path(w, dst, coin(w, 10));
	op_begin(w, "renameat2(%s, %s, %s)", src, dst, rflags_str(flags));
	rc = op_end(w, renameat2(AT_FDCWD, src, AT_FDCWD, dst, flags));
	if (rc)
		return;
	/* a temporary renamed onto a single-file rule of the root: the one rename it may make */
	if (temp_name(src) && single(dst) && !(flags & (RENAME_EXCHANGE | RENAME_WHITEOUT)))
		return;
	judge_change(w, "rename", src);
	judge_change(w, "rename", dst);
	if (flags == RENAME_WHITEOUT)
		judge_whiteout(w, src);
}

/* Where a swapped symlink points: harmless, masked, read-only, root's, up. */
static const char *const link_targets[] = {
	"..", "../secret", "../../secret", "../top.key", "../../top.key", "../masked",
	"../rw/masked", "../../ro/hidden", "../ro", "secret600", "../secret600",
	"../mem-a/secret600", "../../mem-a/acl644", "e", "s", "ff", "%R/secret", "%R/mem-a/secret600",
	"%R/rw/masked", "%R/ro/file", "%R/ro/hidden", "/proc/self/cwd/secret",
	/* for links = "read-only" (mem-b): read-only ground, and what only looks like it */
	"%R/ro", "%R/ro/dir", "%R/ro/dir/x", "%R/ro/link", "%R/ro/../secret", "%R/ro//file", "%R/rw/file",
	"%R/ro/hidden/x", "%R/mem-b", "%R/",
};

static void k_symswap(struct worker *w)
{
	char dir[PATH_LEN], tmp[PATH_LEN], dst[PATH_LEN], target[PATH_LEN];
	const char *t = pick(w, link_targets, NELEM(link_targets));
	unsigned flags = coin(w, 25) ? RENAME_EXCHANGE : 0;

	if (strncmp(t, "%R", 2) == 0)
		snprintf(target, sizeof(target), "%s%s", C.root, t + 2);
	else
		snprintf(target, sizeof(target), "%s", t);
	pick_dir(w, dir);
	snprintf(tmp, sizeof(tmp), "%.200s/.sw%d-%u", dir, w->idx, rnd(w, 4));
	snprintf(dst, sizeof(dst), "%.200s/%s", dir, pick_name(w, false));
	op_begin(w, "symlink(%s, %s)", target, tmp);
	if (op_end(w, symlink(target, tmp)) == 0)
		judge_change(w, "symlink", tmp);
	op_begin(w, "renameat2(%s, %s, %s)", tmp, dst, rflags_str(flags));
	if (op_end(w, renameat2(AT_FDCWD, tmp, AT_FDCWD, dst, flags)) == 0)
		judge_change(w, "rename", dst);
	if (coin(w, 50))
		open_use(w, AT_FDCWD, NULL, dst, O_RDONLY | O_NONBLOCK, 0);
	else if (coin(w, 50))
		list_path(w, dst);
	if (coin(w, 25))
		return;	/* left behind: what the host finds after the agent (run.sh looks) */
	op_begin(w, "unlink(%s)", tmp);
	op_end(w, unlink(tmp));
}

static void k_link(struct worker *w)
{
	char src[PATH_LEN], dst[PATH_LEN], proc[32];
	struct stat st;
	int fd;

	pick_path(w, src, true);
	pick_path(w, dst, false);
	if (coin(w, 50)) {
		int flags = coin(w, 50) ? AT_SYMLINK_FOLLOW : 0;

		op_begin(w, "linkat(%s, %s, %s)", src, dst, flags ? "FOLLOW" : "0");
		if (op_end(w, linkat(AT_FDCWD, src, AT_FDCWD, dst, flags)) == 0) {
			judge_object(w, "link", src);
			judge_change(w, "link", dst);
		}
		return;
	}
	fd = pin(w, src, &st, coin(w, 50));
	if (fd < 0)
		return;
	proc_path(fd, proc);
	op_begin(w, "linkat(%s=%s, %s, FOLLOW)", proc, src, dst);
	if (op_end(w, linkat(AT_FDCWD, proc, AT_FDCWD, dst, AT_SYMLINK_FOLLOW)) == 0) {
		judge_change(w, "link", dst);
		/* protected_hardlinks: only what we own, or may read and write */
		if (C.protected_hardlinks && S_ISREG(st.st_mode) && host_refuses(w, &st, R_OK | W_OK))
			violation(w, "host-perm link", "hard link of %s (uid %u, mode %04o) to %s succeeded",
				  src, st.st_uid, st.st_mode & 07777, dst);
	}
	close(fd);
}

static void k_mkfifo(struct worker *w)
{
	char p[PATH_LEN];
	mode_t mode = pick_mode(w) | 0600;

	pick_path(w, p, false);
	op_begin(w, "mkfifo(%s, %04o)", p, mode);
	if (op_end(w, mkfifo(p, mode)) == 0) {
		judge_change(w, "mkfifo", p);
		judge_made(w, "mkfifo", p, S_IFIFO);
	}
}

/* Opens that wait on a FIFO: ours may block (the timer ends it), nobody else's. */
static void k_fifoopen(struct worker *w)
{
	char dir[PATH_LEN], p[PATH_LEN];
	int flags = (coin(w, 60) ? O_WRONLY : O_RDONLY) | (coin(w, 30) ? O_CREAT : 0);

	pick_dir(w, dir);
	snprintf(p, sizeof(p), "%.200s/%s", dir, coin(w, 60) ? "ff" : pick_name(w, false));
	open_use(w, AT_FDCWD, NULL, p, flags, 0666);
}

static void k_trunc(struct worker *w)
{
	char p[PATH_LEN], proc[32];
	off_t size = (off_t)rnd(w, 8192);
	struct stat st;
	int fd;

	pick_path(w, p, true);
	if (coin(w, 50)) {
		op_begin(w, "truncate(%s, %lld)", p, (long long)size);
		if (op_end(w, truncate(p, size)) == 0)
			judge_object(w, "truncate", p);
		return;
	}
	fd = pin(w, p, &st, false);
	if (fd < 0)
		return;
	proc_path(fd, proc);
	op_begin(w, "truncate(%s=%s, %lld)", proc, p, (long long)size);
	if (op_end(w, truncate(proc, size)) == 0 && S_ISREG(st.st_mode) && host_refuses(w, &st, W_OK))
		violation(w, "host-perm truncate", "truncate of %s (uid %u, mode %04o) succeeded", p,
			  st.st_uid, st.st_mode & 07777);
	close(fd);
}

static const char *const xattr_names[] = {
	"user.tag", "user.w", "security.capability", "system.posix_acl_access", "trusted.x",
};

static void xattr_get(struct worker *w, const char *p)
{
	const char *name = pick(w, xattr_names, NELEM(xattr_names));
	char where[PATH_LEN + 64];
	long n;

	snprintf(where, sizeof(where), "%s %s", p, name);
	op_begin(w, "getxattr(%s, %s)", p, name);
	n = op_end(w, getxattr(p, name, w->buf, BUF_MAX));
	if (n > 0)
		scan(w, w->buf, (size_t)n, "getxattr", where);
	op_begin(w, "listxattr(%s)", p);
	n = op_end(w, listxattr(p, w->buf, BUF_MAX));
	if (n > 0)
		scan(w, w->buf, (size_t)n, "listxattr", p);
}

/* setxattr through an O_PATH pin: the object judged is the one changed. */
static void xattr_set(struct worker *w, const char *p)
{
	char val[32], proc[32];
	int len = snprintf(val, sizeof(val), "v%d.%ld", w->idx, w->slot->ops);
	int flags = coin(w, 70) ? 0 : coin(w, 50) ? XATTR_CREATE : XATTR_REPLACE;
	struct stat st;
	int fd;

	if (coin(w, 50)) {
		op_begin(w, "setxattr(%s, user.w, %s)", p, val);
		if (op_end(w, setxattr(p, "user.w", val, (size_t)len, flags)) == 0)
			judge_object(w, "setxattr", p);
		return;
	}
	fd = pin(w, p, &st, true);
	if (fd < 0)
		return;
	proc_path(fd, proc);
	op_begin(w, "setxattr(%s=%s, user.w, %s)", proc, p, val);
	if (op_end(w, setxattr(proc, "user.w", val, (size_t)len, flags)) == 0 &&
	    (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) && host_refuses(w, &st, W_OK))
		violation(w, "host-perm setxattr", "setxattr of %s (uid %u, mode %04o) succeeded", p,
			  st.st_uid, st.st_mode & 07777);
	close(fd);
}

static void k_xattr(struct worker *w)
{
	char p[PATH_LEN];
	unsigned r = rnd(w, 100);

	if (coin(w, 20))
		pick_dir(w, p);
	else
		pick_path(w, p, true);
	if (r < 50) {
		xattr_get(w, p);
	} else if (r < 85) {
		xattr_set(w, p);
	} else {
		op_begin(w, "removexattr(%s, user.w)", p);
		if (op_end(w, removexattr(p, "user.w")) == 0)
			judge_object(w, "removexattr", p);
	}
}

static void on_bus(int sig);
static struct worker *self;

/* Map @fd, search what it holds, maybe write through the mapping. */
static void map_use(struct worker *w, int fd, const char *p, bool rw)
{
	struct stat st;
	volatile size_t len;	/* read after a siglongjmp */
	char *m;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return;
	len = st.st_size > BUF_MAX ? BUF_MAX : (size_t)st.st_size;
	if (!len)
		return;
	op_begin(w, "mmap(%s, %zu, %s)", p, len, rw ? "RW" : "R");
	m = mmap(NULL, len, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	op_end(w, m == MAP_FAILED ? -1 : 0);
	if (m == MAP_FAILED)
		return;
	w->in_map = 1;
	if (sigsetjmp(w->bus, 1) == 0) {
		memcpy(w->buf, m, len);
		if (rw)
			memset(m, 'M', len < 16 ? len : 16);
	} else {
		len = 0;	/* SIGBUS: the buffer holds nothing of this file */
	}
	w->in_map = 0;
	scan(w, w->buf, len, "mmap", p);
	if (rw) {
		op_begin(w, "msync(%s)", p);
		op_end(w, msync(m, len, MS_SYNC));
	}
	munmap(m, len);
}

static void k_mmap(struct worker *w)
{
	char p[PATH_LEN];
	bool rw = coin(w, 60);
	int flags = (rw ? O_RDWR : O_RDONLY) | (coin(w, 30) ? O_CREAT : 0) | O_NONBLOCK;
	int fd;

	pick_path(w, p, true);
	op_begin(w, "open(%s, %s%s)", p, rw ? "O_RDWR" : "O_RDONLY", flags & O_CREAT ? "|O_CREAT" : "");
	fd = (int)op_end(w, open(p, flags, 0666));
	if (fd < 0)
		return;
	judge_open(w, fd, flags, p, true);
	if (rw && coin(w, 30)) {
		op_begin(w, "ftruncate(%s, 4096)", p);
		op_end(w, ftruncate(fd, 4096));
	}
	map_use(w, fd, p, rw);
	close(fd);
}

/*
 * Write through a handle opened for reading only, every way there is (on
 * a kernel with FUSE passthrough the handle's data path is the host file's
 * own, not awfs): write, pwrite, a shared writable mapping, ftruncate,
 * fallocate, copy_file_range, splice and sendfile into it, maybe after
 * fcntl(F_SETFL, O_APPEND | O_DIRECT), maybe opened O_DIRECT. A byte
 * written, or a call that reports success, is a violation anywhere.
 */
static void k_rohandle(struct worker *w)
{
	char p[PATH_LEN];
	bool direct = coin(w, 30);
	struct stat st;
	loff_t off = 0;
	int fd, pfd[2];
	long n;
	void *m;

	pick_path(w, p, true);
	op_begin(w, "open(%s, O_RDONLY%s)", p, direct ? "|O_DIRECT" : "");
	fd = (int)op_end(w, open(p, O_RDONLY | O_NONBLOCK | (direct ? O_DIRECT : 0)));
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	if (coin(w, 30)) {
		op_begin(w, "fcntl(%s, F_SETFL, O_APPEND|O_DIRECT)", p);
		op_end(w, fcntl(fd, F_SETFL, O_APPEND | O_DIRECT | O_NONBLOCK));
	}
#define RO_TRY(what, expr, wrote)                                                                 \
	do {                                                                                       \
		op_begin(w, "%s(%s) through O_RDONLY", what, p);                                   \
		n = op_end(w, (expr));                                                             \
		if (wrote)                                                                         \
			violation(w, "rohandle-" what, "%s through a handle of %s opened O_RDONLY succeeded (%ld)", \
				  what, p, n);                                                     \
	} while (0)
	RO_TRY("write", write(fd, "W", 1), n > 0);
	RO_TRY("pwrite", pwrite(fd, "W", 1, 0), n > 0);
	RO_TRY("ftruncate", ftruncate(fd, 1), n == 0);
	RO_TRY("fallocate", fallocate(fd, 0, 0, 4096), n == 0);
	off = 0;
	RO_TRY("copy_file_range", copy_file_range(fd, &off, fd, NULL, 1, 0), n > 0);
	RO_TRY("sendfile", sendfile(fd, fd, &off, 1), n > 0);
	if (pipe(pfd) == 0) {
		if (write(pfd[1], "S", 1) == 1) {
			off = 0;
			RO_TRY("splice", splice(pfd[0], NULL, fd, &off, 1, SPLICE_F_NONBLOCK), n > 0);
		}
		close(pfd[0]);
		close(pfd[1]);
	}
	op_begin(w, "mmap(%s, RW, MAP_SHARED) through O_RDONLY", p);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	op_end(w, m == MAP_FAILED ? -1 : 0);
	if (m != MAP_FAILED) {
		munmap(m, 4096);
		violation(w, "rohandle-mmap", "a shared writable mapping of %s opened O_RDONLY succeeded", p);
	}
#undef RO_TRY
	close(fd);
}

static void k_chmod(struct worker *w)
{
	char p[PATH_LEN], proc[32];
	mode_t mode = pick_mode(w);
	struct stat st;
	int fd;

	pick_path(w, p, true);
	if (coin(w, 50)) {
		op_begin(w, "chmod(%s, %04o)", p, mode);
		if (op_end(w, chmod(p, mode)) == 0)
			judge_object(w, "chmod", p);
		return;
	}
	fd = pin(w, p, &st, false);
	if (fd < 0)
		return;
	proc_path(fd, proc);
	op_begin(w, "chmod(%s=%s, %04o)", proc, p, mode);
	/* nobody but root changes an owner: the pinned owner is the owner */
	if (op_end(w, chmod(proc, mode)) == 0 && st.st_uid != w->uid)
		violation(w, "host-perm chmod", "chmod of %s owned by uid %u succeeded", p, st.st_uid);
	close(fd);
}

static void k_chown(struct worker *w)
{
	uid_t uids[] = { w->uid, 0, w->uid == C.uids[0] ? C.uids[C.nuids - 1] : C.uids[0] };
	gid_t gids[] = { w->gid, 0, 1000 };
	char p[PATH_LEN], proc[32];
	uid_t u = uids[rnd(w, 3)];
	gid_t g = gids[rnd(w, 3)];
	struct stat st;
	int fd;

	pick_path(w, p, true);
	fd = pin(w, p, &st, true);
	if (fd < 0)
		return;
	proc_path(fd, proc);
	op_begin(w, "chown(%s=%s, %u, %u)", proc, p, u, g);
	if (op_end(w, chown(proc, u, g)) == 0) {
		judge_object(w, "chown", p);
		if (st.st_uid != w->uid || u != w->uid || g != w->gid)
			violation(w, "host-perm chown",
				  "chown of %s (uid %u) to %u:%u by uid %u succeeded", p, st.st_uid, u, g, w->uid);
	}
	close(fd);
}

static void k_mkdir(struct worker *w)
{
	char p[PATH_LEN];
	mode_t mode = coin(w, 70) ? 0777 : pick_mode(w);

	pick_path(w, p, false);
	op_begin(w, "mkdir(%s, %04o)", p, mode);
	if (op_end(w, mkdir(p, mode)) == 0) {
		judge_change(w, "mkdir", p);
		judge_made(w, "mkdir", p, S_IFDIR);
	}
}

static void k_rmdir(struct worker *w)
{
	char p[PATH_LEN];

	pick_path(w, p, false);
	op_begin(w, "rmdir(%s)", p);
	if (op_end(w, rmdir(p)) == 0)
		judge_change(w, "rmdir", p);
}

static void k_unlink(struct worker *w)
{
	char p[PATH_LEN];

	pick_path(w, p, false);
	op_begin(w, "unlink(%s)", p);
	if (op_end(w, unlink(p)) == 0)
		judge_change(w, "unlink", p);
}

static void k_readdir(struct worker *w)
{
	char p[PATH_LEN];
	int slot, dfd, fd;
	DIR *d;

	if (coin(w, 70)) {
		if (coin(w, 80))
			pick_dir(w, p);
		else
			pick_path(w, p, false);
		list_path(w, p);
		return;
	}
	dfd = pool_get(w, &slot);
	if (dfd < 0)
		return;
	op_begin(w, "openat(%s, ., O_DIRECTORY)", w->pool_what[slot]);
	fd = (int)op_end(w, openat(dfd, ".", O_RDONLY | O_DIRECTORY));
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	list_scan(w, d, w->pool_what[slot], false);
	closedir(d);
}

static void k_readlink(struct worker *w)
{
	char p[PATH_LEN];
	long n;

	pick_path(w, p, false);
	op_begin(w, "readlink(%s)", p);
	n = op_end(w, readlink(p, w->buf, BUF_MAX));
	if (n > 0)
		scan(w, w->buf, (size_t)n, "readlink", p);
}

static void k_stat(struct worker *w)
{
	char p[PATH_LEN];
	struct stat st;
	int slot, dfd = AT_FDCWD;
	const char *name, *dwhat = "";

	if (coin(w, 40)) {
		dfd = pool_get(w, &slot);
		if (dfd < 0)
			return;
		dwhat = w->pool_what[slot];
		name = pick_name(w, true);
	} else {
		pick_path(w, p, true);
		name = p;
	}
	op_begin(w, "fstatat(%s%s%s, NOFOLLOW)", dwhat, *dwhat ? ":" : "", name);
	if (op_end(w, fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) == 0 &&
	    (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && !worker_uid(st.st_uid))
		violation(w, "owner device", "%s%s%s is a device %u,%u owned by uid %u",
			  dwhat, *dwhat ? ":" : "", name, major(st.st_rdev), minor(st.st_rdev), st.st_uid);
	op_begin(w, "faccessat(%s%s%s, W_OK)", dwhat, *dwhat ? ":" : "", name);
	op_end(w, faccessat(dfd, name, W_OK, 0));
}

/* ------------------------------------------------------------ the stale view */

/* Two writable bases, of different allow_write rules most of the time. */
static void pick_bases(struct worker *w, const char **a, const char **b)
{
	*a = C.wdirs[rnd(w, (unsigned)C.nw)];
	for (int tries = 0; tries < 8; tries++) {
		*b = C.wdirs[rnd(w, (unsigned)C.nw)];
		/* "rw" and "rw/sub" are one rule; "mem-a" and "mem-b" are two */
		if (strncmp(*a, *b, 2) != 0 || (coin(w, 25) && *a != *b))
			return;
	}
}

/* Empty a leftover directory of the stale view, but leave root's files be. */
static void clear_dir(struct worker *w, const char *dir)
{
	char p[PATH_LEN];
	struct stat st;

	for (size_t i = 0; i < NELEM(snames); i++) {
		snprintf(p, sizeof(p), "%.200s/%s", dir, snames[i]);
		if (fstatat(AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW) || st.st_uid == 0)
			continue;
		op_begin(w, "%s(%s)", S_ISDIR(st.st_mode) ? "rmdir" : "unlink", p);
		op_end(w, S_ISDIR(st.st_mode) ? rmdir(p) : unlink(p));
	}
	op_begin(w, "rmdir(%s)", dir);
	op_end(w, rmdir(dir));
}

/* What the stale view is given under the new name. */
enum payload { P_VICTIM, P_FIFO, P_SYMLINK, P_OWN, P_NONE };

static enum payload put_payload(struct worker *w, enum payload p, const char *at, char *origin)
{
	int fd;

	switch (p) {
	case P_VICTIM:
		if (!find_victim(w, origin))
			return P_NONE;
		op_begin(w, "rename(%s, %s)", origin, at);
		return op_end(w, rename(origin, at)) == 0 ? P_VICTIM : P_NONE;
	case P_FIFO:
		op_begin(w, "mkfifo(%s, 0666)", at);
		op_end(w, mkfifo(at, 0666));
		return p;
	case P_SYMLINK: {
		const char *t = coin(w, 50) ? "../../secret" : "../../mem-a/secret600";

		op_begin(w, "symlink(%s, %s)", t, at);
		op_end(w, symlink(t, at));
		return p;
	}
	case P_OWN:
		op_begin(w, "open(%s, O_WRONLY|O_CREAT, 0600)", at);
		fd = (int)op_end(w, open(at, O_WRONLY | O_CREAT, 0600));
		if (fd >= 0)
			close(fd);
		return p;
	default:
		return p;
	}
}

/* The open through the old fd: O_CREAT, so a stale negative entry sends CREATE. */
static int stale_flags(struct worker *w, enum payload p)
{
	static const int victim[] = {
		O_RDWR | O_CREAT, O_RDWR | O_CREAT, O_RDONLY | O_CREAT, O_WRONLY | O_CREAT | O_APPEND,
		O_RDWR, O_WRONLY | O_CREAT | O_TRUNC,
	};

	if (p == P_FIFO)
		return coin(w, 70) ? O_WRONLY | O_CREAT : O_RDONLY | O_CREAT;
	return victim[rnd(w, NELEM(victim))];
}

/*
 * The composite: mkdir A/n; X = open(A/n); rename A/n -> B/n; list B
 * (awfs may give the directory a second node there); ask X for s (a
 * negative entry under the old node); put something at B/n/s; open X:s
 * with O_CREAT. Each step is drawn, so near misses are tried too.
 */
static void stale_view(struct worker *w, bool fifo)
{
	const char *a, *b, *n = pick(w, dirnames, NELEM(dirnames)), *s = pick(w, snames, NELEM(snames));
	char an[PATH_LEN], bn[PATH_LEN], at[PATH_LEN], origin[PATH_LEN], xw[PATH_LEN];
	unsigned r = rnd(w, 100);
	enum payload p = fifo ? P_FIFO : r < 60 ? P_VICTIM : r < 75 ? P_SYMLINK : r < 90 ? P_OWN : P_NONE;
	unsigned rflags = coin(w, 85) ? 0 : RENAME_NOREPLACE;
	int slot = (int)rnd(w, POOL), x;
	struct stat st;

	pick_bases(w, &a, &b);
	snprintf(an, sizeof(an), "%s/%s", a, n);
	snprintf(bn, sizeof(bn), "%s/%s", b, n);
	snprintf(at, sizeof(at), "%.400s/%s", bn, s);
	op_begin(w, "mkdir(%s, 0777)", an);
	op_end(w, mkdir(an, 0777));
	op_begin(w, "open(%s, O_DIRECTORY) -> D%d", an, slot);
	x = (int)op_end(w, open(an, O_DIRECTORY | (coin(w, 20) ? O_PATH : O_RDONLY)));
	if (x < 0)
		return;
	pool_put(w, slot, x, an);
	snprintf(xw, sizeof(xw), "%s", w->pool_what[slot]);
	op_begin(w, "renameat2(%s, %s, %s)", an, bn, rflags_str(rflags));
	if (op_end(w, renameat2(AT_FDCWD, an, AT_FDCWD, bn, rflags)) && (errno == ENOTEMPTY || errno == EEXIST))
		clear_dir(w, bn);	/* a leftover: clear the way for next time */
	if (coin(w, 90))
		list_path(w, b);
	if (coin(w, 90)) {
		op_begin(w, "fstatat(%s:%s)", xw, s);
		op_end(w, fstatat(x, s, &st, AT_SYMLINK_NOFOLLOW));
	}
	p = put_payload(w, p, at, origin);
	open_use(w, x, xw, s, stale_flags(w, p), 0644);
	if (p == P_VICTIM) {
		op_begin(w, "rename(%s, %s)", at, origin);	/* keep victims findable */
		op_end(w, rename(at, origin));
	} else if (p != P_VICTIM && coin(w, 60)) {
		op_begin(w, "unlink(%s)", at);
		op_end(w, unlink(at));
	}
}

static void k_stale(struct worker *w)
{
	stale_view(w, false);
}

static void k_stalefifo(struct worker *w)
{
	stale_view(w, true);
}

/* ------------------------------------------------------------ saturation (-S) */

/*
 * What an agent does to weigh on the daemon rather than to get past it:
 * more slow calls than awfs has workers (copies of 128 MiB, writes of 4 MiB
 * and an fsync), the first page of a directory of 100,000 entries listed
 * again and again after a create, opens of the denials file held, floods
 * of refused creates. The canaries' bound (-t) says what that may cost
 * the other callers; run.sh bounds the daemon's memory.
 */
static void k_copybig(struct worker *w)
{
	char dst[PATH_LEN];
	int in, out;

	snprintf(dst, sizeof(dst), "rw/sat-copy.%d", w->idx);
	in = open("ro/sparse", O_RDONLY | O_CLOEXEC);
	out = open(dst, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (in >= 0 && out >= 0) {
		loff_t oi = 0, oo = 0;

		op_begin(w, "copy_file_range(ro/sparse, %s, 128 MiB)", dst);
		op_end(w, (long)copy_file_range(in, &oi, out, &oo, 128u << 20, 0));
		if (ftruncate(out, 0) < 0)
			(void)0;	/* renamed away meanwhile: someone else's now */
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

/*
 * 4 MiB made dirty by a copy (a worker's request: large WRITEs are served
 * on the listener, where the kernel's dirty-page throttling would stall it
 * with them, which docs/security.md says is not covered), then an fsync.
 */
static void k_syncbig(struct worker *w)
{
	char dst[PATH_LEN];
	int in, fd;

	snprintf(dst, sizeof(dst), "rw/sat-sync.%d", w->idx);
	in = open("ro/sparse", O_RDONLY | O_CLOEXEC);
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (in >= 0 && fd >= 0) {
		loff_t oi = 0, oo = 0;

		if (copy_file_range(in, &oi, fd, &oo, 4u << 20, 0) >= 0) {
			op_begin(w, "fsync(%s, 4 MiB)", dst);
			op_end(w, fsync(fd));
		}
	}
	if (in >= 0)
		close(in);
	if (fd >= 0)
		close(fd);
}

static void k_listbig(struct worker *w)
{
	char name[PATH_LEN];
	static char page[4096];
	int fd;

	snprintf(name, sizeof(name), "rw/big/sat-%d", w->idx);
	fd = open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		close(fd);
		unlink(name);
	}
	fd = open("rw/big", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	op_begin(w, "getdents64(rw/big, one page)");
	op_end(w, syscall(SYS_getdents64, fd, page, sizeof(page)));
	close(fd);
}

static void k_holdinfo(struct worker *w)
{
	unsigned i = w->nheld % HELD;
	int fd;

	if (w->nheld >= HELD)
		close(w->held[i]);
	op_begin(w, "open(.awfs/denials) [%u held]", w->nheld < HELD ? w->nheld : HELD);
	fd = (int)op_end(w, open(".awfs/denials", O_RDONLY | O_CLOEXEC));
	if (fd < 0) {
		if (w->nheld >= HELD)
			w->held[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);	/* keep the ring full */
		else
			return;
	} else {
		w->held[i] = fd;
	}
	w->nheld++;
}

static void k_flood(struct worker *w)
{
	char name[PATH_LEN];

	for (int i = 0; i < 32; i++) {
		int fd;

		snprintf(name, sizeof(name), "ro/flood/f-%d-%d", w->idx, (int)rnd(w, 1000));
		op_begin(w, "open(%s, O_CREAT)", name);
		fd = (int)op_end(w, open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
		if (fd >= 0) {
			close(fd);
			violation(w, "flood-create", "created %s in a read-only directory", name);
		}
	}
}

static const struct kind_info kinds[K_NKINDS] = {
	[K_READ] = { "read", 10, k_read },
	[K_OPEN] = { "open", 12, k_open },
	[K_OPENAT] = { "openat", 8, k_openat },
	[K_DIRFD] = { "dirfd", 4, k_dirfd },
	[K_RENAME] = { "rename", 12, k_rename },
	[K_SYMSWAP] = { "symswap", 6, k_symswap },
	[K_LINK] = { "link", 4, k_link },
	[K_MKFIFO] = { "mkfifo", 2, k_mkfifo },
	[K_FIFOOPEN] = { "fifo-open", 2, k_fifoopen },
	[K_TRUNC] = { "truncate", 3, k_trunc },
	[K_XATTR] = { "xattr", 4, k_xattr },
	[K_MMAP] = { "mmap", 3, k_mmap },
	[K_CHMOD] = { "chmod", 2, k_chmod },
	[K_CHOWN] = { "chown", 2, k_chown },
	[K_MKDIR] = { "mkdir", 5, k_mkdir },
	[K_RMDIR] = { "rmdir", 3, k_rmdir },
	[K_UNLINK] = { "unlink", 3, k_unlink },
	[K_READDIR] = { "readdir", 6, k_readdir },
	[K_READLINK] = { "readlink", 2, k_readlink },
	[K_STAT] = { "stat", 5, k_stat },
	[K_STALE] = { "stale-view", 10, k_stale },
	[K_STALEFIFO] = { "stale-fifo", 3, k_stalefifo },
	[K_ROHANDLE] = { "ro-handle", 3, k_rohandle },
	[K_COPYBIG] = { "copy-big", 0, k_copybig },
	[K_SYNCBIG] = { "fsync-big", 0, k_syncbig },
	[K_LISTBIG] = { "list-big", 0, k_listbig },
	[K_HOLDINFO] = { "hold-info", 0, k_holdinfo },
	[K_FLOOD] = { "flood", 0, k_flood },
};

/* The weight of kind @k in this run: -S gives the saturation kinds theirs. */
static int weight(int k)
{
	if (C.excluded[k])
		return 0;
	if (k >= K_COPYBIG)
		return C.saturate ? 8 : 0;
	return kinds[k].weight;
}

/* ------------------------------------------------------------ processes */

static void on_bus(int sig)
{
	if (self && self->in_map)
		siglongjmp(self->bus, 1);	/* the file shrank under the mapping */
	signal(sig, SIG_DFL);
	raise(sig);
}

static void __attribute__((noreturn)) die(const char *what)
{
	fprintf(stderr, "awfs-adversary: %s: %s\n", what, strerror(errno));
	_exit(2);
}

/*
 * Become @uid for good: no groups, real, effective and saved ids. Then the
 * parent-death signal (credential changes clear it), so no process
 * outlives a supervisor that was killed.
 */
static void become(uid_t uid, gid_t gid)
{
	if (uid != 0 && (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid)))
		die("dropping privileges");
	if (uid != 0 && setuid(0) == 0) {
		errno = EPERM;
		die("privileges still held after dropping them");
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(2);
	if (chdir(C.root))
		die(C.root);
}

static void signals_init(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART: a blocked call ends, EINTR */
	sa.sa_handler = on_bus;
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static enum kind pick_kind(struct worker *w)
{
	int total = 0, r;

	for (int k = 0; k < K_NKINDS; k++)
		total += weight(k);
	r = (int)rnd(w, (unsigned)total);
	for (int k = 0; k < K_NKINDS; k++) {
		if (r < weight(k))
			return (enum kind)k;
		r -= weight(k);
	}
	return K_READ;
}

static void worker_run(int idx)
{
	static struct worker w;
	uid_t uid = C.uids[idx % C.nuids];

	w.idx = idx;
	w.slot = &S->slot[idx];
	w.uid = uid;
	w.gid = uid;
	for (int i = 0; i < POOL; i++)
		w.pool[i] = -1;
	self = &w;
	become(uid, uid);
	umask(0);
	signals_init();
	for (long k = 0; !atomic_load(&S->stop) && now_ns() < C.deadline; k++) {
		enum kind kind;

		reseed(&w, k);
		kind = pick_kind(&w);
		w.slot->kind_n[kind]++;
		kinds[kind].fn(&w);
	}
	_exit(0);
}

/* ------------------------------------------------------------ canaries */

/* A canary's call failed in a way the fixture rules out. */
static void canary_fail(struct slot *s, int idx, const char *what, int err)
{
	char key[96], *text = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(key, sizeof(key), "canary %s", what);
	atomic_fetch_add(&S->nviol, 1);
	out_lock();
	if (seen_first(key) && (f = open_memstream(&text, &len))) {
		fprintf(f, "VIOLATION: canary %d (uid %u): %s failed: %s%s (seed %" PRIu64 ", at %.2f s)\n",
			idx, s->uid, what, strerror(err), err == ENOTCONN ? " (the daemon is gone)" : "", C.seed,
			elapsed());
		fclose(f);
		out_write(text, len);
	}
	out_unlock();
	if (err == ENOTCONN || !C.keep_going)
		_exit(1);
}

static void busy(struct slot *s, const char *op, const char *arg)
{
	snprintf(s->busy_what, RING_LEN, "%s(%s)", op, arg);
	atomic_store(&s->busy_since, now_ns());
}

static void idle(struct slot *s)
{
	int64_t took = now_ns() - atomic_load(&s->busy_since);

	if (took > s->slowest_ns)
		s->slowest_ns = took;
	atomic_store(&s->busy_since, 0);
}

/* Read the canary file: the same bytes every time. */
static void canary_read(struct slot *s, int idx, char *want, ssize_t *wantlen)
{
	char buf[4096];
	ssize_t n;
	int fd;

	busy(s, "open", C.canary_file);
	fd = open(C.canary_file, O_RDONLY);
	idle(s);
	if (fd < 0) {
		canary_fail(s, idx, "open", errno);
		return;
	}
	busy(s, "read", C.canary_file);
	n = read(fd, buf, sizeof(buf));
	idle(s);
	close(fd);
	if (n < 0)
		canary_fail(s, idx, "read", errno);
	else if (*wantlen < 0)
		memcpy(want, buf, (size_t)(*wantlen = n));
	else if (n != *wantlen || memcmp(buf, want, (size_t)n))
		canary_fail(s, idx, "read (other bytes than before)", EIO);
}

static void canary_round(struct slot *s, int idx, long n, char *want, ssize_t *wantlen)
{
	char name[128];
	struct stat st;
	DIR *d;

	/* a name never asked before: the lookup reaches the daemon */
	snprintf(name, sizeof(name), "%.64s/.canary-%d-%ld", C.canary_dir, idx, n);
	busy(s, "stat", name);
	errno = 0;
	if (stat(name, &st) == 0)
		errno = EEXIST;
	idle(s);
	if (errno != ENOENT)
		canary_fail(s, idx, "stat of an absent name", errno);
	canary_read(s, idx, want, wantlen);
	busy(s, "opendir+readdir", C.canary_dir);
	d = opendir(C.canary_dir);
	while (d && readdir(d))
		;
	idle(s);
	if (!d)
		canary_fail(s, idx, "opendir", errno);
	else
		closedir(d);
}

static void canary_run(int idx, uid_t uid)
{
	struct slot *s = &S->slot[idx];
	char want[4096];
	ssize_t wantlen = -1;

	become(uid, uid);
	signal(SIGPIPE, SIG_IGN);
	for (long n = 0; !atomic_load(&S->stop); n++) {
		canary_round(s, idx, n, want, &wantlen);
		s->rounds++;
		sleep_ms(100);
	}
	_exit(0);
}

/* ------------------------------------------------------------ supervisor */

static pid_t spawn(int idx, uid_t uid, bool canary)
{
	pid_t pid;

	S->slot[idx].uid = uid;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		S->slot[idx].pid = getpid();
		if (canary)
			canary_run(idx, uid);
		worker_run(idx);
	}
	S->slot[idx].pid = pid;
	return pid;
}

/* Reap what has exited; the number of workers still running. */
static int reap(int nprocs)
{
	int status, alive = 0;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (int i = 0; i < nprocs; i++)
			if (S->slot[i].pid == pid)
				S->slot[i].exited = 1;
	for (int i = 0; i < C.nproc; i++)
		alive += !S->slot[i].exited;
	return alive;
}

/* The worker whose call in progress started first after @after (ns); -1 if none. */
static int blocked_next(int64_t after)
{
	int64_t oldest = INT64_MAX;
	int who = -1;

	for (int i = 0; i < C.nproc; i++) {
		int64_t t = atomic_load(&S->slot[i].busy_since);

		if (t > after && !S->slot[i].exited && t < oldest) {
			oldest = t;
			who = i;
		}
	}
	return who;
}

/* The workers' calls in progress, longest first: among them, what holds the rest. */
static void print_in_progress(FILE *f)
{
	int64_t now = now_ns(), after = 0;
	int who;

	fprintf(f, "  calls in progress, longest first:\n");
	while ((who = blocked_next(after)) >= 0) {
		const struct slot *s = &S->slot[who];

		after = atomic_load(&s->busy_since);
		fprintf(f, "    worker %d (uid %u), %.2f s: %s\n", who, s->uid, (now - after) / 1e9,
			s->ring[(s->ring_next - 1) % RING]);
	}
}

/*
 * A liveness violation, @what: every worker's last operations, the one
 * blocked longest in full, since it most likely holds up the others.
 */
static void report_stall(const char *what)
{
	int who = blocked_next(0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	atomic_fetch_add(&S->nviol, 1);
	fprintf(f, "VIOLATION: liveness: %s (seed %" PRIu64 ", at %.2f s)\n", what, C.seed, elapsed());
	print_in_progress(f);
	for (int i = 0; i < C.nproc; i++)
		ring_print(f, &S->slot[i], i, i == who ? RING : 6);
	fclose(f);
	out_lock();
	if (seen_first("liveness"))
		out_write(text, len);
	else
		free(text);
	out_unlock();
}

/* A canary whose call has been running too long: someone stalls everyone. */
static bool stalled(void)
{
	char what[RING_LEN + 128];

	for (int i = C.nproc; i < C.nproc + 2; i++) {
		const struct slot *s = &S->slot[i];
		int64_t t = atomic_load(&s->busy_since);

		if (t && now_ns() - t > (int64_t)C.stall_ms * 1000000) {
			snprintf(what, sizeof(what), "canary %d (uid %u) blocked for more than %.1f s in %s: a caller stalls every other",
				 i, s->uid, C.stall_ms / 1000.0, s->busy_what);
			report_stall(what);
			return true;
		}
	}
	return false;
}

static void report_stuck(void)
{
	char what[128];

	for (int i = 0; i < C.nproc; i++) {
		if (!S->slot[i].exited) {
			snprintf(what, sizeof(what), "worker %d (uid %u) still running %d s after the end", i,
				 S->slot[i].uid, GRACE_S);
			report_stall(what);
			return;
		}
	}
}

/* Stop everyone; wait a bounded time; name who is stuck in the kernel. */
static void end_all(int nprocs)
{
	int64_t until = now_ns() + 1000000000;

	atomic_store(&S->stop, 1);
	while (reap(nprocs) + !S->slot[C.nproc].exited + !S->slot[C.nproc + 1].exited && now_ns() < until)
		sleep_ms(20);
	for (int i = 0; i < nprocs; i++)
		if (!S->slot[i].exited)
			kill(S->slot[i].pid, SIGKILL);
	until = now_ns() + 3000000000LL;
	while (reap(nprocs) + !S->slot[C.nproc].exited + !S->slot[C.nproc + 1].exited && now_ns() < until)
		sleep_ms(20);
	/*
	 * SIGKILL ends a caller whose request awfs has not read yet; one that
	 * survives it has had its request read and never answered: the one
	 * that holds up the others, most likely.
	 */
	for (int i = 0; i < nprocs; i++)
		if (!S->slot[i].exited)
			printf("# %s %d (pid %d) survived SIGKILL: awfs read its request and never answered it; it ends with the mount\n",
			       i < C.nproc ? "worker" : "canary", i, (int)S->slot[i].pid);
}

static int supervise(int nprocs)
{
	while (reap(nprocs)) {
		if (stalled())
			break;
		if (atomic_load(&S->nviol) && !C.keep_going)
			break;
		if (now_ns() > C.deadline + (int64_t)GRACE_S * 1000000000) {
			report_stuck();
			break;
		}
		sleep_ms(50);
	}
	end_all(nprocs);
	return atomic_load(&S->nviol) ? 1 : 0;
}

static void summary(void)
{
	long kind_n[K_NKINDS] = { 0 }, err_n[NERR + 1] = { 0 }, ops = 0, rounds = 0;
	int64_t slowest = 0;

	for (int i = 0; i < C.nproc; i++) {
		ops += S->slot[i].ops;
		for (int k = 0; k < K_NKINDS; k++)
			kind_n[k] += S->slot[i].kind_n[k];
		for (int e = 0; e <= NERR; e++)
			err_n[e] += S->slot[i].err_n[e];
	}
	for (int i = C.nproc; i < C.nproc + 2; i++) {
		rounds += S->slot[i].rounds;
		slowest = S->slot[i].slowest_ns > slowest ? S->slot[i].slowest_ns : slowest;
	}
	printf("# awfs-adversary: seed %" PRIu64 ", %d s, %d workers, %ld calls\n# by kind:", C.seed,
	       C.seconds, C.nproc, ops);
	for (int k = 0; k < K_NKINDS; k++)
		printf(" %s %ld", kinds[k].name, kind_n[k]);
	printf("\n# errors:");
	for (int e = 0; e <= NERR; e++)
		if (err_n[e])
			printf(" %s %ld", e < NERR && strerrorname_np(e) ? strerrorname_np(e) : "other", err_n[e]);
	printf("\n# canaries: %ld rounds, slowest call %.3f s\n", rounds, slowest / 1e9);
	printf("# violations: %d", atomic_load(&S->nviol));
	for (int i = 0; i < S->nseen; i++)
		printf("%s%s x%ld", i ? ", " : " (", S->seen[i].key, S->seen[i].n);
	printf("%s\n", S->nseen ? ")" : "");
}

/* ------------------------------------------------------------ set-up */

static void usage(void)
{
	fprintf(stderr,
		"usage: awfs-adversary [options] ROOT SECONDS SEED NPROC   (as root)\n"
		"  -u UID[,UID]   the workers' uids, in turn (gid = uid)  [1000,65534]\n"
		"  -U UID         the unprivileged canary's uid          [65534]\n"
		"  -w DIR         a writable directory (repeat)   [rw rw/sub mem-a mem-b]\n"
		"  -r DIR         a read-only directory (repeat)  [. ro ro/dir rw/.git]\n"
		"  -m DIR         a masked directory (repeat)     [secret rw/masked ro/hidden]\n"
		"  -v NAME        a root-owned file's name in the writable dirs (repeat)\n"
		"                                       [secret600 rootro644 acl644]\n"
		"  -s NAME        a single-file rule in the read-only root (repeat): writable,\n"
		"                 replaced by a temporary beside it (NAME.*, sed and 6)  [none]\n"
		"  -f FILE        forbidden strings, one a line; \"uid=N STRING\" for one uid\n"
		"  -c FILE -C DIR the canaries' file and directory      [ro/canary ro/dir]\n"
		"  -a MS          the timer that ends a blocked call     [500]\n"
		"  -t MS          a canary call longer than this is a stall [2000]\n"
		"  -x KIND[,KIND] leave out these kinds of operation\n"
		"  -S             saturation too: copies of 128 MiB from ro/sparse, fsyncs of\n"
		"                 4 MiB, listings of rw/big, opens of .awfs/denials held,\n"
		"                 floods of creates in ro/flood (run.sh makes them)\n"
		"  -k             keep going after a violation (each reported once)\n");
	exit(2);
}

/* Repeated options replace the default list on first use. */
static void list_add(const char **l, int *n, bool *fresh, const char *v)
{
	if (!*fresh) {
		*n = 0;
		*fresh = true;
	}
	if (*n < MAX_LIST)
		l[(*n)++] = v;
}

static void parse_uids(const char *arg)
{
	char *copy = strdup(arg), *save = NULL;

	C.nuids = 0;
	for (char *t = strtok_r(copy, ",", &save); t && C.nuids < 8; t = strtok_r(NULL, ",", &save))
		C.uids[C.nuids++] = (uid_t)strtoul(t, NULL, 10);
	free(copy);
	if (!C.nuids || worker_uid(0))
		usage();
}

static void parse_excluded(const char *arg)
{
	char *copy = strdup(arg), *save = NULL;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k = 0;

		while (k < K_NKINDS && strcmp(kinds[k].name, t))
			k++;
		if (k == K_NKINDS) {
			fprintf(stderr, "awfs-adversary: no kind of operation \"%s\"\n", t);
			free(copy);
			exit(2);
		}
		C.excluded[k] = true;
	}
	free(copy);
	for (int k = 0; k < K_NKINDS; k++)
		if (!C.excluded[k])
			return;
	fprintf(stderr, "awfs-adversary: -x left no kind of operation\n");
	exit(2);
}

static void load_forbidden(const char *file)
{
	FILE *f = fopen(file, "r");
	char line[256];

	if (!f)
		die(file);
	while (fgets(line, sizeof(line), f) && C.nforbid < MAX_FORBID) {
		struct forbidden *fb = &C.forbid[C.nforbid];
		char *s = line;

		line[strcspn(line, "\n")] = '\0';
		fb->uid = (uid_t)-1;
		if (strncmp(s, "uid=", 4) == 0 && strchr(s, ' ')) {
			fb->uid = (uid_t)strtoul(s + 4, NULL, 10);
			s = strchr(s, ' ') + 1;
		}
		if (*s && *s != '#') {
			fb->s = strdup(s);
			C.nforbid++;
		}
	}
	fclose(f);
}

static void parse_args(int argc, char **argv)
{
	bool fw = false, fr = false, fm = false, fv = false, fs = false;
	int c;

	while ((c = getopt(argc, argv, "u:U:w:r:m:v:s:f:c:C:a:t:x:kSh")) != -1) {
		switch (c) {
		case 'u': parse_uids(optarg); break;
		case 'U': C.canary_uid = (uid_t)strtoul(optarg, NULL, 10); break;
		case 'w': list_add(C.wdirs, &C.nw, &fw, optarg); break;
		case 'r': list_add(C.rdirs, &C.nr, &fr, optarg); break;
		case 'm': list_add(C.mdirs, &C.nm, &fm, optarg); break;
		case 'v': list_add(C.victims, &C.nv, &fv, optarg); break;
		case 's': list_add(C.singles, &C.ns, &fs, optarg); break;
		case 'f': load_forbidden(optarg); break;
		case 'c': C.canary_file = optarg; break;
		case 'C': C.canary_dir = optarg; break;
		case 'a': C.alarm_ms = atoi(optarg); break;
		case 't': C.stall_ms = atoi(optarg); break;
		case 'x': parse_excluded(optarg); break;
		case 'k': C.keep_going = true; break;
		case 'S': C.saturate = true; break;
		default: usage();
		}
	}
	if (argc - optind != 4)
		usage();
	C.root = argv[optind];
	C.seconds = atoi(argv[optind + 1]);
	C.seed = strtoull(argv[optind + 2], NULL, 10);
	C.nproc = atoi(argv[optind + 3]);
	if (C.seconds <= 0 || C.nproc <= 0 || C.nproc > MAX_WORKERS || !C.nw || C.alarm_ms <= 0 ||
	    C.stall_ms <= 0)
		usage();
}

static void shared_init(void)
{
	pthread_mutexattr_t ma;
	FILE *f = fopen("/proc/sys/fs/protected_hardlinks", "r");

	S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S == MAP_FAILED)
		die("mmap");
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&S->lock, &ma);
	C.protected_hardlinks = f && fgetc(f) == '1';
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	struct stat st;
	int nprocs, rc;

	parse_args(argc, argv);
	if (geteuid() != 0) {
		fprintf(stderr, "awfs-adversary: run me as root: the workers drop to their uids\n");
		return 2;
	}
	if (stat(C.root, &st) || !S_ISDIR(st.st_mode))
		die(C.root);
	shared_init();
	setvbuf(stdout, NULL, _IOLBF, 0);
	C.start = now_ns();
	C.deadline = C.start + (int64_t)C.seconds * 1000000000;
	nprocs = C.nproc + 2;
	spawn(C.nproc, C.canary_uid, true);
	spawn(C.nproc + 1, 0, true);
	for (int i = 0; i < C.nproc; i++)
		spawn(i, C.uids[i % C.nuids], false);
	rc = supervise(nprocs);
	summary();
	return rc;
}
