/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mountinfo.h - what /proc/self/mountinfo says is mounted at a path, or of a device.
 */
#ifndef AWFS_MOUNTINFO_H
#define AWFS_MOUNTINFO_H

#include <stddef.h>
#include <sys/types.h>

struct awfs_mount {
	char *path;		/* mount point, unescaped */
	char *fstype;		/* "fuse.awfs" for an awfs mount */
	char *source;		/* awfs sets it to the source directory */
	char *options;		/* per-mount options (rw,nosuid,...) */
	char *super_options;	/* per-superblock options (default_permissions,...) */
};

/*
 * The mount that is visible at @path (the last one mounted there), read from
 * /proc/self/mountinfo. Returns 0, ENOENT when nothing is mounted exactly at
 * @path, or another errno value.
 */
int mountinfo_find(const char *path, struct awfs_mount *out);
/*
 * The file system type of a mount of the device @dev ("virtiofs",
 * "fuse.sshfs"), in @buf: 0, ENOENT when no mount has it, or an errno.
 */
int mountinfo_fstype_of(dev_t dev, char *buf, size_t size);
/* Free what mountinfo_find() filled. */
void mountinfo_free(struct awfs_mount *m);

#endif
