/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * decide.c - the enforcement rule (decide.h states it whole).
 */
#include "decide.h"

#include <fcntl.h>

static const struct awfs_decision allowed = { AWFS_ALLOWED, 0, NULL, NULL };

static struct awfs_decision refused(enum awfs_blocker how, unsigned end, const struct awfs_state *st)
{
	struct awfs_decision d = { how, end, st, NULL };

	if (how == AWFS_BLOCK_ANCHOR)
		d.rule = classify_anchored(st);
	else if (how != AWFS_BLOCK_INFO)
		d.rule = classify_rule(st);
	return d;
}

static bool writable(const struct awfs_state *st)
{
	return classify_class(st) == AWFS_CLASS_WRITE;
}

/* The namespace check of the entry @e, the @end-th position asked about. */
static struct awfs_decision entry_at(const struct awfs_entry_pos *e, unsigned end)
{
	if (e->info)
		return refused(AWFS_BLOCK_INFO, end, NULL);
	if (!writable(e->dir))
		return refused(AWFS_BLOCK_PARENT, end, e->dir);
	if (!writable(e->st))
		return refused(AWFS_BLOCK_ENTRY, end, e->st);
	return allowed;
}

/* No stricter rule anchored at the entry @e (already passed entry_at()). */
static struct awfs_decision anchor_at(const struct awfs_entry_pos *e, unsigned end)
{
	if (classify_anchored(e->st))
		return refused(AWFS_BLOCK_ANCHOR, end, e->st);
	return allowed;
}

static struct awfs_decision object_at(const struct awfs_object_pos *o, unsigned end)
{
	if (o->info)
		return refused(AWFS_BLOCK_INFO, end, NULL);
	if (!writable(o->st))
		return refused(AWFS_BLOCK_SELF, end, o->st);
	return allowed;
}

struct awfs_decision decide_entry(const struct awfs_entry_pos *e)
{
	return entry_at(e, 0);
}

struct awfs_decision decide_symlink(const struct awfs_entry_pos *e)
{
	struct awfs_decision d = entry_at(e, 0);

	return d.how ? d : anchor_at(e, 0);
}

struct awfs_decision decide_object(const struct awfs_object_pos *o)
{
	return object_at(o, 0);
}

/* An open for writing, or one that truncates (O_RDONLY | O_TRUNC does, on Linux). */
static bool opens_for_write(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
}

struct awfs_decision decide_open(int flags, const struct awfs_object_pos *o)
{
	return opens_for_write(flags) ? object_at(o, 0) : allowed;
}

struct awfs_decision decide_link(const struct awfs_object_pos *o, const struct awfs_entry_pos *e)
{
	struct awfs_decision d = object_at(o, 0);

	if (!d.how)
		d = entry_at(e, 1);
	if (!d.how)
		d = anchor_at(e, 1);
	return d;
}

struct awfs_decision decide_rename(const struct awfs_entry_pos *from, const struct awfs_entry_pos *to)
{
	struct awfs_decision d = entry_at(from, 0);

	if (!d.how)
		d = entry_at(to, 1);
	if (!d.how)
		d = anchor_at(from, 0);
	if (!d.how)
		d = anchor_at(to, 1);
	return d;
}
