/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verdict.h - what happens when the policy says no: the refusal is counted,
 * explained in one escaped log line (op, path, caller, what refused it and
 * by which rule, where writing is allowed), kept for .awfs/denials and
 * written to the audit trail; and the unclassified top-level entries, each
 * reported once.
 *
 * Invariants: every refusal is counted, even those the rate limit keeps out
 * of the log; every byte of a name is escaped before it is logged; a line
 * names the rule (file:line and reason) that decided.
 */
#ifndef AWFS_VERDICT_H
#define AWFS_VERDICT_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stdint.h>

#include "classify.h"
#include "decide.h"
#include "inode.h"
#include "ops.h"

/* The second path of a rename or link, for the message. */
struct awfs_other_end {
	const char *word;		/* "to" or "from" */
	const struct awfs_inode *in;
	const char *name;
};

/* A refusal: what decide.h said, and the inodes and names it was about. */
struct awfs_refusal {
	const char *op;
	const struct awfs_inode *in;	/* what was operated on: in, or name in in */
	const char *name;
	const struct awfs_other_end *other;
	enum awfs_blocker how;
	const struct awfs_rule *rule;	/* the rule that decided (awfs_decision.rule) */
	const struct awfs_inode *at;	/* where it was refused: at, or at_name in at */
	const char *at_name;
	const struct awfs_state *at_state;	/* its state (NULL for AWFS_BLOCK_INFO) */
};

/* Set up from the mount's configuration (kept, must outlive the session). */
void verdict_init(const struct awfs_ops_config *cfg);
/* Free what verdict_init() and the refusals kept. */
void verdict_fini(void);
/*
 * Count, log, keep and audit a refusal by @req's caller (the caller
 * replies EROFS: ops.c's refuse()).
 */
void verdict_deny(fuse_req_t req, const struct awfs_refusal *r);
/*
 * Note a top-level entry no rule names; logged (and audited) once per name,
 * whether found at mount or later. Returns true the first time.
 */
bool verdict_note_unclassified(const char *name);
/*
 * The path of @in (and @name in it, if not NULL) under the mount as the
 * agent sees it, raw bytes, as the denial lines name it (for the change
 * record, changes.h).
 */
void verdict_raw_path(const struct awfs_inode *in, const char *name, char *out, size_t size);
/* Refusals so far. */
uint64_t verdict_denials(void);
/* Log what the rate limit suppressed and has not reported yet. */
void verdict_flush_suppressed(void);
/*
 * The unmount summary: logged, audited, and returned as one line (caller
 * frees) for stderr when --fail-on-denial turns refusals into an exit status.
 */
char *verdict_summary(void);

#endif
