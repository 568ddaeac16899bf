/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util.h - small helpers shared by every module: checked allocation, a list
 * of collected messages (policy errors are reported all together), errno
 * names for diagnostics.
 *
 * Allocation failures abort: awfs has no useful way to continue without
 * memory, and an abort fails closed (the mount stays, every access ENOTCONN).
 */
#ifndef AWFS_UTIL_H
#define AWFS_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AWFS_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A growable list of formatted messages. */
struct awfs_msgs {
	char **v;
	size_t n;
};

/* A small table of counters by name, for summaries. */
struct awfs_count {
	char *key;
	uint64_t n;
};

struct awfs_counts {
	struct awfs_count *v;
	size_t n;
};

/* Allocate or abort. */
void *util_xmalloc(size_t n);
/* Allocate zeroed memory or abort. */
void *util_xcalloc(size_t n, size_t size);
/* Resize or abort. */
void *util_xrealloc(void *p, size_t n);
/* Duplicate a string or abort; NULL stays NULL. */
char *util_xstrdup(const char *s);
/* Format a va_list into a new string or abort. */
char *util_xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* Format into a new string or abort. */
char *util_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The first @n bytes of @s (fewer at a NUL), as a new string; aborts when out of memory. */
char *util_xstrndup(const char *s, size_t n);

/*
 * A string that grows at its end: n appends cost what their bytes do, not
 * n times the string so far (a list of 100,000 rules in one line). s is
 * NULL until the first append; the owner frees it.
 */
struct util_str {
	char *s;
	size_t len, cap;
};
/* Append the @n bytes at @text. */
void util_str_put(struct util_str *b, const char *text, size_t n);
/* Append @text, after @sep when the string is not empty. */
void util_str_join(struct util_str *b, const char *sep, const char *text);

/* Append a formatted message to @m. */
void msgs_add(struct awfs_msgs *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Free every message and reset @m to empty. */
void msgs_clear(struct awfs_msgs *m);

/*
 * Length of the valid, shortest-form UTF-8 sequence at @s (at most @n bytes)
 * with its code point in *@cp, or 0 when the bytes there are not one.
 */
size_t util_utf8_len(const unsigned char *s, size_t n, unsigned *cp);
/*
 * Code points that reorder, hide or break text (C1 controls such as U+0085,
 * the soft hyphen, the Arabic letter mark U+061C, zero-width marks and
 * joiners, the line and paragraph separators U+2028 and U+2029, bidi
 * embeddings, overrides (U+202E) and isolates, invisible operators, the
 * BOM, interlinear annotation marks, tag characters U+E0000-E007F): the
 * log and the audit show them escaped.
 */
bool util_cp_is_tricky(unsigned cp);
/*
 * Count one more @key; past @cap distinct keys, count it under "(other)",
 * so a hostile caller cannot grow the table without bound.
 */
void counts_add(struct awfs_counts *c, const char *key, size_t cap);
/* Sort by count (descending), then key. */
void counts_sort(struct awfs_counts *c);
/* Free the table and reset it. */
void counts_clear(struct awfs_counts *c);

/*
 * Open @path to append awfs's records to (the log, the audit file): a new
 * file is created 0640; an existing one must be a regular file with one
 * name, owned by root or by the user running awfs and writable by no one
 * else, checked before it is opened for writing (a FIFO would hang awfs, a
 * device would be opened, another user's file would let that user read,
 * forge and truncate the record). The path is resolved from "/" (a
 * relative one from the current directory's real path) one component at a
 * time, and every directory on the way must be root's or that user's and
 * writable by no one else unless sticky (/tmp), so no one else can put a
 * symlink to a file of root's in the way; a symlink on the way is followed
 * only when it is root's or that user's, the file itself never is. Returns
 * the fd, or -1 with the reason in @why.
 */
int util_open_append(const char *path, char *why, size_t len);
/* The name of process @pid (/proc/PID/comm) in @out, or "?" when it cannot be read (it exited). */
void util_comm_of(pid_t pid, char *out, size_t size);

/*
 * Whether a CPU bandwidth limit (a CFS quota: cgroup v2's cpu.max, v1's
 * cpu.cfs_quota_us) applies to this process's cgroup or one above it, as
 * /proc/self/cgroup names it, read under @root ("/" on a live system; the
 * hierarchies where systemd and Docker mount them: /sys/fs/cgroup, its
 * unified/, cpu/ or cpu,cpuacct/). 1 with the file in @why, 0 when none is
 * found (no cgroup file system, no quota, or nothing readable).
 */
int util_cpu_quota(const char *root, char *why, size_t len);

/* The symbolic name of an errno value ("EROFS"), or "E<number>". */
const char *util_errno_name(int err);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t util_now_ns(void);

/*
 * A doubly linked list threaded through its elements (a struct util_link
 * in each), newest at the head; util_entry() is the element of a link.
 */
struct util_link {
	struct util_link *prev, *next;
};
struct util_list {
	struct util_link *head, *tail;
};
#define util_entry(link, type, member) ((type *)(void *)((char *)(link) - offsetof(type, member)))
/* Put @e at the head of @l. */
void util_list_push(struct util_list *l, struct util_link *e);
/* Take @e (on @l) off it. */
void util_list_unlink(struct util_list *l, struct util_link *e);

#endif
