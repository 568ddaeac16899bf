/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * awfs-hammer - race symlink swaps and renames against reads of masked
 * paths, and assert that no masked byte is ever read.
 *
 *   awfs-hammer MOUNT SECONDS [THREADS]
 *
 * Run as the agent's uid on a mount of the integration fixture (lib.sh:
 * setup_fixture), mounted over its source so that nothing outside the mount
 * holds the fixture's secrets. In MOUNT/rw/hammer.PID, for SECONDS seconds:
 *  - swappers atomically replace shared symlinks (rename over them, or
 *    unlink and recreate) so that they point now at a harmless file or
 *    directory, now at a masked one, by absolute and by relative paths
 *    (through "..");
 *  - a renamer exchanges directories and symlinks (RENAME_EXCHANGE), turns
 *    a directory into a symlink to a mask and back, and tries what the
 *    policy refuses (a rename, exchange, link or symlink into a mask or a
 *    read-only place): every such attempt must fail;
 *  - a writer opens the swapped links for writing: whatever it manages to
 *    open must be one of the harmless files (by device and inode);
 *  - readers read through the links, through paths like x/../../../secret/
 *    data where x is being swapped, and the masked paths directly, by
 *    read(), mmap() and readdir(), and ask for the masks' xattrs.
 * Every byte read is searched for the strings the fixture keeps under the
 * masks (TOPSECRET, DEEP, HIDDEN, MASKEDRW, KEYDATA, CERT, and the masked
 * directory's xattr "secretvalue"); a listing of a masked directory must be
 * empty and a masked file must stat as the synthetic empty file.
 *
 * Prints the counts of what was done; exits 1 on any hit or any refused
 * operation that succeeded, 2 on a usage or set-up error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define MAXP 4200
#define NLINKS 3
#define MAX_ID 64

static const char *const markers[] = {
	"TOPSECRET", "DEEP", "HIDDEN", "MASKEDRW", "KEYDATA", "CERT", "secretvalue",
};

static char mnt[MAXP], base[MAXP];
static atomic_int stop;
static atomic_long n_swaps, n_exchanges, n_reads, n_bytes, n_lists, n_xattrs, n_stats;
static atomic_long n_refused, n_writes, n_absent, hits, violations;

/* Identities (device, inode) of the harmless files and directories. */
struct ident {
	dev_t dev;
	ino_t ino;
};
static struct ident ok_files[MAX_ID], ok_dirs[MAX_ID];
static int n_ok_files, n_ok_dirs;

/* What a file the writer opens may point at, and what a link may. */
static const char *file_targets[] = {
	/* harmless */
	"%B/harmless", "harmless", "hdir/data", "%B/hdir/data", "A/data", "./x/data",
	/* masked, absolute */
	"%M/secret/data", "%M/secret/sub/deep", "%M/top.key", "%M/server.pem",
	"%M/ro/hidden/x", "%M/rw/masked/m",
	/* masked, relative and through .. */
	"../../secret/data", "../../top.key", "../masked/m", "../../ro/hidden/x",
	"../../secret/sub/deep", "hdir/../../../secret/data", "x/../../../secret/data",
	"./../../secret/sub/../data", "../../ghost/../secret/data",
	/* read-only: readable, never writable */
	"%M/ro/file", "../.git/config", "../proj/hooks/pre-commit", "../../rootfile",
};
static const char *dir_targets[] = {
	"%B/hdir", "hdir", "A", "%M/secret", "../../secret", "../masked", "../../ro/hidden",
	"%M/secret/sub", "../../secret/sub", "%M/ghost", "%M/rw/masked", "hdir/../../masked",
	"x", "../../ro/dir/../hidden",
};
/* Read by the readers, relative to base unless they start with %M. */
static const char *read_paths[] = {
	"link0", "link1", "link2",
	"dlink0/data", "dlink1/data", "dlink2/data", "dlink0/x", "dlink1/m", "dlink2/deep",
	"dlink0/sub/deep", "dlink1/sub/deep",
	"x/data", "x/m", "x/x", "x/sub/deep",
	"x/../../../secret/data", "x/../../secret/data", "x/../secret/data",
	"dlink0/../secret/data", "dlink1/../../secret/data", "dlink2/../../../secret/data",
	"dlink0/../masked/m", "dlink1/../hidden/x", "x/../masked/m",
	"A/l", "B/l", "A/data", "B/data", "C/l", "D/l",
	"%M/secret/data", "%M/secret/sub/deep", "%M/top.key", "%M/server.pem",
	"%M/ro/hidden/x", "%M/rw/masked/m", "%M/rw/../secret/data",
	"../../rw/../secret/sub/deep", "%M/ro/link-to-secret",
};
static const char *list_paths[] = {
	"dlink0", "dlink1", "dlink2", "x", "A", "B", "dlink0/sub", "x/sub",
	"%M/secret", "%M/secret/sub", "%M/ro/hidden", "%M/rw/masked", "%M/ghost",
};
/* Masked files that must stat as the synthetic empty file. */
static const char *masked_files[] = { "%M/top.key", "%M/server.pem" };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Expand %M (the mount) and %B (the work directory) at the start of @t. */
static void expand(char *out, size_t size, const char *t)
{
	if (strncmp(t, "%M", 2) == 0)
		snprintf(out, size, "%s%s", mnt, t + 2);
	else if (strncmp(t, "%B", 2) == 0)
		snprintf(out, size, "%s%s", base, t + 2);
	else
		snprintf(out, size, "%s", t);
}

/* A path the readers use: absolute after expansion, else under base. */
static void in_base(char *out, size_t size, const char *t)
{
	if (t[0] == '%')
		expand(out, size, t);
	else
		snprintf(out, size, "%s/%s", base, t);
}

static void hit(const char *what, const char *path, const char *detail)
{
	if (atomic_fetch_add(&hits, 1) < 20)
		fprintf(stderr, "HIT: %s %s: %s\n", what, path, detail);
}

static void violation(const char *what, const char *path)
{
	if (atomic_fetch_add(&violations, 1) < 20)
		fprintf(stderr, "VIOLATION: %s %s succeeded\n", what, path);
}

static void scan(const char *what, const char *path, const char *buf, size_t n)
{
	atomic_fetch_add(&n_bytes, (long)n);
	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++)
		if (n && memmem(buf, n, markers[i], strlen(markers[i])))
			hit(what, path, markers[i]);
}

static bool known(const struct ident *set, int n, const struct stat *st)
{
	for (int i = 0; i < n; i++)
		if (set[i].dev == st->st_dev && set[i].ino == st->st_ino)
			return true;
	return false;
}

static void remember(struct ident *set, int *n, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "awfs-hammer: stat %s: %s\n", path, strerror(errno));
		exit(2);
	}
	if (*n < MAX_ID)
		set[(*n)++] = (struct ident){ st.st_dev, st.st_ino };
}

static void put_file(const char *rel)
{
	char p[MAXP];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "HARMLESS\n", 9) != 9 || close(fd) < 0) {
		fprintf(stderr, "awfs-hammer: %s: %s\n", p, strerror(errno));
		exit(2);
	}
	remember(ok_files, &n_ok_files, p);
}

static void put_dir(const char *rel)
{
	char p[MAXP];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (mkdir(p, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "awfs-hammer: mkdir %s: %s\n", p, strerror(errno));
		exit(2);
	}
	remember(ok_dirs, &n_ok_dirs, p);
}

static void put_link(const char *target, const char *rel)
{
	char p[MAXP], t[MAXP];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	expand(t, sizeof(t), target);
	unlink(p);
	if (symlink(t, p) < 0) {
		fprintf(stderr, "awfs-hammer: symlink %s: %s\n", p, strerror(errno));
		exit(2);
	}
}

/* The work tree: harmless files and dirs named like what the masks hold. */
static void setup(void)
{
	static const char *const dirs[] = { "hdir", "hdir/sub", "A", "B", "C", "xdir", "xdir/sub" };
	static const char *const files[] = {
		"harmless", "hdir/data", "hdir/x", "hdir/m", "hdir/deep", "hdir/sub/deep",
		"A/data", "B/data", "xdir/data", "xdir/m", "xdir/x", "xdir/sub/deep",
	};

	snprintf(base, sizeof(base), "%s/rw/hammer.%d", mnt, (int)getpid());
	if (mkdir(base, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "awfs-hammer: mkdir %s: %s\n", base, strerror(errno));
		exit(2);
	}
	remember(ok_dirs, &n_ok_dirs, base);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		put_dir(dirs[i]);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		put_file(files[i]);
	/* links inside the exchanged directories, one harmless, one masked */
	put_link("../../../secret/data", "A/l");
	put_link("data", "B/l");
	put_link("%M/top.key", "C/l");
	/* x is the directory xdir; xalt a symlink to a mask: they are exchanged */
	{
		char a[MAXP], b[MAXP];

		snprintf(a, sizeof(a), "%s/xdir", base);
		snprintf(b, sizeof(b), "%s/x", base);
		rmdir(b);
		unlink(b);
		if (rename(a, b) < 0) {
			fprintf(stderr, "awfs-hammer: rename %s: %s\n", a, strerror(errno));
			exit(2);
		}
	}
	put_link("../../secret", "xalt");
	for (int i = 0; i < NLINKS; i++) {
		char n[32];

		snprintf(n, sizeof(n), "link%d", i);
		put_link("harmless", n);
		snprintf(n, sizeof(n), "dlink%d", i);
		put_link("hdir", n);
	}
}

/* ------------------------------------------------------------ threads */

static void *swapper(void *arg)
{
	long id = (long)arg;
	unsigned seed = (unsigned)id * 2654435761u + 1;
	char tmp[MAXP], name[MAXP], t[MAXP];
	unsigned long n = 0;

	while (!atomic_load(&stop)) {
		bool dir = rand_r(&seed) % 2;
		const char **set = dir ? dir_targets : file_targets;
		size_t nset = dir ? sizeof(dir_targets) / sizeof(dir_targets[0]) :
				    sizeof(file_targets) / sizeof(file_targets[0]);

		expand(t, sizeof(t), set[rand_r(&seed) % nset]);
		snprintf(name, sizeof(name), "%s/%s%u", base, dir ? "dlink" : "link",
			 rand_r(&seed) % NLINKS);
		if (rand_r(&seed) % 4) {
			/* atomic: a fresh symlink renamed over the shared name */
			snprintf(tmp, sizeof(tmp), "%s/.t%ld.%lu", base, id, n++);
			if (symlink(t, tmp) == 0 && rename(tmp, name) == 0)
				atomic_fetch_add(&n_swaps, 1);
			else
				unlink(tmp);
		} else {
			/* with a gap: unlink, then symlink */
			unlink(name);
			if (symlink(t, name) == 0)
				atomic_fetch_add(&n_swaps, 1);
		}
	}
	return NULL;
}

static int renameat2_(const char *a, const char *b, unsigned flags)
{
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, flags);
}

/* What the policy refuses: each must fail. */
static void try_refused(unsigned *seed)
{
	char a[MAXP], b[MAXP];
	int k = (int)(rand_r(seed) % 9), r = -1;
	const char *what = "";

	switch (k) {
	case 0:
		what = "rename dir over a mask";
		snprintf(a, sizeof(a), "%s/C", base);
		snprintf(b, sizeof(b), "%s/rw/masked", mnt);
		r = rename(a, b);
		break;
	case 1:
		what = "exchange a symlink with a mask";
		snprintf(a, sizeof(a), "%s/dlink%u", base, rand_r(seed) % NLINKS);
		snprintf(b, sizeof(b), "%s/rw/masked", mnt);
		r = renameat2_(a, b, RENAME_EXCHANGE);
		break;
	case 2:
		what = "exchange a dir with rw/.git";
		snprintf(a, sizeof(a), "%s/A", base);
		snprintf(b, sizeof(b), "%s/rw/.git", mnt);
		r = renameat2_(a, b, RENAME_EXCHANGE);
		break;
	case 3:
		what = "rename a symlink into a read-only dir";
		snprintf(a, sizeof(a), "%s/link%u", base, rand_r(seed) % NLINKS);
		snprintf(b, sizeof(b), "%s/rw/proj/hooks/post-commit", mnt);
		r = rename(a, b);
		break;
	case 4:
		what = "symlink inside a mask";
		snprintf(a, sizeof(a), "%s/rw/masked/l", mnt);
		r = symlink("../../secret/data", a);
		break;
	case 5:
		what = "hard link into a read-only dir";
		snprintf(a, sizeof(a), "%s/harmless", base);
		snprintf(b, sizeof(b), "%s/ro/planted", mnt);
		r = link(a, b);
		break;
	case 6:
		what = "hard link of a masked file";
		snprintf(a, sizeof(a), "%s/top.key", mnt);
		snprintf(b, sizeof(b), "%s/stolen", base);
		r = link(a, b);
		break;
	case 7:
		what = "rename the masked file to a writable name";
		snprintf(a, sizeof(a), "%s/rw/masked/m", mnt);
		snprintf(b, sizeof(b), "%s/stolen", base);
		r = rename(a, b);
		break;
	case 8:
		what = "exchange x with a read-only dir";
		snprintf(a, sizeof(a), "%s/x", base);
		snprintf(b, sizeof(b), "%s/ro/dir", mnt);
		r = renameat2_(a, b, RENAME_EXCHANGE);
		break;
	}
	if (r == 0)
		violation(what, a);
	else
		atomic_fetch_add(&n_refused, 1);
}

static void *renamer(void *arg)
{
	unsigned seed = (unsigned)(long)arg * 2654435761u + 7;
	char a[MAXP], b[MAXP], c[MAXP];

	while (!atomic_load(&stop)) {
		switch (rand_r(&seed) % 4) {
		case 0:	/* two directories holding links trade places */
			snprintf(a, sizeof(a), "%s/A", base);
			snprintf(b, sizeof(b), "%s/B", base);
			if (renameat2_(a, b, RENAME_EXCHANGE) == 0)
				atomic_fetch_add(&n_exchanges, 1);
			break;
		case 1:	/* x: a directory one moment, a symlink to a mask the next */
			snprintf(a, sizeof(a), "%s/x", base);
			snprintf(b, sizeof(b), "%s/xalt", base);
			if (renameat2_(a, b, RENAME_EXCHANGE) == 0)
				atomic_fetch_add(&n_exchanges, 1);
			break;
		case 2:	/* a directory renamed away and back, a symlink in its place */
			snprintf(a, sizeof(a), "%s/C", base);
			snprintf(b, sizeof(b), "%s/D", base);
			snprintf(c, sizeof(c), "%s/.Ctmp", base);
			if (rename(a, b) == 0) {
				unlink(c);
				if (symlink("../../secret", c) == 0 && rename(c, a) == 0)
					atomic_fetch_add(&n_swaps, 1);
				unlink(a);
				if (rename(b, a) == 0)
					atomic_fetch_add(&n_exchanges, 1);
			}
			break;
		default:
			try_refused(&seed);
			break;
		}
	}
	return NULL;
}

static void *writer(void *arg)
{
	unsigned seed = (unsigned)(long)arg * 2654435761u + 3;
	char p[MAXP];

	while (!atomic_load(&stop)) {
		int flags = O_WRONLY | ((rand_r(&seed) % 3) == 0 ? O_TRUNC : 0);
		struct stat st;
		int fd;

		snprintf(p, sizeof(p), "%s/link%u", base, rand_r(&seed) % NLINKS);
		fd = open(p, flags);
		if (fd < 0) {
			atomic_fetch_add(&n_refused, 1);
			continue;
		}
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !known(ok_files, n_ok_files, &st))
			violation("open for writing of a non-harmless file through", p);
		if (pwrite(fd, "HARMLESS\n", 9, 0) == 9)
			atomic_fetch_add(&n_writes, 1);
		close(fd);
	}
	return NULL;
}

/*
 * The writer truncates harmless files while readers have them mapped: a
 * page past the new end raises SIGBUS, which only abandons that mapping.
 */
static __thread sigjmp_buf bus_jmp;
static __thread volatile sig_atomic_t in_mmap;

static void on_sigbus(int sig)
{
	if (!in_mmap) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	siglongjmp(bus_jmp, 1);
}

static void scan_mapped(const char *p, int fd, size_t size)
{
	char *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		return;
	if (sigsetjmp(bus_jmp, 1) == 0) {
		in_mmap = 1;
		scan("mmap", p, m, size);
	}
	in_mmap = 0;
	munmap(m, size);
}

static void read_one(const char *p, unsigned *seed)
{
	char buf[65536];
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd = open(p, O_RDONLY);

	if (fd < 0) {
		atomic_fetch_add(&n_absent, 1);
		return;
	}
	atomic_fetch_add(&n_reads, 1);
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    st.st_size < (off_t)sizeof(buf) && rand_r(seed) % 3 == 0)
		scan_mapped(p, fd, (size_t)st.st_size);	/* through the page cache, then by read */
	while (got < sizeof(buf) && (n = pread(fd, buf + got, sizeof(buf) - got, (off_t)got)) > 0)
		got += (size_t)n;
	scan("read", p, buf, got);
	close(fd);
}

static void list_one(const char *p)
{
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(p);

	if (!d) {
		atomic_fetch_add(&n_absent, 1);
		return;
	}
	atomic_fetch_add(&n_lists, 1);
	if (fstat(dirfd(d), &st) < 0) {
		closedir(d);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		scan("listing", p, de->d_name, strlen(de->d_name));
		/* a directory that is not one of ours is a mask here: empty */
		if (!known(ok_dirs, n_ok_dirs, &st))
			hit("listing of a masked dir", p, de->d_name);
	}
	closedir(d);
}

static void xattr_one(const char *p)
{
	char buf[4096];
	ssize_t n = getxattr(p, "user.tag", buf, sizeof(buf));

	atomic_fetch_add(&n_xattrs, 1);
	if (n > 0)
		scan("getxattr", p, buf, (size_t)n);
	n = listxattr(p, buf, sizeof(buf));
	if (n > 0)
		scan("listxattr", p, buf, (size_t)n);
}

static void stat_masked(const char *p)
{
	struct stat st;

	atomic_fetch_add(&n_stats, 1);
	if (stat(p, &st) < 0)
		return;
	if (st.st_size != 0 || st.st_uid != 0 || (st.st_mode & 07777) != 0666 || st.st_mtime != 0)
		hit("stat of a masked file shows the host's", p, "metadata");
}

static void *reader(void *arg)
{
	unsigned seed = (unsigned)(long)arg * 2654435761u + 5;
	char p[MAXP];

	while (!atomic_load(&stop)) {
		unsigned k = rand_r(&seed) % 16;

		if (k < 11) {
			in_base(p, sizeof(p), read_paths[rand_r(&seed) %
							 (sizeof(read_paths) / sizeof(read_paths[0]))]);
			read_one(p, &seed);
		} else if (k < 14) {
			in_base(p, sizeof(p), list_paths[rand_r(&seed) %
							 (sizeof(list_paths) / sizeof(list_paths[0]))]);
			list_one(p);
		} else if (k == 14) {
			in_base(p, sizeof(p), list_paths[rand_r(&seed) %
							 (sizeof(list_paths) / sizeof(list_paths[0]))]);
			xattr_one(p);
		} else {
			in_base(p, sizeof(p), masked_files[rand_r(&seed) % 2]);
			stat_masked(p);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs;
	int nthreads = 8;
	pthread_t th[64];
	int nt = 0;
	double t0;

	if (argc < 3) {
		fputs("usage: awfs-hammer MOUNT SECONDS [THREADS]\n", stderr);
		return 2;
	}
	snprintf(mnt, sizeof(mnt), "%s", argv[1]);
	secs = atof(argv[2]);
	if (argc > 3)
		nthreads = atoi(argv[3]);
	if (secs <= 0 || nthreads < 4 || nthreads > 64) {
		fputs("awfs-hammer: SECONDS must be > 0 and THREADS 4..64\n", stderr);
		return 2;
	}
	signal(SIGBUS, on_sigbus);
	setup();
	t0 = now();
	/* a quarter swappers, one renamer, one writer, the rest readers */
	for (int i = 0; i < nthreads; i++) {
		int nsw = nthreads / 4 > 0 ? nthreads / 4 : 1;
		void *(*fn)(void *) = i < nsw ? swapper : i == nsw ? renamer :
				      i == nsw + 1 ? writer : reader;

		if (pthread_create(&th[nt], NULL, fn, (void *)(long)(i + 1)) != 0) {
			fprintf(stderr, "awfs-hammer: pthread_create failed\n");
			return 2;
		}
		nt++;
	}
	while (now() - t0 < secs)
		usleep(20000);
	atomic_store(&stop, 1);
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	printf("awfs-hammer: %d threads, %.1f s: %ld swaps, %ld exchanges, %ld reads (%ld bytes), "
	       "%ld listings, %ld xattr probes, %ld stats, %ld absent, %ld allowed writes, "
	       "%ld refused; %ld hits, %ld violations\n",
	       nt, now() - t0, atomic_load(&n_swaps), atomic_load(&n_exchanges),
	       atomic_load(&n_reads), atomic_load(&n_bytes), atomic_load(&n_lists),
	       atomic_load(&n_xattrs), atomic_load(&n_stats), atomic_load(&n_absent),
	       atomic_load(&n_writes), atomic_load(&n_refused), atomic_load(&hits),
	       atomic_load(&violations));
	return atomic_load(&hits) || atomic_load(&violations) ? 1 : 0;
}
