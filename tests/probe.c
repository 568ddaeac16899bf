/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * awfs-probe - run one file-system operation and print its outcome.
 *
 *   awfs-probe OP ARGS...
 *
 * Prints "OK" (with what was read, escaped, after a colon for reading
 * operations) or the errno name ("EROFS"), and exits 0; exits 2 on a usage
 * error. The integration tests run it as an unprivileged uid and compare the
 * line with what the policy must produce, so an errno is never collapsed.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util.h"

static char out[65536];

static void put_escaped(const char *s, size_t n)
{
	size_t o = strlen(out);

	for (size_t i = 0; i < n && o + 5 < sizeof(out); i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x", c);
	}
	out[o] = '\0';
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names read from a directory stream. */
struct names {
	char **v;
	size_t n;
};

/* Append up to @max more names from @d ("." and ".." only when @dots). */
static void names_read(struct names *l, DIR *d, size_t max, int dots)
{
	struct dirent *de;

	for (size_t got = 0; got < max && (de = readdir(d)) != NULL;) {
		if (!dots && (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")))
			continue;
		l->v = util_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
		l->v[l->n++] = util_xstrdup(de->d_name);
		got++;
	}
}

/* Sort the names; how many are there twice. */
static size_t names_sort(struct names *l)
{
	size_t twice = 0;

	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), cmp_str);
	for (size_t i = 1; i < l->n; i++)
		twice += strcmp(l->v[i - 1], l->v[i]) == 0;
	return twice;
}

static void names_free(struct names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static int fail(void)
{
	int e = errno;

	printf("%s\n", e == ENOTTY ? "ENOTTY" : util_errno_name(e));
	fflush(stdout);	/* the answer stands even if a sanitizer ends the process */
	return 0;
}

static int ok(void)
{
	printf(out[0] ? "OK:%s\n" : "OK\n", out);
	return 0;
}

/*
 * churn DIR N: what a build or fsstress does to a directory, N times over,
 * each round new names: create a file and write it, rename it, stat it;
 * every third round unlink an older one, every fifth link one, every
 * seventh make a directory, create in it, rename it and remove both (awfs
 * never asks the kernel to drop a directory: made by the thousand they
 * would spend a low limit by themselves).
 */
static int churn(const char *dir, long n)
{
	char a[4096], b[4096], c[4096];
	struct stat st;
	const char *what = "";
	long i;

#define STEP(name, call) do { what = (name); if ((call) < 0) goto failed; } while (0)
	for (i = 0; i < n; i++) {
		int fd;

		snprintf(a, sizeof(a), "%s/new.%ld", dir, i);
		snprintf(b, sizeof(b), "%s/file.%ld", dir, i);
		STEP("create", fd = open(a, O_WRONLY | O_CREAT | O_EXCL, 0644));
		STEP("write", write(fd, "churn\n", 6));
		close(fd);
		STEP("rename", rename(a, b));
		STEP("stat", stat(b, &st));
		if (i % 3 == 2) {
			snprintf(c, sizeof(c), "%s/file.%ld", dir, i - 2);
			STEP("unlink", unlink(c));
		}
		if (i % 5 == 4) {
			snprintf(c, sizeof(c), "%s/link.%ld", dir, i);
			STEP("link", link(b, c));
		}
		if (i % 7 == 6) {
			snprintf(a, sizeof(a), "%s/d.%ld", dir, i);
			snprintf(c, sizeof(c), "%s/d.%ld/f", dir, i);
			STEP("mkdir", mkdir(a, 0755));
			STEP("create", fd = open(c, O_WRONLY | O_CREAT | O_EXCL, 0644));
			close(fd);
			snprintf(c, sizeof(c), "%s/dir.%ld", dir, i);
			STEP("rename", rename(a, c));
			snprintf(a, sizeof(a), "%s/dir.%ld/f", dir, i);
			STEP("unlink", unlink(a));
			STEP("rmdir", rmdir(c));
		}
	}
#undef STEP
	snprintf(out, sizeof(out), "%ld", n);
	return ok();
failed:
	printf("%s:%ld:%s\n", what, i, util_errno_name(errno));
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Read a directory to its end (names dropped): the kernel learns its entries. */
static void list_dir(const char *path)
{
	DIR *d = opendir(path);

	if (!d)
		return;
	while (readdir(d))
		;
	closedir(d);
}

static int open_flags(const char *f)
{
	int flags = 0;

	if (strchr(f, 'r') && strchr(f, 'w'))
		flags = O_RDWR;
	else if (strchr(f, 'w'))
		flags = O_WRONLY;
	else
		flags = O_RDONLY;
	if (strchr(f, 't'))
		flags |= O_TRUNC;
	if (strchr(f, 'a'))
		flags |= O_APPEND | (flags == O_RDONLY ? O_WRONLY : 0);
	if (strchr(f, 'c'))
		flags |= O_CREAT;
	if (strchr(f, 'x'))
		flags |= O_EXCL;
	if (strchr(f, 'n'))
		flags |= O_NOFOLLOW;
	if (strchr(f, 'd'))
		flags |= O_DIRECTORY;
	return flags;
}

static int write_all(const char *path, const char *data, int flags)
{
	int fd = open(path, flags, 0644);
	size_t len = strlen(data);

	if (fd < 0)
		return fail();
	if (write(fd, data, len) != (ssize_t)len) {
		int e = errno;

		close(fd);
		errno = e;
		return fail();
	}
	if (close(fd) < 0)
		return fail();
	return ok();
}

/* Read what @fd holds into the output (a directory reads as "dir"). */
static int read_fd(int fd)
{
	char buf[16384];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		put_escaped(buf, (size_t)n);
	if (n < 0 && errno == EISDIR) {
		close(fd);
		snprintf(out, sizeof(out), "dir");
		return ok();
	}
	if (n < 0)
		return fail();
	close(fd);
	return ok();
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/*
 * One call of an operation: the command line as main() got it (argv[1] the
 * operation, argv[2] its first argument) and the operation's @how, which
 * tells apart the operations that share a handler (rename's flags, write's
 * open flags, ...).
 */
struct call {
	int argc;
	char **argv;
	long how;
};

static int usage(void);
static int probe(int argc, char **argv);

static int op_stat(const struct call *c)
{
	struct stat st;

	if ((c->how ? lstat(c->argv[2], &st) : stat(c->argv[2], &st)) < 0)
		return fail();
	snprintf(out, sizeof(out), "type=%s mode=%04o uid=%u gid=%u size=%lld nlink=%lu ino=%llu mtime=%lld",
		 S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "file" :
		 S_ISLNK(st.st_mode) ? "link" : S_ISFIFO(st.st_mode) ? "fifo" : "other",
		 (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)st.st_gid,
		 (long long)st.st_size, (unsigned long)st.st_nlink,
		 (unsigned long long)st.st_ino, (long long)st.st_mtime);
	return ok();
}

static int op_read(const struct call *c)
{
	char buf[16384];
	ssize_t n;
	int fd = open(c->argv[2], O_RDONLY);

	if (fd < 0)
		return fail();
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		put_escaped(buf, (size_t)n);
	if (n < 0)
		return fail();
	close(fd);
	return ok();
}

/*
 * Two listings of DIR at once: A reads 40 names, one of them is unlinked
 * and a name is created, B reads 40, A goes on to the end, then B. Prints
 * how many names A gave, how many of them twice, how many of B's A never
 * gave (the created one aside), and how many B gave, how many twice.
 */
static int op_readdir_two(const struct call *c)
{
	static const char made[] = "zz-made-during-the-listings";
	DIR *a = opendir(c->argv[2]), *b;
	struct names seen = { 0 }, other = { 0 };
	char path[PATH_MAX];
	size_t dups, bdups, missed = 0;
	int fd;

	if (!a)
		return fail();
	names_read(&seen, a, 40, 1);
	for (size_t i = 0; i < seen.n; i++) {
		if (strcmp(seen.v[i], ".") && strcmp(seen.v[i], "..")) {
			snprintf(path, sizeof(path), "%s/%s", c->argv[2], seen.v[i]);
			break;
		}
	}
	if (unlink(path) < 0)
		return fail();
	snprintf(path, sizeof(path), "%s/%s", c->argv[2], made);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail();
	close(fd);
	b = opendir(c->argv[2]);
	if (!b)
		return fail();
	names_read(&other, b, 40, 1);
	names_read(&seen, a, SIZE_MAX, 1);
	closedir(a);
	names_read(&other, b, SIZE_MAX, 1);
	closedir(b);
	dups = names_sort(&seen);
	bdups = names_sort(&other);
	for (size_t i = 0; i < other.n; i++)
		missed += strcmp(other.v[i], made) &&
			  !bsearch(&other.v[i], seen.v, seen.n, sizeof(*seen.v), cmp_str);
	snprintf(out, sizeof(out), "A=%zu twice=%zu missed=%zu B=%zu twice=%zu", seen.n, dups,
		 missed, other.n, bdups);
	names_free(&seen);
	names_free(&other);
	return ok();
}

static int op_readdir(const struct call *c)
{
	DIR *d = opendir(c->argv[2]);
	struct names names = { 0 };

	if (!d)
		return fail();
	errno = 0;
	names_read(&names, d, SIZE_MAX, 0);
	if (errno) {
		int e = errno;

		names_free(&names);
		closedir(d);
		errno = e;
		return fail();
	}
	closedir(d);
	names_sort(&names);
	for (size_t i = 0; i < names.n; i++) {
		if (i)
			strncat(out, ",", sizeof(out) - strlen(out) - 1);
		put_escaped(names.v[i], strlen(names.v[i]));
	}
	names_free(&names);
	return ok();
}

static int op_readlink(const struct call *c)
{
	char buf[4096];
	ssize_t n = readlink(c->argv[2], buf, sizeof(buf));

	if (n < 0)
		return fail();
	put_escaped(buf, (size_t)n);
	return ok();
}

static int op_open(const struct call *c)
{
	int fd = open(c->argv[2], open_flags(c->argv[3]), 0644);

	if (fd < 0)
		return fail();
	close(fd);
	return ok();
}

/* write, append, fd-write: @how is the open flags */
static int op_write(const struct call *c)
{
	return write_all(c->argv[2], c->argv[3], (int)c->how);
}

static int op_create(const struct call *c)
{
	int fd = open(c->argv[2], O_WRONLY | O_CREAT | O_EXCL, 0644);

	if (fd < 0)
		return fail();
	close(fd);
	return ok();
}

static int op_mkdir(const struct call *c)
{
	return mkdir(c->argv[2], 0755) < 0 ? fail() : ok();
}

static int op_rmdir(const struct call *c)
{
	return rmdir(c->argv[2]) < 0 ? fail() : ok();
}

static int op_unlink(const struct call *c)
{
	return unlink(c->argv[2]) < 0 ? fail() : ok();
}

static int op_mkfifo(const struct call *c)
{
	return mkfifo(c->argv[2], 0644) < 0 ? fail() : ok();
}

static int op_symlink(const struct call *c)
{
	return symlink(c->argv[2], c->argv[3]) < 0 ? fail() : ok();
}

static int op_churn(const struct call *c)
{
	return churn(c->argv[2], atol(c->argv[3]));
}

static int op_link(const struct call *c)
{
	return link(c->argv[2], c->argv[3]) < 0 ? fail() : ok();
}

/* rename and its variants: @how is renameat2's flags */
static int op_rename(const struct call *c)
{
	return syscall(SYS_renameat2, AT_FDCWD, c->argv[2], AT_FDCWD, c->argv[3], (unsigned)c->how) < 0 ?
		       fail() : ok();
}

static int op_held_chmod(const struct call *c)
{
	char proc[64];
	int pfd = open(c->argv[2], O_PATH | O_CLOEXEC);

	if (pfd < 0)
		return fail();
	fputs("held\n", stderr);
	while (access(c->argv[4], F_OK) != 0)
		usleep(10000);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	return chmod(proc, (mode_t)strtoul(c->argv[3], NULL, 8)) < 0 ? fail() : ok();
}

static int op_chmod(const struct call *c)
{
	return chmod(c->argv[2], (mode_t)strtoul(c->argv[3], NULL, 8)) < 0 ? fail() : ok();
}

static int op_chown(const struct call *c)
{
	return chown(c->argv[2], (uid_t)atoi(c->argv[3]), (gid_t)atoi(c->argv[4])) < 0 ? fail() : ok();
}

static int op_truncate(const struct call *c)
{
	return truncate(c->argv[2], atoll(c->argv[3])) < 0 ? fail() : ok();
}

static int op_utimens(const struct call *c)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };

	ts[1].tv_sec = atoll(c->argv[3]);
	return utimensat(AT_FDCWD, c->argv[2], ts, AT_SYMLINK_NOFOLLOW) < 0 ? fail() : ok();
}

static int op_utime_now(const struct call *c)
{
	return utimensat(AT_FDCWD, c->argv[2], NULL, 0) < 0 ? fail() : ok();
}

static int op_setxattr(const struct call *c)
{
	return setxattr(c->argv[2], c->argv[3], c->argv[4], strlen(c->argv[4]), 0) < 0 ? fail() : ok();
}

static int op_getxattr(const struct call *c)
{
	char buf[4096];
	ssize_t n = getxattr(c->argv[2], c->argv[3], buf, sizeof(buf));

	if (n < 0)
		return fail();
	put_escaped(buf, (size_t)n);
	return ok();
}

static int op_listxattr(const struct call *c)
{
	char buf[4096];
	ssize_t n = listxattr(c->argv[2], buf, sizeof(buf));

	if (n < 0)
		return fail();
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ',';
	put_escaped(buf, (size_t)(n > 0 ? n - 1 : 0));
	return ok();
}

static int op_removexattr(const struct call *c)
{
	return removexattr(c->argv[2], c->argv[3]) < 0 ? fail() : ok();
}

static int op_fallocate(const struct call *c)
{
	int fd = open(c->argv[2], O_WRONLY);

	if (fd < 0)
		return fail();
	if (fallocate(fd, 0, 0, atoll(c->argv[3])) < 0)
		return fail();
	close(fd);
	return ok();
}

/* copy, copy-over: @how is the open flags of the file copied into */
static int op_copy(const struct call *c)
{
	ssize_t n;
	int fd, in = open(c->argv[2], O_RDONLY);

	if (in < 0)
		return fail();
	fd = open(c->argv[3], (int)c->how, 0644);
	if (fd < 0)
		return fail();
	n = copy_file_range(in, NULL, fd, NULL, 1 << 20, 0);
	if (n < 0)
		return fail();
	snprintf(out, sizeof(out), "%zd", n);
	return ok();
}

/* seek-data, seek-hole: @how is lseek's whence */
static int op_seek(const struct call *c)
{
	off_t r;
	int fd = open(c->argv[2], O_RDONLY);

	if (fd < 0)
		return fail();
	r = lseek(fd, atoll(c->argv[3]), (int)c->how);
	if (r < 0)
		return fail();
	snprintf(out, sizeof(out), "%lld", (long long)r);
	return ok();
}

static int op_fsync(const struct call *c)
{
	int fd = open(c->argv[2], O_RDONLY);

	if (fd < 0 || fsync(fd) < 0)
		return fail();
	return ok();
}

static int op_lock(const struct call *c)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd = open(c->argv[2], O_RDWR);

	if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0)
		return fail();
	fl.l_type = F_UNLCK;
	if (fcntl(fd, F_SETLK, &fl) < 0)
		return fail();
	return ok();
}

static int op_flock(const struct call *c)
{
	int fd = open(c->argv[2], O_RDONLY);

	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || flock(fd, LOCK_UN) < 0)
		return fail();
	return ok();
}

static int op_mmap_write(const struct call *c)
{
	char *p;
	int fd = open(c->argv[2], O_RDONLY);

	if (fd < 0)
		return fail();
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return fail();
	munmap(p, 4096);
	return ok();
}

static int op_statfs(const struct call *c)
{
	struct statvfs sv;

	return statvfs(c->argv[2], &sv) < 0 ? fail() : ok();
}

static int op_tmpfile(const struct call *c)
{
	char p[64];
	int fd = open(c->argv[2], O_TMPFILE | O_RDWR, 0600);

	if (fd < 0)
		return fail();
	if (write(fd, "TMP", 3) != 3)
		return fail();
	if (c->argc > 3) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		if (linkat(AT_FDCWD, p, AT_FDCWD, c->argv[3], AT_SYMLINK_FOLLOW) < 0)
			return fail();
	}
	close(fd);
	return ok();
}

static int op_name_to_handle(const struct call *c)
{
	struct file_handle *fh = calloc(1, sizeof(*fh) + MAX_HANDLE_SZ);
	int mount_id, o;

	if (!fh)
		return 2;
	fh->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, c->argv[2], fh, &mount_id, 0) < 0)
		return fail();
	o = snprintf(out, sizeof(out), "%d:", fh->handle_type);
	for (unsigned i = 0; i < fh->handle_bytes; i++)
		o += snprintf(out + o, sizeof(out) - (size_t)o, "%02x", fh->f_handle[i]);
	free(fh);
	return ok();
}

static int op_open_by_handle(const struct call *c)
{
	struct file_handle *fh = calloc(1, sizeof(*fh) + MAX_HANDLE_SZ);
	const char *hex;
	int fd, mfd, n = 0;

	if (!fh)
		return 2;
	fh->handle_type = atoi(c->argv[3]);
	hex = strchr(c->argv[3], ':');
	if (!hex)
		return usage();
	for (hex++; hex[0] && hex[1] && n < MAX_HANDLE_SZ; hex += 2) {
		if (hexval(hex[0]) < 0 || hexval(hex[1]) < 0)
			return usage();
		fh->f_handle[n++] = (unsigned char)(hexval(hex[0]) << 4 | hexval(hex[1]));
	}
	fh->handle_bytes = (unsigned)n;
	mfd = open(c->argv[2], O_RDONLY | O_DIRECTORY);
	if (mfd < 0)
		return fail();
	fd = open_by_handle_at(mfd, fh, c->argc > 4 ? open_flags(c->argv[4]) : O_RDONLY);
	free(fh);
	if (fd < 0)
		return fail();
	return c->argc > 4 && (open_flags(c->argv[4]) & O_ACCMODE) != O_RDONLY ? ok() : read_fd(fd);
}

static int op_mknod(const struct call *c)
{
	mode_t type;

	switch (c->argv[3][0]) {
	case 'c': type = S_IFCHR; break;
	case 'b': type = S_IFBLK; break;
	case 'p': type = S_IFIFO; break;
	case 's': type = S_IFSOCK; break;
	default: return usage();
	}
	return mknod(c->argv[2], type | 0644,
		     c->argc > 5 ? makedev(atoi(c->argv[4]), atoi(c->argv[5])) : 0) < 0 ? fail() : ok();
}

static int op_bind(const struct call *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *name = c->argv[2];
	char *slash;
	int fd;

	if (strlen(name) >= sizeof(sa.sun_path)) {
		/* a long path: bind the last component from inside its directory */
		slash = strrchr(c->argv[2], '/');
		if (!slash)
			return usage();
		*slash = '\0';
		if (chdir(c->argv[2]) < 0)
			return fail();
		name = slash + 1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", name);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return fail();
	close(fd);
	return ok();
}

/* a minimal ACL that grants rwx to all: u::rwx,g::rwx,o::rwx */
static int op_setacl(const struct call *c)
{
	unsigned char acl[4 + 3 * 8] = { 2, 0, 0, 0 };
	static const unsigned char tags[3] = { 0x01, 0x04, 0x20 };

	for (int i = 0; i < 3; i++) {
		unsigned char *e = acl + 4 + 8 * i;

		e[0] = tags[i];
		e[2] = 7;
		memset(e + 4, 0xff, 4);
	}
	return setxattr(c->argv[2], c->argv[3], acl, sizeof(acl), 0) < 0 ? fail() : ok();
}

/* descend by relative chdir: the absolute path may exceed PATH_MAX */
static int op_deep(const struct call *c)
{
	char name[201];
	int n = atoi(c->argv[3]);

	memset(name, 'd', 200);
	name[200] = '\0';
	if (chdir(c->argv[2]) < 0)
		return fail();
	for (int i = 0; i < n; i++)
		if ((mkdir(name, 0755) < 0 && errno != EEXIST) || chdir(name) < 0)
			return fail();
	return probe(c->argc - 3, c->argv + 3);
}

/* a valid VFS_CAP_REVISION_2 value: effective, permitted CAP_SYS_ADMIN */
static int op_setcap(const struct call *c)
{
	unsigned char cap[20] = { 0x01, 0x00, 0x00, 0x02, 0x00, 0x00, 0x20, 0x00 };

	return setxattr(c->argv[2], "security.capability", cap, sizeof(cap), 0) < 0 ? fail() : ok();
}

static int op_link_follow(const struct call *c)
{
	return linkat(AT_FDCWD, c->argv[2], AT_FDCWD, c->argv[3], AT_SYMLINK_FOLLOW) < 0 ? fail() : ok();
}

static int op_fd_link(const struct call *c)
{
	char p[64];
	int fd = open(c->argv[2], O_PATH);

	if (fd < 0)
		return fail();
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, p, AT_FDCWD, c->argv[3], AT_SYMLINK_FOLLOW) < 0 ? fail() : ok();
}

static int op_clone(const struct call *c)
{
	int fd, in = open(c->argv[2], O_RDONLY);

	if (in < 0)
		return fail();
	fd = open(c->argv[3], O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return fail();
	return ioctl(fd, FICLONE, in) < 0 ? fail() : ok();
}

static int op_setflags(const struct call *c)
{
	int flags = (int)strtoul(c->argv[3], NULL, 16);
	int fd = open(c->argv[2], O_RDONLY | O_NONBLOCK);

	if (fd < 0 || ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0)
		return fail();
	return ok();
}

static int op_umount(const struct call *c)
{
	return umount2(c->argv[2], MNT_DETACH) < 0 ? fail() : ok();
}

static int op_lsetxattr(const struct call *c)
{
	return lsetxattr(c->argv[2], c->argv[3], c->argv[4], strlen(c->argv[4]), 0) < 0 ? fail() : ok();
}

static int op_mmap_read(const struct call *c)
{
	struct stat st;
	char *p;
	int fd = open(c->argv[2], O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0)
		return fail();
	if (st.st_size == 0)
		return ok();
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return fail();
	put_escaped(p, (size_t)st.st_size);
	munmap(p, (size_t)st.st_size);
	return ok();
}

static int op_mprotect_write(const struct call *c)
{
	char *p;
	int fd = open(c->argv[2], O_RDONLY);

	if (fd < 0)
		return fail();
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || mprotect(p, 4096, PROT_READ | PROT_WRITE) < 0)
		return fail();
	munmap(p, 4096);
	return ok();
}

/*
 * A directory view held across a rename between rules: make the directory
 * FROM, hold it open, rename it to TO, list TO's parent, ask the old view
 * for NAME (absent: the kernel caches a negative entry), put VICTIM there (a
 * path renamed to TO/NAME, or "fifo": mkfifo), then open NAME through the
 * old view with FLAGS and O_CREAT. A blocked open gives up after SECONDS
 * (default 3: EINTR).
 */
static int op_stale_view(const struct call *c)
{
	char **argv = c->argv;
	char at[4096], parent[4096];
	struct sigaction sa = { .sa_handler = on_alarm };
	int fd, x, flags;

	snprintf(at, sizeof(at), "%s/%s", argv[3], argv[4]);
	snprintf(parent, sizeof(parent), "%s/..", argv[3]);
	if (mkdir(argv[2], 0755) < 0 || (x = open(argv[2], O_RDONLY | O_DIRECTORY)) < 0 ||
	    rename(argv[2], argv[3]) < 0)
		return fail();
	list_dir(parent);
	if (faccessat(x, argv[4], F_OK, 0) == 0 || errno != ENOENT) {
		printf("EXISTS\n");
		return 0;
	}
	if (strcmp(argv[5], "fifo") == 0 ? mkfifo(at, 0666) < 0 : rename(argv[5], at) < 0)
		return fail();
	flags = open_flags(argv[6]) | O_CREAT;
	sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART: the open returns EINTR */
	alarm(c->argc > 7 ? (unsigned)atoi(argv[7]) : 3);
	fd = openat(x, argv[4], flags, 0644);
	alarm(0);
	if (fd < 0)
		return fail();
	return (flags & O_ACCMODE) != O_WRONLY ? read_fd(fd) : ok();
}

static int op_reopen(const struct call *c)
{
	char p[64];
	int fd, flags, pfd = open(c->argv[2], O_PATH);

	if (pfd < 0)
		return fail();
	snprintf(p, sizeof(p), "/proc/self/fd/%d", pfd);
	flags = open_flags(c->argv[3]);
	fd = open(p, flags, 0644);
	if (fd < 0)
		return fail();
	return (flags & O_ACCMODE) == O_RDONLY ? read_fd(fd) : ok();
}

/*
 * The operations: the name on the command line, the arguments as the usage
 * text shows them, how many of them it needs (fewer: a usage error), the
 * handler and its @how. The one list both main() and usage() read.
 */
static const struct probe_op {
	const char *name;
	const char *args;
	int need;
	int (*run)(const struct call *c);
	long how;
} ops[] = {
	{ "stat", "PATH", 1, op_stat, 0 },
	{ "lstat", "PATH", 1, op_stat, 1 },
	{ "read", "PATH", 1, op_read, 0 },
	{ "readdir", "PATH", 1, op_readdir, 0 },
	{ "readdir-two", "DIR (two listings at once, DIR changed between)", 1, op_readdir_two, 0 },
	{ "readlink", "PATH", 1, op_readlink, 0 },
	{ "open", "PATH FLAGS (r,w,rw,t,a,c,x,n,d)", 2, op_open, 0 },
	{ "write", "PATH DATA", 2, op_write, O_WRONLY | O_CREAT | O_TRUNC },
	{ "append", "PATH DATA", 2, op_write, O_WRONLY | O_CREAT | O_APPEND },
	{ "fd-write", "PATH DATA (open rw, then write)", 2, op_write, O_RDWR },
	{ "create", "PATH", 1, op_create, 0 },
	{ "mkdir", "PATH", 1, op_mkdir, 0 },
	{ "rmdir", "PATH", 1, op_rmdir, 0 },
	{ "unlink", "PATH", 1, op_unlink, 0 },
	{ "mkfifo", "PATH", 1, op_mkfifo, 0 },
	{ "symlink", "TARGET PATH", 2, op_symlink, 0 },
	{ "link", "OLD NEW", 2, op_link, 0 },
	{ "link-follow", "OLD NEW", 2, op_link_follow, 0 },
	{ "fd-link", "PATH NEW (O_PATH, linkat of /proc/self/fd/N)", 2, op_fd_link, 0 },
	{ "rename", "OLD NEW", 2, op_rename, 0 },
	{ "rename-noreplace", "OLD NEW", 2, op_rename, RENAME_NOREPLACE },
	{ "rename-exchange", "OLD NEW", 2, op_rename, RENAME_EXCHANGE },
	{ "rename-whiteout", "OLD NEW", 2, op_rename, RENAME_WHITEOUT },
	{ "chmod", "PATH OCTAL", 2, op_chmod, 0 },
	{ "held-chmod", "PATH MODE GO (O_PATH held; \"held\" on stderr; once the file GO\n"
	  "exists, chmod through /proc/self/fd/N)", 3, op_held_chmod, 0 },
	{ "chown", "PATH UID GID", 3, op_chown, 0 },
	{ "truncate", "PATH SIZE", 2, op_truncate, 0 },
	{ "utimens", "PATH SEC", 2, op_utimens, 0 },
	{ "utime-now", "PATH", 1, op_utime_now, 0 },
	{ "setxattr", "PATH NAME VALUE", 3, op_setxattr, 0 },
	{ "lsetxattr", "PATH NAME VALUE", 3, op_lsetxattr, 0 },
	{ "getxattr", "PATH NAME", 2, op_getxattr, 0 },
	{ "listxattr", "PATH", 1, op_listxattr, 0 },
	{ "removexattr", "PATH NAME", 2, op_removexattr, 0 },
	{ "setacl", "PATH ACLNAME (u::rwx,g::rwx,o::rwx)", 2, op_setacl, 0 },
	{ "setcap", "PATH (security.capability)", 1, op_setcap, 0 },
	{ "fallocate", "PATH LEN", 2, op_fallocate, 0 },
	{ "copy", "PATH_IN PATH_OUT", 2, op_copy, O_WRONLY | O_CREAT | O_TRUNC },
	{ "copy-over", "PATH_IN PATH_OUT (into the file as it is, no O_TRUNC)", 2, op_copy, O_WRONLY },
	{ "clone", "SRC DST (FICLONE)", 2, op_clone, 0 },
	{ "seek-data", "PATH OFF", 2, op_seek, SEEK_DATA },
	{ "seek-hole", "PATH OFF", 2, op_seek, SEEK_HOLE },
	{ "fsync", "PATH", 1, op_fsync, 0 },
	{ "lock", "PATH", 1, op_lock, 0 },
	{ "flock", "PATH", 1, op_flock, 0 },
	{ "mmap-write", "PATH", 1, op_mmap_write, 0 },
	{ "mmap-read", "PATH", 1, op_mmap_read, 0 },
	{ "mprotect-write", "PATH", 1, op_mprotect_write, 0 },
	{ "statfs", "PATH", 1, op_statfs, 0 },
	{ "tmpfile", "DIR [LINKPATH] (O_TMPFILE, then linkat through /proc/self/fd)", 1, op_tmpfile, 0 },
	{ "name-to-handle", "PATH (prints TYPE:HEX)", 1, op_name_to_handle, 0 },
	{ "open-by-handle", "MOUNTDIR TYPE:HEX [FLAGS] (reads what it opens)", 2, op_open_by_handle, 0 },
	{ "reopen", "PATH FLAGS (via /proc/self/fd)", 2, op_reopen, 0 },
	{ "mknod", "PATH c|b|p|s [MAJOR MINOR]", 2, op_mknod, 0 },
	{ "bind", "PATH (AF_UNIX socket)", 1, op_bind, 0 },
	{ "umount", "PATH (umount2 MNT_DETACH)", 1, op_umount, 0 },
	{ "setflags", "PATH HEX (FS_IOC_SETFLAGS, e.g. 40000000 casefold)", 2, op_setflags, 0 },
	{ "stale-view", "FROM TO NAME VICTIM|fifo FLAGS [SECONDS] (a directory\n"
	  "FROM held open across its rename to TO, then O_CREAT\n"
	  "of NAME through it)", 5, op_stale_view, 0 },
	{ "deep", "DIR N OP ARGS... (OP run N levels of 200-byte\n"
	  "directories below DIR, made as needed)", 3, op_deep, 0 },
	{ "churn", "DIR N (N rounds in DIR: create, rename, stat, and a link, an\n"
	  "unlink, a directory made, filled, renamed, removed;\n"
	  "OK:N or the first failure as OP:ROUND:ERRNO)", 2, op_churn, 0 },
};

/* The usage text, from the table: each operation, its arguments after it. */
static int usage(void)
{
	fputs("usage: awfs-probe OP ARGS...\n", stderr);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const char *s = ops[i].args;
		size_t n;

		fprintf(stderr, "  %-16s ", ops[i].name);
		/* a continued line goes on under the arguments */
		while (s[n = strcspn(s, "\n")]) {
			fprintf(stderr, "%.*s\n%21s", (int)n, s, "");
			s += n + 1;
		}
		fprintf(stderr, "%s\n", s);
	}
	return 2;
}

/* Run the operation argv[1] with its arguments from argv[2]; a usage error is 2. */
static int probe(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const struct probe_op *op = &ops[i];
		struct call c = { argc, argv, op->how };

		if (strcmp(op->name, argv[1]))
			continue;
		if (argc < op->need + 2)
			return usage();
		return op->run(&c);
	}
	return usage();
}

int main(int argc, char **argv)
{
	return probe(argc, argv);
}
