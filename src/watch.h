/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch.h - host changes in read-only directories, told to the kernel as
 * they happen.
 *
 * Read-only paths are where the host writes while the agent runs (a
 * gateway spilling payloads). Without a watch the kernel may keep what it
 * learnt of them for a second only, and every access after that is a
 * request. With one (inotify, per read-only directory the kernel holds),
 * each change the host makes there is turned into an invalidation of the
 * name, of the directory and of the file changed, so the kernel may keep
 * the rest for longer (cfg->timeout_watched): fresher and faster at once.
 *
 * Invalidations come from the watcher thread, never from a request's own
 * (libfuse's rule: a notification waits for the directory's lock, which a
 * request in that directory holds until it is answered). The kernel orders
 * them after a lookup or listing in flight in the same directory (both hold
 * its lock) and after a GETATTR in flight (attribute versions), so a reply
 * made from the host's state before the change never outlives the change.
 */
#ifndef AWFS_WATCH_H
#define AWFS_WATCH_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <stdbool.h>

#include "classify.h"
#include "inode.h"

/* Errors: a function that can fail returns 0 or a positive errno (as host.h). */

/*
 * Open the inotify instance; @c classifies a changed name, to find the
 * inode it has. 0, or an errno (nothing is watched then: read-only paths
 * keep the short timeout).
 */
int watch_init(struct awfs_classifier *c);
/*
 * Watch the host directory @dir (the listener thread); false when not
 * watched: no instance (watch_init() not called, or failed), a file system
 * inotify cannot follow, the watch limit.
 */
bool watch_dir(struct awfs_inode *dir);
/* Whether changes in @dir are being watched (any thread). */
bool watch_covers(const struct awfs_inode *dir);
/* Stop watching @dir, before its fd is closed. */
void watch_forget(struct awfs_inode *dir);

/* The watcher thread: started once the session exists; 0 or an errno. */
int watch_start(struct fuse_session *se);
/* Ask it to stop; it may be waiting in a notification: serve until watch_done(). */
void watch_stop(void);
bool watch_done(void);
/* Join it and close the instance. */
void watch_fini(void);

#endif
