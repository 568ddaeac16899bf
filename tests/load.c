/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * awfs-load - many clients at once: THREADS threads for SECONDS seconds mix
 * reads, writes, creates, renames and unlinks in the writable tree with
 * refused writes elsewhere and reads of masked paths. Every result must be
 * the expected one (OK in rw, EROFS for the refused writes, empty masks);
 * prints the operation count and the unexpected results, exits 1 on any.
 *
 *   awfs-load MOUNT THREADS SECONDS [flood]
 *
 * With "flood", every thread only makes refused creates (a denial flood).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *mnt;
static double deadline;
static atomic_long ops, unexpected;
static int flood;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void expect(int ok, const char *what, const char *path)
{
	atomic_fetch_add(&ops, 1);
	if (!ok && atomic_fetch_add(&unexpected, 1) < 20)
		fprintf(stderr, "unexpected: %s %s: %s\n", what, path, strerror(errno));
}

static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned seed = (unsigned)id * 2654435761u;
	char dir[4096], a[4200], b[4200], buf[4096];

	snprintf(dir, sizeof(dir), "%s/rw/load-%ld", mnt, id);
	expect(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir", dir);
	while (now() < deadline) {
		int k = flood ? 5 : (int)(rand_r(&seed) % 8), fd;

		snprintf(a, sizeof(a), "%s/f%u", dir, rand_r(&seed) % 16);
		snprintf(b, sizeof(b), "%s/f%u", dir, rand_r(&seed) % 16);
		switch (k) {
		case 0:	/* create or rewrite */
			fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			expect(fd >= 0 && write(fd, "data\n", 5) == 5 && close(fd) == 0, "write", a);
			break;
		case 1:	/* append */
			fd = open(a, O_WRONLY | O_CREAT | O_APPEND, 0644);
			expect(fd >= 0 && write(fd, "more\n", 5) == 5 && close(fd) == 0, "append", a);
			break;
		case 2:	/* read, if it is there */
			fd = open(a, O_RDONLY);
			if (fd < 0) {
				expect(errno == ENOENT, "open", a);
			} else {
				expect(read(fd, buf, sizeof(buf)) >= 0, "read", a);
				close(fd);
			}
			break;
		case 3:	/* rename within the thread's directory */
			expect(rename(a, b) == 0 || errno == ENOENT, "rename", a);
			break;
		case 4:	/* unlink */
			expect(unlink(a) == 0 || errno == ENOENT, "unlink", a);
			break;
		case 5:	/* a refused write */
			snprintf(a, sizeof(a), "%s/ro/load-%ld", mnt, id);
			expect(open(a, O_WRONLY | O_CREAT, 0644) < 0 && errno == EROFS, "denied create", a);
			break;
		case 6: {	/* a mask stays empty */
			snprintf(a, sizeof(a), "%s/secret/data", mnt);
			expect(open(a, O_RDONLY) < 0 && errno == ENOENT, "masked read", a);
			break;
		}
		default: {	/* stat the shared read-only file */
			struct stat st;

			snprintf(a, sizeof(a), "%s/ro/file", mnt);
			expect(stat(a, &st) == 0 && st.st_size == 7, "stat", a);
			break;
		}
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n;
	pthread_t *t;

	if (argc != 4 && !(argc == 5 && strcmp(argv[4], "flood") == 0)) {
		fprintf(stderr, "usage: awfs-load MOUNT THREADS SECONDS [flood]\n");
		return 2;
	}
	flood = argc == 5;
	mnt = argv[1];
	n = atol(argv[2]);
	deadline = now() + atof(argv[3]);
	t = calloc((size_t)n, sizeof(*t));
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("ops %ld unexpected %ld\n", atomic_load(&ops), atomic_load(&unexpected));
	free(t);
	return atomic_load(&unexpected) ? 1 : 0;
}
