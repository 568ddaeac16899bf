/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * audit.h - the audit trail: JSON lines appended to a file (--audit FILE).
 *
 * Records: one "mount" (the resolved policy, the unclassified entries found),
 * one "deny" per logged denial (rate-limited like the log, with the count of
 * what was suppressed before it), one "unclassified" per newly seen entry,
 * one "unmount" summary; with the change record (changes.h) one "change"
 * per change and one "changes" summary. Each record is built whole and written with one
 * write() to an O_APPEND file, so it is complete on disk when write returns
 * and records never interleave.
 */
#ifndef AWFS_AUDIT_H
#define AWFS_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"
#include "util.h"

/* One denial, as the request path knows it. Strings are raw bytes. */
struct awfs_denial {
	const char *op;
	const char *path;	/* as the agent sees it */
	const char *other;	/* the second path of a rename or link, or NULL */
	pid_t pid;
	const char *comm;
	uid_t uid;
	gid_t gid;
	const char *cls;	/* "masked", "read-only", ... of what refused */
	const char *origin;	/* "rule", "root default", "unclassified", "info directory", "anchored rule" */
	const struct awfs_rule *rule;	/* or NULL */
	const char *why;	/* the sentence of the log line */
	int err;
	uint64_t suppressed;	/* denials not recorded since the last record */
	bool expected;		/* a refusal that loses nothing (verdict.h) */
};

/*
 * Open @file for appending records (see util_open_append() for what it
 * must be). Returns 0, or -1 with the reason in @why.
 */
int audit_open(const char *file, char *why, size_t len);
/*
 * The mount record (@data_path: "passthrough", or "awfs" and why;
 * @requests: "io_uring", or "/dev/fuse" and why).
 */
void audit_mount(const struct awfs_policy *p, const char *mnt, const char *src, const char *data_path,
		 const char *requests, char *const *uncl, size_t nuncl);
/* A deny record; returns the bytes written (0: no audit file). */
size_t audit_deny(const struct awfs_denial *d);
/* An unclassified record for a newly seen top-level entry. */
void audit_unclassified(const char *mnt, const char *name);
/* The unmount summary (@denials: lost writes; @expected: refusals that lose nothing). */
void audit_unmount(const char *mnt, uint64_t denials, uint64_t expected, uint64_t suppressed,
		   const struct awfs_counts *by_op, const struct awfs_counts *by_path);
/* Close the file. */
void audit_close(void);
/* Whether there is an audit file. */
bool audit_on(void);
struct awfs_json;
/* Start a record of @event (its time first); add members with json.h, then audit_finish(). */
void audit_begin(struct awfs_json *j, const char *event);
/* End the record and write it in one write(); returns its length. */
size_t audit_finish(struct awfs_json *j);

#endif
