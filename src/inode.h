/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inode.h - the table of inodes the kernel knows about.
 *
 * A host directory is keyed by (st_dev, st_ino): one directory is one inode,
 * whose classification state is the one of the name it was last found by;
 * a host non-directory by (st_dev, st_ino, state): it keeps the class of the
 * path it was found by (inode.c says why both are safe). Each is referenced
 * by the file handle the host gave for it at lookup (name_to_handle_at) and
 * an O_PATH | O_NOFOLLOW fd opened from that handle when a request needs
 * it, kept in a cache of bounded size (inode_fd()); no host path is ever
 * resolved again. Where the source gives no handle, the inode keeps its
 * fd for its whole life (and the trimmer, loop.c, bounds how many).
 *
 * A masked inode is keyed by (parent, name) and holds nothing of the host:
 * no fd, no host inode number; what is served is made up (ops.c).
 *
 * A regular file's O_PATH fd is turned, at its first plain read-only open,
 * into an O_RDONLY fd of the same file under the same number (readable):
 * every plain read-only open then shares it, so OPEN and RELEASE make no
 * system call.
 *
 * Three kinds of inode (enum awfs_inode_kind), and the rule every handler
 * rests on: ONLY A HOST INODE HAS A HOST OBJECT, and only a host inode can
 * pass a write check. A masked inode is in a masked class (never
 * writable); an information node is refused by decide.h before any class.
 * So a host_* call made after a passing write check (ops.c) always has a
 * host fd to work on; a read path tells the kinds apart itself.
 *
 * Invariants:
 *  - an inode lives while its reference count is above zero: one per kernel
 *    lookup (dropped by forget) plus one per child that names it as parent
 *    (every masked child; a host non-directory, for the directory it was
 *    first found in), so a child's parent pointer is always live;
 *  - the nodeid given to the kernel is the inode's address; the root is 1;
 *  - the root and the nodes of the information directory (info.c) are
 *    static and never freed; their reference counts are not kept.
 *
 * Threads (the contract a change to the request loop, loop.c, must keep):
 * one thread, the listener, reads /dev/fuse and serves every request but
 * those loop.c's is_slow() hands to a worker (READ, FSYNC, FSYNCDIR,
 * FALLOCATE, LSEEK, COPY_FILE_RANGE: they may wait on the disk). What that
 * allows:
 *  - on the listener only, without a lock: cfd (through inode_fd(), which
 *    aborts elsewhere; an inode without a handle keeps one cfd for life,
 *    which inode_open() may then read anywhere), readable, marks (and
 *    listing.c's streams), folds, linked, opens (inode_opened()/inode_released(),
 *    which also take table_lock for the counts), and info.c's list of open
 *    snapshots (a worker's READ or LSEEK reads an open one's text: the
 *    kernel releases a file only after its reads);
 *  - under table_lock, on any thread: the table, refs, the names the
 *    trimmer reads (kparent, kname, kparent2, kname2), dead, the LRU and
 *    cache lists;
 *  - state: written under table_lock, read anywhere without it (one
 *    aligned pointer to an immutable state);
 *  - written before the inode is published, then only read: kind, info,
 *    dev, ino or mask_ino, type, parent, name, handle, mnt, fhb;
 *  - wd: the watcher's (watch.c says how it is shared).
 * A worker reaches the host through its request's open file (fh) or a fd
 * of its own (inode_open()), never through cfd. A request moved from the
 * listener to a worker must not touch a listener-only field.
 */
#ifndef AWFS_INODE_H
#define AWFS_INODE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "util.h"

struct awfs_state;
struct listing_marks;	/* a directory's listing checkpoints (listing.c) */

enum awfs_inode_kind {
	AWFS_INODE_MASK = 0,	/* masked: served empty, made up, nothing of the host */
	AWFS_INODE_HOST,	/* a host object, referenced by handle or fd */
	AWFS_INODE_INFO,	/* a node of the information directory (info.c) */
};

/* The nodes of the information directory (an AWFS_INODE_INFO inode's info). */
enum awfs_info_node {
	AWFS_INFO_NODE_NONE = 0,
	AWFS_INFO_NODE_DIR,		/* the directory */
	AWFS_INFO_NODE_README,
	AWFS_INFO_NODE_DENIALS,
};

/* What awfs knows of whether a directory folds case on the host (its folds; ops.c asks). */
enum awfs_folds {
	AWFS_FOLDS_UNKNOWN = 0,	/* not asked yet, or the host could not tell (host_case) */
	AWFS_FOLDS_NOT,		/* names are matched byte for byte */
	AWFS_FOLDS,		/* the host folds case: the directory is refused */
};

struct awfs_inode {
	dev_t dev;
	union {
		ino_t ino;		/* host */
		uint64_t mask_ino;	/* masked: st_ino served */
	};
	const struct awfs_state *state;
	uint64_t refs;			/* kernel lookups + children naming it parent */
	struct awfs_inode *parent;	/* masked and host non-directories: the
					   directory it was first found in (referenced) */
	char *name;			/* masked and host non-directories: the name it
					   was first found by, in parent */
	uint64_t kparent;		/* host non-directories: the nodeid of the directory */
	char *kname;			/* and the name (NULL: name) the kernel last had it
					   under, found or renamed through awfs: what the
					   trimmer asks the kernel to drop (table_lock) */
	uint64_t kparent2;		/* the name it had before a lookup or link found */
	char *kname2;			/* it under that one (NULL: none): a hard link
					   keeps both in the kernel (table_lock) */
	struct util_link lru;		/* host non-directories, newest first */
	struct util_link cache;		/* on the fd cache: closable fds, newest first */
	struct listing_marks *marks;	/* directories: where its listings may resume (listing.c) */
	struct awfs_inode *next;	/* hash chain */
	int cfd;			/* host: its O_PATH fd (see readable), or -1 while
					   closed (a handle is kept); listener thread only:
					   use inode_fd() */
	mode_t type;			/* S_IFMT bits as served */
	int wd;				/* directories: inotify watch (watch.c); 0 not tried,
				   -1 not watchable */
	uint32_t opens;			/* open files of it: cfd stays open while > 0 */
	uint32_t wopens;		/* with the change record: its open files opened for
					   writing (listener only) */
	uint32_t wuid, wpid;		/* ... who opened the last of them (any thread:
					   attribution only) */
	int32_t pt_id;			/* regular files: the backing file its open files
					   share with the kernel's passthrough (ops.c's
					   open_backing()), or 0; listener only */
	uint32_t pt_users;		/* ... how many of them (0, or all of opens) */
	unsigned char kind;		/* enum awfs_inode_kind */
	unsigned char handle;		/* host: fhb holds its handle (else the source gave
					   none: cfd is kept for the inode's life) */
	unsigned char mnt;		/* with a handle: the mount it is opened on (inode.c) */
	unsigned char dead;		/* its (dev, ino) is another object's now: no
					   lookup finds it (table_lock) */
	unsigned char info;		/* enum awfs_info_node: which node of the information
					   directory (AWFS_INODE_INFO) */
	unsigned char folds;		/* directories: enum awfs_folds */
	unsigned char linked;		/* more than one link when last looked up (ops.c) */
	unsigned char staged;		/* a temporary beside a single-file rule, entered in
					   stage.h's table (which says when); listener only */
	unsigned char unnamed;		/* made as such a temporary: @name was never its
					   name on the host, so it is never opened by it */
	unsigned char dirty;		/* with the change record: written since its record
					   (__atomic: a worker's FALLOCATE sets it too) */
	unsigned char readable;		/* regular files: fd has been made an O_RDONLY fd
					   (same number), the handle of every plain
					   read-only open; listener thread only */
	/* with a handle: its struct file_handle, allocated with the inode */
	unsigned char fhb[] __attribute__((aligned(8)));
};

/*
 * Set up the table around the root (its fd is kept, never closed by the
 * table). The calling thread is the listener: the only one inode_fd() may
 * be called on. Tries a file handle of the root: when the host gives none
 * that awfs can open again (the file system has none, or awfs lacks
 * CAP_DAC_READ_SEARCH), every inode keeps its fd for life, and @why (when
 * not NULL) says why; returns whether handles are used.
 */
bool inode_init(int root_fd, const struct stat *root_st, const struct awfs_state *root_state,
		char *why, size_t whylen);
/*
 * The O_PATH fd of the host inode @in: the cached one, or one opened from
 * its handle (and checked to be the same (dev, ino)). Listener
 * thread only; valid until the listener's next inode_fd() or lookup has
 * opened @cap (inode_set_fd_cache()) others, which no one request does: a
 * request uses a few. Returns 0 or an errno (ENOENT: the object is gone,
 * its handle stale or its number another object's).
 */
int inode_fd(struct awfs_inode *in, int *fd);
/* Whether this thread is the listener. */
bool inode_on_listener(void);
/* Around a request served under loop.c's lock by a thread other than the listener. */
void inode_listener_enter(void);
void inode_listener_leave(void);
/*
 * A new fd of the host inode @in with @flags (O_PATH, or O_RDONLY |
 * O_DIRECTORY), for any thread; the caller closes it.
 */
int inode_open(struct awfs_inode *in, int flags, int *fd);
/*
 * At most @cap closable fds are kept open (at least 64), and, with the
 * open file limit @limit (UINT64_MAX: none), fewer as open files take
 * their share of it (inode.c).
 */
void inode_set_fd_cache(uint64_t cap, uint64_t limit);
/*
 * Whether a file may be opened now: false when its fds would eat into what
 * lookups need (the open is then refused with EMFILE: open files past the
 * limit fail, lookups do not).
 */
bool inode_may_open(void);
/* fds held now for inodes without open files: the cache's and those kept for life. */
uint64_t inode_fds(void);
/* The fds open files hold: their inodes' (pinned) and their own. */
uint64_t inode_open_fds(void);
/*
 * A file of @in was opened (pins its fd: an open file's never closes) or
 * released; @own: the open has an fd of its own (not the inode's).
 */
void inode_opened(struct awfs_inode *in, bool own);
void inode_released(struct awfs_inode *in, bool own);
/* The inode for a kernel nodeid. */
struct awfs_inode *inode_get(uint64_t nodeid);
/* The nodeid to give the kernel for @in. */
uint64_t inode_nodeid(const struct awfs_inode *in);
/* The root inode. */
struct awfs_inode *inode_root(void);

/*
 * Find or add the host inode of @st, found as @name (in state @state) in the
 * directory @dir, and take one reference; a directory found takes @state.
 * Takes ownership of @fd (closed when an inode already existed).
 */
struct awfs_inode *inode_take_host(int fd, const struct stat *st, const struct awfs_state *state,
				   struct awfs_inode *dir, const char *name);
/*
 * inode_take_host() for an object no handle may reach again (a temporary
 * with no name on the host, stage.h): its fd is kept for the inode's life.
 */
struct awfs_inode *inode_take_kept(int fd, const struct stat *st, const struct awfs_state *state,
				   struct awfs_inode *dir, const char *name);
/*
 * A temporary (stage.h) just renamed onto a path in @state takes that
 * state: no other inode of its object can exist yet (it had no name).
 */
void inode_restate_file(struct awfs_inode *in, const struct awfs_state *state);
/* Take one more reference on @in (a host inode the caller holds one on). */
void inode_hold(struct awfs_inode *in);
/* Find or add the masked inode @name under @parent and take one reference. */
struct awfs_inode *inode_take_mask(struct awfs_inode *parent, const char *name, mode_t type,
				    const struct awfs_state *state);
/* The st_ino served for the masked entry @name under @parent. */
uint64_t inode_mask_ino(const struct awfs_inode *parent, const char *name);
/* Drop @n references; the inode is freed (and its fd closed) at zero. */
void inode_put(struct awfs_inode *in, uint64_t n);
/* Set once, before serving: called for a directory about to be freed, before
   its fd is closed (its listings, its watch). */
void inode_set_dir_free(void (*fn)(struct awfs_inode *dir));
/* The nodeid of the host inode (dev, ino) (a non-directory: in @state), or 0 when the kernel has none. */
uint64_t inode_find_host(dev_t dev, ino_t ino, const struct awfs_state *state);
/* The host directory (dev, ino) is now named in state @state (a rename through awfs). */
void inode_restate(dev_t dev, ino_t ino, const struct awfs_state *state);
/*
 * The host non-directory (dev, ino), found in state @state, is now @name
 * in @dir instead of @old in @from (a rename through awfs): where the
 * trimmer finds it in the kernel's cache. (An alias of it in another class
 * keeps its own names.)
 */
void inode_moved(dev_t dev, ino_t ino, const struct awfs_state *state, const struct awfs_inode *from,
		 const char *old, const struct awfs_inode *dir, const char *name);
/*
 * The name the host non-directory @in has in the directory @dir as far as
 * awfs knows (the kernel's latest name there, else the one it was found
 * by); the caller frees it.
 */
char *inode_name_in(const struct awfs_inode *in, const struct awfs_inode *dir);
/*
 * More host inodes than the mark set by inode_set_pressure(): a listing
 * then gives the kernel names without inodes (ops.c).
 */
bool inode_pressed(void);
/* That mark (UINT64_MAX when none is set). */
uint64_t inode_pressure_mark(void);
/*
 * An inode named for a notification to the kernel: its nodeid and, for a
 * non-directory, its directory's nodeid and a copy of the name it was found
 * by (else 0 and NULL; the receiver frees the name).
 */
struct inode_ref {
	uint64_t id;
	uint64_t parent_id;
	char *name;
	uint64_t parent_id2;	/* inode_oldest(): a second name, or NULL */
	char *name2;
};
/*
 * Every host inode @want accepts (called under the table lock: it must not
 * call back into the table). Sets *out (the caller frees it and the names);
 * returns how many.
 */
size_t inode_collect(bool (*want)(const struct awfs_inode *in), struct inode_ref **out);
/* Number of live inodes (for tests and the unmount summary). */
uint64_t inode_count(void);

/*
 * Relief, for the fds kept for life and for memory. The kernel decides how
 * many inodes it keeps; past @fd_high host inodes that keep their fd for
 * life, or past @mem_high host inodes of any kind (files and directories
 * together), @hook (set once, before serving) is called, outside the table
 * lock, each time one is added. inode_oldest() then names the least
 * recently looked-up non-directories (never a directory: the kernel would
 * unhash it even in use, a process's working directory, a mount point
 * below, and drop its whole subtree) so that the kernel can be asked to
 * drop them (it forgets them, and their fds are closed): up to @max, each
 * where the kernel last had it (its directory's nodeid and a copy of its
 * name, and a second name the kernel may hold as well; the caller frees
 * them), moved to the newest end so that the next call names others.
 * Returns how many.
 */
void inode_set_pressure(uint64_t fd_high, uint64_t mem_high, void (*hook)(void));
uint64_t inode_host_files(void);
uint64_t inode_host_dirs(void);
/* Host inodes that keep their fd for life (no handle), the root not counted. */
uint64_t inode_fixed(void);
/* How many files the trimmer should have the kernel drop now: 0 when under 3/4 of both marks. */
uint64_t inode_over(void);
size_t inode_oldest(struct inode_ref *out, size_t max);

#endif
