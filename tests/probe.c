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
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

static int fail(void)
{
	int e = errno;

	printf("%s\n", util_errno_name(e));
	return 0;
}

static int ok(void)
{
	printf(out[0] ? "OK:%s\n" : "OK\n", out);
	return 0;
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

static int usage(void)
{
	fputs("usage: awfs-probe OP ARGS...\n"
	      "  stat|lstat PATH            read PATH            readdir PATH\n"
	      "  readlink PATH              open PATH FLAGS(r,w,rw,t,a,c,x,n,d)\n"
	      "  write|append PATH DATA     create PATH          mkdir|rmdir|unlink PATH\n"
	      "  mkfifo PATH                symlink TARGET PATH  link OLD NEW\n"
	      "  rename|rename-noreplace|rename-exchange OLD NEW\n"
	      "  chmod PATH OCTAL           chown PATH UID GID   truncate PATH SIZE\n"
	      "  utimens PATH SEC           utime-now PATH\n"
	      "  setxattr PATH NAME VALUE   getxattr PATH NAME   listxattr PATH\n"
	      "  removexattr PATH NAME      fallocate PATH LEN   copy PATH_IN PATH_OUT\n"
	      "  seek-data PATH OFF         seek-hole PATH OFF   fsync PATH\n"
	      "  lock PATH                  flock PATH           mmap-write PATH\n"
	      "  statfs PATH                fd-write PATH DATA (open rw, then write)\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const char *op;
	struct stat st;
	int fd;

	if (argc < 3)
		return usage();
	op = argv[1];
#define NEED(n) do { if (argc < (n) + 2) return usage(); } while (0)
	if (!strcmp(op, "stat") || !strcmp(op, "lstat")) {
		if ((!strcmp(op, "stat") ? stat(argv[2], &st) : lstat(argv[2], &st)) < 0)
			return fail();
		snprintf(out, sizeof(out), "type=%s mode=%04o uid=%u gid=%u size=%lld nlink=%lu ino=%llu mtime=%lld",
			 S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "file" :
			 S_ISLNK(st.st_mode) ? "link" : S_ISFIFO(st.st_mode) ? "fifo" : "other",
			 (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)st.st_gid,
			 (long long)st.st_size, (unsigned long)st.st_nlink,
			 (unsigned long long)st.st_ino, (long long)st.st_mtime);
		return ok();
	}
	if (!strcmp(op, "read")) {
		char buf[16384];
		ssize_t n;

		fd = open(argv[2], O_RDONLY);
		if (fd < 0)
			return fail();
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			put_escaped(buf, (size_t)n);
		if (n < 0)
			return fail();
		close(fd);
		return ok();
	}
	if (!strcmp(op, "readdir")) {
		DIR *d = opendir(argv[2]);
		struct dirent *de;
		char **names = NULL;
		size_t n = 0;

		if (!d)
			return fail();
		errno = 0;
		while ((de = readdir(d)) != NULL) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			names = util_xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = util_xstrdup(de->d_name);
		}
		if (errno)
			return fail();
		closedir(d);
		if (n)
			qsort(names, n, sizeof(*names), cmp_str);
		for (size_t i = 0; i < n; i++) {
			if (i)
				strncat(out, ",", sizeof(out) - strlen(out) - 1);
			put_escaped(names[i], strlen(names[i]));
			free(names[i]);
		}
		free(names);
		return ok();
	}
	if (!strcmp(op, "readlink")) {
		char buf[4096];
		ssize_t n = readlink(argv[2], buf, sizeof(buf));

		if (n < 0)
			return fail();
		put_escaped(buf, (size_t)n);
		return ok();
	}
	if (!strcmp(op, "open")) {
		NEED(2);
		fd = open(argv[2], open_flags(argv[3]), 0644);
		if (fd < 0)
			return fail();
		close(fd);
		return ok();
	}
	if (!strcmp(op, "write")) {
		NEED(2);
		return write_all(argv[2], argv[3], O_WRONLY | O_CREAT | O_TRUNC);
	}
	if (!strcmp(op, "append")) {
		NEED(2);
		return write_all(argv[2], argv[3], O_WRONLY | O_CREAT | O_APPEND);
	}
	if (!strcmp(op, "fd-write")) {
		NEED(2);
		return write_all(argv[2], argv[3], O_RDWR);
	}
	if (!strcmp(op, "create")) {
		fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			return fail();
		close(fd);
		return ok();
	}
	if (!strcmp(op, "mkdir"))
		return mkdir(argv[2], 0755) < 0 ? fail() : ok();
	if (!strcmp(op, "rmdir"))
		return rmdir(argv[2]) < 0 ? fail() : ok();
	if (!strcmp(op, "unlink"))
		return unlink(argv[2]) < 0 ? fail() : ok();
	if (!strcmp(op, "mkfifo"))
		return mkfifo(argv[2], 0644) < 0 ? fail() : ok();
	if (!strcmp(op, "symlink")) {
		NEED(2);
		return symlink(argv[2], argv[3]) < 0 ? fail() : ok();
	}
	if (!strcmp(op, "link")) {
		NEED(2);
		return link(argv[2], argv[3]) < 0 ? fail() : ok();
	}
	if (!strcmp(op, "rename") || !strcmp(op, "rename-noreplace") || !strcmp(op, "rename-exchange")) {
		unsigned flags = !strcmp(op, "rename") ? 0 :
				 !strcmp(op, "rename-noreplace") ? 1 /* RENAME_NOREPLACE */ : 2;

		NEED(2);
		return syscall(SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD, argv[3], flags) < 0 ?
			       fail() : ok();
	}
	if (!strcmp(op, "chmod")) {
		NEED(2);
		return chmod(argv[2], (mode_t)strtoul(argv[3], NULL, 8)) < 0 ? fail() : ok();
	}
	if (!strcmp(op, "chown")) {
		NEED(3);
		return chown(argv[2], (uid_t)atoi(argv[3]), (gid_t)atoi(argv[4])) < 0 ? fail() : ok();
	}
	if (!strcmp(op, "truncate")) {
		NEED(2);
		return truncate(argv[2], atoll(argv[3])) < 0 ? fail() : ok();
	}
	if (!strcmp(op, "utimens")) {
		struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };

		NEED(2);
		ts[1].tv_sec = atoll(argv[3]);
		return utimensat(AT_FDCWD, argv[2], ts, AT_SYMLINK_NOFOLLOW) < 0 ? fail() : ok();
	}
	if (!strcmp(op, "utime-now"))
		return utimensat(AT_FDCWD, argv[2], NULL, 0) < 0 ? fail() : ok();
	if (!strcmp(op, "setxattr")) {
		NEED(3);
		return setxattr(argv[2], argv[3], argv[4], strlen(argv[4]), 0) < 0 ? fail() : ok();
	}
	if (!strcmp(op, "getxattr")) {
		char buf[4096];
		ssize_t n;

		NEED(2);
		n = getxattr(argv[2], argv[3], buf, sizeof(buf));
		if (n < 0)
			return fail();
		put_escaped(buf, (size_t)n);
		return ok();
	}
	if (!strcmp(op, "listxattr")) {
		char buf[4096];
		ssize_t n = listxattr(argv[2], buf, sizeof(buf));

		if (n < 0)
			return fail();
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ',';
		put_escaped(buf, (size_t)(n > 0 ? n - 1 : 0));
		return ok();
	}
	if (!strcmp(op, "removexattr")) {
		NEED(2);
		return removexattr(argv[2], argv[3]) < 0 ? fail() : ok();
	}
	if (!strcmp(op, "fallocate")) {
		NEED(2);
		fd = open(argv[2], O_WRONLY);
		if (fd < 0)
			return fail();
		if (fallocate(fd, 0, 0, atoll(argv[3])) < 0)
			return fail();
		close(fd);
		return ok();
	}
	if (!strcmp(op, "copy")) {
		int in;
		ssize_t n;

		NEED(2);
		in = open(argv[2], O_RDONLY);
		if (in < 0)
			return fail();
		fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return fail();
		n = copy_file_range(in, NULL, fd, NULL, 1 << 20, 0);
		if (n < 0)
			return fail();
		snprintf(out, sizeof(out), "%zd", n);
		return ok();
	}
	if (!strcmp(op, "seek-data") || !strcmp(op, "seek-hole")) {
		off_t r;

		NEED(2);
		fd = open(argv[2], O_RDONLY);
		if (fd < 0)
			return fail();
		r = lseek(fd, atoll(argv[3]), !strcmp(op, "seek-data") ? SEEK_DATA : SEEK_HOLE);
		if (r < 0)
			return fail();
		snprintf(out, sizeof(out), "%lld", (long long)r);
		return ok();
	}
	if (!strcmp(op, "fsync")) {
		fd = open(argv[2], O_RDONLY);
		if (fd < 0 || fsync(fd) < 0)
			return fail();
		return ok();
	}
	if (!strcmp(op, "lock")) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

		fd = open(argv[2], O_RDWR);
		if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0)
			return fail();
		fl.l_type = F_UNLCK;
		if (fcntl(fd, F_SETLK, &fl) < 0)
			return fail();
		return ok();
	}
	if (!strcmp(op, "flock")) {
		fd = open(argv[2], O_RDONLY);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || flock(fd, LOCK_UN) < 0)
			return fail();
		return ok();
	}
	if (!strcmp(op, "mmap-write")) {
		char *p;

		fd = open(argv[2], O_RDONLY);
		if (fd < 0)
			return fail();
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return fail();
		munmap(p, 4096);
		return ok();
	}
	if (!strcmp(op, "statfs")) {
		struct statvfs sv;

		if (statvfs(argv[2], &sv) < 0)
			return fail();
		return ok();
	}
	return usage();
}
