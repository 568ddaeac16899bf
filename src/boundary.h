/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * boundary.h - what the policy means on this source, settled at mount,
 * before the first request: the literal allow_write targets checked (or
 * made), then the boundary said once, to the log and the audit file.
 *
 * Invariants: every target MUST be checked before any is made, so a refused
 * mount leaves nothing behind; nothing here follows a symlink on the host
 * (host.h's calls only).
 */
#ifndef AWFS_BOUNDARY_H
#define AWFS_BOUNDARY_H

#include <sys/stat.h>

#include "classify.h"
#include "host.h"
#include "policy.h"

/*
 * Every literal allow_write target must exist or carry create. All are
 * checked before any is created, so a refused mount leaves nothing behind.
 * The second pass marks the rules whose target is a regular file (made or
 * found): single files, writable in place only. Returns 0, or 1 when any
 * target is refused (each one said on stderr).
 */
int boundary_prepare_targets(struct awfs_policy *p, int root_fd, const struct stat *root_st,
			     const char *source);
/*
 * Say what the boundary is: one log line (with what the source's root
 * says to an ACL read, @acls, the data path, @data_path, and what the
 * requests come through, @requests, in words), the audit mount record
 * (both in a word, @data_word and @requests_word), and each unclassified
 * top-level entry found now (logged and audited once).
 */
void boundary_log(const struct awfs_policy *p, struct awfs_classifier *c, int root_fd,
		  const char *mnt, const char *source, const char *info_dir, enum host_acls acls,
		  const char *data_path, const char *data_word, const char *requests,
		  const char *requests_word);

#endif
