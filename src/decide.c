/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * decide.c - the enforcement rule (decide.h states it whole).
 */
#include "decide.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

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

enum awfs_links decide_links(const struct awfs_state *st)
{
	const struct awfs_rule *r = st ? classify_rule(st) : NULL;

	return writable(st) && r ? r->links : AWFS_LINKS_ANY;
}

/* How strict a position is about links: "any" 0, "read-only" 1, "none" 2. */
static int strictness(const struct awfs_state *st)
{
	return policy_links_strictness(decide_links(st));
}

/*
 * Whether an allow_write rule that still matches below @st says another
 * links than @st's: a directory renamed at @st would carry that rule's
 * paths (and what they hold) to where another applies, as an anchored
 * read-only rule would.
 */
static bool mixed_below(const struct awfs_state *st)
{
	const struct awfs_rule *const *r;
	size_t n = st ? classify_alive(st, &r) : 0, depth = st ? classify_depth(st) : 0;
	int here = strictness(st);

	for (size_t i = 0; i < n; i++)
		if (r[i]->cls == AWFS_CLASS_WRITE && r[i]->ncomps > depth &&
		    policy_links_strictness(r[i]->links) != here)
			return true;
	return false;
}

/* A tree that takes no link from outside: "none" or "read-only". */
static bool closed(const struct awfs_state *st)
{
	return strictness(st) > 0;
}

/* A symlink, FIFO, socket or device node: what the host would follow or block on. */
static bool special(mode_t type)
{
	return type && !S_ISREG(type) && !S_ISDIR(type);
}

/* May an object of type @type be put at the entry @e (already passed entry_at())? */
static struct awfs_decision kind_at(const struct awfs_entry_pos *e, mode_t type, unsigned end)
{
	enum awfs_links l = decide_links(e->st);

	if (special(type) && (l == AWFS_LINKS_NONE || (l == AWFS_LINKS_READ_ONLY && !S_ISLNK(type))))
		return refused(AWFS_BLOCK_KIND, end, e->st);
	return allowed;
}

/*
 * May what @from holds, of type @type, be moved to @to? Into a closed tree
 * only from one at least as strict (a position decides, never what the
 * name holds now: a directory from a "read-only" tree may hold links, so
 * it never enters a "none" one), and never a special object, symlinks
 * included.
 */
static struct awfs_decision move_at(const struct awfs_entry_pos *from, mode_t type,
				    const struct awfs_entry_pos *to, unsigned end)
{
	if (closed(to->st) && (strictness(from->st) < strictness(to->st) || special(type)))
		return refused(AWFS_BLOCK_KIND, end, to->st);
	if (mixed_below(from->st))
		return refused(AWFS_BLOCK_KIND, end ? 0 : 1, from->st);
	if (mixed_below(to->st))
		return refused(AWFS_BLOCK_KIND, end, to->st);
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

struct awfs_decision decide_mknod(const struct awfs_entry_pos *e, mode_t mode)
{
	struct awfs_decision d = entry_at(e, 0);

	return d.how ? d : kind_at(e, mode & S_IFMT, 0);
}

struct awfs_decision decide_symlink(const struct awfs_entry_pos *e)
{
	struct awfs_decision d = entry_at(e, 0);

	if (!d.how)
		d = anchor_at(e, 0);
	return d.how ? d : kind_at(e, S_IFLNK, 0);
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

struct awfs_decision decide_link(const struct awfs_object_pos *o, mode_t type, const struct awfs_entry_pos *e)
{
	struct awfs_decision d = object_at(o, 0);

	if (!d.how)
		d = entry_at(e, 1);
	if (!d.how)
		d = anchor_at(e, 1);
	if (!d.how && special(type) && closed(e->st))	/* a link is made only by symlink() */
		d = refused(AWFS_BLOCK_KIND, 1, e->st);
	return d;
}

struct awfs_decision decide_rename(const struct awfs_entry_pos *from, mode_t ftype,
				   const struct awfs_entry_pos *to, mode_t ttype)
{
	struct awfs_decision d = entry_at(from, 0);

	if (!d.how)
		d = entry_at(to, 1);
	if (!d.how)
		d = anchor_at(from, 0);
	if (!d.how)
		d = anchor_at(to, 1);
	if (!d.how)
		d = move_at(from, ftype, to, 1);
	if (!d.how && ttype)	/* an exchange or a whiteout: something is left at @from */
		d = move_at(to, ttype, from, 0);
	return d;
}

/* A single-file rule (policy.h's single_file) names an entry of the directory @dir. */
static bool holds_single_file(const struct awfs_state *dir)
{
	const struct awfs_rule *const *r;
	size_t n = classify_alive(dir, &r), depth = classify_depth(dir);

	for (size_t i = 0; i < n; i++)
		if (r[i]->single_file && r[i]->cls == AWFS_CLASS_WRITE && r[i]->ncomps == depth + 1)
			return true;
	return false;
}

bool decide_stages_in(const struct awfs_state *dir)
{
	return classify_class(dir) == AWFS_CLASS_RO && holds_single_file(dir);
}

/* Whether @s is @n characters, each in @set. */
static bool made_of(const char *s, size_t n, const char *set)
{
	return strlen(s) == n && strspn(s, set) == n;
}

#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/*
 * Whether @name is one the writers that replace a file through a temporary
 * beside it give that temporary, in the directory @dir: the file's own name
 * and a suffix ("R.tmp.<pid>.<hex>": Claude Code's Write and Edit; "R.<hash>":
 * npm's write-file-atomic), the same hidden (".R.<suffix>": rsync, Go's
 * renameio), or the generators' own: GNU sed -i ("sed" and 6), perl -pi (8
 * letters and digits), Python's tempfile ("tmp" and 8), mktemp ("tmp." and
 * 10). Any other name stays refused, with its EROFS, so a plain file written
 * there is never taken in and then dropped.
 */
static bool temp_name(const struct awfs_state *dir, const char *name)
{
	const struct awfs_rule *const *r;
	size_t n = classify_alive(dir, &r), depth = classify_depth(dir);

	for (size_t i = 0; i < n; i++) {
		const char *f = r[i]->comps[r[i]->ncomps - 1];
		size_t len = strlen(f);

		if (!r[i]->single_file || r[i]->ncomps != depth + 1)
			continue;
		if (strncmp(name, f, len) == 0 && name[len] == '.' && name[len + 1])
			return true;
		if (name[0] == '.' && strncmp(name + 1, f, len) == 0 && name[len + 1] == '.' && name[len + 2])
			return true;
	}
	return (strncmp(name, "sed", 3) == 0 && made_of(name + 3, 6, ALNUM)) || made_of(name, 8, ALNUM) ||
	       (strncmp(name, "tmp", 3) == 0 && made_of(name + 3, 8, "abcdefghijklmnopqrstuvwxyz0123456789_")) ||
	       (strncmp(name, "tmp.", 4) == 0 && made_of(name + 4, 10, ALNUM));
}

struct awfs_decision decide_stage(const struct awfs_entry_pos *e, const char *name)
{
	struct awfs_decision d = entry_at(e, 0);

	if (d.how != AWFS_BLOCK_PARENT || !decide_stages_in(e->dir) || !temp_name(e->dir, name))
		return d;
	/* the name has no rule of its own: it inherits the directory's, or none */
	if (classify_rule(e->st) != classify_rule(e->dir) ||
	    (classify_class(e->st) != AWFS_CLASS_RO && classify_origin(e->st) != AWFS_ORIGIN_UNCLASSIFIED))
		return d;
	return allowed;
}

struct awfs_decision decide_replace(const struct awfs_entry_pos *from, const struct awfs_entry_pos *to)
{
	const struct awfs_rule *r = to->info ? NULL : classify_rule(to->st);

	if (!from->info && !to->info && from->dir == to->dir && r && r->single_file &&
	    classify_class(to->st) == AWFS_CLASS_WRITE && !classify_anchored(to->st))
		return allowed;
	return decide_rename(from, S_IFREG, to, 0);	/* a temporary is a regular file */
}
