/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * info.h - the information directory awfs serves at the mount root
 * (".awfs" unless renamed or switched off): README says in plain words where
 * the agent may write and what is masked and why; denials lists the recent
 * refusals in the log format. An agent that hits EROFS can read why.
 *
 * Everything of it is here: its three nodes (inodes of kind
 * AWFS_INODE_INFO, static, never in the inode table, never freed), their
 * attributes, the snapshots open files read, and the text. ops.c only asks.
 *
 * Invariants: the text is made from the policy and from the agent's own
 * refused requests only, never from anything the host holds under a mask;
 * the directory is read-only (decide.h refuses every change to its nodes
 * and to its name, before any class); its nodes have no host fd.
 */
#ifndef AWFS_INFO_H
#define AWFS_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "inode.h"
#include "policy.h"

#define AWFS_INFO_KEPT 100	/* denials kept for the denials file */

/* Set up for @p mounted at @mnt; @name is the directory's name, or NULL for none. */
void info_init(const char *name, const struct awfs_policy *p, const char *mnt);
/* The directory's name, or NULL when switched off. */
const char *info_name(void);
/*
 * Remember a denial line (already escaped) of a caller @uid; @first: the
 * first of its operation, directory and rule for that caller. At most
 * AWFS_INFO_KEPT are kept, the repeats going first (info.c).
 */
void info_add_denial(const char *line, uint32_t uid, bool first);
/* The README text (caller frees). */
char *info_readme(size_t *len);
/* The recent denials, oldest first (caller frees). */
char *info_denials(size_t *len);
/* Free what info_init() and info_add_denial() kept. */
void info_fini(void);

/* ------------------------------------------------------------ its nodes */

/* Hang the directory below @root (its state is root's); after inode_init(). */
void info_attach(struct awfs_inode *root);
/* Whether @name in @dir is the information directory itself. */
bool info_is_name(const struct awfs_inode *dir, const char *name);
/* The directory's node (its listings hang there). */
struct awfs_inode *info_dir_node(void);
/*
 * The node @name in @dir: the directory, at the root, or one of its files,
 * in it. NULL when there is none.
 */
struct awfs_inode *info_lookup(const struct awfs_inode *dir, const char *name);
/* The directory's @i-th file, or NULL past the last (for listings). */
const struct awfs_inode *info_file(size_t i);
/* The inode number served for the node @in. */
uint64_t info_ino(const struct awfs_inode *in);
/*
 * The attributes of @in: its modes say writable, as a mask's do, so that
 * every write reaches awfs, which refuses it with EROFS and logs it,
 * instead of the kernel's silent EACCES for anyone but root; a file's size
 * is its text's now.
 */
void info_attr(const struct awfs_inode *in, struct stat *st);
/*
 * Open the file @in for the caller @uid: a snapshot of its text, read
 * until released (the text changes between opens), shared with the opens
 * that found the same. The handle in *@fh; 0, or EMFILE when @uid holds
 * AWFS_INFO_OPENS already. Listener thread.
 */
#define AWFS_INFO_OPENS 32
int info_open(const struct awfs_inode *in, uint32_t uid, uint64_t *fh);
/* The snapshot of the open handle @fh. */
const char *info_handle_text(uint64_t fh, size_t *len);
/* Release the handle @fh. Listener thread. */
void info_release(uint64_t fh);
/* Release every handle still open (the session ended before the kernel did). */
void info_release_all(void);

#endif
