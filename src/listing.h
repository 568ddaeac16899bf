/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * listing.h - directory listings read as the kernel asks for them, never
 * whole.
 *
 * A READDIR asks for a page of entries from an offset; awfs answers from
 * the host directory's stream, read as far as that page needs. The offset
 * given to the kernel after an entry carries the listing's number and the
 * index of the next entry, so two listings of a directory never mix, and
 * a listing continues wherever it is asked to: from its open stream, if
 * it is there still (a small table, the least recently used out first), or
 * from a stream opened again and moved to the nearest checkpoint at or before
 * the index (every LISTING_CHECKPOINT entries, kept per directory: the
 * host's own position there), then read forward to it.
 *
 * Invariants:
 *  - what one request costs is bounded by its page and LISTING_CHECKPOINT
 *    entries read past, whatever the directory's size;
 *  - the memory is bounded: LISTING_STREAMS open streams (each a host fd
 *    and its buffer, and the entries of a page) in all, and per directory
 *    a checkpoint of 16 bytes every LISTING_CHECKPOINT entries;
 *  - a listing shows what the host's stream gives as it is read: an entry
 *    made or removed meanwhile may be listed or not (as readdir(3) allows),
 *    never twice and never one that was never there; only a listing whose
 *    stream went, continued after the directory changed, may show an entry
 *    twice or miss one;
 *  - listener thread only.
 */
#ifndef AWFS_LISTING_H
#define AWFS_LISTING_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "inode.h"

#define LISTING_STREAMS 16
#define LISTING_CHECKPOINT 1024

/* A directory entry as listed. */
struct dir_entry {
	char *name;
	ino_t ino;
	unsigned char type;
};

/* What ops.c decides about the entries: how each host entry is shown, what follows them. */
struct listing_shaper {
	/*
	 * The host stream of @dir into *@dp (0 or an errno); *@dp NULL for a
	 * directory served without one (every entry is then the tail's).
	 */
	int (*open)(struct awfs_inode *dir, DIR **dp);
	/* Shape the host entry @de of @dir (read from @dp) into @out; false: not listed. */
	bool (*shape)(struct awfs_inode *dir, DIR *dp, const struct dirent *de,
		      struct dir_entry *out);
	/*
	 * The entries after the host's (@dp at its end, or NULL): each passed to
	 * @add with @ctx, in order.
	 */
	void (*tail)(struct awfs_inode *dir, DIR *dp,
		     void (*add)(void *ctx, const char *name, ino_t ino, unsigned char type),
		     void *ctx);
};

struct listing;

void listing_init(const struct listing_shaper *shaper);
/*
 * The listing of @dir that continues at offset @off (0: a new one), ready
 * to give the entry at *@index. 0, or an errno from the host.
 */
int listing_at(struct awfs_inode *dir, off_t off, struct listing **out, size_t *index);
/*
 * The entry at @index of @l (indexes asked in order, from the one
 * listing_at() was given), or NULL past the last; *@err holds a host
 * error, if any. The pointer lives until the next call.
 */
const struct dir_entry *listing_entry(struct listing *l, size_t index, int *err);
/* The offset the kernel is given after the entry at @index of @l. */
off_t listing_off(const struct listing *l, size_t index);
/* @l is over (its end was seen): its stream is closed. */
void listing_end(struct listing *l);
/* @dir is being freed: its streams and checkpoints go with it. */
void listing_forget(struct awfs_inode *dir);
/* Close every stream (the session ended). */
void listing_fini(void);

#endif
