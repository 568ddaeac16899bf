/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * info.h - the information directory awfs serves at the mount root
 * (".awfs" unless renamed or switched off): README says in plain words where
 * the agent may write and what is masked and why; denials lists the recent
 * refusals in the log format. An agent that hits EROFS can read why.
 *
 * Invariants: the text is made from the policy and from the agent's own
 * refused requests only, never from anything the host holds under a mask;
 * the directory is read-only.
 */
#ifndef AWFS_INFO_H
#define AWFS_INFO_H

#include <stddef.h>

#include "policy.h"

#define AWFS_INFO_DENIALS 100

/* Set up for @p mounted at @mnt; @name is the directory's name, or NULL for none. */
void info_init(const char *name, const struct awfs_policy *p, const char *mnt);
/* The directory's name, or NULL when switched off. */
const char *info_name(void);
/* Remember a denial line (already escaped); the last AWFS_INFO_DENIALS are kept. */
void info_add_denial(const char *line);
/* The README text (caller frees). */
char *info_readme(size_t *len);
/* The recent denials, oldest first (caller frees). */
char *info_denials(size_t *len);
/* Free what info_init() and info_add_denial() kept. */
void info_fini(void);

#endif
