/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * decide.h - the enforcement rule: which change needs which class, where.
 *
 * Pure: classified positions in, a decision out. No inode, no request, no
 * I/O, so tests/unit/test_decide.c walks the whole matrix below without
 * root or /dev/fuse. ops.c classifies, asks here, then refuses (verdict.c
 * turns the decision into the log line, the audit record and the
 * .awfs/denials entry, always EROFS) or calls the host.
 *
 * The matrix, as invariants (the first check that fails decides, in the
 * order written, so a message names the first position that refused):
 *  - a namespace change (create, mkdir, mknod, unlink, rmdir) needs the
 *    directory AND the entry to be writable: an allow_write path's parent
 *    stays read-only, so an agent can write inside cache-memory but cannot
 *    remove or replace cache-memory itself; and nothing is created at the
 *    position of a read-only or masked rule inside a writable tree (an
 *    absent rw/.git stays absent: no .git file redirecting to a gitdir);
 *  - a symlink is a namespace change that is also refused where a stricter
 *    rule is anchored (see below): it would redirect the rule's paths;
 *  - a change to an object (open for writing or with O_TRUNC, write,
 *    setattr, xattrs, fallocate, copy_file_range into it) needs the object
 *    to be writable; an open for reading only is never refused here;
 *  - link() needs the object writable, then the new entry as a namespace
 *    change, then no rule anchored at the new entry;
 *  - rename() (and RENAME_EXCHANGE) needs the source entry, then the target
 *    entry, as namespace changes, then no rule anchored at the source, then
 *    none at the target;
 *  - anchored: a read-only or masked rule that still matches below a
 *    position (a read-only .git inside a writable memory) anchors it: a
 *    directory moved in or out would carry the rule's paths out from under
 *    it, or plant what the agent wrote under it. Decided by positions only,
 *    never by what a name holds now, so no race can swap one in;
 *  - single-file rules (a literal allow_write regular file, policy.h's
 *    single_file) in a read-only directory: a create refused only because
 *    the directory is read-only may instead make a temporary there
 *    (decide_stage(): stage.h), when the name is one writers give their
 *    temporaries (the file's own and a suffix; sed -i's, perl -pi's,
 *    Python's tempfile's, mktemp's) and has no rule of its own; such
 *    a temporary, and nothing else, may be renamed onto a single-file rule
 *    of the same directory (decide_replace()), which replaces the file
 *    atomically; every other change to the directory stays refused. The
 *    caller (ops.c) vouches that @from is such a temporary and that both
 *    ends are in one directory inode: states alone cannot tell;
 *  - links = "none" or "read-only" (policy.h's awfs_links) on the rule of a
 *    writable entry (a closed tree): no FIFO, socket or device node is made
 *    there (mknod), linked there (link of such an object), or renamed there;
 *    no symlink either, with "none"; with "read-only" a symlink may be made
 *    (decide_symlink() allows it, and ops.c then checks its target: an
 *    absolute path under the root naming an existing read-only, unmasked
 *    object through no link, which nothing the agent does can change) but
 *    never linked or renamed in (a host-made relative link would point
 *    elsewhere); and nothing is renamed into a closed tree from a writable
 *    position whose rule is less strict ("any" below "read-only" below
 *    "none": a directory may hold what its tree allows), not even a regular
 *    file, so the
 *    answer never rests on what a name holds at the moment it is looked at
 *    (the agent could swap it for a link after); nor is anything renamed
 *    from or to a position below which an allow_write rule with other links
 *    still matches (the rename would carry that rule's paths where another
 *    applies, as an anchored rule's would be). The host reads such a tree
 *    after the agent and would follow, or block on, what is in it. The
 *    object's type is the caller's to give (0: unknown, no kind);
 *  - awfs's information directory and everything in it refuse every change,
 *    before any class is looked at;
 *  - only a writable class passes: read-only and masked refuse alike.
 * Reading is never decided here: a mask is served empty by ops.c, which
 * never looks below it on the host.
 */
#ifndef AWFS_DECIDE_H
#define AWFS_DECIDE_H

#include <stdbool.h>
#include <sys/types.h>

#include "classify.h"

/* Where a name is created, removed or replaced: a directory and a name in it. */
struct awfs_entry_pos {
	const struct awfs_state *dir;	/* the directory's state */
	const struct awfs_state *st;	/* the entry's: classify_child(dir, name);
					   NULL with info */
	bool info;			/* the directory is, or the name names, awfs's
					   information directory */
};

/* An object changed in place. */
struct awfs_object_pos {
	const struct awfs_state *st;
	bool info;			/* a node of the information directory */
};

enum awfs_blocker {
	AWFS_ALLOWED = 0,
	AWFS_BLOCK_SELF,	/* the object itself is not writable */
	AWFS_BLOCK_PARENT,	/* the directory holding the entry is not writable */
	AWFS_BLOCK_ENTRY,	/* the entry's own path is not writable */
	AWFS_BLOCK_ANCHOR,	/* a stricter rule is anchored at the entry */
	AWFS_BLOCK_INFO,	/* awfs's own information directory */
	AWFS_BLOCK_KIND,	/* links = "none"/"read-only": no such link or special file there */
	AWFS_BLOCK_TARGET,	/* links = "read-only": a symlink's target is not such (ops.c) */
};

struct awfs_decision {
	enum awfs_blocker how;		/* AWFS_ALLOWED, or what refused */
	unsigned end;			/* which position refused: 0 the first asked about
					   (the object of a link, the source of a rename),
					   1 the second (the new entry, the target) */
	const struct awfs_state *st;	/* the state that refused: the directory's for
					   AWFS_BLOCK_PARENT, else the position's (NULL
					   for AWFS_BLOCK_INFO) */
	const struct awfs_rule *rule;	/* the rule that decided: the anchored one, the
					   state's, or NULL (the root default, an
					   unclassified entry, the information directory) */
};

/* create, mkdir, unlink, rmdir */
struct awfs_decision decide_entry(const struct awfs_entry_pos *e);
/* mknod of an object of @mode (S_IFREG, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK) */
struct awfs_decision decide_mknod(const struct awfs_entry_pos *e, mode_t mode);
/* symlink */
struct awfs_decision decide_symlink(const struct awfs_entry_pos *e);
/* What a position's rule says of links: "any" unless it is writable and says otherwise. */
enum awfs_links decide_links(const struct awfs_state *st);
/* write, setattr, setxattr, removexattr, fallocate, copy_file_range (into) */
struct awfs_decision decide_object(const struct awfs_object_pos *o);
/* open with @flags (open(2)'s): a change when for writing or with O_TRUNC */
struct awfs_decision decide_open(int flags, const struct awfs_object_pos *o);
/* link @o, an object of type @type (S_IFMT bits), as the new entry @e */
struct awfs_decision decide_link(const struct awfs_object_pos *o, mode_t type, const struct awfs_entry_pos *e);
/*
 * rename the entry @from, an object of type @ftype, onto the entry @to;
 * @ttype is the type of what is left at @from: for RENAME_EXCHANGE what @to
 * holds, for RENAME_WHITEOUT a whiteout (S_IFCHR, a device node 0:0), else
 * 0. A type of 0 is unknown (the name is gone: the host's rename fails).
 */
struct awfs_decision decide_rename(const struct awfs_entry_pos *from, mode_t ftype,
				   const struct awfs_entry_pos *to, mode_t ttype);

/* Whether temporaries may be made in a directory in state @dir: read-only, holding a single-file rule. */
bool decide_stages_in(const struct awfs_state *dir);
/*
 * A create of the entry @e, named @name, refused by decide_entry() only
 * because its directory is read-only, in a directory that holds a
 * single-file rule, of a name that writers give their temporaries and that
 * has no rule of its own: allowed as a temporary (stage.h). Otherwise
 * decide_entry()'s refusal.
 */
struct awfs_decision decide_stage(const struct awfs_entry_pos *e, const char *name);
/*
 * The rename of a temporary @from (see decide_stage(); the caller knows it
 * is one) onto @to: allowed when @to is a single-file rule in the same
 * directory state; otherwise decide_rename()'s answer.
 */
struct awfs_decision decide_replace(const struct awfs_entry_pos *from, const struct awfs_entry_pos *to);

#endif
