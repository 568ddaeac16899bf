/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * changes.h - the change record: every change the agent made where it may,
 * as "change" records in the audit trail (audit.h), for a reviewer of the
 * run (awfsctl changes) and for whatever reads the trees after the agent.
 *
 * On only when asked (awfs --record-changes, or record_changes = true in
 * the policy) and only with --audit; off, every entry point returns at once.
 *
 * The request path hands each change to one thread, the recorder, through a
 * queue of bounded length, and returns: the record is formatted, hashed and
 * written there, never on the listener or a worker. What the recorder does:
 *  - a namespace or attribute change (create, mkdir, mknod, symlink, link,
 *    unlink, rmdir, rename, exchange, setattr, truncate, xattr) is one
 *    record, in the order the requests were served;
 *  - a file written (write, copy_file_range, fallocate, O_TRUNC, create,
 *    truncate) is one "write" record with its size and SHA-256, hashed from
 *    an fd of the file itself (a dup awfs passes, read through its own
 *    reopen: awfs's own use, no caller's) at its last close, coalesced: a
 *    file closed again before its record is written is one record (a
 *    thousand open-append-close rounds on one log, one record); held until
 *    a second has passed without another close (ten at most), or a change
 *    names its path or a directory above it (so a write is always recorded
 *    under the path it had, before the rename or unlink that follows it),
 *    or 64 are held;
 *  - bounded: 8,192 changes queued, 64 MiB of records a mount, 256 fds
 *    (counted in inode.c's budget), 1 GiB hashed of a file and 8 GiB of a
 *    mount (past them a file is recorded with its size, unhashed, and says
 *    why); what does not fit is dropped and counted (and the write handles
 *    still open at unmount, apart), and the count is written (a "changes"
 *    record at unmount, and the log), so a reader knows the record is
 *    incomplete.
 * Paths are named as the denial lines name them (the path under the mount
 * as the agent sees it), encoded as names (json.h); with the object
 * ("dev:ino") the path holds after the change, so that a reader can tell
 * the names of one file apart from its content (a hard link, a write
 * through a name removed since, a number reused by a new file).
 */
#ifndef AWFS_CHANGES_H
#define AWFS_CHANGES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One change as the request path knows it; strings are copied. */
struct awfs_change {
	const char *op;		/* "create", "mkdir", "mknod", "symlink", "link", "unlink",
				   "rmdir", "rename", "exchange", "setattr", "truncate", "xattr" */
	const char *path;	/* what was changed, or the source of a rename or link */
	const char *to;		/* the second path of a rename, exchange or link, or NULL */
	const char *target;	/* a symlink's target, or NULL */
	const char *kind;	/* what was made: "file", "dir", "symlink", "fifo",
				   "socket", "device", "whiteout" (left by
				   RENAME_WHITEOUT), or NULL */
	const char *xattr;	/* an xattr's name, or NULL */
	uint64_t mode;		/* setattr: the new mode, with has_mode */
	uint64_t owner, group;	/* setattr: the new owner, group, with has_owner, has_group */
	uint64_t size;		/* truncate: the new size, with has_size */
	bool has_mode, has_owner, has_group, has_size;
	bool has_object;	/* dev, ino: the object at the path (the target's, for
				   a rename or link) after the change */
	dev_t dev;
	ino_t ino;
	bool times;		/* setattr: times set */
	bool replaced;		/* rename: the target existed and was replaced */
	bool removed;		/* xattr: removed, not set */
	uid_t uid;
	pid_t pid;
};

/* Turn the record on (before changes_start()). */
void changes_enable(void);
/* Whether the record is on. */
bool changes_on(void);
/* Start the recorder thread (after any fork); 0 or an errno. */
int changes_start(void);
/* Record @c. */
void changes_note(const struct awfs_change *c);
/*
 * The file @dev:@ino, named @path, was written and closed for the last
 * time by @uid, @pid; @fd is an fd of it that the recorder takes (and
 * closes).
 */
void changes_written(int fd, dev_t dev, ino_t ino, const char *path, uid_t uid, pid_t pid);
/* The fds the record holds now (inode.c counts them in its budget). */
size_t changes_fds(void);
/* A handle of a written file opened for writing (+1) or closed (-1): those open at unmount make the record incomplete. */
void changes_open_written(int delta);
/* Write what is held, the summary record, and stop the recorder. */
void changes_stop(void);

#endif
