/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util.c - checked allocation, message lists and errno names.
 */
#include "util.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void oom(void)
{
	/* Aborting is the fail-closed outcome: the mount stays and is dead. */
	fputs("awfs: out of memory\n", stderr);
	abort();
}

void *util_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom();
	return p;
}

void *util_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom();
	return p;
}

void *util_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *util_xstrdup(const char *s)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		oom();
	return d;
}

char *util_xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	return s;
}

void util_str_put(struct util_str *b, const char *text, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = util_xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, text, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void util_str_join(struct util_str *b, const char *sep, const char *text)
{
	if (b->len)
		util_str_put(b, sep, strlen(sep));
	util_str_put(b, text, strlen(text));
}

char *util_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = util_xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void msgs_add(struct awfs_msgs *m, const char *fmt, ...)
{
	va_list ap;

	m->v = util_xrealloc(m->v, (m->n + 1) * sizeof(*m->v));
	va_start(ap, fmt);
	m->v[m->n++] = util_xvasprintf(fmt, ap);
	va_end(ap);
}

void msgs_clear(struct awfs_msgs *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i]);
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

void counts_add(struct awfs_counts *c, const char *key, size_t cap)
{
	for (size_t i = 0; i < c->n; i++) {
		if (strcmp(c->v[i].key, key) == 0) {
			c->v[i].n++;
			return;
		}
	}
	if (c->n >= cap) {
		counts_add(c, "(other)", cap + 1);
		return;
	}
	c->v = util_xrealloc(c->v, (c->n + 1) * sizeof(*c->v));
	c->v[c->n].key = util_xstrdup(key);
	c->v[c->n].n = 1;
	c->n++;
}

static int cmp_count(const void *a, const void *b)
{
	const struct awfs_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->key, y->key);
}

void counts_sort(struct awfs_counts *c)
{
	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), cmp_count);
}

void counts_clear(struct awfs_counts *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].key);
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

size_t util_utf8_len(const unsigned char *s, size_t n, unsigned *cp)
{
	size_t len;
	unsigned c;

	if (n == 0 || s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	len = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (len > n)
		return 0;
	c = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	/* overlong, surrogate or out of range */
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

uint64_t util_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *util_errno_name(int err)
{
	static __thread char buf[16];

	switch (err) {
	case 0: return "OK";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EIO: return "EIO";
	case EINTR: return "EINTR";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case EXDEV: return "EXDEV";
	case ENODEV: return "ENODEV";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case EINVAL: return "EINVAL";
	case EMFILE: return "EMFILE";
	case ENFILE: return "ENFILE";
	case ETXTBSY: return "ETXTBSY";
	case EFBIG: return "EFBIG";
	case ENOSPC: return "ENOSPC";
	case ESPIPE: return "ESPIPE";
	case EROFS: return "EROFS";
	case EMLINK: return "EMLINK";
	case ERANGE: return "ERANGE";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ENOSYS: return "ENOSYS";
	case ENOTEMPTY: return "ENOTEMPTY";
	case ELOOP: return "ELOOP";
	case ENODATA: return "ENODATA";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOTCONN: return "ENOTCONN";
	case EOVERFLOW: return "EOVERFLOW";
	case EDQUOT: return "EDQUOT";
	case ENXIO: return "ENXIO";
	case E2BIG: return "E2BIG";
	case ESTALE: return "ESTALE";
	default:
		snprintf(buf, sizeof(buf), "E%d", err);
		return buf;
	}
}

/* Root and the user running awfs: the only owners trusted on the way to a file awfs appends to. */
static bool trusted_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* The path @fd refers to, for a message; @name after it when @name is not NULL. */
static const char *fd_path(int fd, const char *name, char *buf, size_t size)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, size - 1);
	if (n < 0)
		n = snprintf(buf, size, "%s", proc);
	buf[n] = '\0';
	if (name)
		snprintf(buf + n, size - n, "%s%s", n && buf[n - 1] == '/' ? "" : "/", name);
	return buf;
}

/*
 * A directory on the way must be one only root and awfs's user can change:
 * whoever else may rename or create entries in it could put a symlink to any
 * file of root's where the next name is, and awfs would append to that file.
 * A sticky directory others may write (/tmp) is passed through: they can add
 * entries there but cannot rename or remove ours, and every entry awfs takes
 * on from any directory must be root's or awfs's user's anyway (a directory
 * by this check, a symlink by follow(), the file by check_file()).
 */
static int check_dir(int fd, const struct stat *st, char *why, size_t len)
{
	char at[PATH_MAX];

	if (!trusted_uid(st->st_uid))
		snprintf(why, len, "directory `%s' on the way is owned by uid %u, neither root nor the user running awfs (uid %u), who could replace what is below it with a symlink to any file: use a path through root's directories",
			 fd_path(fd, NULL, at, sizeof(at)), (unsigned)st->st_uid, (unsigned)geteuid());
	else if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
		snprintf(why, len, "directory `%s' on the way is writable by group or others and not sticky (mode %04o), who could replace what is below it with a symlink to any file: chmod go-w it, or use another directory",
			 fd_path(fd, NULL, at, sizeof(at)), (unsigned)(st->st_mode & 07777));
	else
		return 0;
	return -1;
}

/* A path being resolved: the trusted directory reached so far and what is left of the path. */
struct walk {
	int dir;	/* O_PATH; -1 before "/" */
	char *path;	/* next points into it */
	char *next;
	int links;	/* symlinks followed */
};

/* Move @w to the directory @fd (@st) if check_dir() trusts it; @fd is closed otherwise. */
static int enter(struct walk *w, int fd, const struct stat *st, char *why, size_t len)
{
	if (check_dir(fd, st, why, len) < 0) {
		close(fd);
		return -1;
	}
	if (w->dir >= 0)
		close(w->dir);
	w->dir = fd;
	return 0;
}

/* Move @w to "/", which is checked like any directory on the way. */
static int enter_root(struct walk *w, char *why, size_t len)
{
	struct stat st;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(why, len, "/: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return enter(w, fd, &st, why, len);
}

/* The next component of @w's path, ended in place; NULL when none is left. */
static char *next_name(struct walk *w)
{
	char *name, *end;

	while (*w->next == '/')
		w->next++;
	if (!*w->next)
		return NULL;
	name = w->next;
	end = strchr(name, '/');
	if (end) {
		*end = '\0';
		w->next = end + 1;
	} else {
		w->next = name + strlen(name);
	}
	return name;
}

/*
 * The rule for a symlink on the way: it is followed only when it is root's
 * or awfs's user's. The directory holding it has passed check_dir(), so no
 * one else put it there or can swap it, and a link no one else owns points
 * where its owner meant; /var/run -> /run and the like keep working. Its
 * target is resolved by the same rules, from "/" or from the link's
 * directory, with at most 40 links in all, as the kernel allows.
 */
static int follow(struct walk *w, int link, const struct stat *st, char *why, size_t len)
{
	char target[PATH_MAX], at[PATH_MAX];
	char *path;
	ssize_t n;

	if (!trusted_uid(st->st_uid)) {
		snprintf(why, len, "`%s' on the way is a symlink owned by uid %u, neither root nor the user running awfs (uid %u): use a path without it",
			 fd_path(link, NULL, at, sizeof(at)), (unsigned)st->st_uid, (unsigned)geteuid());
		return -1;
	}
	if (++w->links > 40) {
		snprintf(why, len, "more than 40 symlinks on the way (a loop?)");
		return -1;
	}
	n = readlinkat(link, "", target, sizeof(target) - 1);
	if (n < 0) {
		const char *err = strerror(errno);	/* before fd_path() may change errno */

		snprintf(why, len, "`%s': %s", fd_path(link, NULL, at, sizeof(at)), err);
		return -1;
	}
	target[n] = '\0';
	path = util_xasprintf("%s/%s", target, w->next);
	free(w->path);
	w->path = w->next = path;
	return target[0] == '/' ? enter_root(w, why, len) : 0;
}

/* Take @w on by the component @name, which must be a trusted directory or a symlink to follow. */
static int step(struct walk *w, const char *name, char *why, size_t len)
{
	char at[PATH_MAX];
	struct stat st;
	int fd, ret = -1;

	fd = openat(w->dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		const char *err = strerror(errno);	/* before fd_path() may change errno */

		snprintf(why, len, "`%s': %s", fd_path(w->dir, name, at, sizeof(at)), err);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return enter(w, fd, &st, why, len);
	if (S_ISLNK(st.st_mode))
		ret = follow(w, fd, &st, why, len);
	else
		snprintf(why, len, "`%s' on the way is not a directory", fd_path(fd, NULL, at, sizeof(at)));
	close(fd);
	return ret;
}

/* The directory @path (absolute) names, as an O_PATH fd, reached from "/" through trusted directories only. */
static int trusted_dir(const char *path, char *why, size_t len)
{
	struct walk w = { .dir = -1, .path = util_xstrdup(path) };
	const char *name;
	int ret;

	w.next = w.path;
	ret = enter_root(&w, why, len);
	while (ret == 0 && (name = next_name(&w)))
		ret = step(&w, name, why, len);
	free(w.path);
	if (ret < 0 && w.dir >= 0) {
		close(w.dir);
		w.dir = -1;
	}
	return w.dir;
}

/*
 * @path made absolute with the current directory's real path: a relative
 * path then meets the same checks from "/" as its absolute form, the
 * directories above the current one included, and messages name them.
 */
static char *absolute(const char *path, char *why, size_t len)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return util_xstrdup(path);
	if (!getcwd(cwd, sizeof(cwd))) {
		snprintf(why, len, "cannot tell the current directory (%s): give an absolute path", strerror(errno));
		return NULL;
	}
	return util_xasprintf("%s/%s", cwd, path);
}

/* Why awfs must not append to the existing file @st describes, in @why; empty when it may. */
static void check_file(const struct stat *st, char *why, size_t len)
{
	if (!S_ISREG(st->st_mode))
		snprintf(why, len, "not a regular file (%s): awfs appends only to a regular file",
			 S_ISLNK(st->st_mode) ? "a symlink" : S_ISFIFO(st->st_mode) ? "a FIFO" :
			 S_ISSOCK(st->st_mode) ? "a socket" : S_ISDIR(st->st_mode) ? "a directory" : "a device");
	else if (!trusted_uid(st->st_uid))
		snprintf(why, len, "owned by uid %u, neither root nor the user running awfs (uid %u), who could read, forge and truncate it: remove it, or chown root it",
			 (unsigned)st->st_uid, (unsigned)geteuid());
	else if (st->st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, len, "writable by group or others (mode %04o), who could forge and truncate it: chmod go-w it",
			 (unsigned)(st->st_mode & 07777));
	/* a second name may be a link another user made (in /tmp) to a file of root's elsewhere */
	else if (st->st_nlink != 1)
		snprintf(why, len, "has %lu hard links, and another name may be another file of root's: give a file with one name",
			 (unsigned long)st->st_nlink);
	else
		why[0] = 0;
}

/* The file @pfd (O_PATH, checked as @st) opened for appending: no name is resolved again. */
static int reopen(int pfd, const struct stat *st, char *why, size_t len)
{
	struct stat st2;
	char proc[64];
	int fd;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		snprintf(why, len, "%s", strerror(errno));
	else if (fstat(fd, &st2) < 0 || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino) {
		snprintf(why, len, "changed while it was opened");
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Create @name in the trusted directory @dir, or open it for appending once check_file() accepts it. */
static int open_in(int dir, const char *name, char *why, size_t len)
{
	struct stat st;
	int pfd, fd;

	fd = openat(dir, name, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0640);
	if (fd >= 0 || errno != EEXIST) {
		if (fd < 0)
			snprintf(why, len, "%s", strerror(errno));
		return fd;
	}
	/* it exists: look at it through an O_PATH fd, which opens nothing */
	pfd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0 || fstat(pfd, &st) < 0) {
		snprintf(why, len, "%s", strerror(errno == ENOENT ? EAGAIN : errno));
		if (pfd >= 0)
			close(pfd);
		return -1;
	}
	check_file(&st, why, len);
	fd = why[0] ? -1 : reopen(pfd, &st, why, len);
	close(pfd);
	return fd;
}

int util_open_append(const char *path, char *why, size_t len)
{
	const char *name;
	char *abs, *slash;
	int dir, fd = -1;

	abs = absolute(path, why, len);
	if (!abs)
		return -1;
	slash = strrchr(abs, '/');
	*slash = '\0';
	name = slash[1] ? slash + 1 : ".";	/* "dir/" names dir itself, refused as a directory */
	dir = trusted_dir(abs, why, len);
	if (dir >= 0) {
		fd = open_in(dir, name, why, len);
		close(dir);
	}
	free(abs);
	return fd;
}

bool util_cp_is_tricky(unsigned c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0xad || c == 0x61c || c == 0x180e ||
	       (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
	       (c >= 0x2060 && c <= 0x2064) || (c >= 0x2066 && c <= 0x2069) || c == 0xfeff ||
	       (c >= 0xfff9 && c <= 0xfffb) || (c >= 0xe0000 && c <= 0xe007f);
}

void util_list_push(struct util_list *l, struct util_link *e)
{
	e->prev = NULL;
	e->next = l->head;
	if (l->head)
		l->head->prev = e;
	else
		l->tail = e;
	l->head = e;
}

void util_list_unlink(struct util_list *l, struct util_link *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		l->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		l->tail = e->prev;
	e->prev = e->next = NULL;
}

char *util_xstrndup(const char *s, size_t n)
{
	char *r = strndup(s, n);

	if (!r)
		oom();
	return r;
}

void util_comm_of(pid_t pid, char *out, size_t size)
{
	char p[64];
	ssize_t n = -1;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/comm", (int)pid);
	fd = pid > 0 ? open(p, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		n = read(fd, out, size - 1);
		close(fd);
	}
	if (n <= 0)
		n = snprintf(out, size, "?");
	else if (out[n - 1] == '\n')
		n--;
	out[n] = '\0';
}

/* The first line of @path, at most @size - 1 bytes; false when unreadable. */
static bool first_line(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(out, (int)size, f) != NULL;
	fclose(f);
	return ok;
}

/* @value of one of a v2 cpu.max ("max 100000" or "QUOTA PERIOD") or a v1 cpu.cfs_quota_us ("-1" or QUOTA). */
static bool quota_set(const char *value, bool v2)
{
	if (v2)
		return strncmp(value, "max", 3) != 0;
	return strtol(value, NULL, 10) > 0;
}

/* @file in @base + @path and each directory above it, to @base itself: 1 when one sets a quota. */
static int quota_walk(const char *base, const char *path, const char *file, bool v2, char *why, size_t len)
{
	char dir[PATH_MAX], name[PATH_MAX + 32], value[64];
	char *slash;

	/*
	 * Where the process's cgroup is under @base: a hierarchy mounted from
	 * one of its cgroups (a container's, without a cgroup namespace) holds
	 * the path's end, not its start; the longest end that exists, else
	 * @base itself.
	 */
	for (const char *p = path;; p = strchr(p + 1, '/')) {
		if (!p || !p[1]) {
			snprintf(dir, sizeof(dir), "%s", base);
			break;
		}
		if (snprintf(dir, sizeof(dir), "%s%s", base, p) < (int)sizeof(dir) && access(dir, F_OK) == 0)
			break;
	}
	for (;;) {
		size_t n = strlen(dir);

		while (n > strlen(base) && dir[n - 1] == '/')
			dir[--n] = '\0';
		snprintf(name, sizeof(name), "%s/%s", dir, file);
		if (first_line(name, value, sizeof(value)) && quota_set(value, v2)) {
			value[strcspn(value, "\n")] = '\0';
			snprintf(why, len, "%s: %s", name, value);
			return 1;
		}
		if (n <= strlen(base))
			return 0;
		slash = strrchr(dir + strlen(base), '/');
		if (!slash)
			return 0;
		*slash = '\0';
	}
}

int util_cpu_quota(const char *root, char *why, size_t len)
{
	static const char *const v1[] = { "sys/fs/cgroup/cpu", "sys/fs/cgroup/cpu,cpuacct",
					  "sys/fs/cgroup/cpuacct,cpu" };
	char path[PATH_MAX], line[PATH_MAX + 64], base[PATH_MAX], probe[PATH_MAX + 32];
	const char *r = root && *root ? root : "/";
	const char *sep = r[strlen(r) - 1] == '/' ? "" : "/";
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "%s%sproc/self/cgroup", r, sep);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *cg = ctl ? strchr(ctl + 1, ':') : NULL;

		if (!cg)
			continue;
		*ctl++ = '\0';
		*cg++ = '\0';
		cg[strcspn(cg, "\n")] = '\0';
		if (cg[0] != '/')
			continue;
		if (strcmp(line, "0") == 0 && *ctl == '\0') {
			/* v2: where its root is (cgroup.controllers marks one) */
			snprintf(base, sizeof(base), "%s%ssys/fs/cgroup", r, sep);
			snprintf(probe, sizeof(probe), "%s/cgroup.controllers", base);
			if (access(probe, F_OK) != 0)
				snprintf(base, sizeof(base), "%s%ssys/fs/cgroup/unified", r, sep);
			found = quota_walk(base, cg, "cpu.max", true, why, len);
			continue;
		}
		/* v1: the hierarchy with the cpu controller */
		for (char *c = ctl, *tok; !found && (tok = strsep(&c, ","));)
			if (strcmp(tok, "cpu") == 0)
				for (size_t i = 0; !found && i < sizeof(v1) / sizeof(v1[0]); i++) {
					snprintf(base, sizeof(base), "%s%s%s", r, sep, v1[i]);
					if (access(base, F_OK) == 0)
						found = quota_walk(base, cg, "cpu.cfs_quota_us", false, why, len);
				}
	}
	fclose(f);
	return found;
}
