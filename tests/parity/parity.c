/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * awfs-parity - run a fixed matrix of operations over the parity fixture
 * tree under MOUNTPOINT as UID, and print a canonical transcript: one line
 * per operation, "OP PATH -> OUTCOME", where the outcome is the errno name or
 * OK with a digest of what was read or listed. Nothing in it depends on the
 * runtime (no inode numbers, no times, no statfs figures), so the same
 * policy over the same tree must print the same bytes in a container, behind
 * virtiofsd in a guest, and inside a guest.
 *
 *   awfs-parity MOUNTPOINT UID
 *
 * The fixture is made by tests/parity/fixture.sh; the matrix must match it.
 * Every file the matrix creates it removes again, so a second run over the
 * same tree prints the same transcript.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util.h"

static const char *mnt;

static char *at(const char *rel)
{
	static char buf[2][8192];
	static int k;

	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", mnt, rel);
	return buf[k];
}

/* A printable form of a path for the transcript (spaces and bytes escaped). */
static const char *shown(const char *rel)
{
	static char buf[4][1024];
	static int k;
	char *o;

	k = (k + 1) % 4;
	o = buf[k];
	for (const unsigned char *p = (const unsigned char *)rel; *p && o < buf[k] + 1000; p++) {
		if (*p > 0x20 && *p < 0x7f && *p != '\\')
			*o++ = (char)*p;
		else
			o += sprintf(o, "\\x%02x", *p);
	}
	*o = '\0';
	return buf[k];
}

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

#define FNV0 0xcbf29ce484222325ULL

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
static void result(const char *op, const char *rel, long r)
{
	if (r < 0)
		line(op, rel, "%s", util_errno_name(errno));
	else
		line(op, rel, "OK");
}

static void do_stat(const char *rel)
{
	struct stat st;

	if (lstat(at(rel), &st) < 0) {
		result("lstat", rel, -1);
		return;
	}
	if (S_ISDIR(st.st_mode))
		line("lstat", rel, "dir mode=%04o uid=%u gid=%u", (unsigned)(st.st_mode & 07777),
		     (unsigned)st.st_uid, (unsigned)st.st_gid);
	else
		line("lstat", rel, "%s mode=%04o uid=%u gid=%u size=%lld nlink=%lu",
		     S_ISREG(st.st_mode) ? "file" : S_ISLNK(st.st_mode) ? "link" :
		     S_ISFIFO(st.st_mode) ? "fifo" : "other", (unsigned)(st.st_mode & 07777),
		     (unsigned)st.st_uid, (unsigned)st.st_gid, (long long)st.st_size,
		     (unsigned long)st.st_nlink);
}

static void do_read(const char *rel)
{
	char buf[65536];
	uint64_t h = FNV0;
	size_t total = 0;
	ssize_t n;
	int fd = open(at(rel), O_RDONLY);

	if (fd < 0) {
		result("read", rel, -1);
		return;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		h = fnv(h, buf, (size_t)n);
		total += (size_t)n;
	}
	if (n < 0)
		result("read", rel, -1);
	else
		line("read", rel, "OK len=%zu fnv=%016llx", total, (unsigned long long)h);
	close(fd);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void do_readdir(const char *rel)
{
	DIR *d = opendir(at(rel));
	struct dirent *de;
	char **names = NULL, list[1024] = "";
	size_t n = 0;
	uint64_t h = FNV0;

	if (!d) {
		result("readdir", rel, -1);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		names = util_xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = util_xstrdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		h = fnv(h, names[i], strlen(names[i]) + 1);
		if (strlen(list) + strlen(shown(names[i])) + 2 < sizeof(list))
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "," : "",
				 shown(names[i]));
		free(names[i]);
	}
	free(names);
	line("readdir", rel, "OK n=%zu fnv=%016llx [%s]", n, (unsigned long long)h, list);
}

static void do_readlink(const char *rel)
{
	char buf[4096];
	ssize_t n = readlink(at(rel), buf, sizeof(buf) - 1);

	if (n < 0) {
		result("readlink", rel, -1);
		return;
	}
	buf[n] = '\0';
	line("readlink", rel, "OK %s", shown(buf));
}

static void do_open(const char *rel, const char *how, int flags)
{
	char op[32];
	int fd = open(at(rel), flags, 0644);

	snprintf(op, sizeof(op), "open(%s)", how);
	result(op, rel, fd);
	if (fd >= 0)
		close(fd);
}

static void do_write(const char *rel, const char *data, int flags)
{
	int fd = open(at(rel), O_WRONLY | flags, 0644);
	ssize_t n;

	if (fd < 0) {
		result(flags & O_APPEND ? "append" : "write", rel, -1);
		return;
	}
	n = write(fd, data, strlen(data));
	if (n >= 0 && close(fd) < 0)
		n = -1;
	else if (n < 0)
		close(fd);
	result(flags & O_APPEND ? "append" : "write", rel, n);
}

static void do_xattrs(const char *rel)
{
	char buf[1024];
	ssize_t n;

	result("setxattr user.parity", rel, setxattr(at(rel), "user.parity", "v", 1, 0));
	n = getxattr(at(rel), "user.parity", buf, sizeof(buf));
	if (n < 0)
		result("getxattr user.parity", rel, -1);
	else
		line("getxattr user.parity", rel, "OK %.*s", (int)n, buf);
	n = getxattr(at(rel), "user.tag", buf, sizeof(buf));
	if (n < 0)
		result("getxattr user.tag", rel, -1);
	else
		line("getxattr user.tag", rel, "OK %.*s", (int)n, buf);
	n = listxattr(at(rel), buf, sizeof(buf));
	if (n < 0) {
		result("listxattr", rel, -1);
	} else {
		/* only the user.* names: security.* labels depend on the host */
		char list[1024] = "";

		for (char *p = buf; p < buf + n; p += strlen(p) + 1)
			if (strncmp(p, "user.", 5) == 0)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 list[0] ? "," : "", p);
		line("listxattr", rel, "OK [%s]", list);
	}
	result("removexattr user.parity", rel, removexattr(at(rel), "user.parity"));
}

static void do_rename(const char *a, const char *b, unsigned flags)
{
	char both[2048];

	snprintf(both, sizeof(both), "%s => %s", a, b);
	result(flags == 0 ? "rename" : flags == 1 ? "rename(noreplace)" : "rename(exchange)", both,
	       syscall(SYS_renameat2, AT_FDCWD, at(a), AT_FDCWD, at(b), flags));
}

static void do_link(const char *a, const char *b)
{
	char both[2048];

	snprintf(both, sizeof(both), "%s => %s", a, b);
	result("link", both, link(at(a), at(b)));
}

static void do_symlink(const char *target, const char *rel)
{
	char op[1100];

	snprintf(op, sizeof(op), "symlink(%s)", shown(target));
	result(op, rel, symlink(target, at(rel)));
}

static void do_fd_ops(const char *rel)
{
	int fd = open(at(rel), O_RDWR);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	off_t r;

	if (fd < 0) {
		result("fd-ops", rel, -1);
		return;
	}
	result("fallocate", rel, fallocate(fd, 0, 0, 65536));
	result("fsync", rel, fsync(fd));
	result("fcntl(F_SETLK)", rel, fcntl(fd, F_SETLK, &fl));
	fl.l_type = F_UNLCK;
	result("fcntl(F_UNLCK)", rel, fcntl(fd, F_SETLK, &fl));
	result("flock", rel, flock(fd, LOCK_EX | LOCK_NB));
	result("flock(un)", rel, flock(fd, LOCK_UN));
	result("ftruncate", rel, ftruncate(fd, 1 << 20));
	if (pwrite(fd, "end", 3, (1 << 20) - 3) != 3)
		result("pwrite", rel, -1);
	r = lseek(fd, 0, SEEK_DATA);
	if (r < 0)
		result("lseek(SEEK_DATA)", rel, -1);
	else
		line("lseek(SEEK_DATA)", rel, "OK");
	r = lseek(fd, 0, SEEK_END);
	line("lseek(SEEK_END)", rel, r < 0 ? "%s" : "OK %s", r < 0 ? util_errno_name(errno) :
	     r == (1 << 20) ? "1048576" : "other");
	close(fd);
}

static void do_copy(const char *from, const char *to)
{
	char both[2048];
	int in = open(at(from), O_RDONLY);
	int out = in < 0 ? -1 : open(at(to), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n = -1;

	snprintf(both, sizeof(both), "%s => %s", from, to);
	if (in >= 0 && out >= 0) {
		n = copy_file_range(in, NULL, out, NULL, 1 << 20, 0);
		if (n >= 0)
			line("copy_file_range", both, "OK %zd", n);
	}
	if (n < 0)
		result("copy_file_range", both, -1);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

static void drop_to(uid_t uid)
{
	if (getuid() == uid)
		return;
	if (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0) {
		perror("awfs-parity: cannot become the agent uid");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	static const char *const ro_names[] = {
		"ro/file", "ro/dir", "ro/dir/f", "ro/name with spaces", "ro/caf\xc3\xa9",
		"ro/big", "ro/link-to-secret", "ro/link-to-rw", "ro/link-out",
	};

	if (argc != 3) {
		fprintf(stderr, "usage: awfs-parity MOUNTPOINT UID\n");
		return 2;
	}
	mnt = argv[1];
	drop_to((uid_t)atoi(argv[2]));
	setvbuf(stdout, NULL, _IOLBF, 0);
	umask(022);

	/* ---- what is there */
	do_readdir("");
	do_readdir("ro");
	do_readdir("rw");
	do_readdir("a/b");
	for (size_t i = 0; i < AWFS_ARRAY_LEN(ro_names); i++)
		do_stat(ro_names[i]);
	do_read("ro/file");
	do_read("ro/big");
	do_read("ro/name with spaces");
	do_read("ro/caf\xc3\xa9");
	do_readlink("ro/link-to-secret");
	do_read("ro/link-to-secret");
	do_read("ro/link-to-rw");
	do_read("rootfile");
	do_stat("rootfile");
	do_stat("restricted");

	/* ---- masks at several depths, globs, absent */
	do_stat("secret");
	do_readdir("secret");
	do_read("secret/data");
	do_stat("secret/sub");
	do_read("secret/sub/deep");
	do_stat("a/b/masked");
	do_readdir("a/b/masked");
	do_read("a/b/masked/x");
	do_stat("top.key");
	do_read("top.key");
	do_stat("ghost");
	do_readdir("ghost");
	do_stat("absent.key");
	do_readdir("rw/masked");
	do_read("rw/masked/m");
	do_read("rw/../secret/data");

	/* ---- every write, refused outside allow_write */
	do_open("ro/file", "O_WRONLY", O_WRONLY);
	do_open("ro/file", "O_RDWR", O_RDWR);
	do_open("ro/file", "O_RDONLY|O_TRUNC", O_RDONLY | O_TRUNC);
	do_write("ro/file", "x", O_APPEND);
	do_open("ro/new", "O_CREAT", O_WRONLY | O_CREAT | O_EXCL);
	result("mkdir", "ro/d", mkdir(at("ro/d"), 0755));
	result("mkfifo", "ro/fifo", mkfifo(at("ro/fifo"), 0644));
	do_symlink("x", "ro/s");
	do_link("ro/file", "ro/l");
	result("unlink", "ro/file", unlink(at("ro/file")));
	result("rmdir", "ro/dir", rmdir(at("ro/dir")));
	do_rename("ro/file", "ro/f2", 0);
	result("chmod", "ro/file", chmod(at("ro/file"), 0600));
	result("chown", "ro/file", chown(at("ro/file"), (uid_t)-1, getgid()));
	result("truncate", "ro/file", truncate(at("ro/file"), 0));
	result("utimensat", "ro/file", utimensat(AT_FDCWD, at("ro/file"), NULL, 0));
	do_xattrs("ro/file");
	do_write("rootfile", "x", O_TRUNC);
	do_open("newtop", "O_CREAT", O_WRONLY | O_CREAT | O_EXCL);
	do_open("top.key", "O_WRONLY", O_WRONLY);
	do_open("secret/new", "O_CREAT", O_WRONLY | O_CREAT | O_EXCL);
	result("mkdir", "a/b/masked/d", mkdir(at("a/b/masked/d"), 0755));
	result("rmdir", "secret", rmdir(at("secret")));
	do_write("rw/.git/config", "x", O_TRUNC);
	do_open("rw/.git/hooks", "O_CREAT", O_WRONLY | O_CREAT | O_EXCL);
	do_write("restricted/r", "x", O_TRUNC);

	/* ---- links and renames across classes */
	do_link("ro/file", "rw/stolen");
	do_link("top.key", "rw/stolen");
	do_link("rw/file", "ro/planted");
	do_rename("ro/file", "rw/stolen", 0);
	do_rename("rw/file", "ro/planted", 0);
	do_rename("rw/file", "secret/file", 0);
	do_rename("rw/sub", "rw/.git", 1);
	do_rename("rw/file", "ro/file", 2);
	do_rename("rw", "rw2", 0);

	/* ---- allow_write behaves like the host */
	do_write("rw/new", "hello", O_CREAT | O_TRUNC);
	do_write("rw/new", " world", O_APPEND);
	do_read("rw/new");
	do_stat("rw/new");
	do_open("rw/new", "O_CREAT|O_EXCL", O_WRONLY | O_CREAT | O_EXCL);
	result("chmod", "rw/new", chmod(at("rw/new"), 0600));
	do_stat("rw/new");
	result("truncate", "rw/new", truncate(at("rw/new"), 5));
	do_read("rw/new");
	result("utimensat", "rw/new", utimensat(AT_FDCWD, at("rw/new"), NULL, 0));
	do_xattrs("rw/new");
	do_link("rw/new", "rw/hard");
	do_stat("rw/new");
	result("unlink", "rw/hard", unlink(at("rw/hard")));
	do_stat("rw/new");
	do_rename("rw/new", "rw/renamed", 0);
	do_rename("rw/renamed", "rw/file", 1);
	do_rename("rw/renamed", "rw/file", 2);
	do_read("rw/file");
	do_read("rw/renamed");
	do_rename("rw/renamed", "rw/file", 2);
	do_copy("rw/file", "rw/copy");
	do_read("rw/copy");
	do_fd_ops("rw/copy");
	do_read("rw/copy");
	result("unlink", "rw/copy", unlink(at("rw/copy")));
	result("unlink", "rw/renamed", unlink(at("rw/renamed")));
	result("mkdir", "rw/d", mkdir(at("rw/d"), 0755));
	do_stat("rw/d");
	do_write("rw/d/name with spaces", "s", O_CREAT | O_TRUNC);
	do_write("rw/d/caf\xc3\xa9", "c", O_CREAT | O_TRUNC);
	do_readdir("rw/d");
	result("rmdir", "rw/d", rmdir(at("rw/d")));
	result("unlink", "rw/d/name with spaces", unlink(at("rw/d/name with spaces")));
	result("unlink", "rw/d/caf\xc3\xa9", unlink(at("rw/d/caf\xc3\xa9")));
	result("rmdir", "rw/d", rmdir(at("rw/d")));
	result("mkfifo", "rw/fifo", mkfifo(at("rw/fifo"), 0644));
	do_stat("rw/fifo");
	result("unlink", "rw/fifo", unlink(at("rw/fifo")));
	do_symlink("../secret/data", "rw/to-secret");
	do_readlink("rw/to-secret");
	do_read("rw/to-secret");
	result("unlink", "rw/to-secret", unlink(at("rw/to-secret")));
	do_write("mem-a/new", "m", O_CREAT | O_TRUNC);
	do_read("mem-a/new");
	result("unlink", "mem-a/new", unlink(at("mem-a/new")));
	/* ---- links = "none": what the host would follow after the agent, or block on */
	do_symlink("/proc/self/environ", "mem-a/env");
	do_symlink("../secret/data", "mem-a/gw");
	do_symlink("/etc/hostname", "mem-a/h");
	result("mkfifo", "mem-a/pipe", mkfifo(at("mem-a/pipe"), 0644));
	result("mkfifo", "rw/fifo", mkfifo(at("rw/fifo"), 0644));
	do_rename("rw/fifo", "mem-a/fifo", 0);
	result("unlink", "rw/fifo", unlink(at("rw/fifo")));
	do_readdir("mem-a");
	result("rmdir", "rw", rmdir(at("rw")));
	do_readdir("rw");

	/* ---- files granted to the agent by the host's ACL: the ACL grants, the policy refuses */
	do_stat("granted.log");
	do_read("granted.log");
	do_write("granted.log", "agent\n", O_APPEND);
	do_read("granted.log");
	do_write("granted.log", "LOG\n", O_TRUNC);	/* as it was, for a second run */
	do_read("ro/granted");
	do_write("ro/granted", "x", O_APPEND);
	do_read("rw/root-only");
	do_write("rw/root-only", "x", O_APPEND);

	/* ---- a single file replaced through a temporary beside it, as sed -i and Claude Code's Write do */
	do_write("summary.md.tmp.7.ab", "replaced\n", O_CREAT | O_EXCL);
	do_stat("summary.md.tmp.7.ab");
	do_read("summary.md.tmp.7.ab");
	do_rename("summary.md.tmp.7.ab", "summary.md", 0);
	do_read("summary.md");
	do_stat("summary.md.tmp.7.ab");
	do_write("sedAAAAAA", "left\n", O_CREAT | O_EXCL);
	do_rename("sedAAAAAA", "kept", 0);
	do_rename("sedAAAAAA", "rw/kept", 0);
	result("unlink", "sedAAAAAA", unlink(at("sedAAAAAA")));
	do_stat("sedAAAAAA");
	do_open("notes.md", "O_CREAT", O_WRONLY | O_CREAT | O_EXCL);
	do_readdir("");
	do_write("summary.md", "SUMMARY\n", O_TRUNC);	/* as it was, for a second run */
	return 0;
}
