/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util.c - checked allocation, message lists and errno names.
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int util_open_append(const char *path, char *why, size_t len)
{
	struct stat st, st2;
	char proc[64];
	int pfd, fd;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0640);
	if (fd >= 0 || errno != EEXIST) {
		if (fd < 0)
			snprintf(why, len, "%s", strerror(errno));
		return fd;
	}
	/* it exists: look at it through an O_PATH fd, which opens nothing */
	pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0 || fstat(pfd, &st) < 0) {
		snprintf(why, len, "%s", strerror(errno == ENOENT ? EAGAIN : errno));
		if (pfd >= 0)
			close(pfd);
		return -1;
	}
	if (!S_ISREG(st.st_mode))
		snprintf(why, len, "not a regular file (%s): awfs appends only to a regular file",
			 S_ISLNK(st.st_mode) ? "a symlink" : S_ISFIFO(st.st_mode) ? "a FIFO" :
			 S_ISSOCK(st.st_mode) ? "a socket" : S_ISDIR(st.st_mode) ? "a directory" : "a device");
	else if (st.st_uid != 0 && st.st_uid != geteuid())
		snprintf(why, len, "owned by uid %u, neither root nor the user running awfs (uid %u), who could read, forge and truncate it: remove it, or chown root it",
			 (unsigned)st.st_uid, (unsigned)geteuid());
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, len, "writable by group or others (mode %04o), who could forge and truncate it: chmod go-w it",
			 (unsigned)(st.st_mode & 07777));
	else
		why[0] = 0;
	if (why[0]) {
		close(pfd);
		return -1;
	}
	/* the object checked, opened for writing: no name is resolved again */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		snprintf(why, len, "%s", strerror(errno));
	else if (fstat(fd, &st2) < 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		snprintf(why, len, "changed while it was opened");
		close(fd);
		fd = -1;
	}
	close(pfd);
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
