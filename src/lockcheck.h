/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lockcheck.h - a compiled workflow (workflow.h) against the policy: what
 * the agent's step is told to write, and what the steps after it run or
 * upload from the tree the agent could write.
 *
 * The agent's step is a step whose id ends in "agentic_execution" (gh-aw's
 * agentic_execution, detection_agentic_execution, evals_agentic_execution)
 * or whose name is "Execute ... CLI" or "Execute ... with AWF". From it:
 *  - the engine's tool grants (--allowed-tools), checked as grants.h does;
 *  - the paths it is told to write: --debug-file, GITHUB_STEP_SUMMARY in its
 *    env, -o and --output (the detection engine's verdict), and the
 *    directories --session-state-dir, --log-dir, --add-dir, --writable and
 *    AWF's filesystem.allowWrite name: an error where the policy refuses;
 * from each step after it in the same job:
 *  - a path under the mount root it runs (bash, sh, source, ., node,
 *    python, perl, the command itself) or runs git in (git -C, cd ... &&
 *    git): a warning where the agent could write it (its .git, for git);
 *  - a path it uploads (actions/upload-artifact's path) or saves to the
 *    cache (actions/cache): a warning where the agent could write it, since
 *    whoever reads the artifact reads what the agent left;
 * and from every step: a top-level name under the root the policy does not
 * classify (a warning).
 *
 * Invariants: pure (no I/O); a path is only ever classified, never looked
 * up; findings come out sorted as grants_check()'s.
 */
#ifndef AWFS_LOCKCHECK_H
#define AWFS_LOCKCHECK_H

#include "classify.h"
#include "grants.h"
#include "policy.h"
#include "workflow.h"

/*
 * Check @w against the policy @p (classified by @c) for a mount whose root
 * the agent sees at @root (absolute; NULL: the policy's root, or
 * /tmp/gh-aw). Appends findings to @out, each entry naming the file, job
 * and step; sorted.
 */
void lockcheck_run(const struct awfs_workflow *w, struct awfs_classifier *c, const struct awfs_policy *p,
		   const char *root, struct awfs_findings *out);
/*
 * Read the workflow @file (workflow_load()) and check it (lockcheck_run()).
 * Returns 0, or -1 with *err set (caller frees) when it cannot be read.
 */
int lockcheck_file(const char *file, struct awfs_classifier *c, const struct awfs_policy *p, const char *root,
		   struct awfs_findings *out, char **err);

#endif
