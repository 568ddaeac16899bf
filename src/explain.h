/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * explain.h - why a path is what it is, in words.
 *
 * One sentence for one question, wherever it is asked: a denial line (and
 * its audit record and .awfs/denials entry) says why a path is not
 * writable, awfsctl explain why a path is what it is, awfsctl check why a
 * grant or an unclassified entry is refused. Two wordings of one decision
 * would leave a reader wondering whether they differ.
 *
 * Invariants: pure (no I/O); what a rule or the policy says (path, file,
 * reason) is escaped with log_escape(), so a sentence is safe in a log line
 * and unambiguous inside its quotes. The denial lines quote these words:
 * changing them changes every denial line and the parity transcript.
 */
#ifndef AWFS_EXPLAIN_H
#define AWFS_EXPLAIN_H

#include <stddef.h>

#include "classify.h"
#include "policy.h"

/*
 * How rule @r of @p decides: "masked by mask rule "PATH" (FILE:LINE:
 * REASON)", "read-only by read_only rule ...", "writable by allow_write
 * rule ...". Into @out (@size bytes).
 */
void explain_rule(const struct awfs_policy *p, const struct awfs_rule *r, char *out, size_t size);

/*
 * What decides state @st under @p: its rule (explain_rule()), the root
 * default ("read-only: no rule makes it writable"), or an unclassified
 * top-level entry ("read-only: unclassified (its top-level entry is named
 * by no rule; unclassified = "warn")"). Into @out (@size bytes).
 */
void explain_state(const struct awfs_policy *p, const struct awfs_state *st, char *out,
		      size_t size);

#endif
