/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stage.h - temporaries beside single-file rules: the table of files an
 * agent's tool made to replace a single writable file atomically.
 *
 * A single-file rule (agent-step-summary.md: a literal allow_write path that
 * is a regular file at mount) sits in a read-only directory. The common way
 * tools write a file (Claude Code's Write and Edit, sed -i, perl -pi,
 * Python's tempfile + os.replace, npm's write-file-atomic) is a new file
 * beside it, renamed over it. awfs lets exactly that through and nothing
 * more: the new file is made with no name on the host (O_TMPFILE), kept here
 * under the name the tool gave it, and gets a name on the host only by its
 * rename onto a single-file rule of the same directory (ops.c, decide.h's
 * decide_stage() and decide_replace()). Removed, or left when awfs exits, it
 * is gone with its last fd: nothing is left for the host to trip on.
 *
 * A source that cannot make unnamed files (virtiofs from a daemon without
 * FUSE_TMPFILE, as in AWF's microVM guests) gets a hidden name of awfs's
 * own instead, AWFS_STAGE_PREFIX and random hex, in that directory: never
 * listed, never looked up, refused to every request, removed at unlink, at
 * a failed replace and when awfs exits; a crash of awfs leaves it (the one
 * thing an O_TMPFILE source never sees).
 *
 * Invariants:
 *  - an entry holds one reference on its inode, and the inode's staged
 *    flag is set exactly while the entry exists; its unnamed flag, for
 *    the inode's whole life (ops.c never opens it by name);
 *  - a temporary is linked nowhere (ops.c's ll_link refuses it);
 *  - at most AWFS_STAGE_PER_UID entries per caller uid: an agent that
 *    leaves its temporaries fills only its own share;
 *  - listener thread only (CREATE, LOOKUP, UNLINK, RENAME, READDIR, the
 *    only callers, run there: inode.h), so no lock.
 */
#ifndef AWFS_STAGE_H
#define AWFS_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "inode.h"

#define AWFS_STAGE_PREFIX ".awfs-staged-"
#define AWFS_STAGE_PER_UID 64

struct awfs_staged {
	struct awfs_inode *dir;		/* where it was made (in->parent: held by in) */
	char *name;			/* the name its maker gave it there */
	struct awfs_inode *in;		/* one reference, the table's */
	int keep;			/* an fd of the file: keeps an unnamed one alive */
	char *hidden;			/* its name on the host, or NULL: it has none */
	int hidden_dir;			/* with hidden: an O_PATH fd of the directory */
	uid_t uid;			/* its maker */
	struct awfs_staged *next;
};

/* The temporary @name in @dir, or NULL. */
struct awfs_staged *stage_find(const struct awfs_inode *dir, const char *name);
/* How many temporaries @uid has now. */
size_t stage_count(uid_t uid);
/*
 * Enter the temporary @in (whose reference the table takes), made by @uid as
 * @name in @dir, kept alive by @keep, named @hidden on the host (owned,
 * may be NULL) in the directory @hidden_dir (owned, -1 with no name).
 */
struct awfs_staged *stage_add(struct awfs_inode *dir, const char *name, struct awfs_inode *in,
			      int keep, char *hidden, int hidden_dir, uid_t uid);
/* Remove @s from the table and free it (its inode's reference is dropped). */
void stage_drop(struct awfs_staged *s);
/* Whether @name is one awfs gives its hidden temporaries. */
bool stage_is_hidden(const char *name);
/* At exit: drop every entry, calling @left on each first. */
void stage_fini(void (*left)(const struct awfs_staged *s));

#endif
