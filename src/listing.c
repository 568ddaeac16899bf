/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * listing.c - directory listings read page by page (listing.h).
 *
 * A stream is the host directory opened for one listing: where its next
 * entry comes from, and the entries read for the page being answered (the
 * one that did not fit stays for the next READDIR). The streams are a
 * fixed table: a listing that finds none of its own takes a free slot or
 * the least recently used one, whose listing will then start again from a
 * checkpoint when it is continued. So an agent that starts thousands of
 * listings of a huge directory and reads a page of each costs awfs at most
 * LISTING_STREAMS fds, and each request at most a page and the
 * LISTING_CHECKPOINT entries between a checkpoint and its index.
 *
 * Checkpoints are the host's own positions (telldir(3)), which stay valid
 * for a new open of the directory (NFS relies on it; ext4, xfs, btrfs and
 * tmpfs keep them); they belong to the directory, not to a listing, so a
 * listing started again after its stream went uses another listing's. A
 * checkpoint taken before the directory changed moves a listing to about
 * the same place, not exactly: an entry may be shown twice or not at all,
 * which readdir(3) allows for a directory changed while it is read.
 */
#include "listing.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A checkpoint: the host position from which the entry at @index is read next. */
struct mark {
	size_t index;
	long pos;
};

struct listing_marks {
	size_t n, cap;
	struct mark *v;		/* by index */
};

struct listing {
	struct awfs_inode *dir;	/* NULL: a free slot */
	DIR *dp;		/* NULL: a directory without a host stream */
	size_t base;		/* the index of pend[0] */
	size_t next;		/* the index the next entry read gets: base + npend */
	struct dir_entry *pend;	/* read, not yet passed on for good (a page or two) */
	size_t npend, cap;
	uint64_t used;		/* when it last served: the oldest slot goes first */
	uint32_t gen;		/* the listing's number, in its offsets */
	bool ended;		/* every entry is read: nothing comes after pend */
};

static const struct listing_shaper *sh;
static struct listing slots[LISTING_STREAMS];
static uint64_t ticks;
static uint32_t gens;

void listing_init(const struct listing_shaper *shaper)
{
	sh = shaper;
}

off_t listing_off(const struct listing *l, size_t index)
{
	return (off_t)(((uint64_t)l->gen << 32) | (uint64_t)(index + 1));
}

/* Record the checkpoint (@index, @pos) of @dir, replacing one at the same index. */
static void mark_put(struct awfs_inode *dir, size_t index, long pos)
{
	struct listing_marks *m = dir->marks;
	size_t lo = 0, hi;

	if (!m)
		m = dir->marks = util_xcalloc(1, sizeof(*m));
	for (hi = m->n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->n && m->v[lo].index == index) {
		m->v[lo].pos = pos;
		return;
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 8;
		m->v = util_xrealloc(m->v, m->cap * sizeof(*m->v));
	}
	memmove(m->v + lo + 1, m->v + lo, (m->n - lo) * sizeof(*m->v));
	m->v[lo] = (struct mark){ .index = index, .pos = pos };
	m->n++;
}

/* The last checkpoint of @dir at or before @index, or NULL. */
static const struct mark *mark_before(const struct awfs_inode *dir, size_t index)
{
	const struct listing_marks *m = dir->marks;
	const struct mark *best = NULL;
	size_t lo = 0, hi = m ? m->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].index <= index) {
			best = &m->v[mid];
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return best;
}

/* Drop what @l read before @index: the kernel has it. */
static void pend_drop(struct listing *l, size_t index)
{
	size_t k = index > l->next ? l->npend : index > l->base ? index - l->base : 0;

	for (size_t i = 0; i < k; i++)
		free(l->pend[i].name);
	memmove(l->pend, l->pend + k, (l->npend - k) * sizeof(*l->pend));
	l->npend -= k;
	l->base += k;
}

/* Append an entry to @ctx, a listing (the shaper's tail calls this). */
static void pend_add(void *ctx, const char *name, ino_t ino, unsigned char type)
{
	struct listing *l = ctx;

	if (l->npend == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 32;
		l->pend = util_xrealloc(l->pend, l->cap * sizeof(*l->pend));
	}
	l->pend[l->npend++] = (struct dir_entry){ .name = util_xstrdup(name), .ino = ino,
						  .type = type };
	l->next++;
}

/* Read the next entry of @l (or, at the host's end, the tail): 0 or an errno. */
static int read_one(struct listing *l)
{
	struct dirent *de;
	struct dir_entry e;

	if (!l->dp) {
		sh->tail(l->dir, NULL, pend_add, l);
		l->ended = true;
		return 0;
	}
	for (;;) {
		long pos = telldir(l->dp);

		errno = 0;
		de = readdir(l->dp);
		if (!de) {
			if (errno)
				return errno;
			sh->tail(l->dir, l->dp, pend_add, l);
			l->ended = true;
			return 0;
		}
		if (!sh->shape(l->dir, l->dp, de, &e))
			continue;
		if (l->next % LISTING_CHECKPOINT == 0 && l->next)
			mark_put(l->dir, l->next, pos);
		pend_add(l, e.name, e.ino, e.type);
		free(e.name);
		return 0;
	}
}

/* Close @l's stream and free what it read: the slot is free. */
static void slot_free(struct listing *l)
{
	if (l->dp)
		closedir(l->dp);
	pend_drop(l, SIZE_MAX);
	free(l->pend);
	memset(l, 0, sizeof(*l));
}

/* A slot for a new stream: a free one, else the least recently used. */
static struct listing *slot_take(void)
{
	struct listing *old = &slots[0];

	for (size_t i = 0; i < LISTING_STREAMS; i++) {
		if (!slots[i].dir)
			return &slots[i];
		if (slots[i].used < old->used)
			old = &slots[i];
	}
	slot_free(old);
	return old;
}

/*
 * Open a stream of @dir in @l, at @index: from its checkpoint, read
 * forward. A listing awfs handed out has read past a checkpoint at most
 * LISTING_CHECKPOINT entries (and the tail) before any index it gave; an
 * offset further than twice that from one is not awfs's (an lseek(2) to a
 * made-up offset, say), and reading the directory up to it is refused.
 */
static int start(struct listing *l, struct awfs_inode *dir, size_t index)
{
	const struct mark *m = mark_before(dir, index);
	size_t from = m ? m->index : 0;
	int err;

	if (index - from > 2 * LISTING_CHECKPOINT)
		return EINVAL;
	err = sh->open(dir, &l->dp);
	if (err)
		return err;
	l->dir = dir;
	if (l->dp && from > 0) {
		seekdir(l->dp, m->pos);
		l->base = l->next = from;
	}
	while (!err && l->next <= index && !l->ended) {
		err = read_one(l);
		pend_drop(l, index);
	}
	if (err)
		slot_free(l);
	return err;
}

int listing_at(struct awfs_inode *dir, off_t off, struct listing **out, size_t *index)
{
	uint32_t gen = (uint32_t)((uint64_t)off >> 32);
	struct listing *l = NULL;
	int err;

	*index = off > 0 ? (size_t)((uint64_t)off & 0xffffffffU) : 0;
	/* offset 0 is a new listing: what the directory holds now */
	for (size_t i = 0; off > 0 && i < LISTING_STREAMS && !l; i++)
		if (slots[i].dir == dir && slots[i].gen == gen && slots[i].base <= *index &&
		    *index <= slots[i].next)
			l = &slots[i];
	if (!l) {
		l = slot_take();
		err = start(l, dir, *index);
		if (err)
			return err;
		/* a listing continued whose stream went keeps its number */
		l->gen = off > 0 ? gen : (gens = gens % 0x7fffffffU + 1);
	}
	l->used = ++ticks;
	pend_drop(l, *index);
	*out = l;
	return 0;
}

const struct dir_entry *listing_entry(struct listing *l, size_t index, int *err)
{
	*err = 0;
	/* what was given stays until the next READDIR: the kernel may ask for it again */
	while (l->next <= index && !l->ended) {
		*err = read_one(l);
		if (*err)
			return NULL;
	}
	return index < l->next ? &l->pend[index - l->base] : NULL;
}

void listing_end(struct listing *l)
{
	slot_free(l);
}

void listing_forget(struct awfs_inode *dir)
{
	for (size_t i = 0; i < LISTING_STREAMS; i++)
		if (slots[i].dir == dir)
			slot_free(&slots[i]);
	if (dir->marks) {
		free(dir->marks->v);
		free(dir->marks);
		dir->marks = NULL;
	}
}

void listing_fini(void)
{
	for (size_t i = 0; i < LISTING_STREAMS; i++)
		if (slots[i].dir)
			slot_free(&slots[i]);
}
