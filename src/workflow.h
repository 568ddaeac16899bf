/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * workflow.h - a compiled GitHub Actions workflow (gh-aw's .lock.yml), read
 * with libyaml into what awfsctl check --workflow looks at: jobs, their
 * steps in order, and of each step its name, id, uses, run script, env and
 * with. Nothing else of the file is kept, and nothing is interpreted here
 * (lockcheck.h does that).
 *
 * Invariants: the only file that includes yaml.h; every string kept is a
 * copy; a value that is not a scalar where one is expected is left out
 * (NULL), never guessed at; a file that is not YAML, or not a mapping with
 * a "jobs" mapping, is refused with FILE:LINE:COLUMN and what was expected.
 */
#ifndef AWFS_WORKFLOW_H
#define AWFS_WORKFLOW_H

#include <stddef.h>

/* key = value pairs, in file order */
struct awfs_wf_map {
	char **key, **val;
	size_t n;
};

struct awfs_wf_step {
	char *name, *id, *uses, *run;	/* NULL when absent (or not a scalar) */
	struct awfs_wf_map env, with;
	int line;
};

struct awfs_wf_job {
	char *name;			/* its key under jobs: */
	struct awfs_wf_step *steps;
	size_t nsteps;
	int line;
};

struct awfs_workflow {
	char *file;
	struct awfs_wf_job *jobs;
	size_t njobs;
};

/*
 * Read @file into @out (overwritten). Returns 0, or -1 with *err set to
 * "FILE:LINE:COLUMN: what is wrong. What is expected." (caller frees).
 */
int workflow_load(const char *file, struct awfs_workflow *out, char **err);
/* The same from @text in memory, named @file in messages. */
int workflow_parse(const char *text, size_t len, const char *file, struct awfs_workflow *out, char **err);
/* The value of @key in @m, or NULL. */
const char *workflow_get(const struct awfs_wf_map *m, const char *key);
/* Free what workflow_load() filled. */
void workflow_free(struct awfs_workflow *w);

#endif
