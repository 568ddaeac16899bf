/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-helper - the timed loops and fixtures of tests/bench/bench.sh.
 *
 * Every timed subcommand measures with CLOCK_MONOTONIC around its own loop
 * and prints the elapsed seconds ("%.6f") on stdout; errors go to stderr and
 * make it exit 1, so a failing workload is never recorded as a time.
 *
 *   time OUT CMD [ARG...]        run CMD (fork/exec), write its wall time to OUT;
 *                                exit with CMD's status
 *   append FILE N SIZE           N x open(O_WRONLY|O_APPEND|O_CREAT) + write SIZE + close
 *   create DIR N                 open(O_CREAT|O_EXCL) + close DIR/f000000 ...
 *   stat DIR N                   stat DIR/f000000 ...
 *   unlink DIR N                 unlink DIR/f000000 ...
 *   readfiles DIR N              open + read to EOF + close DIR/p00000.json ...
 *   seqwrite FILE MIB            open(O_CREAT|O_TRUNC), MIB x write 1 MiB, fsync, close
 *   seqread FILE                 open, read 1 MiB blocks to EOF, close
 *   randread FILE JOBS OPS SEED  OPS 4 KiB preads at random aligned offsets, split
 *                                over JOBS threads (each its own fd, opened untimed)
 *   gentree DIR NFILES MIN MAX SEED   a deterministic source-like tree: ~12 files a
 *                                directory, sizes log-uniform in [MIN, MAX] bytes
 *   genjson DIR N SEED           N small JSON documents DIR/p00000.json ...
 *   waitmount MNT NAME TIMEOUT   wait until MNT/NAME resolves on another device than
 *                                MNT's parent (a mount answered a lookup); prints seconds
 *   mountcycle MNT NAME TIMEOUT PIDFILE CMD [ARG...]
 *                                launch CMD (a foreground FUSE daemon), time launch ->
 *                                first successful lookup of MNT/NAME, read its VmRSS and
 *                                VmHWM after 200 ms idle, then time `fusermount3 -u MNT`
 *                                until the daemon has exited; prints
 *                                "MOUNT_S RSS_KIB HWM_KIB UMOUNT_S"
 *   rss PID                      prints "VmHWM_KIB VmRSS_KIB" of PID
 *   flood FILE OUT               open(FILE, O_WRONLY|O_CREAT) over and over, each
 *                                expected to fail with EROFS, until SIGTERM; then
 *                                write the number of attempts to OUT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *prog = "bench-helper";

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (e)
		fprintf(stderr, ": %s", strerror(e));
	fputc('\n', stderr);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0) {
		errno = 0;
		die("not a number: %s", s);
	}
	return v;
}

/* xorshift64*: deterministic, seedable, good enough for offsets and text */
static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static void seed_rnd(uint64_t *s, uint64_t seed)
{
	*s = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
	if (!*s)
		*s = 1;
	for (int i = 0; i < 8; i++)
		rnd(s);
}

static void write_all(int fd, const char *buf, size_t len, const char *what)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("write %s", what);
		}
		buf += n;
		len -= (size_t)n;
	}
}

static void report(double t0)
{
	printf("%.6f\n", now() - t0);
}

/* ---------------------------------------------------------------- time */
static int cmd_time(int argc, char **argv)
{
	double t0, t1;
	pid_t pid;
	int status;
	FILE *f;

	if (argc < 2)
		die("time OUT CMD [ARG...]");
	t0 = now();
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		fprintf(stderr, "%s: exec %s: %s\n", prog, argv[1], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	t1 = now();
	f = fopen(argv[0], "w");
	if (!f)
		die("%s", argv[0]);
	fprintf(f, "%.6f\n", t1 - t0);
	if (fclose(f))
		die("%s", argv[0]);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* ---------------------------------------------------------------- metadata loops */
static int cmd_append(int argc, char **argv)
{
	long n, size;
	char *buf;
	double t0;

	if (argc != 3)
		die("append FILE N SIZE");
	n = num(argv[1]);
	size = num(argv[2]);
	buf = malloc((size_t)size + 1);
	if (!buf)
		die("malloc");
	for (long i = 0; i < size; i++)
		buf[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);
	t0 = now();
	for (long i = 0; i < n; i++) {
		int fd = open(argv[0], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

		if (fd < 0)
			die("open %s", argv[0]);
		write_all(fd, buf, (size_t)size, argv[0]);
		if (close(fd))
			die("close %s", argv[0]);
	}
	report(t0);
	free(buf);
	return 0;
}

enum meta_op { M_CREATE, M_STAT, M_UNLINK, M_READ };

static int meta_loop(enum meta_op op, int argc, char **argv)
{
	static char buf[1 << 16];
	char path[4096];
	long n;
	double t0;
	int len;

	if (argc != 2)
		die("create|stat|unlink|readfiles DIR N");
	n = num(argv[1]);
	t0 = now();
	for (long i = 0; i < n; i++) {
		struct stat st;
		int fd;

		if (op == M_READ)
			len = snprintf(path, sizeof path, "%s/p%05ld.json", argv[0], i);
		else
			len = snprintf(path, sizeof path, "%s/f%06ld", argv[0], i);
		if (len < 0 || (size_t)len >= sizeof path) {
			errno = 0;
			die("path too long");
		}
		switch (op) {
		case M_CREATE:
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			if (fd < 0 || close(fd))
				die("create %s", path);
			break;
		case M_STAT:
			if (stat(path, &st))
				die("stat %s", path);
			break;
		case M_UNLINK:
			if (unlink(path))
				die("unlink %s", path);
			break;
		case M_READ:
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				die("open %s", path);
			for (;;) {
				ssize_t r = read(fd, buf, sizeof buf);

				if (r < 0)
					die("read %s", path);
				if (r == 0)
					break;
			}
			if (close(fd))
				die("close %s", path);
			break;
		}
	}
	report(t0);
	return 0;
}

/* ---------------------------------------------------------------- data */
#define MIB (1024 * 1024)

static int cmd_seqwrite(int argc, char **argv)
{
	char *buf;
	uint64_t s;
	long mib;
	double t0;
	int fd;

	if (argc != 2)
		die("seqwrite FILE MIB");
	mib = num(argv[1]);
	buf = malloc(MIB);
	if (!buf)
		die("malloc");
	seed_rnd(&s, 7);
	for (size_t i = 0; i < MIB / 8; i++)
		((uint64_t *)buf)[i] = rnd(&s);
	t0 = now();
	fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("open %s", argv[0]);
	for (long i = 0; i < mib; i++) {
		((uint64_t *)buf)[0] = (uint64_t)i;	/* no two blocks alike */
		write_all(fd, buf, MIB, argv[0]);
	}
	if (fsync(fd))
		die("fsync %s", argv[0]);
	if (close(fd))
		die("close %s", argv[0]);
	report(t0);
	free(buf);
	return 0;
}

static int cmd_seqread(int argc, char **argv)
{
	char *buf;
	double t0;
	int fd;

	if (argc != 1)
		die("seqread FILE");
	buf = malloc(MIB);
	if (!buf)
		die("malloc");
	t0 = now();
	fd = open(argv[0], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("open %s", argv[0]);
	for (;;) {
		ssize_t r = read(fd, buf, MIB);

		if (r < 0)
			die("read %s", argv[0]);
		if (r == 0)
			break;
	}
	if (close(fd))
		die("close %s", argv[0]);
	report(t0);
	free(buf);
	return 0;
}

struct rr_job {
	int fd;
	long ops;
	off_t blocks;
	uint64_t seed;
	pthread_barrier_t *bar;
	int err;
};

static void *rr_run(void *arg)
{
	struct rr_job *j = arg;
	char buf[4096] __attribute__((aligned(4096)));
	uint64_t s;

	seed_rnd(&s, j->seed);
	pthread_barrier_wait(j->bar);
	for (long i = 0; i < j->ops; i++) {
		off_t off = (off_t)(rnd(&s) % (uint64_t)j->blocks) * 4096;

		if (pread(j->fd, buf, sizeof buf, off) != (ssize_t)sizeof buf) {
			j->err = errno ? errno : EIO;
			break;
		}
	}
	return NULL;
}

static int cmd_randread(int argc, char **argv)
{
	long jobs, ops;
	uint64_t seed;
	struct stat st;
	pthread_barrier_t bar;
	double t0;

	if (argc != 4)
		die("randread FILE JOBS OPS SEED");
	jobs = num(argv[1]);
	ops = num(argv[2]);
	seed = (uint64_t)num(argv[3]);
	if (jobs < 1 || jobs > 256) {
		errno = 0;
		die("JOBS must be 1..256");
	}
	if (stat(argv[0], &st))
		die("stat %s", argv[0]);
	if (st.st_size < 4096) {
		errno = 0;
		die("%s: smaller than 4 KiB", argv[0]);
	}
	struct rr_job job[jobs];
	pthread_t th[jobs];

	pthread_barrier_init(&bar, NULL, (unsigned)jobs + 1);
	for (long i = 0; i < jobs; i++) {
		job[i] = (struct rr_job){ .ops = ops / jobs + (i < ops % jobs),
			.blocks = st.st_size / 4096, .seed = seed + (uint64_t)i,
			.bar = &bar };
		job[i].fd = open(argv[0], O_RDONLY | O_CLOEXEC);
		if (job[i].fd < 0)
			die("open %s", argv[0]);
		if (pthread_create(&th[i], NULL, rr_run, &job[i]))
			die("pthread_create");
	}
	pthread_barrier_wait(&bar);
	t0 = now();
	for (long i = 0; i < jobs; i++)
		pthread_join(th[i], NULL);
	report(t0);
	for (long i = 0; i < jobs; i++) {
		if (job[i].err) {
			errno = job[i].err;
			die("pread %s", argv[0]);
		}
		close(job[i].fd);
	}
	return 0;
}

/* ---------------------------------------------------------------- fixtures */
static const char *words[] = {
	"static", "int", "return", "struct", "const", "char", "void", "if", "else",
	"for", "while", "unsigned", "long", "size_t", "buffer", "node", "list",
	"count", "error", "value", "index", "offset", "length", "state", "config",
	"handle", "request", "reply", "entry", "inode", "path", "name", "flags",
	"/*", "*/", "{", "}", "(", ");", "=", "==", "+", "->", "0", "1", "NULL",
};
#define NWORDS (sizeof words / sizeof words[0])

static const char *dirnames[] = {
	"src", "lib", "include", "drivers", "net", "fs", "core", "util", "tests",
	"docs", "arch", "kernel", "mm", "tools", "scripts", "crypto", "block",
};
#define NDIRNAMES (sizeof dirnames / sizeof dirnames[0])

static const char *exts[] = { ".c", ".h", ".c", ".h", ".txt", ".md", ".py", ".json", ".S", ".c" };
#define NEXTS (sizeof exts / sizeof exts[0])

/* text-like content of exactly len bytes */
static void fill_text(char *buf, size_t len, uint64_t *s)
{
	size_t i = 0, col = 0;

	while (i < len) {
		const char *w = words[rnd(s) % NWORDS];
		size_t wl = strlen(w);

		if (col + wl + 1 > 72) {
			buf[i++] = '\n';
			col = 0;
			continue;
		}
		for (size_t k = 0; k < wl && i < len; k++)
			buf[i++] = w[k];
		if (i < len)
			buf[i++] = ' ';
		col += wl + 1;
	}
	if (len)
		buf[len - 1] = '\n';
}

static void write_file(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		die("create %s", path);
	write_all(fd, buf, len, path);
	if (close(fd))
		die("close %s", path);
}

static void mkdir_p1(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		die("mkdir %s", path);
}

static int cmd_gentree(int argc, char **argv)
{
	long nfiles, lo, hi, ndirs;
	uint64_t s;
	char **dpath;
	char *buf;

	if (argc != 5)
		die("gentree DIR NFILES MIN MAX SEED");
	nfiles = num(argv[1]);
	lo = num(argv[2]);
	hi = num(argv[3]);
	seed_rnd(&s, (uint64_t)num(argv[4]));
	if (lo < 1 || hi < lo) {
		errno = 0;
		die("need 1 <= MIN <= MAX");
	}
	ndirs = nfiles / 12 + 1;
	dpath = calloc((size_t)ndirs, sizeof *dpath);
	buf = malloc((size_t)hi);
	if (!dpath || !buf)
		die("malloc");
	mkdir_p1(argv[0]);
	dpath[0] = strdup(argv[0]);
	for (long d = 1; d < ndirs; d++) {
		long parent = (d - 1) / 6;	/* a 6-ary tree of directories */

		if (asprintf(&dpath[d], "%s/%s%ld", dpath[parent],
			     dirnames[rnd(&s) % NDIRNAMES], d) < 0)
			die("asprintf");
		mkdir_p1(dpath[d]);
	}
	for (long f = 0; f < nfiles; f++) {
		char path[4096];
		double u = (double)(rnd(&s) >> 11) / (double)(1ULL << 53);
		size_t len = (size_t)exp(log((double)lo) + u * (log((double)hi) - log((double)lo)));

		snprintf(path, sizeof path, "%s/%s_%ld%s", dpath[rnd(&s) % (uint64_t)ndirs],
			 words[rnd(&s) % 32], f, exts[rnd(&s) % NEXTS]);
		fill_text(buf, len, &s);
		write_file(path, buf, len);
	}
	for (long d = 0; d < ndirs; d++)
		free(dpath[d]);
	free(dpath);
	free(buf);
	return 0;
}

static int cmd_genjson(int argc, char **argv)
{
	long n;
	uint64_t s;
	char *buf;

	if (argc != 3)
		die("genjson DIR N SEED");
	n = num(argv[1]);
	seed_rnd(&s, (uint64_t)num(argv[2]));
	buf = malloc(16384);
	if (!buf)
		die("malloc");
	mkdir_p1(argv[0]);
	for (long i = 0; i < n; i++) {
		char path[4096];
		size_t target = 400 + rnd(&s) % 7600, len;

		len = (size_t)snprintf(buf, 16384, "{\"id\":%ld,\"tool\":\"%s\",\"items\":[", i,
				       words[rnd(&s) % 32]);
		for (int k = 0; len < target; k++)
			len += (size_t)snprintf(buf + len, 16384 - len,
						"%s{\"key\":\"%s_%d\",\"value\":%lu,\"ok\":%s}",
						k ? "," : "", words[rnd(&s) % 32], k,
						(unsigned long)(rnd(&s) % 100000),
						rnd(&s) & 1 ? "true" : "false");
		len += (size_t)snprintf(buf + len, 16384 - len, "]}\n");
		snprintf(path, sizeof path, "%s/p%05ld.json", argv[0], i);
		write_file(path, buf, len);
	}
	free(buf);
	return 0;
}

/* ---------------------------------------------------------------- mounts */
static int read_status(pid_t pid, long *hwm, long *rss)
{
	char path[64], line[256];
	FILE *f;

	*hwm = *rss = -1;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		if (!strncmp(line, "VmHWM:", 6))
			*hwm = strtol(line + 6, NULL, 10);
		else if (!strncmp(line, "VmRSS:", 6))
			*rss = strtol(line + 6, NULL, 10);
	}
	fclose(f);
	return *hwm < 0 || *rss < 0 ? -1 : 0;
}

static int cmd_rss(int argc, char **argv)
{
	long hwm, rss;

	if (argc != 1)
		die("rss PID");
	if (read_status((pid_t)num(argv[0]), &hwm, &rss)) {
		errno = 0;
		die("no VmHWM/VmRSS for pid %s", argv[0]);
	}
	printf("%ld %ld\n", hwm, rss);
	return 0;
}

/* 1 when MNT/NAME resolves on a device other than pdev */
static int looked_up(const char *probe, dev_t pdev)
{
	struct stat st;

	return stat(probe, &st) == 0 && st.st_dev != pdev;
}

static dev_t parent_dev(const char *mnt)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof path, "%s/..", mnt);
	if (stat(path, &st))
		die("stat %s", path);
	return st.st_dev;
}

static const struct timespec poll_ts = { 0, 50 * 1000 };	/* 50 us */

static int cmd_waitmount(int argc, char **argv)
{
	char probe[4096];
	double t0, limit;
	dev_t pdev;

	if (argc != 3)
		die("waitmount MNT NAME TIMEOUT");
	pdev = parent_dev(argv[0]);
	snprintf(probe, sizeof probe, "%s/%s", argv[0], argv[1]);
	limit = (double)num(argv[2]);
	t0 = now();
	while (!looked_up(probe, pdev)) {
		if (now() - t0 > limit) {
			errno = 0;
			die("%s: not mounted after %s s", argv[0], argv[2]);
		}
		nanosleep(&poll_ts, NULL);
	}
	report(t0);
	return 0;
}

static pid_t spawn(char **argv, int out_to_err)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (out_to_err)
			dup2(2, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: exec %s: %s\n", prog, argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

static int cmd_mountcycle(int argc, char **argv)
{
	char probe[4096];
	double t0, t1, t2, t3, limit;
	long hwm, rss;
	dev_t pdev;
	pid_t pid, um;
	int status;
	FILE *f;

	if (argc < 5)
		die("mountcycle MNT NAME TIMEOUT PIDFILE CMD [ARG...]");
	pdev = parent_dev(argv[0]);
	snprintf(probe, sizeof probe, "%s/%s", argv[0], argv[1]);
	limit = (double)num(argv[2]);
	if (looked_up(probe, pdev)) {
		errno = 0;
		die("%s: already mounted", argv[0]);
	}

	t0 = now();
	pid = spawn(argv + 4, 1);
	f = fopen(argv[3], "w");	/* so an interrupted bench.sh can kill it */
	if (f) {
		fprintf(f, "%d\n", (int)pid);
		fclose(f);
	}
	while (!looked_up(probe, pdev)) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			errno = 0;
			die("%s exited before mounting %s", argv[4], argv[0]);
		}
		if (now() - t0 > limit) {
			kill(pid, SIGTERM);
			errno = 0;
			die("%s: not mounted after %s s", argv[0], argv[2]);
		}
		nanosleep(&poll_ts, NULL);
	}
	t1 = now();

	usleep(200 * 1000);
	if (read_status(pid, &hwm, &rss))
		hwm = rss = -1;

	t2 = now();
	{
		char *um_argv[] = { "fusermount3", "-u", argv[0], NULL };

		um = spawn(um_argv, 1);
	}
	while (waitpid(um, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid fusermount3");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		errno = 0;
		die("fusermount3 -u %s failed", argv[0]);
	}
	while (waitpid(pid, &status, 0) < 0)	/* the daemon has seen the unmount */
		if (errno != EINTR)
			die("waitpid daemon");
	t3 = now();
	unlink(argv[3]);
	printf("%.6f %ld %ld %.6f\n", t1 - t0, rss, hwm, t3 - t2);
	return 0;
}

/* ---------------------------------------------------------------- main */
static volatile sig_atomic_t flood_stop;
static void flood_on_term(int sig)
{
	(void)sig;
	flood_stop = 1;
}

static int cmd_flood(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = flood_on_term };
	unsigned long n = 0;
	FILE *out;

	if (argc != 2)
		die("flood FILE OUT");
	sigaction(SIGTERM, &sa, NULL);
	while (!flood_stop) {
		int fd = open(argv[0], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		if (fd >= 0) {
			errno = 0;
			die("flood: %s was opened for writing", argv[0]);
		}
		if (errno != EROFS && errno != EINTR)
			die("flood: open %s (expected EROFS)", argv[0]);
		n++;
	}
	out = fopen(argv[1], "w");
	if (!out || fprintf(out, "%lu\n", n) < 0 || fclose(out))
		die("flood: write %s", argv[1]);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "time", cmd_time },	      { "append", cmd_append },
		{ "seqwrite", cmd_seqwrite }, { "seqread", cmd_seqread },
		{ "randread", cmd_randread }, { "gentree", cmd_gentree },
		{ "genjson", cmd_genjson },   { "waitmount", cmd_waitmount },
		{ "mountcycle", cmd_mountcycle }, { "rss", cmd_rss },
		{ "flood", cmd_flood },
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s SUBCOMMAND ARGS (see the source)\n", prog);
		return 2;
	}
	if (!strcmp(argv[1], "create"))
		return meta_loop(M_CREATE, argc - 2, argv + 2);
	if (!strcmp(argv[1], "stat"))
		return meta_loop(M_STAT, argc - 2, argv + 2);
	if (!strcmp(argv[1], "unlink"))
		return meta_loop(M_UNLINK, argc - 2, argv + 2);
	if (!strcmp(argv[1], "readfiles"))
		return meta_loop(M_READ, argc - 2, argv + 2);
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 2, argv + 2);
	fprintf(stderr, "%s: unknown subcommand %s\n", prog, argv[1]);
	return 2;
}
