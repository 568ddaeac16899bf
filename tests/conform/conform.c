/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * awfs-conform - run a fixed sequence of POSIX operations inside DIR as UID
 * and print one line per operation: "OP PATH -> OUTCOME", where the outcome
 * is the errno name, or OK with what the operation left behind (link counts,
 * mode, owner, size, which of atime/mtime/ctime changed, SEEK_DATA/SEEK_HOLE
 * offsets, a digest of what was read back). Nothing printed depends on where
 * DIR is or when the run happens: paths are relative to DIR, times are
 * printed only as "same"/"changed" against the value before the operation,
 * or as the explicit value the operation set.
 *
 *   awfs-conform DIR UID
 *
 * tests/conform/run.sh runs it in a plain directory and in an allow_write
 * subtree of an awfs mount over the same file system, as root and as an
 * unprivileged uid, and requires the transcripts to be identical: whatever
 * differs is a place where awfs is not the file system underneath.
 *
 * DIR must be empty but for what run.sh prepares (as root, before the run):
 *   sticky/            root:root 1777
 *   sticky/theirs      2000:2000 0644
 *   sticky/theirs-rw   2000:2000 0666
 *   sticky/theirdir/   2000:2000 0777
 *   sgid/              root:4242 2777   (UID is not in group 4242)
 *   sgid-member/       root:4243 2777   (UID is, as a supplementary group)
 * and be writable by UID. When UID differs from the caller's, the program
 * drops to it before the first step: gid = UID, supplementary groups 4243.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/falloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define NONMEMBER_GID 4242	/* the group of sgid/: the caller is not in it */
#define MEMBER_GID 4243		/* the group of sgid-member/: a supplementary group of the caller */

#define KiB 1024LL
#define MiB (1024LL * KiB)
#define GiB (1024LL * MiB)

/* ------------------------------------------------------------ output */

/* A printable form of a path: long runs of one byte (the NAME_MAX and
 * PATH_MAX cases) shortened to "<c*N>", other bytes escaped. */
static const char *shown(const char *rel)
{
	static char buf[4][1024];
	static int k;
	char *o;

	k = (k + 1) % 4;
	o = buf[k];
	for (const unsigned char *p = (const unsigned char *)rel; *p && o < buf[k] + 1000;) {
		size_t run = 1;

		while (p[run] == *p)
			run++;
		if (run >= 8) {
			o += sprintf(o, "<%c*%zu>", *p, run);
			p += run;
			continue;
		}
		if (*p > 0x20 && *p < 0x7f && *p != '\\' && *p != '<')
			*o++ = (char)*p;
		else
			o += sprintf(o, "\\x%02x", *p);
		p++;
	}
	*o = '\0';
	return buf[k];
}

static void line(const char *op, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void line(const char *op, const char *rel, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s -> ", op, shown(rel));
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* The outcome of a call that returned @r (< 0 with errno set on failure). */
static long result(const char *op, const char *rel, long r)
{
	if (r < 0)
		line(op, rel, "%s", util_errno_name(errno));
	else
		line(op, rel, "OK");
	return r;
}

#define ERRNAME util_errno_name(errno)

/* The outcome of an open(): the descriptor is closed again. */
static void result_fd(const char *op, const char *rel, int fd)
{
	result(op, rel, fd);
	if (fd >= 0)
		close(fd);
}

/* open and close @rel; -1 with open's errno when it fails */
static int open_close(const char *rel, int flags)
{
	int fd = open(rel, flags);

	return fd < 0 ? -1 : close(fd);
}

static uint64_t fnv(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static const char *kind(mode_t m)
{
	return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "link" :
	       S_ISFIFO(m) ? "fifo" : S_ISCHR(m) ? "chr" : S_ISBLK(m) ? "blk" :
	       S_ISSOCK(m) ? "sock" : "other";
}

/* What a stat result says, without times, inode or device numbers. */
static const char *desc(const struct stat *st)
{
	static char buf[4][160];
	static int k;
	int n;

	k = (k + 1) % 4;
	n = snprintf(buf[k], sizeof(buf[k]), "%s mode=%04o uid=%u gid=%u nlink=%lu", kind(st->st_mode),
		     (unsigned)(st->st_mode & 07777), (unsigned)st->st_uid, (unsigned)st->st_gid,
		     (unsigned long)st->st_nlink);
	/* a directory's size is the file system's business; a symlink's is its target's length */
	if (!S_ISDIR(st->st_mode))
		snprintf(buf[k] + n, sizeof(buf[k]) - (size_t)n, " size=%lld", (long long)st->st_size);
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		snprintf(buf[k] + strlen(buf[k]), sizeof(buf[k]) - strlen(buf[k]), " rdev=%u:%u",
			 major(st->st_rdev), minor(st->st_rdev));
	return buf[k];
}

static void do_stat(const char *rel)
{
	struct stat st;

	if (lstat(rel, &st) < 0)
		line("lstat", rel, "%s", ERRNAME);
	else
		line("lstat", rel, "%s", desc(&st));
}

static void do_fstat(const char *what, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		line("fstat", what, "%s", ERRNAME);
	else
		line("fstat", what, "%s", desc(&st));
}

static const char *ts(const struct timespec *t)
{
	static char buf[4][48];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%lld.%09ld", (long long)t->tv_sec, t->tv_nsec);
	return buf[k];
}

/* The explicit times of @rel (only after an operation set them to known values). */
static void show_times(const char *rel, bool a, bool m)
{
	struct stat st;

	if (lstat(rel, &st) < 0) {
		line("times", rel, "%s", ERRNAME);
		return;
	}
	if (a && m)
		line("times", rel, "atime=%s mtime=%s", ts(&st.st_atim), ts(&st.st_mtim));
	else if (a)
		line("times", rel, "atime=%s", ts(&st.st_atim));
	else
		line("times", rel, "mtime=%s", ts(&st.st_mtim));
}

static bool same_ts(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/*
 * Long enough for the coarse clock behind file times to move on (a jiffy at
 * most), so an operation that sets a time to "now" always shows as changed.
 */
static void tick(void)
{
	struct timespec t = { 0, 15 * 1000 * 1000 };

	nanosleep(&t, NULL);
}

/*
 * An operation watched for its effect on times: the stat of each watched
 * path before (after a tick) and after. A watch "OLD=>NEW" is taken at OLD
 * before and at NEW after (a rename), "fd:N" on an open descriptor.
 */
#define MAXW 4
struct watch {
	const char *spec[MAXW];
	struct stat before[MAXW];
	int err[MAXW];
	int n;
};

static int watch_stat(const char *spec, bool after, struct stat *st)
{
	char buf[8192];
	const char *arrow = strstr(spec, "=>");

	if (strncmp(spec, "fd:", 3) == 0)
		return fstat(atoi(spec + 3), st) < 0 ? errno : 0;
	if (arrow) {
		if (after) {
			spec = arrow + 2;
		} else {
			snprintf(buf, sizeof(buf), "%.*s", (int)(arrow - spec), spec);
			spec = buf;
		}
	}
	return lstat(spec, st) < 0 ? errno : 0;
}

static void watch_begin(struct watch *w, const char *const *specs)
{
	memset(w, 0, sizeof(*w));
	for (; *specs && w->n < MAXW; specs++, w->n++) {
		w->spec[w->n] = *specs;
		w->err[w->n] = watch_stat(*specs, false, &w->before[w->n]);
	}
	tick();
}

/* "fd:N", the watch of an open descriptor */
static const char *fd_watch(int fd)
{
	static char buf[4][16];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "fd:%d", fd);
	return buf[k];
}

static void watch_end(struct watch *w, const char *op, const char *rel, long r, int e)
{
	char out[1024];
	size_t o = 0;

	if (r < 0)
		o += (size_t)snprintf(out, sizeof(out), "%s", util_errno_name(e));
	else
		o += (size_t)snprintf(out, sizeof(out), "OK");
	for (int i = 0; i < w->n && o < sizeof(out); i++) {
		struct stat a;
		int ea = watch_stat(w->spec[i], true, &a);
		const struct stat *b = &w->before[i];

		const char *name = strncmp(w->spec[i], "fd:", 3) == 0 ? "(fd)" : shown(w->spec[i]);

		if (w->err[i] || ea) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "; %s %s/%s", name,
					      util_errno_name(w->err[i]), util_errno_name(ea));
			continue;
		}
		o += (size_t)snprintf(out + o, sizeof(out) - o, "; %s atime=%s mtime=%s ctime=%s",
				      name,
				      same_ts(&b->st_atim, &a.st_atim) ? "same" : "changed",
				      same_ts(&b->st_mtim, &a.st_mtim) ? "same" : "changed",
				      same_ts(&b->st_ctim, &a.st_ctim) ? "same" : "changed");
	}
	line(op, rel, "%s", out);
}

#define TIMED(op, rel, expr, ...)                                              \
	do {                                                                   \
		const char *const w_specs_[] = { __VA_ARGS__, NULL };         \
		struct watch w_;                                               \
		long r_;                                                       \
		int e_;                                                        \
		watch_begin(&w_, w_specs_);                                    \
		errno = 0;                                                     \
		r_ = (long)(expr);                                             \
		e_ = errno;                                                    \
		watch_end(&w_, op, rel, r_, e_);                               \
	} while (0)

/* ------------------------------------------------------------ small helpers */

static int create(const char *rel, mode_t mode, const char *data)
{
	int fd = open(rel, O_WRONLY | O_CREAT | O_EXCL, mode);

	if (fd < 0)
		return -1;
	if (data && write(fd, data, strlen(data)) != (ssize_t)strlen(data)) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static void do_create(const char *rel, mode_t mode, const char *data)
{
	if (create(rel, mode, data) < 0) {
		line("create", rel, "%s", ERRNAME);
		return;
	}
	do_stat(rel);
}

static void do_mkdir(const char *rel, mode_t mode)
{
	if (result("mkdir", rel, mkdir(rel, mode)) == 0)
		do_stat(rel);
}

/* The whole content of @rel: its length and digest. */
static void do_read(const char *rel)
{
	char buf[65536];
	int fd = open(rel, O_RDONLY);
	ssize_t n;

	if (fd < 0) {
		line("read", rel, "%s", ERRNAME);
		return;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0) {
		line("read", rel, "%s", ERRNAME);
	} else if (n <= 64) {
		/* short content as it is, other bytes escaped (a NUL is \x00) */
		char text[64 * 4 + 1];
		size_t o = 0;

		for (ssize_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)buf[i];

			if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"')
				text[o++] = (char)c;
			else
				o += (size_t)sprintf(text + o, "\\x%02x", c);
		}
		text[o] = '\0';
		line("read", rel, "OK len=%zd \"%s\"", n, text);
	} else {
		line("read", rel, "OK len=%zd fnv=%016llx", n, (unsigned long long)fnv(buf, (size_t)n));
	}
	close(fd);
}

static void do_pread(const char *what, int fd, size_t len, off_t off)
{
	char buf[65536];
	char name[256];
	ssize_t n;

	if (len > sizeof(buf))
		len = sizeof(buf);
	snprintf(name, sizeof(name), "%s@%lld+%zu", what, (long long)off, len);
	n = pread(fd, buf, len, off);
	if (n < 0)
		line("pread", name, "%s", ERRNAME);
	else
		line("pread", name, "OK len=%zd fnv=%016llx", n, (unsigned long long)fnv(buf, (size_t)n));
}

static void do_pwrite(const char *what, int fd, const char *data, off_t off)
{
	char name[256];
	ssize_t n;

	snprintf(name, sizeof(name), "%s@%lld", what, (long long)off);
	n = pwrite(fd, data, strlen(data), off);
	if (n < 0)
		line("pwrite", name, "%s", ERRNAME);
	else
		line("pwrite", name, "OK %zd", n);
}

/* write() at the file offset; prints the offset afterwards */
static void do_write(const char *what, int fd, const char *data)
{
	ssize_t n = write(fd, data, strlen(data));

	if (n < 0)
		line("write", what, "%s", ERRNAME);
	else
		line("write", what, "OK %zd pos=%lld", n, (long long)lseek(fd, 0, SEEK_CUR));
}

static void do_seek(const char *what, int fd, off_t off, int whence)
{
	static const char *const names[] = { "SEEK_SET", "SEEK_CUR", "SEEK_END", "SEEK_DATA",
					      "SEEK_HOLE" };
	char name[256];
	off_t r;

	snprintf(name, sizeof(name), "%s@%lld", what, (long long)off);
	r = lseek(fd, off, whence);
	if (r < 0)
		line(names[whence], name, "%s", ERRNAME);
	else
		line(names[whence], name, "OK %lld", (long long)r);
}

/* The names in a directory, sorted, with long ones shortened. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void do_readdir(const char *rel)
{
	char out[4096] = "";
	char *names[256];
	size_t n = 0, o = 0;
	struct dirent *de;
	DIR *d = opendir(rel);

	if (!d) {
		line("readdir", rel, "%s", ERRNAME);
		return;
	}
	errno = 0;
	while ((de = readdir(d)) != NULL && n < AWFS_ARRAY_LEN(names))
		names[n++] = util_xstrdup(de->d_name);
	if (errno) {
		line("readdir", rel, "%s", ERRNAME);
	} else {
		if (n)
			qsort(names, n, sizeof(names[0]), cmp_str);
		for (size_t i = 0; i < n && o < sizeof(out) - 64; i++)
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s", i ? "," : "",
					      shown(names[i]));
		line("readdir", rel, "OK %zu: %s", n, out);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	closedir(d);
}

/* open a directory and read it to the end (for the times it moves) */
static int list_dir(const char *rel)
{
	DIR *d = opendir(rel);

	if (!d)
		return -1;
	errno = 0;
	while (readdir(d))
		;
	return closedir(d) < 0 || errno ? -1 : 0;
}

static void do_readlink(const char *rel)
{
	char buf[8192];
	ssize_t n = readlink(rel, buf, sizeof(buf));

	if (n < 0)
		line("readlink", rel, "%s", ERRNAME);
	else
		line("readlink", rel, "OK len=%zd %s", n,
		     n < 64 ? shown((buf[n] = '\0', buf)) : "(long)");
}

static void do_blocks(const char *what, int fd, long long at_most)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		line("blocks", what, "%s", ERRNAME);
	else
		line("blocks", what, "size=%lld allocated<=%lld:%s", (long long)st.st_size, at_most,
		     (long long)st.st_blocks * 512 <= at_most ? "yes" : "no");
}

static char *repeat(char c, size_t n)
{
	char *s = util_xmalloc(n + 1);

	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* ------------------------------------------------------------ sections */

/* Creation of every kind of entry: modes after the umask, owner = the caller. */
static void sec_create(void)
{
	struct statvfs sv;

	do_mkdir("c", 0777);
	do_create("c/file", 0666, "hello\n");
	result_fd("create(O_EXCL) existing", "c/file", open("c/file", O_WRONLY | O_CREAT | O_EXCL, 0666));
	do_mkdir("c/dir", 0777);
	result("mkdir existing", "c/dir", mkdir("c/dir", 0777));
	if (result("symlink", "c/sym", symlink("file", "c/sym")) == 0)
		do_stat("c/sym");
	do_readlink("c/sym");
	if (result("mkfifo", "c/fifo", mkfifo("c/fifo", 0666)) == 0)
		do_stat("c/fifo");
	if (result("mknod(S_IFREG)", "c/reg", mknod("c/reg", S_IFREG | 0640, 0)) == 0)
		do_stat("c/reg");
	if (result("mknod(S_IFSOCK)", "c/sock", mknod("c/sock", S_IFSOCK | 0666, 0)) == 0)
		do_stat("c/sock");
	if (result("mknod(S_IFCHR 1:3)", "c/chr", mknod("c/chr", S_IFCHR | 0600, makedev(1, 3))) == 0)
		do_stat("c/chr");
	do_create("c/suid", 06755, NULL);
	do_create("c/sticky", 01666, NULL);
	do_mkdir("c/dir7", 07777);
	result_fd("open(O_RDONLY|O_CREAT) existing", "c/file", open("c/file", O_RDONLY | O_CREAT, 0600));
	result_fd("open(O_WRONLY) dir", "c/dir", open("c/dir", O_WRONLY));
	result_fd("open(O_CREAT) under a file", "c/file/x", open("c/file/x", O_WRONLY | O_CREAT, 0600));
	result_fd("open(O_CREAT) missing dir", "c/missing/x", open("c/missing/x", O_WRONLY | O_CREAT, 0600));
	result_fd("open(O_NOFOLLOW)", "c/sym", open("c/sym", O_RDONLY | O_NOFOLLOW));
	result("symlink dangling", "c/dangling", symlink("target", "c/dangling"));
	result_fd("open(O_CREAT|O_EXCL) dangling", "c/dangling", open("c/dangling", O_WRONLY | O_CREAT | O_EXCL, 0600));
	result_fd("open(O_CREAT) through dangling", "c/dangling", open("c/dangling", O_WRONLY | O_CREAT, 0600));
	do_stat("c/target");
	do_read("c/sym");
	do_readdir("c");
	if (statvfs("c", &sv) < 0)
		line("statvfs", "c", "%s", ERRNAME);
	else
		line("statvfs", "c", "OK namemax=%lu", (unsigned long)sv.f_namemax);
}

/* Link counts of files through link, unlink and rename. */
static void sec_links(void)
{
	const struct timespec expl[2] = { { 1000000000, 5 }, { 1100000000, 6 } };
	int fd;

	do_mkdir("lc", 0755);
	do_mkdir("lc/d", 0755);
	do_create("lc/a", 0644, "hello\n");
	TIMED("link", "lc/a => lc/b", link("lc/a", "lc/b"), "lc/a", "lc");
	do_stat("lc/a");
	do_stat("lc/b");
	TIMED("link", "lc/a => lc/d/c", link("lc/a", "lc/d/c"), "lc/a", "lc/d");
	do_stat("lc/b");
	/* one file, three names: a change through one shows through the others */
	result("chmod(0640)", "lc/a", chmod("lc/a", 0640));
	do_stat("lc/d/c");
	result("utimensat(explicit)", "lc/d/c", utimensat(AT_FDCWD, "lc/d/c", expl, 0));
	show_times("lc/b", true, true);
	fd = open("lc/b", O_WRONLY | O_APPEND);
	do_write("lc/b", fd, "more\n");
	close(fd);
	do_stat("lc/a");
	do_read("lc/d/c");
	result("chmod(0644)", "lc/d/c", chmod("lc/d/c", 0644));
	TIMED("unlink", "lc/b", unlink("lc/b"), "lc/a", "lc");
	do_stat("lc/a");
	do_stat("lc/b");
	TIMED("rename", "lc/a => lc/e", rename("lc/a", "lc/e"), "lc/a=>lc/e", "lc");
	do_stat("lc/e");
	do_create("lc/f", 0600, "victim\n");
	fd = open("lc/f", O_RDONLY);
	TIMED("rename over", "lc/e => lc/f", rename("lc/e", "lc/f"), "lc/e=>lc/f", "lc");
	do_stat("lc/f");
	do_stat("lc/d/c");
	do_fstat("replaced lc/f", fd);
	do_pread("replaced lc/f", fd, 100, 0);
	close(fd);
	/* two names of one file: rename does nothing and succeeds */
	result("rename to its own other link", "lc/d/c => lc/f", rename("lc/d/c", "lc/f"));
	do_stat("lc/d/c");
	do_stat("lc/f");
	result("link dir", "lc/d => lc/dl", link("lc/d", "lc/dl"));
	result("link existing", "lc/f => lc/d/c", link("lc/f", "lc/d/c"));
	result("link missing", "lc/nope => lc/x", link("lc/nope", "lc/x"));
	result("symlink", "lc/s", symlink("f", "lc/s"));
	TIMED("link symlink", "lc/s => lc/s2", linkat(AT_FDCWD, "lc/s", AT_FDCWD, "lc/s2", 0), "lc/s", "lc/f");
	do_stat("lc/s");
	TIMED("link(AT_SYMLINK_FOLLOW)", "lc/s => lc/s3",
	      linkat(AT_FDCWD, "lc/s", AT_FDCWD, "lc/s3", AT_SYMLINK_FOLLOW), "lc/s", "lc/f");
	do_stat("lc/s3");
	do_stat("lc/f");
	result("unlink dir", "lc/d", unlink("lc/d"));
	result("rmdir file", "lc/f", rmdir("lc/f"));
	TIMED("unlink", "lc/f", unlink("lc/f"), "lc/s3", "lc");
	do_stat("lc/d/c");
	result("unlink", "lc/s2", unlink("lc/s2"));
	do_stat("lc/s");
	do_readdir("lc");
}

/* Link counts of directories: a subdirectory's ".." links its parent. */
static void sec_dirlinks(void)
{
	do_mkdir("nl", 0755);
	TIMED("mkdir", "nl/a", mkdir("nl/a", 0755), "nl");
	do_stat("nl");
	do_stat("nl/a");
	result("mkdir", "nl/b", mkdir("nl/b", 0755));
	result("mkdir", "nl/b/c", mkdir("nl/b/c", 0755));
	do_stat("nl");
	do_stat("nl/b");
	TIMED("rmdir", "nl/a", rmdir("nl/a"), "nl");
	do_stat("nl");
	result("rmdir non-empty", "nl/b", rmdir("nl/b"));
	result("rmdir dot", "nl/b/c/.", rmdir("nl/b/c/."));
	result("rmdir dotdot", "nl/b/c/..", rmdir("nl/b/c/.."));
	result("mkdir", "nl2", mkdir("nl2", 0755));
	TIMED("rename dir", "nl/b => nl2/b", rename("nl/b", "nl2/b"), "nl", "nl2", "nl/b=>nl2/b");
	do_stat("nl");
	do_stat("nl2");
	do_stat("nl2/b");
	result("mkdir", "nl2/e", mkdir("nl2/e", 0755));
	do_stat("nl2");
	TIMED("rename dir over empty dir", "nl2/b => nl2/e", rename("nl2/b", "nl2/e"), "nl2");
	do_stat("nl2");
	do_stat("nl2/e");
	do_stat("nl2/b");
	result("mkdir", "nl2/f", mkdir("nl2/f", 0755));
	result("mkdir", "nl2/f/x", mkdir("nl2/f/x", 0755));
	result("rename dir over non-empty dir", "nl2/e => nl2/f", rename("nl2/e", "nl2/f"));
	do_create("nl2/file", 0644, "x");
	result("rename dir over file", "nl2/e => nl2/file", rename("nl2/e", "nl2/file"));
	result("rename file over dir", "nl2/file => nl2/f", rename("nl2/file", "nl2/f"));
	result("rename dir below itself", "nl2/e => nl2/e/c/sub", rename("nl2/e", "nl2/e/c/sub"));
	result("rename to itself", "nl2/e => nl2/e", rename("nl2/e", "nl2/e"));
	result("rename(RENAME_NOREPLACE)", "nl2/file => nl2/f",
	       renameat2(AT_FDCWD, "nl2/file", AT_FDCWD, "nl2/f", RENAME_NOREPLACE));
	result("rename(RENAME_NOREPLACE)", "nl2/file => nl2/g",
	       renameat2(AT_FDCWD, "nl2/file", AT_FDCWD, "nl2/g", RENAME_NOREPLACE));
	result("mkdir", "nl/x", mkdir("nl/x", 0755));
	do_stat("nl");
	TIMED("rename(RENAME_EXCHANGE)", "nl2/g <=> nl/x",
	      renameat2(AT_FDCWD, "nl2/g", AT_FDCWD, "nl/x", RENAME_EXCHANGE), "nl", "nl2");
	do_stat("nl/x");
	do_stat("nl2/g");
	do_stat("nl");
	do_stat("nl2");
	result("rename(RENAME_EXCHANGE) missing", "nl2/g <=> nl/none",
	       renameat2(AT_FDCWD, "nl2/g", AT_FDCWD, "nl/none", RENAME_EXCHANGE));
	do_readdir("nl");
	do_readdir("nl2");
}

/* utimensat/futimens (explicit, UTIME_NOW, UTIME_OMIT) and what else moves times. */
static void sec_times(void)
{
	const struct timespec expl[2] = { { 1000000000, 123456789 }, { 1100000000, 500000000 } };
	const struct timespec omit_now[2] = { { 0, UTIME_OMIT }, { 0, UTIME_NOW } };
	const struct timespec now_omit[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };
	const struct timespec omit_omit[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };
	const struct timespec now_now[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
	const struct timespec bad[2] = { { 1, 1000000000 }, { 0, UTIME_OMIT } };
	const struct timespec old[2] = { { -1, 0 }, { -315619200, 250000000 } };
	const struct timespec future[2] = { { 4102444800LL, 1 }, { 16000000000LL, 999999999 } };
	const struct timespec fd_expl[2] = { { 1200000000, 42 }, { 1300000000, 43 } };
	const struct timespec stale[2] = { { 1000000000, 0 }, { 1100000000, 0 } };
	char buf[16];
	int fd, wfd;

	do_mkdir("tm", 0755);
	do_create("tm/f", 0644, "0123456789");
	TIMED("utimensat(explicit)", "tm/f", utimensat(AT_FDCWD, "tm/f", expl, 0), "tm/f");
	show_times("tm/f", true, true);
	TIMED("utimensat(UTIME_OMIT,UTIME_NOW)", "tm/f", utimensat(AT_FDCWD, "tm/f", omit_now, 0), "tm/f");
	show_times("tm/f", true, false);
	TIMED("utimensat(explicit)", "tm/f", utimensat(AT_FDCWD, "tm/f", expl, 0), "tm/f");
	TIMED("utimensat(UTIME_NOW,UTIME_OMIT)", "tm/f", utimensat(AT_FDCWD, "tm/f", now_omit, 0), "tm/f");
	show_times("tm/f", false, true);
	TIMED("utimensat(UTIME_OMIT,UTIME_OMIT)", "tm/f", utimensat(AT_FDCWD, "tm/f", omit_omit, 0), "tm/f");
	TIMED("utimensat(NULL)", "tm/f", utimensat(AT_FDCWD, "tm/f", NULL, 0), "tm/f");
	TIMED("utimensat(UTIME_NOW,UTIME_NOW)", "tm/f", utimensat(AT_FDCWD, "tm/f", now_now, 0), "tm/f");
	TIMED("utimensat(tv_nsec=1e9)", "tm/f", utimensat(AT_FDCWD, "tm/f", bad, 0), "tm/f");
	TIMED("utimensat(before 1970)", "tm/f", utimensat(AT_FDCWD, "tm/f", old, 0), "tm/f");
	show_times("tm/f", true, true);
	TIMED("utimensat(after 2038)", "tm/f", utimensat(AT_FDCWD, "tm/f", future, 0), "tm/f");
	show_times("tm/f", true, true);

	result("symlink", "tm/s", symlink("f", "tm/s"));
	TIMED("utimensat(AT_SYMLINK_NOFOLLOW)", "tm/s",
	      utimensat(AT_FDCWD, "tm/s", expl, AT_SYMLINK_NOFOLLOW), "tm/s", "tm/f");
	show_times("tm/s", true, true);
	TIMED("utimensat(follow)", "tm/s", utimensat(AT_FDCWD, "tm/s", fd_expl, 0), "tm/s", "tm/f");
	show_times("tm/f", true, true);

	fd = open("tm/f", O_RDONLY);
	TIMED("futimens(explicit) O_RDONLY fd", "tm/f", futimens(fd, expl), "tm/f");
	show_times("tm/f", true, true);
	TIMED("futimens(UTIME_NOW,UTIME_OMIT)", "tm/f", futimens(fd, now_omit), "tm/f");
	show_times("tm/f", false, true);
	TIMED("futimens(UTIME_OMIT,UTIME_NOW)", "tm/f", futimens(fd, omit_now), "tm/f");
	TIMED("futimens(NULL)", "tm/f", futimens(fd, NULL), "tm/f");

	/* what else moves which time */
	TIMED("chmod", "tm/f", chmod("tm/f", 0600), "tm/f", "tm");
	TIMED("chown to the owner it has", "tm/f", chown("tm/f", getuid(), getgid()), "tm/f");
	TIMED("link", "tm/f => tm/g", link("tm/f", "tm/g"), "tm/f", "tm");
	TIMED("unlink", "tm/g", unlink("tm/g"), "tm/f", "tm");
	TIMED("rename", "tm/f => tm/h", rename("tm/f", "tm/h"), "tm/f=>tm/h", "tm");
	TIMED("rename", "tm/h => tm/f", rename("tm/h", "tm/f"), "tm/h=>tm/f", "tm");
	wfd = open("tm/f", O_WRONLY);
	TIMED("write", "tm/f", write(wfd, "ab", 2), "tm/f");
	TIMED("utimensat(old explicit)", "tm/f", utimensat(AT_FDCWD, "tm/f", stale, 0), "tm/f");
	TIMED("read (relatime: atime older than mtime)", "tm/f", pread(fd, buf, sizeof(buf), 0), "tm/f");
	TIMED("read again", "tm/f", pread(fd, buf, sizeof(buf), 0), "tm/f");
	TIMED("open(O_RDONLY)", "tm/f", open_close("tm/f", O_RDONLY), "tm/f");
	TIMED("ftruncate to the same size", "tm/f", ftruncate(wfd, 10), "tm/f");
	TIMED("ftruncate", "tm/f", ftruncate(wfd, 20), "tm/f");
	TIMED("truncate to the same size", "tm/f", truncate("tm/f", 20), "tm/f");
	TIMED("truncate", "tm/f", truncate("tm/f", 5), "tm/f");
	TIMED("open(O_TRUNC) non-empty", "tm/f", open_close("tm/f", O_WRONLY | O_TRUNC), "tm/f");
	TIMED("open(O_TRUNC) empty", "tm/f", open_close("tm/f", O_WRONLY | O_TRUNC), "tm/f");
	TIMED("fsync", "tm/f", fsync(wfd), "tm/f");
	close(wfd);
	close(fd);

	/* directories */
	TIMED("create in", "tm", create("tm/n", 0644, NULL), "tm");
	TIMED("mkdir in", "tm", mkdir("tm/sub", 0755), "tm");
	TIMED("chmod", "tm", chmod("tm", 0750), "tm");
	TIMED("write to an entry", "tm", truncate("tm/n", 3), "tm", "tm/n");
	TIMED("utimensat(old explicit)", "tm", utimensat(AT_FDCWD, "tm", stale, 0), "tm");
	show_times("tm", true, true);
	TIMED("readdir (relatime)", "tm", list_dir("tm"), "tm");
	do_readdir("tm");
	TIMED("after readdir", "tm", 0, "tm");
	TIMED("unlink in", "tm", unlink("tm/n"), "tm");
	TIMED("rmdir in", "tm", rmdir("tm/sub"), "tm");
	TIMED("lookup of a missing name", "tm", lstat("tm/none", &(struct stat){ 0 }), "tm");
}

/* A setgid directory: group inheritance, and the set-group-ID bit on what is made in it. */
static void sec_sgid(void)
{
	do_stat("sgid");
	do_create("sgid/f", 0666, "x");
	do_mkdir("sgid/d", 0755);
	do_mkdir("sgid/d/e", 0700);
	do_create("sgid/d/e/f", 0644, NULL);
	if (result("symlink", "sgid/s", symlink("f", "sgid/s")) == 0)
		do_stat("sgid/s");
	if (result("mkfifo", "sgid/p", mkfifo("sgid/p", 0644)) == 0)
		do_stat("sgid/p");
	if (result("mknod(S_IFREG)", "sgid/r", mknod("sgid/r", S_IFREG | 02755, 0)) == 0)
		do_stat("sgid/r");
	do_create("sgid/x", 02755, NULL);
	do_create("sgid/y", 02745, NULL);
	do_mkdir("sgid/z", 01777);
	if (result("chmod(02644)", "sgid/f", chmod("sgid/f", 02644)) == 0)
		do_stat("sgid/f");
	if (result("chmod(02755)", "sgid/f", chmod("sgid/f", 02755)) == 0)
		do_stat("sgid/f");
	/* made elsewhere, moved or linked in: keeps its group */
	do_create("sgid-out", 0644, NULL);
	if (result("rename in", "sgid-out => sgid/moved", rename("sgid-out", "sgid/moved")) == 0)
		do_stat("sgid/moved");
	do_create("sgid-out2", 0644, NULL);
	if (result("link in", "sgid-out2 => sgid/linked", link("sgid-out2", "sgid/linked")) == 0)
		do_stat("sgid/linked");
	if (result("chown(-1, own gid)", "sgid/f", chown("sgid/f", (uid_t)-1, getgid())) == 0)
		do_stat("sgid/f");
	result("chown(-1, 4242)", "sgid/moved", chown("sgid/moved", (uid_t)-1, NONMEMBER_GID));
	do_stat("sgid/moved");
	/* without the bit the directory's group is no longer inherited */
	if (result("chmod(0777)", "sgid/d", chmod("sgid/d", 0777)) == 0)
		do_stat("sgid/d");
	do_create("sgid/d/g", 0644, NULL);
	do_mkdir("sgid/d/h", 0755);
	if (result("chmod(02777)", "sgid/d", chmod("sgid/d", 02777)) == 0)
		do_stat("sgid/d");
	do_readdir("sgid");
}

/* A setgid directory whose group the caller has as a supplementary group. */
static void sec_sgid_member(void)
{
	do_stat("sgid-member");
	do_create("sgid-member/f", 0644, NULL);
	do_create("sgid-member/x", 02755, NULL);
	if (result("mknod(S_IFREG)", "sgid-member/r", mknod("sgid-member/r", S_IFREG | 02755, 0)) == 0)
		do_stat("sgid-member/r");
	do_mkdir("sgid-member/d", 0755);
	do_create("sgid-member/d/x", 02755, NULL);
	if (result("chmod(02755)", "sgid-member/f", chmod("sgid-member/f", 02755)) == 0)
		do_stat("sgid-member/f");
	do_create("sgid-member/own", 0755, NULL);
	if (result("chown(-1, member gid)", "sgid-member/own", chown("sgid-member/own", (uid_t)-1, MEMBER_GID)) == 0)
		do_stat("sgid-member/own");
	/* a file of a group the caller is only a supplementary member of */
	do_create("c/member", 0755, NULL);
	if (result("chown(-1, member gid)", "c/member", chown("c/member", (uid_t)-1, MEMBER_GID)) == 0)
		do_stat("c/member");
	if (result("chmod(02755)", "c/member", chmod("c/member", 02755)) == 0)
		do_stat("c/member");
	do_readdir("sgid-member");
}

/* A sticky directory: only the owner of an entry (or of the directory) may remove or replace it. */
static void sec_sticky(void)
{
	const struct timespec expl[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	int fd;

	do_stat("sticky");
	do_stat("sticky/theirs");
	do_stat("sticky/theirs-rw");
	do_stat("sticky/theirdir");
	do_create("sticky/mine", 0644, "mine");
	fd = open("sticky/theirs-rw", O_WRONLY);
	if (fd < 0) {
		line("open(O_WRONLY)", "sticky/theirs-rw", "%s", ERRNAME);
	} else {
		do_write("sticky/theirs-rw", fd, "w");
		close(fd);
	}
	result_fd("open(O_WRONLY)", "sticky/theirs", open("sticky/theirs", O_WRONLY));
	result_fd("open(O_WRONLY|O_CREAT) existing", "sticky/theirs-rw", open("sticky/theirs-rw", O_WRONLY | O_CREAT, 0600));
	TIMED("utimensat(NULL)", "sticky/theirs-rw", utimensat(AT_FDCWD, "sticky/theirs-rw", NULL, 0),
	      "sticky/theirs-rw");
	TIMED("utimensat(explicit)", "sticky/theirs-rw", utimensat(AT_FDCWD, "sticky/theirs-rw", expl, 0),
	      "sticky/theirs-rw");
	TIMED("utimensat(NULL)", "sticky/theirs", utimensat(AT_FDCWD, "sticky/theirs", NULL, 0),
	      "sticky/theirs");
	result("chmod", "sticky/theirs-rw", chmod("sticky/theirs-rw", 0600));
	result("chown", "sticky/theirs-rw", chown("sticky/theirs-rw", getuid(), (gid_t)-1));
	result("chown(-1, own gid)", "sticky/theirs-rw", chown("sticky/theirs-rw", (uid_t)-1, getgid()));
	do_stat("sticky/theirs-rw");
	/* protected_hardlinks: a link to a file one could not write */
	result("link", "sticky/theirs => sticky/hl", link("sticky/theirs", "sticky/hl"));
	result("link", "sticky/theirs-rw => sticky/hl-rw", link("sticky/theirs-rw", "sticky/hl-rw"));
	do_stat("sticky/theirs-rw");
	result("unlink their link", "sticky/hl-rw", unlink("sticky/hl-rw"));
	if (result("rename theirs", "sticky/theirs-rw => sticky/moved",
		   rename("sticky/theirs-rw", "sticky/moved")) == 0)
		result("rename back", "sticky/moved => sticky/theirs-rw",
		       rename("sticky/moved", "sticky/theirs-rw"));
	result("rename out of it", "sticky/theirs-rw => moved-out", rename("sticky/theirs-rw", "moved-out"));
	do_create("sticky/mine2", 0644, "mine2");
	result("rename mine over theirs", "sticky/mine2 => sticky/theirs-rw",
	       rename("sticky/mine2", "sticky/theirs-rw"));
	result("rename(RENAME_EXCHANGE) with theirs", "sticky/mine <=> sticky/theirs",
	       renameat2(AT_FDCWD, "sticky/mine", AT_FDCWD, "sticky/theirs", RENAME_EXCHANGE));
	do_create("sticky/theirdir/mine", 0644, NULL);
	result("rmdir theirs", "sticky/theirdir", rmdir("sticky/theirdir"));
	result("rename dir theirs", "sticky/theirdir => sticky/td2", rename("sticky/theirdir", "sticky/td2"));
	result("unlink theirs", "sticky/theirs", unlink("sticky/theirs"));
	result("unlink mine", "sticky/mine", unlink("sticky/mine"));
	result("mkdir", "sticky/mydir", mkdir("sticky/mydir", 0755));
	result("rmdir mine", "sticky/mydir", rmdir("sticky/mydir"));
	do_readdir("sticky");
	do_readdir("sticky/theirdir");
}

/* Set-user-ID and set-group-ID bits cleared by writes, truncation and chown. */
static void sec_privs(void)
{
	int fd;

	do_mkdir("pv", 0755);
	do_create("pv/f", 0755, "abcdef");
	result("chmod(06755)", "pv/f", chmod("pv/f", 06755));
	do_stat("pv/f");
	fd = open("pv/f", O_WRONLY);
	do_write("pv/f (suid)", fd, "W");
	do_stat("pv/f");
	result("chmod(06755)", "pv/f", chmod("pv/f", 06755));
	result("ftruncate", "pv/f", ftruncate(fd, 4));
	do_stat("pv/f");
	result("chmod(06755)", "pv/f", chmod("pv/f", 06755));
	result("fallocate", "pv/f", fallocate(fd, 0, 0, 8192));
	do_stat("pv/f");
	close(fd);
	result("chmod(06755)", "pv/f", chmod("pv/f", 06755));
	result("truncate", "pv/f", truncate("pv/f", 2));
	do_stat("pv/f");
	result("chmod(06755)", "pv/f", chmod("pv/f", 06755));
	fd = open("pv/f", O_WRONLY | O_TRUNC);
	line("open(O_WRONLY|O_TRUNC)", "pv/f", "%s", fd < 0 ? ERRNAME : "OK");
	if (fd >= 0)
		close(fd);
	do_stat("pv/f");
	result("chmod(06755)", "pv/f", chmod("pv/f", 06755));
	result("chown(-1, own gid)", "pv/f", chown("pv/f", (uid_t)-1, getgid()));
	do_stat("pv/f");
	result("chmod(06755)", "pv/f", chmod("pv/f", 06755));
	result("chown(own uid, -1)", "pv/f", chown("pv/f", getuid(), (gid_t)-1));
	do_stat("pv/f");
	/* set-group-ID without group execute is not a privilege: kept */
	result("chmod(02644)", "pv/f", chmod("pv/f", 02644));
	fd = open("pv/f", O_WRONLY);
	do_write("pv/f (sgid, no g+x)", fd, "W");
	close(fd);
	do_stat("pv/f");
	result("chmod(01755) file", "pv/f", chmod("pv/f", 01755));
	do_stat("pv/f");
	do_mkdir("pv/d", 07777);
	result("chmod(07755) dir", "pv/d", chmod("pv/d", 07755));
	do_stat("pv/d");
	result("chmod(0755) by non-owner", "sgid", chmod("sgid", 0755));
	result("chown(-1, 4242) own file", "pv/f", chown("pv/f", (uid_t)-1, NONMEMBER_GID));
	do_stat("pv/f");
}

/* NAME_MAX: 255 bytes work, 256 give ENAMETOOLONG, for every call that makes a name. */
static void sec_names(void)
{
	char *n255 = repeat('n', 255), *n256 = repeat('n', 256);
	char *t4095 = repeat('t', 4095), *t4096 = repeat('t', 4096);
	char p255[300], p256[300];

	snprintf(p255, sizeof(p255), "nm/%s", n255);
	snprintf(p256, sizeof(p256), "nm/%s", n256);
	do_mkdir("nm", 0755);
	do_create(p255, 0644, "255");
	do_read(p255);
	result("unlink", p255, unlink(p255));
	do_create(p256, 0644, "256");
	result_fd("open(O_RDONLY)", p256, open(p256, O_RDONLY));
	result("lstat", p256, lstat(p256, &(struct stat){ 0 }));
	do_mkdir(p255, 0755);
	result("rmdir", p255, rmdir(p255));
	do_mkdir(p256, 0755);
	result("rmdir", p256, rmdir(p256));
	result("symlink", p255, symlink("x", p255));
	do_readlink(p255);
	result("unlink", p255, unlink(p255));
	result("symlink", p256, symlink("x", p256));
	result("mkfifo", p256, mkfifo(p256, 0644));
	result("mknod(S_IFREG)", p256, mknod(p256, S_IFREG | 0644, 0));
	do_create("nm/f", 0644, "f");
	result("rename", "nm/f => nm/<n*256>", rename("nm/f", p256));
	result("link", "nm/f => nm/<n*256>", link("nm/f", p256));
	result("rename", "nm/f => nm/<n*255>", rename("nm/f", p255));
	do_stat(p255);
	result("link", "nm/<n*255> => nm/f", link(p255, "nm/f"));
	result("rename from", "nm/<n*256> => nm/g", rename(p256, "nm/g"));
	result("unlink", p256, unlink(p256));
	/* a symlink's target: up to PATH_MAX - 1 bytes */
	result("symlink(target 4095 bytes)", "nm/long", symlink(t4095, "nm/long"));
	do_stat("nm/long");
	do_readlink("nm/long");
	result("symlink(target 4096 bytes)", "nm/longer", symlink(t4096, "nm/longer"));
	do_readdir("nm");
	free(n255);
	free(n256);
	free(t4095);
	free(t4096);
}

/* PATH_MAX: a relative path of 4095 bytes works, 4096 does not; deeper works through openat. */
static void sec_pathmax(void)
{
	char path[8192], p4095[8192], p4096[8192];
	char *comp = repeat('d', 250), *n255 = repeat('n', 255);
	size_t len;
	int depth = 0, dfd, fd;

	strcpy(path, "pm");
	result("mkdir", "pm", mkdir(path, 0755));
	for (int i = 0; i < 16; i++) {
		len = strlen(path);
		snprintf(path + len, sizeof(path) - len, "/%s", comp);
		if (mkdir(path, 0755) < 0)
			break;
		depth++;
	}
	len = strlen(path);
	line("mkdir nested", "pm/<d*250>/...", "%s depth=%d len=%zu", depth == 16 ? "OK" : ERRNAME,
	     depth, len);
	/* path + "/" + name: 4095 and 4096 bytes */
	snprintf(p4095, sizeof(p4095), "%s/%s", path, n255 + 255 - (4095 - len - 1));
	snprintf(p4096, sizeof(p4096), "%s/%s", path, n255 + 255 - (4096 - len - 1));
	line("length", "pm/.../<n*...>", "%zu %zu", strlen(p4095), strlen(p4096));
	do_create(p4095, 0644, "deep");
	do_read(p4095);
	result("unlink", p4095, unlink(p4095));
	do_create(p4096, 0644, "deeper");
	result("lstat", p4096, lstat(p4096, &(struct stat){ 0 }));
	do_mkdir(p4095, 0755);
	result("rmdir", p4095, rmdir(p4095));
	do_mkdir(p4096, 0755);
	result("symlink", p4095, symlink("x", p4095));
	result("symlink", p4096, symlink("x", p4096));
	result("rename", "pm/<4095 bytes> => pm/short", rename(p4095, "pm/short"));
	result("rename", "pm/short => pm/<4096 bytes>", rename("pm/short", p4096));
	result("rename", "pm/short => pm/<4095 bytes>", rename("pm/short", p4095));
	do_stat(p4095);
	/* below the deepest directory, each call's path is short */
	dfd = open(path, O_RDONLY | O_DIRECTORY);
	if (dfd < 0) {
		line("open(O_DIRECTORY)", path, "%s", ERRNAME);
	} else {
		fd = openat(dfd, n255, O_WRONLY | O_CREAT | O_EXCL, 0644);
		line("openat(O_CREAT) beyond PATH_MAX", "pm/<4018 bytes>/<n*255>", "%s",
		     fd < 0 ? ERRNAME : "OK");
		if (fd >= 0)
			close(fd);
		result("mkdirat beyond PATH_MAX", "pm/<4018 bytes>/sub", mkdirat(dfd, "sub", 0755));
		result("fstatat beyond PATH_MAX", "pm/<4018 bytes>/<n*255>",
		       fstatat(dfd, n255, &(struct stat){ 0 }, AT_SYMLINK_NOFOLLOW));
		close(dfd);
	}
	free(comp);
	free(n255);
}

/* Rename over a file that is open: the open descriptor keeps the old file. */
static void sec_rename_open(void)
{
	int rfd, wfd, dfd, fd;
	char proc[64];

	do_mkdir("rv", 0755);
	do_create("rv/old", 0644, "old content\n");
	do_create("rv/new", 0644, "new content, longer\n");
	rfd = open("rv/old", O_RDONLY);
	TIMED("rename over open file", "rv/new => rv/old", rename("rv/new", "rv/old"), fd_watch(rfd), "rv");
	do_pread("old fd", rfd, 100, 0);
	do_fstat("old fd", rfd);
	do_read("rv/old");
	do_stat("rv/old");
	close(rfd);

	do_create("rv/w1", 0644, "AAAA");
	do_create("rv/w2", 0644, "BBBB");
	wfd = open("rv/w1", O_WRONLY);
	result("rename over file open for writing", "rv/w2 => rv/w1", rename("rv/w2", "rv/w1"));
	do_pwrite("replaced fd", wfd, "CC", 0);
	do_read("rv/w1");
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", wfd);
	fd = open(proc, O_RDONLY);
	if (fd < 0) {
		line("open /proc/self/fd/N (replaced)", "rv/w1", "%s", ERRNAME);
	} else {
		line("open /proc/self/fd/N (replaced)", "rv/w1", "OK");
		do_pread("reopened", fd, 100, 0);
		close(fd);
	}
	close(wfd);

	/* a directory replaced while open */
	do_mkdir("rv/d1", 0755);
	do_mkdir("rv/d2", 0755);
	dfd = open("rv/d2", O_RDONLY | O_DIRECTORY);
	result("rename dir over open dir", "rv/d1 => rv/d2", rename("rv/d1", "rv/d2"));
	do_fstat("replaced dir fd", dfd);
	result_fd("openat(O_CREAT) in replaced dir", "rv/d2(old)/x", openat(dfd, "x", O_WRONLY | O_CREAT, 0644));
	{
		char dbuf[4096];

		result("getdents64 replaced dir", "rv/d2(old)", syscall(SYS_getdents64, dfd, dbuf, sizeof(dbuf)));
	}
	close(dfd);
	do_readdir("rv");
}

/* A file unlinked while open stays usable through its descriptors. */
static void sec_unlinked(void)
{
	const struct timespec expl[2] = { { 1000000000, 1 }, { 1100000000, 2 } };
	char proc[64];
	int fd, fd2, dfd;

	do_mkdir("ul", 0755);
	fd = open("ul/f", O_RDWR | O_CREAT | O_EXCL, 0644);
	do_write("ul/f", fd, "first");
	TIMED("unlink open file", "ul/f", unlink("ul/f"), "ul", fd_watch(fd));
	do_stat("ul/f");
	do_pwrite("unlinked", fd, "second", 5);
	do_pread("unlinked", fd, 100, 0);
	do_fstat("unlinked", fd);
	result("ftruncate", "unlinked", ftruncate(fd, 3));
	do_fstat("unlinked", fd);
	result("fchmod(0600)", "unlinked", fchmod(fd, 0600));
	do_fstat("unlinked", fd);
	result("fchown(-1, own gid)", "unlinked", fchown(fd, (uid_t)-1, getgid()));
	TIMED("futimens(explicit)", "unlinked", futimens(fd, expl), fd_watch(fd));
	{
		struct stat st;

		if (fstat(fd, &st) == 0)
			line("fstat times", "unlinked", "atime=%s mtime=%s", ts(&st.st_atim), ts(&st.st_mtim));
	}
	result("fsync", "unlinked", fsync(fd));
	result("fallocate", "unlinked", fallocate(fd, 0, 0, 4096));
	do_fstat("unlinked", fd);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	fd2 = open(proc, O_RDONLY);
	if (fd2 < 0) {
		line("open /proc/self/fd/N (unlinked)", "ul/f", "%s", ERRNAME);
	} else {
		line("open /proc/self/fd/N (unlinked)", "ul/f", "OK");
		do_pread("reopened", fd2, 3, 0);
		close(fd2);
	}
	result("linkat /proc/self/fd/N (unlinked)", "ul/back",
	       linkat(AT_FDCWD, proc, AT_FDCWD, "ul/back", AT_SYMLINK_FOLLOW));
	close(fd);

	/*
	 * O_TMPFILE: FUSE has no tmpfile request before libfuse 3.17, so through
	 * awfs it is EOPNOTSUPP (a refusal, never a silent success); run.sh
	 * checks that and sets AWFS_CONFORM_NO_TMPFILE for the comparison.
	 */
	if (getenv("AWFS_CONFORM_NO_TMPFILE")) {
		line("open(O_TMPFILE)", "ul", "not compared (no tmpfile request in libfuse 3.14)");
	} else {
		fd = open("ul", O_TMPFILE | O_RDWR, 0640);
		if (fd < 0) {
			line("open(O_TMPFILE)", "ul", "%s", ERRNAME);
		} else {
			line("open(O_TMPFILE)", "ul", "OK");
			do_write("tmpfile", fd, "anonymous");
			do_fstat("tmpfile", fd);
			do_readdir("ul");
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
			result("linkat /proc/self/fd/N (O_TMPFILE)", "ul/named",
			       linkat(AT_FDCWD, proc, AT_FDCWD, "ul/named", AT_SYMLINK_FOLLOW));
			do_fstat("tmpfile", fd);
			do_read("ul/named");
			close(fd);
		}
		fd = open("ul", O_TMPFILE | O_EXCL | O_WRONLY, 0600);
		if (fd < 0) {
			line("open(O_TMPFILE|O_EXCL)", "ul", "%s", ERRNAME);
		} else {
			line("open(O_TMPFILE|O_EXCL)", "ul", "OK");
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
			result("linkat /proc/self/fd/N (O_TMPFILE|O_EXCL)", "ul/never",
			       linkat(AT_FDCWD, proc, AT_FDCWD, "ul/never", AT_SYMLINK_FOLLOW));
			close(fd);
		}
		result_fd("open(O_TMPFILE) O_RDONLY", "ul", open("ul", O_TMPFILE | O_RDONLY, 0600));

	}

	/* two names, one unlinked: the other keeps the data and counts one link */
	do_create("ul/g", 0644, "gg");
	result("link", "ul/g => ul/h", link("ul/g", "ul/h"));
	fd = open("ul/g", O_RDWR);
	result("unlink", "ul/g", unlink("ul/g"));
	do_fstat("ul/g fd", fd);
	do_pwrite("ul/g fd", fd, "HH", 2);
	do_read("ul/h");
	close(fd);

	/* a directory removed while open */
	do_mkdir("ul/d", 0755);
	dfd = open("ul/d", O_RDONLY | O_DIRECTORY);
	result("rmdir open dir", "ul/d", rmdir("ul/d"));
	do_fstat("removed dir fd", dfd);
	result_fd("openat(O_CREAT) in removed dir", "ul/d(removed)/x", openat(dfd, "x", O_WRONLY | O_CREAT, 0644));
	result("mkdirat in removed dir", "ul/d(removed)/y", mkdirat(dfd, "y", 0755));
	close(dfd);
	do_readdir("ul");
}

/* O_APPEND: every write lands at the end, whoever wrote last and whatever the offset. */
static void sec_append(void)
{
	int fd1, fd2, fd3, rfd;

	do_mkdir("ap", 0755);
	do_create("ap/f", 0644, NULL);
	fd1 = open("ap/f", O_WRONLY | O_APPEND);
	fd2 = open("ap/f", O_WRONLY | O_APPEND);
	fd3 = open("ap/f", O_WRONLY);
	do_write("fd1", fd1, "aaaa");
	do_write("fd2", fd2, "bb");
	do_write("fd1", fd1, "c");
	do_pwrite("fd2 pwrite(O_APPEND)", fd2, "P", 0);
	do_seek("fd2", fd2, 0, SEEK_CUR);
	do_pwrite("fd3", fd3, "Z", 0);
	do_pwrite("fd3", fd3, "E", 20);
	do_write("fd1", fd1, "d");
	do_seek("fd1", fd1, 0, SEEK_SET);
	do_write("fd1 after lseek(0)", fd1, "e");
	do_write("fd2", fd2, "f");
	do_read("ap/f");
	do_stat("ap/f");
	/* O_APPEND toggled on an open descriptor */
	do_seek("fd1", fd1, 0, SEEK_SET);
	result("fcntl(F_SETFL, 0)", "fd1", fcntl(fd1, F_SETFL, 0));
	do_write("fd1 without O_APPEND at 0", fd1, "X");
	do_stat("ap/f");
	do_read("ap/f");
	result("fcntl(F_SETFL, O_APPEND)", "fd3", fcntl(fd3, F_SETFL, O_APPEND));
	do_seek("fd3", fd3, 0, SEEK_SET);
	do_write("fd3 with O_APPEND", fd3, "Y");
	do_read("ap/f");
	/* O_RDWR|O_APPEND: reads at the offset, writes at the end */
	rfd = open("ap/f", O_RDWR | O_APPEND);
	do_seek("rdwr", rfd, 2, SEEK_SET);
	{
		char b[4];
		ssize_t n = read(rfd, b, 2);

		if (n < 0) {
			line("read", "rdwr", "%s", ERRNAME);
		} else {
			b[n] = '\0';
			line("read", "rdwr", "OK %s", shown(b));
		}
	}
	do_write("rdwr", rfd, "R");
	do_stat("ap/f");
	close(rfd);
	close(fd1);
	close(fd2);
	close(fd3);
	do_read("ap/f");
	/* O_APPEND|O_TRUNC */
	fd1 = open("ap/f", O_WRONLY | O_APPEND | O_TRUNC);
	do_write("O_APPEND|O_TRUNC", fd1, "new");
	close(fd1);
	do_read("ap/f");
}

/* Sparse and large files (past 4 GiB), holes, fsync, ftruncate and fallocate. */
static void sec_sparse(void)
{
	int fd, rfd;
	struct stat before, after;

	do_mkdir("sp", 0755);
	fd = open("sp/f", O_RDWR | O_CREAT | O_EXCL, 0644);
	do_pwrite("sp/f", fd, "DATA", MiB);
	do_stat("sp/f");
	do_seek("sp/f", fd, 0, SEEK_DATA);
	do_seek("sp/f", fd, 0, SEEK_HOLE);
	do_seek("sp/f", fd, MiB, SEEK_HOLE);
	do_pwrite("sp/f", fd, "BIG5", 5 * GiB);
	do_pwrite("sp/f", fd, "EDGE", 4 * GiB - 2);
	do_stat("sp/f");
	do_blocks("sp/f", fd, 64 * KiB);
	do_seek("sp/f", fd, 0, SEEK_DATA);
	do_seek("sp/f", fd, MiB + 4 * KiB, SEEK_DATA);
	do_seek("sp/f", fd, MiB, SEEK_HOLE);
	do_seek("sp/f", fd, 4 * GiB + 4 * KiB, SEEK_DATA);
	do_seek("sp/f", fd, 5 * GiB, SEEK_HOLE);
	do_seek("sp/f", fd, 5 * GiB + 4, SEEK_DATA);
	do_seek("sp/f", fd, 5 * GiB + 3, SEEK_DATA);
	do_seek("sp/f", fd, 6 * GiB, SEEK_HOLE);
	do_seek("sp/f", fd, 0, SEEK_END);
	do_pread("sp/f", fd, 4, 5 * GiB);
	do_pread("sp/f", fd, 4, 4 * GiB - 2);
	do_pread("sp/f", fd, 64, 3 * GiB);
	do_pread("sp/f", fd, 16, MiB - 8);
	do_pread("sp/f", fd, 16, 5 * GiB + 4);
	result("fsync", "sp/f", fsync(fd));
	result("fdatasync", "sp/f", fdatasync(fd));
	/* after write-back, the same answers */
	do_seek("sp/f", fd, MiB + 4 * KiB, SEEK_DATA);
	do_seek("sp/f", fd, MiB, SEEK_HOLE);
	do_blocks("sp/f", fd, 64 * KiB);
	/* through a second, read-only descriptor */
	rfd = open("sp/f", O_RDONLY);
	do_seek("sp/f rdonly", rfd, 4 * GiB + 4 * KiB, SEEK_DATA);
	do_pread("sp/f rdonly", rfd, 4, 5 * GiB);
	close(rfd);

	result("ftruncate(6 GiB)", "sp/f", ftruncate(fd, 6 * GiB));
	do_stat("sp/f");
	do_seek("sp/f", fd, 5 * GiB + 4 * KiB, SEEK_HOLE);
	do_seek("sp/f", fd, 5 * GiB + 4 * KiB, SEEK_DATA);
	result("ftruncate(2 MiB)", "sp/f", ftruncate(fd, 2 * MiB));
	do_stat("sp/f");
	do_seek("sp/f", fd, 0, SEEK_DATA);
	do_seek("sp/f", fd, MiB + 4 * KiB, SEEK_DATA);
	do_pread("sp/f", fd, 4, 5 * GiB);
	do_blocks("sp/f", fd, 64 * KiB);

	/* fallocate */
	fstat(fd, &before);
	result("fallocate(KEEP_SIZE, 2 MiB+1 MiB)", "sp/f", fallocate(fd, FALLOC_FL_KEEP_SIZE, 2 * MiB, MiB));
	fstat(fd, &after);
	line("fallocate(KEEP_SIZE) effect", "sp/f", "size=%lld allocated_grew>=1MiB:%s",
	     (long long)after.st_size, (after.st_blocks - before.st_blocks) * 512 >= MiB ? "yes" : "no");
	do_seek("sp/f", fd, 0, SEEK_END);
	result("fallocate(0, 3 MiB+1 MiB)", "sp/f", fallocate(fd, 0, 3 * MiB, MiB));
	do_stat("sp/f");
	do_pwrite("sp/f", fd, "X", 3 * MiB + 10);
	do_pread("sp/f", fd, 16, 3 * MiB);
	do_seek("sp/f", fd, MiB + 4 * KiB, SEEK_DATA);
	do_seek("sp/f", fd, 3 * MiB, SEEK_HOLE);
	fstat(fd, &before);
	result("fallocate(PUNCH_HOLE|KEEP_SIZE, 1 MiB+4 KiB)", "sp/f",
	       fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, MiB, 4 * KiB));
	fstat(fd, &after);
	line("fallocate(PUNCH_HOLE) effect", "sp/f", "size=%lld allocated_shrank:%s",
	     (long long)after.st_size, after.st_blocks < before.st_blocks ? "yes" : "no");
	do_pread("sp/f", fd, 16, MiB);
	do_seek("sp/f", fd, 0, SEEK_DATA);
	result("fallocate(PUNCH_HOLE) without KEEP_SIZE", "sp/f", fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096));
	result("fallocate(len 0)", "sp/f", fallocate(fd, 0, 0, 0));
	result("fallocate(offset < 0)", "sp/f", fallocate(fd, 0, -1, 4096));
	rfd = open("sp/f", O_RDONLY);
	result("fallocate on O_RDONLY fd", "sp/f", fallocate(rfd, 0, 0, 4096));
	result("ftruncate on O_RDONLY fd", "sp/f", ftruncate(rfd, 0));
	close(rfd);
	/* beyond what the file system can hold */
	do_pwrite("sp/f", fd, "x", 1LL << 50);
	result("ftruncate(1 PiB)", "sp/f", ftruncate(fd, 1LL << 50));
	result("ftruncate(-1)", "sp/f", ftruncate(fd, -1));
	result("truncate(5 GiB) by path", "sp/f", truncate("sp/f", 5 * GiB));
	do_stat("sp/f");
	do_blocks("sp/f", fd, 8 * MiB);
	close(fd);
}

/* fsync and friends: files, directories, read-only descriptors. */
static void sec_fsync(void)
{
	int fd, rfd, dfd;

	do_mkdir("fs", 0755);
	fd = open("fs/f", O_WRONLY | O_CREAT | O_EXCL, 0644);
	do_write("fs/f", fd, "sync me");
	result("fsync", "fs/f", fsync(fd));
	result("fdatasync", "fs/f", fdatasync(fd));
	result("sync_file_range", "fs/f",
	       sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
				       SYNC_FILE_RANGE_WAIT_AFTER));
	result("syncfs", "fs/f", syncfs(fd));
	close(fd);
	rfd = open("fs/f", O_RDONLY);
	result("fsync O_RDONLY", "fs/f", fsync(rfd));
	result("fdatasync O_RDONLY", "fs/f", fdatasync(rfd));
	close(rfd);
	dfd = open("fs", O_RDONLY | O_DIRECTORY);
	result("fsync dir", "fs", fsync(dfd));
	result("fdatasync dir", "fs", fdatasync(dfd));
	close(dfd);
	do_read("fs/f");
	do_stat("fs/f");
}

static void drop_to(uid_t uid)
{
	if (getuid() == uid)
		return;
	const gid_t groups[] = { MEMBER_GID };

	if (setgroups(AWFS_ARRAY_LEN(groups), groups) < 0 || setgid(uid) < 0 || setuid(uid) < 0) {
		perror("awfs-conform: cannot become the requested uid");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: awfs-conform DIR UID\n");
		return 2;
	}
	drop_to((uid_t)atoi(argv[2]));
	if (chdir(argv[1]) < 0) {
		perror("awfs-conform: chdir");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	umask(022);
	line("caller", ".", "uid=%u gid=%u", (unsigned)getuid(), (unsigned)getgid());

	sec_create();
	sec_links();
	sec_dirlinks();
	sec_times();
	sec_sgid();
	sec_sgid_member();
	sec_sticky();
	sec_privs();
	sec_names();
	sec_pathmax();
	sec_rename_open();
	sec_unlinked();
	sec_append();
	sec_sparse();
	sec_fsync();
	return 0;
}
