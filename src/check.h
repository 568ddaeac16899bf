/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check.h - awfsctl check: the policy against the source tree and against the
 * engine's tool permissions, before anything runs.
 */
#ifndef AWFS_CHECK_H
#define AWFS_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "classify.h"
#include "grants.h"
#include "policy.h"

struct awfs_check_opts {
	const char *policy;
	const char *source;		/* the tree to check, or NULL */
	const char *runtime;
	const char *allowed_tools;	/* the engine's permission string, or NULL */
	const char *root;		/* where the agent sees the mount root, or NULL */
	const char *const *workflows;	/* compiled workflows to check */
	size_t nworkflows;
	/*
	 * How to check one: lockcheck_file() (lockcheck.h), set by awfsctl; a
	 * pointer, so that the daemon, which links this file for the checks
	 * it shares, links no YAML parser.
	 */
	int (*check_workflow)(const char *file, struct awfs_classifier *c, const struct awfs_policy *p,
			      const char *root, struct awfs_findings *out, char **err);
	bool strict;			/* warnings count as errors (but the kinds awfsctl(1)
					   says stay warnings) */
};

/* Run the check, print findings to @out, messages to @err. Returns the exit status: 0, 1 or 2. */
int check_run(const struct awfs_check_opts *o, FILE *out, FILE *err);

/*
 * The checks awfs makes at mount, shared with awfsctl check so that both
 * find the same things and say them in the same words.
 */

/* Whether @r is an allow_write target: literal and below the root, so it must exist (or be created). */
bool check_is_target(const struct awfs_rule *r);
/*
 * Walk target @r below @root_fd without following symlinks; *@st is what it
 * names. Returns 0, or an errno value (ENOTDIR: a component on the way is
 * not a directory).
 */
int check_target(int root_fd, const struct awfs_rule *r, struct stat *st);
/*
 * What the walk's (or creation's) error @err means for target @r in
 * @source, as one sentence escaped for a terminal: for ENOENT without
 * create, that awfs refuses to mount and what to do. Caller frees.
 */
char *check_target_problem(const struct awfs_policy *p, const struct awfs_rule *r, const char *source,
			   int err);
/*
 * The top-level entries of @root_fd that no rule names, sorted, leaving
 * out @skip (NULL: none); *@n of them. Caller frees each and the array.
 */
char **check_unclassified_names(struct awfs_classifier *c, int root_fd, const char *skip, size_t *n);

#endif
