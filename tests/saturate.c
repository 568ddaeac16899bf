/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * awfs-saturate - an agent at full weight, and the canary that measures
 * what it costs everyone else (tests/integration/saturation.sh, the
 * adversary's saturation mode):
 *
 *   canary FILE DIR SECONDS      every 10 ms, three calls that each reach the
 *                                daemon: statx(FILE, AT_STATX_FORCE_SYNC) (a
 *                                GETATTR), a 4 KiB O_DIRECT read of FILE (a
 *                                READ, through the workers' queue) and a stat
 *                                of a name never asked before in DIR (a
 *                                LOOKUP, which waits for DIR's lock); prints
 *                                "max_ms MAX p99_ms P99 n N" over all calls
 *   fsyncdir DIR SECONDS         fsync() of DIR again and again (FSYNCDIR: the
 *                                kernel holds DIR's lock until it is answered)
 *   interleave DIR N             N listings of DIR at once, a page of each in
 *                                turn, to their ends; prints "listings N
 *                                min MIN max MAX" (entries each gave)
 *   seekfar DIR                  a listing of DIR continued at an offset awfs
 *                                never gave; prints "errno E ms T"
 *   copy SRC DIR THREADS SECONDS LEN
 *                                THREADS threads, each copy_file_range() of LEN
 *                                bytes from SRC into a file of its own in DIR,
 *                                truncated after each call (no disk fills)
 *   list DIR SECONDS             create a file in DIR (the kernel drops its
 *                                cached listing), open DIR, read one batch of
 *                                entries, close; again
 *   hold FILE N SECONDS          open FILE N times and hold the opens
 *   refuse DIR SECONDS NAMELEN   creates in DIR (refused: EROFS expected) of
 *                                names NAMELEN long, one a millisecond at most
 *   rss PID SECONDS              the largest VmRSS of PID, in kB, sampled
 *
 * Each prints one line of figures; exits 1 when what it does fails in a way
 * it did not expect (a refused create that is not EROFS, say).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One round of the canary's three calls; each one's time goes into @v. */
static int canary_round(const char *path, const char *dir, long round, double *v)
{
	static char *page;
	char name[4096];
	struct statx stx;
	struct stat st;
	double t0 = now();
	int fd;

	if (!page && posix_memalign((void **)&page, 4096, 4096))
		return -1;
	if (statx(AT_FDCWD, path, AT_STATX_FORCE_SYNC | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx) < 0)
		return -1;
	v[0] = (now() - t0) * 1000;
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return -1;
	t0 = now();
	if (pread(fd, page, 4096, 0) < 0) {
		close(fd);
		return -1;
	}
	v[1] = (now() - t0) * 1000;
	close(fd);
	snprintf(name, sizeof(name), "%s/.canary-%ld-%ld", dir, (long)getpid(), round);
	t0 = now();
	if (stat(name, &st) == 0 || errno != ENOENT)
		return -1;
	v[2] = (now() - t0) * 1000;
	return 0;
}

static int canary(const char *path, const char *dir, double secs)
{
	size_t n = 0, cap = 1024;
	double *v = malloc(cap * sizeof(*v)), end = now() + secs;

	for (long round = 0; now() < end; round++) {
		if (n + 3 > cap)
			v = realloc(v, (cap *= 2) * sizeof(*v));
		if (canary_round(path, dir, round, v + n) < 0) {
			fprintf(stderr, "canary: %s, %s: %s\n", path, dir, strerror(errno));
			return 1;
		}
		n += 3;
		pause_ms(10);
	}
	qsort(v, n, sizeof(*v), cmp_double);
	printf("max_ms %.1f p99_ms %.1f n %zu\n", n ? v[n - 1] : 0, n ? v[n * 99 / 100] : 0, n);
	free(v);
	return 0;
}

static const char *copy_src, *copy_dir;
static double copy_end;
static size_t copy_len;
static atomic_long copy_calls, copy_bytes, copy_errors;

static void *copy_thread(void *arg)
{
	char name[4096];
	int in, out;

	snprintf(name, sizeof(name), "%s/copy.%ld", copy_dir, (long)(intptr_t)arg);
	in = open(copy_src, O_RDONLY);
	out = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0) {
		fprintf(stderr, "copy: open: %s\n", strerror(errno));
		atomic_fetch_add(&copy_errors, 1);
		return NULL;
	}
	while (now() < copy_end) {
		loff_t oi = 0, oo = 0;
		ssize_t r = copy_file_range(in, &oi, out, &oo, copy_len, 0);

		if (r < 0) {
			if (atomic_fetch_add(&copy_errors, 1) < 3)
				fprintf(stderr, "copy_file_range: %s\n", strerror(errno));
			pause_ms(1);
			continue;
		}
		atomic_fetch_add(&copy_calls, 1);
		atomic_fetch_add(&copy_bytes, r);
		if (ftruncate(out, 0) < 0)
			atomic_fetch_add(&copy_errors, 1);
	}
	close(in);
	close(out);
	unlink(name);
	return NULL;
}

static int copy(char **argv)
{
	long threads = atol(argv[2]);
	pthread_t *t = calloc((size_t)threads, sizeof(*t));

	copy_src = argv[0];
	copy_dir = argv[1];
	copy_end = now() + atof(argv[3]);
	copy_len = (size_t)atoll(argv[4]);
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, copy_thread, (void *)(intptr_t)i);
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("calls %ld bytes %ld errors %ld\n", atomic_load(&copy_calls),
	       atomic_load(&copy_bytes), atomic_load(&copy_errors));
	free(t);
	return atomic_load(&copy_errors) ? 1 : 0;
}

static int list(const char *dir, double secs)
{
	static char buf[32768];
	double end = now() + secs;
	long rounds = 0, entries = 0;
	char name[4096];

	snprintf(name, sizeof(name), "%s/.list-churn.%ld", dir, (long)getpid());
	while (now() < end) {
		int fd = open(name, O_WRONLY | O_CREAT, 0644), d;
		long n;

		if (fd < 0 || close(fd) < 0 || unlink(name) < 0) {
			fprintf(stderr, "list: %s: %s\n", name, strerror(errno));
			return 1;
		}
		d = open(dir, O_RDONLY | O_DIRECTORY);
		if (d < 0) {
			fprintf(stderr, "list: %s: %s\n", dir, strerror(errno));
			return 1;
		}
		n = syscall(SYS_getdents64, d, buf, sizeof(buf));
		close(d);
		if (n < 0) {
			fprintf(stderr, "list: getdents64: %s\n", strerror(errno));
			return 1;
		}
		for (long off = 0; off < n; off += *(unsigned short *)(buf + off + 16))
			entries++;
		rounds++;
	}
	printf("rounds %ld entries %ld\n", rounds, entries);
	return 0;
}

static int fsyncdir(const char *dir, double secs)
{
	double end = now() + secs;
	long n = 0;

	while (now() < end) {
		int fd = open(dir, O_RDONLY | O_DIRECTORY);

		if (fd < 0 || fsync(fd) < 0) {
			fprintf(stderr, "fsyncdir: %s: %s\n", dir, strerror(errno));
			return 1;
		}
		close(fd);
		n++;
	}
	printf("fsyncs %ld\n", n);
	return 0;
}

static int interleave(const char *dir, long n)
{
	static char buf[4096];
	int *fd = calloc((size_t)n, sizeof(*fd));
	long *count = calloc((size_t)n, sizeof(*count)), open_ = n, min = -1, max = 0;

	for (long i = 0; i < n; i++)
		if ((fd[i] = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
			return 1;
	while (open_ > 0) {
		for (long i = 0; i < n; i++) {
			long got;

			if (fd[i] < 0)
				continue;
			got = syscall(SYS_getdents64, fd[i], buf, sizeof(buf));
			if (got < 0) {
				fprintf(stderr, "interleave: %s\n", strerror(errno));
				return 1;
			}
			for (long off = 0; off < got; off += *(unsigned short *)(buf + off + 16))
				count[i]++;
			if (got == 0) {
				close(fd[i]);
				fd[i] = -1;
				open_--;
			}
		}
	}
	for (long i = 0; i < n; i++) {
		min = min < 0 || count[i] < min ? count[i] : min;
		max = count[i] > max ? count[i] : max;
	}
	printf("listings %ld min %ld max %ld\n", n, min, max);
	return 0;
}

static int seekfar(const char *dir)
{
	static char buf[4096];
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	double t0;
	long got;

	if (fd < 0 || lseek(fd, ((off_t)7 << 32) | 0x7fffffff, SEEK_SET) < 0)
		return 1;
	t0 = now();
	got = syscall(SYS_getdents64, fd, buf, sizeof(buf));
	printf("errno %s ms %.1f\n", got < 0 ? strerror(errno) : "none", (now() - t0) * 1000);
	close(fd);
	return 0;
}

static int hold(const char *file, long n, double secs)
{
	int *fd = calloc((size_t)n, sizeof(*fd));
	long opened = 0, failed = 0;
	int first_err = 0;
	struct rlimit rl;

	/* as many fds as the hard limit allows: the opens, not the limit, are tested */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}

	for (long i = 0; i < n; i++) {
		fd[i] = open(file, O_RDONLY);
		if (fd[i] >= 0)
			opened++;
		else if (!failed++)
			first_err = errno;
	}
	pause_ms((long)(secs * 1000));
	for (long i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	printf("opened %ld failed %ld%s%s\n", opened, failed, failed ? " first " : "",
	       failed ? strerror(first_err) : "");
	free(fd);
	return 0;
}

static int refuse(const char *dir, double secs, size_t namelen)
{
	double end = now() + secs;
	long tries = 0, other = 0;
	char name[8192], *p;

	if (namelen < 8 || namelen > 255)
		namelen = 8;
	p = name + snprintf(name, sizeof(name), "%s/", dir);
	memset(p, 'n', namelen);
	p[namelen] = 0;
	while (now() < end) {
		int fd;

		snprintf(p, 8, "%07ld", tries % 10000000);
		p[7] = 'n';
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd >= 0) {
			close(fd);
			unlink(name);
			other++;
		} else if (errno != EROFS) {
			if (!other++)
				fprintf(stderr, "refuse: %s: %s\n", name, strerror(errno));
		}
		tries++;
		pause_ms(1);
	}
	printf("tries %ld unexpected %ld\n", tries, other);
	return other ? 1 : 0;
}

static long rss_kb(long pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int rss(long pid, double secs)
{
	double end = now() + secs;
	long max = 0, kb;

	do {
		kb = rss_kb(pid);
		if (kb > max)
			max = kb;
		pause_ms(20);
	} while (kb >= 0 && now() < end);
	printf("max_rss_kb %ld\n", max);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(cmd, "canary") == 0 && argc == 5)
		return canary(argv[2], argv[3], atof(argv[4]));
	if (strcmp(cmd, "fsyncdir") == 0 && argc == 4)
		return fsyncdir(argv[2], atof(argv[3]));
	if (strcmp(cmd, "interleave") == 0 && argc == 4)
		return interleave(argv[2], atol(argv[3]));
	if (strcmp(cmd, "seekfar") == 0 && argc == 3)
		return seekfar(argv[2]);
	if (strcmp(cmd, "copy") == 0 && argc == 7)
		return copy(argv + 2);
	if (strcmp(cmd, "list") == 0 && argc == 4)
		return list(argv[2], atof(argv[3]));
	if (strcmp(cmd, "hold") == 0 && argc == 5)
		return hold(argv[2], atol(argv[3]), atof(argv[4]));
	if (strcmp(cmd, "refuse") == 0 && argc == 5)
		return refuse(argv[2], atof(argv[3]), (size_t)atol(argv[4]));
	if (strcmp(cmd, "rss") == 0 && argc == 4)
		return rss(atol(argv[2]), atof(argv[3]));
	fprintf(stderr, "usage: awfs-saturate canary FILE DIR SECS | copy SRC DIR THREADS SECS LEN | list DIR SECS |\n"
			"       hold FILE N SECS | refuse DIR SECS NAMELEN | rss PID SECS | fsyncdir DIR SECS |\n"
			"       interleave DIR N | seekfar DIR\n");
	return 2;
}
