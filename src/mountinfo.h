/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mountinfo.h - what /proc/self/mountinfo says is mounted at a path.
 */
#ifndef AWFS_MOUNTINFO_H
#define AWFS_MOUNTINFO_H

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
/* Free what mountinfo_find() filled. */
void mountinfo_free(struct awfs_mount *m);

#endif
