/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check.h - awfsctl check: the policy against the source tree and against the
 * engine's tool permissions, before anything runs.
 */
#ifndef AWFS_CHECK_H
#define AWFS_CHECK_H

#include <stdbool.h>
#include <stdio.h>

struct awfs_check_opts {
	const char *policy;
	const char *source;		/* the tree to check, or NULL */
	const char *runtime;
	const char *allowed_tools;	/* the engine's permission string, or NULL */
	const char *root;		/* where the agent sees the mount root, or NULL */
	bool strict;			/* warnings count as errors */
};

/* Run the check, print findings to @out, messages to @err. Returns the exit status: 0, 1 or 2. */
int check_run(const struct awfs_check_opts *o, FILE *out, FILE *err);

#endif
