/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * classify.h - which class a path has: a pure function of the policy, the
 * parent's state and the child's name, with no I/O.
 *
 * A state stands for "everything the policy still has to say below this
 * point": the rule that decides this path and the rules that may still match
 * deeper. States are interned and immutable, so an inode stores a pointer to
 * one and a lookup costs one classify_child() on its parent's state; below
 * the last rule (the common case) that is a pointer return.
 *
 * Precedence: the rule matching the most leading components wins; at equal
 * depth the pattern whose first differing component is literal wins; at
 * equal shape the stricter class wins (mask > read_only > allow_write), so an
 * ambiguous policy fails safe.
 */
#ifndef AWFS_CLASSIFY_H
#define AWFS_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

struct awfs_classifier;
struct awfs_state;

enum awfs_origin {
	AWFS_ORIGIN_RULE = 0,		/* a rule decides */
	AWFS_ORIGIN_ROOT,		/* nothing matched: the root's default, read-only */
	AWFS_ORIGIN_UNCLASSIFIED,	/* a top-level entry no rule names */
};

/* Build the classifier for @p (which must outlive it). */
struct awfs_classifier *classify_new(const struct awfs_policy *p);
/* Free the classifier and every state it interned. */
void classify_free(struct awfs_classifier *c);

/* The state of the mount root. */
const struct awfs_state *classify_root(const struct awfs_classifier *c);
/* The state of @name inside a directory whose state is @parent. Thread-safe. */
const struct awfs_state *classify_child(struct awfs_classifier *c, const struct awfs_state *parent,
					const char *name);

/* The class a state serves. */
enum awfs_class classify_class(const struct awfs_state *s);
/* Why: a rule, the root default or "unclassified". */
enum awfs_origin classify_origin(const struct awfs_state *s);
/* The deciding rule, or NULL for the root default and unclassified entries. */
const struct awfs_rule *classify_rule(const struct awfs_state *s);
/*
 * A read-only or masked rule may still match below this state: the rule is
 * anchored here, so nothing may be renamed or linked into or out of this
 * position (see ops.c). Returns that rule, or NULL.
 */
const struct awfs_rule *classify_anchored(const struct awfs_state *s);
/*
 * The rules that may still match below @s (they have more components than
 * the path of @s). Returns the count and sets *rules; none below a mask.
 */
size_t classify_alive(const struct awfs_state *s, const struct awfs_rule *const **rules);
/*
 * The number of path components below the root that @s stands for, while
 * rules are alive (0 for a state no rule can change any more).
 */
size_t classify_depth(const struct awfs_state *s);
/*
 * Literal names of masks directly below @s: they are listed even when the
 * host has no such entry. Returns the count and sets *names.
 */
size_t classify_fixed_masks(const struct awfs_state *s, const char *const **names);

#endif
