/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * remount.h - replacing a dead awfs mount without a moment of exposure.
 *
 * A dead awfs (its daemon killed) leaves a mount where every access fails
 * with ENOTCONN, on purpose (awfs.c: never auto_unmount). A new awfs for
 * the same mount point replaces it by mounting on top of it. Invariants:
 *  - the directory beneath the dead mount MUST NOT be uncovered in this
 *    mount namespace, not even for a moment: when the mount point is the
 *    source, a child opens it in a private namespace of its own and passes
 *    the fd back (remount_find_dead());
 *  - the new mount goes on top of the dead one, which stays until the new
 *    one is unmounted (remount_unmount()): the mount point always shows an
 *    awfs, live or dead;
 *  - only a dead awfs is replaced: a live one (statfs reaches its daemon),
 *    or anything not awfs, is never touched.
 *
 * Errors: a function that can fail says why on stderr (`awfs: what: why`)
 * and returns 0 or a positive errno.
 */
#ifndef AWFS_REMOUNT_H
#define AWFS_REMOUNT_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Whether a dead awfs is mounted at @mountpoint: sets *dead, @abs to the
 * mount point's absolute path (realpath() would fail on a dead mount) and
 * *beneath to the directory under it (or -1). EBUSY for a live awfs there.
 */
int remount_find_dead(const char *mountpoint, char *abs, size_t size, bool *dead, int *beneath);
/* Mount @se at @mnt on top of the dead awfs there, serving @src. */
int remount_mount(struct fuse_session *se, const char *mnt, const char *src);
/* After fuse_session_unmount(): unmount ours, then the dead mount beneath it. */
void remount_unmount(const char *mnt);

#endif
