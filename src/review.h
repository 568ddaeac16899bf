/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * review.h - what the agent changed, from the change record in an audit
 * trail (changes.h): awfsctl changes.
 *
 * The records are replayed in order over a model of the tree that knows
 * only what they say: each path the agent touched maps to the path its
 * object had before (or none: made by the agent), renames carry whole
 * directories (what lies below keeps its place relative to them), and a
 * path whose object was removed or moved away is "gone". At the end every
 * path that differs from before is one of:
 *  - created: it holds an object the agent made, where nothing was;
 *  - modified: it holds what it held, changed (content: the size and
 *    SHA-256 of its last write; or mode, owner, xattrs), or an object the
 *    agent made in place of one it removed (replaced);
 *  - renamed: it holds what another path held (and may be modified too);
 *  - removed: its object is gone, not moved (a removed directory stands
 *    for everything below it).
 * A change of times alone makes no difference here (the host's diff of
 * the trees would not show one either).
 * Paths are shown relative to the mount point of the mount record before
 * them, grouped by their top-level entry, sorted.
 */
#ifndef AWFS_REVIEW_H
#define AWFS_REVIEW_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Read the audit trail @in (named @name in messages) and print what changed
 * to @out, as text or (@json) one JSON document; with @since, only records
 * at or after that time (ISO 8601 UTC, as the records write it, or a
 * prefix: 2026-12-03T18). Returns 0, 1 when the record is incomplete (a
 * change was dropped or not hashed, or no unmount summary closes it), 2 on
 * unusable input (said on @err).
 */
int review_changes(FILE *in, const char *name, const char *since, bool json, FILE *out, FILE *err);

#endif
