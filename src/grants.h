/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * grants.h - the engine's tool-permission string, and whether the policy
 * lets the agent write where the engine says it may.
 *
 * The two surfaces (the engine's Write/Edit grants and the policy's
 * allow_write) must never disagree unnoticed: a path the engine may write
 * but awfs refuses is where data is silently lost.
 *
 * Invariants: pure (no I/O); findings come out sorted, so output is
 * deterministic.
 */
#ifndef AWFS_GRANTS_H
#define AWFS_GRANTS_H

#include <stdbool.h>
#include <stddef.h>

#include "classify.h"
#include "policy.h"
#include "util.h"

/* One entry of a tool-permission string: "Bash(git:*)", "Read", "Write(/tmp/gh-aw/agent/x.md)". */
struct awfs_grant {
	char *entry;	/* as written, trimmed and unquoted */
	char *tool;	/* "Write", "Edit", "Bash", ... */
	char *arg;	/* inside the parentheses, trimmed and unquoted; NULL when bare */
	bool writes;	/* Write, Edit, MultiEdit or NotebookEdit */
};

struct awfs_grants {
	struct awfs_grant *v;
	size_t n;
};

enum awfs_severity {
	AWFS_FINDING_ERROR,	/* the engine may write where awfs refuses */
	AWFS_FINDING_WARN,	/* a warning, an error with --strict (lockcheck.h: a path a
				   step runs after the agent, a name nobody classified) */
	AWFS_FINDING_BROAD,	/* a grant wider than the mount root, or a bare one */
	AWFS_FINDING_CONSUMED,	/* a step uploads what the agent could write (lockcheck.h) */
	AWFS_FINDING_EXCEPT,	/* a rule refuses part of a grant, and the policy does not
				   say it does so on purpose */
	AWFS_FINDING_ACK,	/* a rule refuses part of a grant on purpose (exception = true) */
	AWFS_FINDING_NOTE,	/* not checked (outside the root, relative), or fine */
};

struct awfs_finding {
	enum awfs_severity severity;
	char *entry;	/* the grant it is about */
	char *path;	/* the path (under the mount root, as the agent sees it) */
	char *text;	/* one sentence; names the rule that refuses, if any, in explain.h's words */
};

struct awfs_findings {
	struct awfs_finding *v;
	size_t n;
};

/*
 * Parse @s (comma- or newline-separated entries, commas inside parentheses
 * and quotes kept, surrounding spaces and quotes tolerated, empty entries
 * skipped) into @out, which is overwritten. Returns 0, or -1 with @out empty
 * and a "column N: ..." message per problem appended to @errs (unbalanced
 * parentheses or quotes, text after the closing parenthesis, an empty or
 * malformed tool name). Any byte string is safe to pass.
 */
int grants_parse(const char *s, struct awfs_grants *out, struct awfs_msgs *errs);
/* Free what grants_parse() filled. */
void grants_free(struct awfs_grants *g);

/*
 * Check every write-capable grant against the policy for a mount whose root
 * the agent sees at @root (absolute, e.g. "/tmp/gh-aw"; NULL for the
 * policy's root, or "/"). Appends findings to @out, then sorts all of them by
 * (entry, path, severity, text) and drops exact duplicates. Whether a WARN
 * fails the check (--strict) is the caller's decision.
 */
void grants_check(const struct awfs_grants *g, struct awfs_classifier *c,
		  const struct awfs_policy *p, const char *root, struct awfs_findings *out);
/* The order findings are sorted in: (entry, path, severity, text); for qsort(). */
int grants_finding_cmp(const void *a, const void *b);
/* Free the findings. */
void grants_findings_free(struct awfs_findings *f);

#endif
