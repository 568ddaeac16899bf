/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ops.h - the FUSE low-level handlers: the policy applied to every request.
 */
#ifndef AWFS_OPS_H
#define AWFS_OPS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stdint.h>

#include "classify.h"
#include "policy.h"

struct awfs_ops_config {
	const struct awfs_policy *policy;
	struct awfs_classifier *classifier;
	const char *mountpoint;		/* where the agent sees the tree */
	const char *source;		/* the host directory served (for messages) */
	/*
	 * How long the kernel may keep entries and attributes: for writable
	 * and masked paths, which change only through awfs while it is
	 * mounted (masks never), and for read-only paths, which the host may
	 * change under the agent (a gateway spilling payloads).
	 */
	double timeout_own;
	double timeout_shared;
	/*
	 * Read-only paths in a directory awfs watches (watch.h): host changes
	 * there are told to the kernel as they happen, so this only bounds
	 * what a watch cannot see. Watching is on when it exceeds
	 * timeout_shared.
	 */
	double timeout_watched;
	bool keep_cache;
	bool xattr;
	const char *info_dir;		/* the information directory's name, or NULL */
};

/* The handler table. */
extern const struct fuse_lowlevel_ops ops_lowlevel;

/* Configure the handlers; call before the session starts. @cfg must outlive it. */
void ops_init(const struct awfs_ops_config *cfg);
/* Free what the handlers kept; after the session ended. */
void ops_fini(void);

#endif
