/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ops.c - the FUSE low-level handlers.
 *
 * Every handler replies exactly once. Host access goes through host.c;
 * helpers return 0 or a positive errno.
 *
 * Each handler reads: classify (the inode's state, or classify_child() of
 * its directory's for a name), decide (decide.h, where the whole rule is
 * stated and table-tested), then refuse (verdict.c) or call the host. A
 * masked entry is made up here: nothing below it is ever looked up on the
 * host, and nothing of the host's entry (owner, size, times, inode number,
 * xattrs) is served; the information directory is info.c's.
 *
 * Every refusal is EROFS and is logged with the rule that decided it. The
 * kernel checks ordinary permissions first (default_permissions, with the
 * host's POSIX ACLs), and every host call that creates, removes, renames,
 * links, opens for writing or changes an object runs as the caller
 * (AS_CALLER), so the host checks again, on the object as it is now: EACCES
 * stays EACCES, whatever the kernel believed. Which calls still run as the
 * daemon, and why that lends nothing, is listed in docs/security.md.
 *
 * This file is long because it is the whole request surface in one place,
 * where each handler's check can be read next to its host call.
 */
#include "ops.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include "host.h"
#include "inode.h"
#include "listing.h"
#include "decide.h"
#include "info.h"
#include "log.h"
#include "loop.h"
#include "passthrough.h"
#include "stage.h"
#include "changes.h"
#include "util.h"
#include "verdict.h"
#include "watch.h"

#define AWFS_MASK_DIR_MODE (S_IFDIR | 01777)
#define AWFS_MASK_FILE_MODE (S_IFREG | 0666)

static const struct awfs_ops_config *cfg;
static bool root_shown_open;	/* set once by ops_init(): see node_attr() */

static bool is_masked(const struct awfs_inode *in)
{
	return classify_class(in->state) == AWFS_CLASS_MASK;
}

static const struct listing_shaper list_shaper;	/* what listings show: below */

/* A directory is being freed: its listings and its watch go with it. */
static void dir_free(struct awfs_inode *dir)
{
	watch_forget(dir);
	listing_forget(dir);
}

/* who opened each fd awfs opened for a caller: see opener_set() */
struct opener {
	uint32_t uid, gid;
};
static struct opener *openers;
static size_t nopeners;

void ops_init(const struct awfs_ops_config *c)
{
	cfg = c;
	/* a read-only root holding a single-file allow_write rule: shown 01777 (node_attr()) */
	root_shown_open = false;
	for (size_t i = 0; i < c->policy->nrules; i++)
		root_shown_open = root_shown_open ||
				  (c->policy->rules[i].single_file && c->policy->rules[i].ncomps == 1);
	root_shown_open = root_shown_open && classify_class(inode_root()->state) == AWFS_CLASS_RO;
	inode_set_dir_free(dir_free);
	listing_init(&list_shaper);
	if (c->timeout_watched > c->timeout_shared) {
		/* without an instance watch_dir() watches nothing: a second, as before */
		int err = watch_init(c->classifier);

		if (err)
			log_msg(AWFS_LOG_WARN, "cannot watch read-only directories (inotify: %s): "
				"host changes there are seen within a second", strerror(err));
		else if (classify_class(inode_root()->state) == AWFS_CLASS_RO)
			(void)watch_dir(inode_root());
	}
	info_attach(inode_root());
	verdict_init(c);
	{
		struct rlimit rl = { 0, 0 };

		(void)getrlimit(RLIMIT_NOFILE, &rl);
		nopeners = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 22) ? (1u << 22) : rl.rlim_cur;
		/* untouched pages of it cost nothing: calloc maps fresh zero pages */
		openers = util_xcalloc(nopeners ? nopeners : 1, sizeof(*openers));
	}
}

/*
 * At exit, a temporary never renamed onto its file: said, since what was
 * written to it is lost; its hidden name goes with it (as the daemon: no
 * request is left to act for).
 */
static void temp_left(const struct awfs_staged *s)
{
	char esc[3 * NAME_MAX + 8];
	struct stat sb;

	log_escape(s->name, strlen(s->name), esc, sizeof(esc));
	log_msg(AWFS_LOG_WARN, "dropped the temporary \"%s\" (%lld bytes, made by uid %u beside single-file rules): it was never renamed onto one",
		esc, fstat(s->keep, &sb) == 0 ? (long long)sb.st_size : -1LL, (unsigned)s->uid);
	if (s->hidden)
		(void)host_unlink(s->hidden_dir, s->hidden);
}

void ops_fini(void)
{
	stage_fini(temp_left);
	/* the static directories' listings (the others go with their inodes) */
	listing_forget(info_dir_node());
	listing_forget(inode_root());
	listing_fini();
	info_release_all();
	watch_fini();
	verdict_fini();
	free(openers);
	openers = NULL;
	nopeners = 0;
}

/* ------------------------------------------------------------ the caller */

/*
 * Host calls for a request run as its caller (host.c says how and why),
 * with all its supplementary groups, read from /proc for each such request
 * by a caller other than root: a group can restrict as well as grant (a
 * group ACL entry, or group bits narrower than other's), so none may be
 * missing. A caller whose groups cannot be read (it is gone) gets none.
 */
static void caller_begin(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	gid_t small[32], *g = small;
	int n = 0;

	if (ctx->uid != 0) {
		n = fuse_req_getgroups(req, 32, small);
		if (n > 32) {
			int cap = n;

			g = util_xcalloc((size_t)cap, sizeof(*g));
			n = fuse_req_getgroups(req, cap, g);
			if (n > cap)
				n = cap;
		}
	}
	host_as_caller(ctx->uid, ctx->gid, n > 0 ? (size_t)n : 0, g);
	if (g != small)
		free(g);
}

/* err = CALL, made as the caller of REQ. */
#define AS_CALLER(req, err, call)                                        \
	do {                                                              \
		caller_begin(req);                                        \
		(err) = (call);                                           \
		host_as_daemon();                                         \
	} while (0)

/*
 * Who opened each fd awfs opened for a caller (indexed by fd; cleared at
 * release): the data calls on it run with that fsuid and fsgid when the
 * request itself carries no caller (the kernel's writeback of a shared
 * mapping sends its WRITEs as uid 0, pid 0), so a write by the agent never
 * draws on what a file system keeps for root (ext4's reserved blocks)
 * whichever way it reaches the host. The kernel writes a mapping's pages
 * back through any handle of the file open for writing: where root holds
 * one too, the agent's pages may go out as root's (root shares the file
 * with the agent then). Sized to the open file limit at mount; an fd past
 * it (none, unless the limit is raised while awfs runs) writes as
 * "nobody".
 */
static void opener_store(int fd, uint32_t uid, uint32_t gid)
{
	if (fd >= 0 && (size_t)fd < nopeners) {
		__atomic_store_n(&openers[fd].uid, uid, __ATOMIC_RELAXED);
		__atomic_store_n(&openers[fd].gid, gid, __ATOMIC_RELAXED);
	}
}

static void opener_set(int fd, fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	opener_store(fd, (uint32_t)ctx->uid, (uint32_t)ctx->gid);
}

/* err = CALL, a data call on the handle @fd of REQ, made as its writer (host_as_writer()). */
#define AS_WRITER(req, fd, err, call)                                    \
	do {                                                              \
		uid_t w_uid_;                                             \
		gid_t w_gid_;                                             \
									  \
		writer_of(req, fd, &w_uid_, &w_gid_);                     \
		(void)host_as_writer(w_uid_, w_gid_);                     \
		(err) = (call);                                           \
	} while (0)

static void writer_of(fuse_req_t req, int fd, uid_t *uid, gid_t *gid)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	if (ctx->uid != 0 || ctx->pid != 0) {	/* a caller's own request (root's too) */
		*uid = ctx->uid;
		*gid = ctx->gid;
	} else if (fd >= 0 && (size_t)fd < nopeners) {
		*uid = __atomic_load_n(&openers[fd].uid, __ATOMIC_RELAXED);
		*gid = __atomic_load_n(&openers[fd].gid, __ATOMIC_RELAXED);
	} else {
		*uid = 65534;
		*gid = 65534;
	}
}

/*
 * Reply @err. "Too many open files" reaching a caller means awfs's open
 * file limit is spent: by files callers hold open or, on a source without
 * file handles, by inodes the kernel keeps faster than the trimmer can ask
 * it to drop them: say so once, with the counts and what to raise.
 */
static void reply_err(fuse_req_t req, int err)
{
	static atomic_int told_nfile, told_mfile;

	if (err == ENFILE && !atomic_exchange(&told_nfile, 1)) {
		log_msg(AWFS_LOG_WARN, "ENFILE (the system's file table is full) reached a caller: raise fs.file-max, or find what holds the files");
	} else if (err == EMFILE && !atomic_exchange(&told_mfile, 1)) {
		struct rlimit rl = { 0, 0 };
		uint64_t fixed = inode_fixed();
		char most[160] = "";

		(void)getrlimit(RLIMIT_NOFILE, &rl);
		if (fixed)	/* no handles: each inode the kernel keeps costs one */
			snprintf(most, sizeof(most), ", %llu of them kept for life (a source without file handles; the trimmer's mark: %llu)",
				 (unsigned long long)fixed, (unsigned long long)inode_pressure_mark());
		log_msg(AWFS_LOG_WARN, "EMFILE (too many open files) reached a caller: awfs's open file limit (%llu) is spent: %llu fds for the files callers hold open (each has one of its own and its inode's, a plain read-only open only its inode's), %llu for the inodes awfs keeps%s; raise the limit awfs starts with (ulimit -Hn, LimitNOFILE= in a unit)",
			(unsigned long long)rl.rlim_cur, (unsigned long long)inode_open_fds(),
			(unsigned long long)inode_fds(), most);
	}
	fuse_reply_err(req, err);
}

/* ------------------------------------------------------------ checks */

/* The classified position of the entry @name in @dir (decide.h). */
static struct awfs_entry_pos entry_pos(const struct awfs_inode *dir, const char *name)
{
	struct awfs_entry_pos e = { .dir = dir->state };

	e.info = dir->kind == AWFS_INODE_INFO || info_is_name(dir, name);
	if (!e.info)
		e.st = classify_child(cfg->classifier, dir->state, name);
	return e;
}

static struct awfs_object_pos object_pos(const struct awfs_inode *in)
{
	return (struct awfs_object_pos){ .st = in->state, .info = in->kind == AWFS_INODE_INFO };
}

/*
 * Refuse @op as @d decided: @at are the positions it was asked about, an
 * object (a NULL name) or an entry; a second one (a link's new entry, a
 * rename's target) is the message's "to". Returns EROFS.
 */
static int refuse(fuse_req_t req, const char *op, const struct awfs_decision *d,
		  const struct awfs_other_end *at, bool two)
{
	const struct awfs_other_end *by = &at[d->end];
	const struct awfs_refusal r = {
		.op = op, .in = at[0].in, .name = at[0].name, .other = two ? &at[1] : NULL,
		.how = d->how, .rule = d->rule,
		.at = by->in, .at_name = d->how == AWFS_BLOCK_PARENT ? NULL : by->name,
		.at_state = d->st,
	};

	verdict_deny(req, &r);
	return EROFS;	/* every refusal, and only a refusal, is EROFS */
}

/* May the entry @name in @dir be created or removed (decide_entry())? */
static int check_entry(fuse_req_t req, const char *op, struct awfs_inode *dir, const char *name)
{
	const struct awfs_entry_pos e = entry_pos(dir, name);
	const struct awfs_decision d = decide_entry(&e);
	const struct awfs_other_end at = { NULL, dir, name };

	return d.how ? refuse(req, op, &d, &at, false) : 0;
}

/* May the object @in be changed (decide_object())? */
static int check_object(fuse_req_t req, const char *op, const struct awfs_inode *in)
{
	const struct awfs_object_pos o = object_pos(in);
	const struct awfs_decision d = decide_object(&o);
	const struct awfs_other_end at = { NULL, in, NULL };

	return d.how ? refuse(req, op, &d, &at, false) : 0;
}

/* ------------------------------------------------------------ the change record */

/* A change with nothing set but what the caller gives. */
#define CHANGE(...) ((struct awfs_change){ __VA_ARGS__ })
/* ... naming the object @in (a host inode) */
#define CHANGE_OF(in, ...) CHANGE(.has_object = true, .dev = (in)->dev, .ino = (in)->ino, __VA_ARGS__)

/* @c, naming the object @name in the directory fd @dfd holds now (if it can be looked at). */
static struct awfs_change at_object(struct awfs_change c, int dfd, const char *name)
{
	struct stat sb;

	if (host_stat_at(dfd, name, &sb) == 0) {
		c.has_object = true;
		c.dev = sb.st_dev;
		c.ino = sb.st_ino;
	}
	return c;
}

/* Record @c, made by @req's caller, at @in (and @name in it), and @in2 (@name2) for a second path. */
static void note(fuse_req_t req, struct awfs_change c, const struct awfs_inode *in, const char *name,
		 const struct awfs_inode *in2, const char *name2)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	char p[2 * PATH_MAX], q[2 * PATH_MAX];

	verdict_raw_path(in, name, p, sizeof(p));
	c.path = p;
	if (in2) {
		verdict_raw_path(in2, name2, q, sizeof(q));
		c.to = q;
	}
	c.uid = ctx->uid;
	c.pid = ctx->pid;
	changes_note(&c);
}

static const char *kind_word(mode_t type)
{
	return S_ISREG(type) ? "file" : S_ISDIR(type) ? "dir" : S_ISLNK(type) ? "symlink" :
	       S_ISFIFO(type) ? "fifo" : S_ISSOCK(type) ? "socket" : "device";
}

/* A handle that writes (the kernel keeps no O_TRUNC in a file's flags: RELEASE never has it). */
static bool handle_writes(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY;
}

/* @in was opened for writing by @req's caller (@changed: it is changed already, O_TRUNC or new). */
static void write_opened(fuse_req_t req, struct awfs_inode *in, bool changed)
{
	if (!changes_on())
		return;
	in->wopens++;
	changes_open_written(1);
	__atomic_store_n(&in->wuid, fuse_req_ctx(req)->uid, __ATOMIC_RELAXED);
	__atomic_store_n(&in->wpid, (uint32_t)fuse_req_ctx(req)->pid, __ATOMIC_RELAXED);
	if (changed)
		__atomic_store_n(&in->dirty, 1, __ATOMIC_RELAXED);
}

/* @in's content changed (a write, fallocate, copy into it); any thread. */
static void mark_written(struct awfs_inode *in)
{
	if (changes_on())
		__atomic_store_n(&in->dirty, 1, __ATOMIC_RELAXED);
}

/*
 * A handle of @in opened with @flags is released (its fd @fd still open):
 * at the last one opened for writing, a file changed since its record is
 * recorded, hashed from a dup of @fd (or of the inode's fd, @fd < 0).
 */
static void write_closed(struct awfs_inode *in, int flags, int fd)
{
	char p[2 * PATH_MAX];
	struct stat sb;
	int dup = -1;

	if (!changes_on() || in->kind != AWFS_INODE_HOST || !handle_writes(flags))
		return;
	if (in->wopens) {
		in->wopens--;
		changes_open_written(-1);
	}
	if (in->wopens || in->staged || !__atomic_exchange_n(&in->dirty, 0, __ATOMIC_RELAXED))
		return;
	if (fd < 0 && inode_fd(in, &fd) != 0)
		fd = -1;
	/* removed before its last close (sqlite's -shm): its unlink is its record */
	if (fd >= 0 && host_stat(fd, &sb) == 0 && sb.st_nlink == 0)
		return;
	if (fd >= 0)
		dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	verdict_raw_path(in, NULL, p, sizeof(p));
	changes_written(dup, in->dev, in->ino, p, __atomic_load_n(&in->wuid, __ATOMIC_RELAXED),
			(pid_t)__atomic_load_n(&in->wpid, __ATOMIC_RELAXED));
}

/* ------------------------------------------------------------ the kernel's passthrough */

/*
 * Whether the handle @fh of @in, being opened for @req, is served by the
 * kernel's passthrough (passthrough.h), and on which backing file: the one
 * place that decides. Returns the backing id for the reply, or 0: awfs
 * serves the handle's reads and writes itself, as without passthrough.
 *
 * In: regular files of the host, in writable paths (opened for reading or
 * writing, after the decision and the open as the caller) and in read-only
 * ones (opened for reading: an open for writing there was refused), the
 * temporaries beside single-file rules included. From then on the kernel
 * reads and writes the host file itself, so nothing whose bytes awfs
 * shapes may be in:
 *  - masked files (served empty: their host file is never read) and the
 *    information directory's texts (made by awfs) are not host inodes;
 *  - FIFOs, sockets and devices: no data of theirs is the file's (and the
 *    kernel takes only regular files).
 * No refusal moves: each was made at open, and what a handle may do is
 * the kernel's check on the FUSE file (a handle opened for reading cannot
 * write, map shared-writable or splice into the file). FALLOCATE,
 * COPY_FILE_RANGE, SETATTR (truncate), FSYNC and LSEEK are not passed
 * through: they still come here, and are checked and made as before.
 *
 * The kernel gives all open files of an inode one backing file, and runs
 * their I/O with the credentials of the open that registered it
 * (host_backing_open_as_caller(), host_backing_open()). So:
 *  - the first handle registers it as its caller: a create or an open
 *    made as the caller registers as the last call of that switch, with
 *    the caller's fsuid, fsgid and groups (host_backing_open_as_caller():
 *    the credentials the host checked the open with, for one capability
 *    raise and the ioctl); a read-only open of the inode's own fd with its
 *    caller's fsuid and fsgid (host_backing_open()); later handles
 *    of the inode share it while one is open, their writes made as that
 *    first opener: never root, so no reserve and no capability is lent
 *    (docs/security.md, "awfs never lends its power");
 *  - a caller that is root starts none: root's fsuid and capabilities
 *    (CAP_FSETID keeps set-id bits, fsuid 0 takes ext4's reserve) would
 *    carry over to the agent's handles opened while root's is open. Root's
 *    handle is served by awfs, or shares one an agent's handle started;
 *  - an inode open through awfs's data path stays there until its last
 *    handle is released: the kernel refuses to mix the two (EIO);
 *  - a handle opened for reading only, of a file smaller than
 *    PT_MIN_READ, starts none: registering the backing file, the kernel's
 *    opening it for the handle and releasing it cost more than the one or
 *    two READs awfs serves for it (and nothing at all once the kernel
 *    keeps its pages: find + cat and git status read many small files);
 *  - a handle opened for appending starts none: the kernel opens each
 *    handle's backing file with the flags it was opened with and does
 *    not pass fcntl(F_SETFL) on to it, so a handle that later cleared
 *    O_APPEND would go on appending. awfs's own writes follow the
 *    caller's flag (host_match_append()). Appenders (logs) open, append
 *    and close: their opens cross anyway. Where another handle started
 *    one, an appender shares it (the kernel allows nothing else).
 * With the change record on, the mount has no passthrough at all
 * (passthrough.h: its writes never reach awfs, and a shared mapping keeps
 * writing to the host file after its handle's release, unseen).
 */
#define PT_MIN_READ (256 * 1024)

/*
 * Whether a handle with @flags for the caller of @req may start a backing
 * file, on what is known before its inode is (a create's new file).
 */
static bool may_start_backing(fuse_req_t req, int flags)
{
	return pt_on() && fuse_req_ctx(req)->uid != 0 && !((flags & O_APPEND) && handle_writes(flags));
}

/*
 * @as_caller: the thread serves the caller now (inside caller_begin()'s
 * switch), and registers as it, which ends the switch; otherwise
 * host_backing_open() switches for the ioctl alone.
 */
static int open_backing(fuse_req_t req, struct awfs_inode *in, int fh, int flags, bool as_caller)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct stat sb;
	int id;

	if (in->kind != AWFS_INODE_HOST || in->type != S_IFREG || fh < 0)
		return 0;
	if (in->pt_users > 0)	/* whatever the mount's mode is now: nothing else opens */
		return in->pt_id;
	if (in->opens > 0 || !may_start_backing(req, flags))
		return 0;
	if (host_stat(fh, &sb) != 0 || (!handle_writes(flags) && sb.st_size < PT_MIN_READ))
		return 0;
	id = as_caller ? pt_register_as_caller(fh, sb.st_dev) : pt_register(fh, sb.st_dev, ctx->uid, ctx->gid);
	if (id <= 0)
		return 0;
	in->pt_id = id;
	return id;
}

/*
 * A create's new file @fh in a directory on the device @dev, made as the
 * caller: its backing file registered, and the switch ended (0: none).
 */
static int create_backing(fuse_req_t req, dev_t dev, int fh, int flags)
{
	int id;

	if (!may_start_backing(req, flags) || !handle_writes(flags))
		return 0;
	id = pt_register_as_caller(fh, dev);
	return id > 0 ? id : 0;
}

/* The end of a create's switch (caller_begin()): @err 0, the new file @fh's backing file registered first. */
static int end_create(fuse_req_t req, int err, dev_t dev, int fh, int flags)
{
	int id = err ? 0 : create_backing(req, dev, fh, flags);

	host_as_daemon();	/* a no-op where the registration ended the switch */
	return id;
}

/* The backing file @id a create registered, given to its inode @in; the id the reply names (0: none). */
static int adopt_backing(struct awfs_inode *in, int id)
{
	if (id <= 0)
		return 0;
	if (in->pt_users > 0 || in->opens > 0) {	/* open already: one backing file an inode, or none */
		pt_unregister(id);
		return in->pt_users > 0 ? in->pt_id : 0;
	}
	in->pt_id = id;
	return id;
}

/*
 * A passthrough handle's fi->fh carries this bit above its fd (every use of
 * a host handle's fh takes its low 32 bits, (int)fi->fh): its release is
 * counted against the backing file only if it was one of its handles.
 */
#define FH_PASSTHROUGH (1ULL << 40)

static bool is_pt_handle(const struct fuse_file_info *fi)
{
	return (int)fi->fh >= 0 && (fi->fh & FH_PASSTHROUGH);
}

/* A handle of @in, @fi, opened on the backing file @id (0: none) is about to be answered. */
static void pt_opened(struct awfs_inode *in, int id, struct fuse_file_info *fi)
{
	if (id <= 0)
		return;
	in->pt_users++;
	fi->fh |= FH_PASSTHROUGH;
	pt_count_handle();
	loop_set_backing(id);	/* the reply, sent next on this thread, names it */
}

/* The passthrough handle @fi of @in is released (or its open was not answered): the last? */
static void pt_released(struct awfs_inode *in, const struct fuse_file_info *fi)
{
	if (!is_pt_handle(fi) || in->pt_users == 0 || --in->pt_users > 0)
		return;
	pt_unregister(in->pt_id);
	in->pt_id = 0;
}

/* ------------------------------------------------------------ attributes */

static void mask_attr(const struct awfs_inode *in, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = in->mask_ino;
	st->st_mode = in->type == S_IFDIR ? AWFS_MASK_DIR_MODE : AWFS_MASK_FILE_MODE;
	st->st_nlink = in->type == S_IFDIR ? 2 : 1;
	st->st_blksize = 4096;
	/* uid, gid, size, blocks and all times stay 0: fixed, and not the host's */
}

/* Whether the handles of @ino are host fds (masked and information files have none). */
static bool has_host_fh(fuse_ino_t ino)
{
	return inode_get(ino)->kind == AWFS_INODE_HOST;
}

/* An unnamed temporary has no link on the host: it is shown with the one it has here. */
static void temp_attr(const struct awfs_inode *in, struct stat *st)
{
	if (in->staged && st->st_nlink == 0)
		st->st_nlink = 1;
}

static int node_attr(struct awfs_inode *in, struct stat *st)
{
	int err, fd;

	if (in->kind == AWFS_INODE_INFO) {
		info_attr(in, st);
		return 0;
	}
	if (in->kind == AWFS_INODE_MASK) {
		mask_attr(in, st);
		return 0;
	}
	err = inode_fd(in, &fd);
	if (!err)
		err = host_stat(fd, st);
	if (!err)
		temp_attr(in, st);
	/*
	 * A read-only root that holds a single file the agent may write in
	 * place (agent-step-summary.md): shown 01777, as .awfs is, so that a
	 * tool rewriting it through a temporary file beside it reaches awfs,
	 * which refuses with EROFS and says how to write it, instead of the
	 * kernel's silent EACCES when root owns the root. It grants nothing:
	 * awfs refuses every change to a read-only directory's names itself.
	 */
	if (!err && in == inode_root() && root_shown_open)
		st->st_mode |= 01777;
	return err;
}

/*
 * How long the kernel may keep what it knows of a path in state @st, found in
 * @dir: read-only paths, which the host may change, for longer when awfs
 * watches @dir for such changes (watch.h).
 */
static double state_timeout(const struct awfs_state *st, const struct awfs_inode *dir)
{
	if (classify_class(st) != AWFS_CLASS_RO)
		return cfg->timeout_own;
	return watch_covers(dir) ? cfg->timeout_watched : cfg->timeout_shared;
}

/*
 * How long the kernel may keep @in's attributes: the information text changes any
 * time; a directory's are watched with the directory, a file's in the one
 * it was found in.
 */
static double attr_timeout(const struct awfs_inode *in)
{
	return in->kind == AWFS_INODE_INFO ? 0.0 : state_timeout(in->state, in->type == S_IFDIR ? in : in->parent);
}

/*
 * How long the kernel may keep @in's attributes @st: not at all for a file
 * with a set-user-ID or set-group-ID bit, which awfs clears after a write
 * by anyone but root without telling the kernel (drop_setid()): the next
 * stat, or permission check, then asks again.
 */
static double attr_ttl(const struct awfs_inode *in, const struct stat *st)
{
	if (S_ISREG(st->st_mode) && (st->st_mode & (S_ISUID | S_ISGID)))
		return 0.0;
	return attr_timeout(in);
}

/* The entry for @in, found in @dir. */
static void fill_entry(struct fuse_entry_param *e, struct awfs_inode *in, const struct stat *st,
		       const struct awfs_inode *dir)
{
	memset(e, 0, sizeof(*e));
	e->ino = inode_nodeid(in);
	e->attr = *st;
	e->attr_timeout = attr_ttl(in, st);
	e->entry_timeout = in->kind == AWFS_INODE_INFO ? cfg->timeout_own : state_timeout(in->state, dir);
}

/* A top-level entry that exists on the host and no rule names: log it once. */
static void note_if_unclassified(const struct awfs_inode *dir, const char *name,
				 const struct awfs_state *st)
{
	if (dir == inode_root() && classify_origin(st) == AWFS_ORIGIN_UNCLASSIFIED)
		verdict_note_unclassified(name);
}

/* Look up in the information directory (or the directory itself at the root). */
static int info_entry(struct awfs_inode *dir, const char *name, struct fuse_entry_param *e)
{
	struct awfs_inode *in = info_lookup(dir, name);
	struct stat sb;

	if (!in)
		return ENOENT;
	info_attr(in, &sb);
	fill_entry(e, in, &sb, dir);
	return 0;
}

/*
 * Rules match names byte for byte. In a directory that folds case on the
 * host (ext4/f2fs casefold, set by the host; the agent cannot, awfs passes no
 * ioctl), "SECRET" would match no rule and still open "secret": such a
 * directory is refused whole (EACCES) and logged once per lookup of it.
 */
static int refuse_folding(struct awfs_inode *in, const char *name)
{
	const char *what = "?";
	char esc[3 * NAME_MAX + 8];
	enum host_case folds;
	int fd, err;

	if (in->folds == AWFS_FOLDS_NOT)
		return 0;
	if (in->folds == AWFS_FOLDS) {
		inode_put(in, 1);	/* refused before: the first refusal keeps it */
		return EACCES;
	}
	err = inode_fd(in, &fd);
	folds = err ? HOST_CASE_UNKNOWN : host_dir_folds_case(fd, &what);
	if (folds == HOST_CASE_UNKNOWN) {
		/* not known (EMFILE, say): refused this time, asked again next time */
		err = err ? err : errno;
		inode_put(in, 1);
		return err ? err : EIO;
	}
	if (folds == HOST_CASE_EXACT) {
		in->folds = AWFS_FOLDS_NOT;
		return 0;
	}
	/* logged once: the inode is kept (this lookup's reference) to remember it */
	in->folds = AWFS_FOLDS;
	log_escape(name, strlen(name), esc, sizeof(esc));
	log_msg(AWFS_LOG_WARN, "refusing directory \"%s\": it matches names case-insensitively on the host (%s), so a name in another case could slip past the rules",
		esc, what);
	return EACCES;
}

/* ------------------------------------------------------------ temporaries (stage.h) */

/*
 * The state a temporary in @dir is kept in: the first single-file rule's
 * there, so that it is writable in place as the file it is meant to
 * replace (decide_stage() has found that one exists).
 */
static const struct awfs_state *temp_state(const struct awfs_inode *dir)
{
	const struct awfs_rule *const *r;
	size_t n = classify_alive(dir->state, &r), depth = classify_depth(dir->state);

	for (size_t i = 0; i < n; i++)
		if (r[i]->single_file && r[i]->ncomps == depth + 1)
			return classify_child(cfg->classifier, dir->state, r[i]->comps[depth]);
	abort();	/* decide_stage() allowed it: one is there */
}

/* The entry of the temporary @s, found again (a reference taken). */
static int temp_entry(struct awfs_staged *s, struct fuse_entry_param *e)
{
	struct stat sb;
	int fd, err = inode_fd(s->in, &fd);

	if (!err)
		err = host_stat(fd, &sb);
	if (err)
		return err;
	temp_attr(s->in, &sb);
	inode_hold(s->in);
	fill_entry(e, s->in, &sb, s->dir);
	return 0;
}

/*
 * A fresh hidden name of awfs's in the directory @dfd, made as the caller:
 * the unnamed temporary @fd linked in under it, or, with @fd -1 (a source
 * that cannot make unnamed files), a new file created there (O_EXCL), open
 * at *fh. The name is in *hidden.
 */
static int temp_hidden(int dfd, int fd, mode_t mode, int *fh, char **hidden)
{
	char name[sizeof(AWFS_STAGE_PREFIX) + 32];
	uint64_t r;
	int err = EEXIST;

	for (int i = 0; i < 8 && err == EEXIST; i++) {
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return EIO;
		snprintf(name, sizeof(name), AWFS_STAGE_PREFIX "%016llx", (unsigned long long)r);
		err = fd >= 0 ? host_link(fd, dfd, name) : host_create(dfd, name, O_RDWR, mode, fh);
	}
	if (!err)
		*hidden = util_xstrdup(name);
	return err;
}

/*
 * Create the temporary @name in @dir (decide_stage() allowed it) and reply
 * as CREATE does. It has no name on the host (O_TMPFILE, as the caller, so
 * the host checks the caller may write the directory), or, where the source
 * cannot make one, a hidden name of awfs's (stage.h).
 */
static void temp_create(fuse_req_t req, struct awfs_inode *dir, const char *name, mode_t mode,
			struct fuse_file_info *fi)
{
	static atomic_int told;
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct fuse_entry_param e;
	struct awfs_inode *in;
	struct stat sb;
	char *hidden = NULL;
	int err, dfd, fh = -1, keep = -1, pfd = -1, hdir = -1, id = 0;

	if (stage_count(ctx->uid) >= AWFS_STAGE_PER_UID) {
		if (!atomic_exchange(&told, 1))
			log_msg(AWFS_LOG_WARN, "uid %u holds %d temporaries beside single-file rules, the most one uid may: its next is refused with EDQUOT until it renames or removes one",
				(unsigned)ctx->uid, AWFS_STAGE_PER_UID);
		reply_err(req, EDQUOT);
		return;
	}
	err = inode_may_open() ? inode_fd(dir, &dfd) : EMFILE;
	if (!err) {
		caller_begin(req);
		err = host_tmpfile(dfd, mode & 07777, &fh);
		id = end_create(req, err, dir->dev, fh, fi->flags);	/* as the caller, in the same switch */
		/* no O_TMPFILE there (EOPNOTSUPP; EISDIR from a kernel without it) */
		if (err == EOPNOTSUPP || err == EISDIR) {
			caller_begin(req);
			err = temp_hidden(dfd, -1, mode & 07777, &fh, &hidden);
			id = end_create(req, err, dir->dev, fh, fi->flags);
		}
	}
	if (!err && hidden)
		err = host_reopen(dfd, O_PATH, &hdir);
	if (!err)
		err = host_reopen(fh, O_PATH, &keep);
	if (!err)
		err = host_reopen(fh, O_PATH, &pfd);
	if (!err)
		err = host_stat(pfd, &sb);
	if (err) {
		if (hidden) {
			int e2;

			AS_CALLER(req, e2, host_unlink(dfd, hidden));
			(void)e2;	/* the first error is the answer */
			free(hidden);
		}
		if (id > 0)
			pt_unregister(id);
		for (int *f = (int[]){ fh, keep, pfd, hdir, -2 }; *f != -2; f++)
			if (*f >= 0)
				close(*f);
		reply_err(req, err);
		return;
	}
	host_match_append(fh, fi->flags & O_APPEND);
	in = inode_take_kept(pfd, &sb, temp_state(dir), dir, name);
	inode_hold(in);		/* the table's */
	(void)stage_add(dir, name, in, keep, hidden, hdir, ctx->uid);
	temp_attr(in, &sb);
	fill_entry(&e, in, &sb, dir);
	fi->fh = (uint64_t)fh;
	fi->keep_cache = cfg->keep_cache;
	opener_set(fh, req);
	id = adopt_backing(in, id);
	inode_opened(in, true);
	pt_opened(in, id, fi);
	if (fuse_reply_create(req, &e, fi) == -ENOENT) {	/* interrupted: the temporary stays */
		pt_released(in, fi);
		close(fh);
		inode_released(in, true);
		inode_put(in, 1);
	}
}

/* Only its maker (or root) may remove or rename a temporary: a sticky directory's rule. */
static int temp_owner(fuse_req_t req, const struct awfs_staged *s)
{
	uid_t uid = fuse_req_ctx(req)->uid;

	return uid == s->uid || uid == 0 ? 0 : EPERM;
}

static void temp_unlink(fuse_req_t req, struct awfs_staged *s)
{
	int err = temp_owner(req, s);

	if (!err && s->hidden) {
		AS_CALLER(req, err, host_unlink(s->hidden_dir, s->hidden));
		if (err == ENOENT)	/* gone on the host already */
			err = 0;
	}
	if (!err)
		stage_drop(s);
	reply_err(req, err);
}

/*
 * Rename the temporary @s onto @newname, the single-file rule @to of its
 * directory (decide_replace() allowed it): an unnamed one is linked in
 * under a hidden name first (linkat cannot replace), then renamed over the
 * file, as the caller; a hidden name made here is removed again if the
 * rename fails.
 */
static void temp_replace(fuse_req_t req, struct awfs_staged *s, const struct awfs_entry_pos *to,
			 const char *newname, unsigned int flags)
{
	char *linked = NULL;
	int dfd, fd, e2, nofh = -1, err = temp_owner(req, s);	/* nofh: a link opens nothing */

	if (!err && (flags & ~RENAME_NOREPLACE))
		err = EINVAL;
	if (!err)
		err = inode_fd(s->dir, &dfd);
	if (!err && !s->hidden) {
		err = inode_fd(s->in, &fd);
		if (!err)
			AS_CALLER(req, err, temp_hidden(dfd, fd, 0, &nofh, &linked));
	}
	if (!err) {
		AS_CALLER(req, err, host_rename(dfd, linked ? linked : s->hidden, dfd, newname, flags));
		if (err && linked) {
			AS_CALLER(req, e2, host_unlink(dfd, linked));
			(void)e2;	/* the rename's error is the answer */
		}
	}
	free(linked);
	if (!err && changes_on()) {
		/* the host sees the file replaced, and nothing of the temporary */
		char p[2 * PATH_MAX];

		verdict_raw_path(s->dir, newname, p, sizeof(p));
		changes_written(fcntl(s->keep, F_DUPFD_CLOEXEC, 0), s->in->dev, s->in->ino, p,
				fuse_req_ctx(req)->uid, fuse_req_ctx(req)->pid);
	}
	if (!err) {
		inode_moved(s->in->dev, s->in->ino, s->in->state, s->dir, s->name, s->dir, newname);
		inode_restate_file(s->in, to->st);
		free(s->hidden);
		s->hidden = NULL;	/* renamed: nothing of awfs's is left there */
		stage_drop(s);
	}
	reply_err(req, err);
}

/*
 * Look up @name in @dir and take a reference on the result. Fills @e;
 * ENOENT is returned as such (the caller decides about negative entries).
 */
static int do_lookup(struct awfs_inode *dir, const char *name, struct fuse_entry_param *e,
		     const struct awfs_state **child)
{
	const struct awfs_state *st;
	struct awfs_inode *in;
	struct stat sb;
	int fd, dfd, err;

	if (dir->kind == AWFS_INODE_INFO || info_is_name(dir, name))
		return info_entry(dir, name, e);
	if (is_masked(dir) || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return ENOENT;
	if (dir->kind == AWFS_INODE_HOST) {
		struct awfs_staged *t = stage_find(dir, name);

		if (t)
			return temp_entry(t, e);
		if (stage_is_hidden(name) && decide_stages_in(dir->state))
			return ENOENT;	/* awfs's own: never the agent's */
	}
	err = inode_fd(dir, &dfd);
	if (err)
		return err;
	st = classify_child(cfg->classifier, dir->state, name);
	if (child)
		*child = st;
	if (classify_class(st) == AWFS_CLASS_MASK) {
		mode_t type = S_IFDIR;
		bool listed = false;
		const char *const *fixed;
		size_t nfixed = classify_fixed_masks(dir->state, &fixed);

		/* a file stays a file; a directory, or nothing, is an empty directory */
		err = host_stat_at(dfd, name, &sb);
		if (err == 0 && !S_ISDIR(sb.st_mode))
			type = S_IFREG;
		for (size_t i = 0; i < nfixed && !listed; i++)
			listed = strcmp(fixed[i], name) == 0;
		if (err && !listed)
			return err;	/* a glob mask shows only what exists */
		if (!err)
			note_if_unclassified(dir, name, st);
		in = inode_take_mask(dir, name, type, st);
		mask_attr(in, &sb);
		fill_entry(e, in, &sb, dir);
		return 0;
	}
	err = host_lookup(dfd, name, &fd, &sb);
	if (err)
		return err;
	note_if_unclassified(dir, name, st);
	in = inode_take_host(fd, &sb, st, dir, name);
	if (S_ISDIR(sb.st_mode) && (err = refuse_folding(in, name)) != 0)
		return err;
	if (S_ISDIR(sb.st_mode) && classify_class(st) == AWFS_CLASS_RO)
		(void)watch_dir(in);	/* before the reply: its entries' timeouts depend on it */
	fill_entry(e, in, &sb, dir);
	return 0;
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	const struct awfs_state *st = NULL;
	struct fuse_entry_param e;
	struct awfs_inode *dir = inode_get(parent);
	int err = do_lookup(dir, name, &e, &st);

	if (err == ENOENT && st && state_timeout(st, dir) > 0) {
		/* a negative entry: names the agent could create stay absent until it does */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = state_timeout(st, dir);
		fuse_reply_entry(req, &e);
	} else if (err) {
		reply_err(req, err);
	} else {
		fuse_reply_entry(req, &e);
	}
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	inode_put(inode_get(ino), nlookup);
	fuse_reply_none(req);
}

static void ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		inode_put(inode_get(forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct awfs_inode *in = inode_get(ino);
	struct stat st;
	int err = node_attr(in, &st);

	(void)fi;
	if (err)
		reply_err(req, err);
	else
		fuse_reply_attr(req, &st, attr_ttl(in, &st));
}

static const char *setattr_op(int to_set)
{
	if (to_set & FUSE_SET_ATTR_SIZE)
		return "truncate";
	if (to_set & FUSE_SET_ATTR_MODE)
		return "chmod";
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
		return "chown";
	return "utimens";
}

/*
 * A write or a truncate by a caller other than root clears the file's
 * set-user-ID bit, and its set-group-ID bit with group execute, as the host
 * does for a writer without CAP_FSETID: the kernel leaves it to awfs
 * (FUSE_HANDLE_KILLPRIV_V2, loop.c), and awfs's own call keeps them (it has
 * CAP_FSETID). Through @fh when there is one, else through the pin. An
 * open with O_TRUNC does the same.
 */
static void drop_setid(fuse_req_t req, struct awfs_inode *in, int fh)
{
	int fd = -1;

	if (in->type != S_IFREG || in->kind != AWFS_INODE_HOST)
		return;
	if (fh >= 0 || inode_fd(in, &fd) == 0)	/* (on a worker, always a handle) */
		host_kill_suid(fd, fh, fuse_req_ctx(req)->uid);
}

/* What a SETATTR changed on the host (@done: its FUSE_SET_ATTR_ bits), for the change record. */
static void setattr_changed(fuse_req_t req, struct awfs_inode *in, const struct stat *attr, int done, int fh)
{
	if (done & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID | FUSE_SET_ATTR_ATIME))
		note(req, CHANGE_OF(in, .op = "setattr", .mode = attr->st_mode & 07777, .has_mode = done & FUSE_SET_ATTR_MODE,
				 .owner = attr->st_uid, .has_owner = done & FUSE_SET_ATTR_UID,
				 .group = attr->st_gid, .has_group = done & FUSE_SET_ATTR_GID,
				 .times = (done & FUSE_SET_ATTR_ATIME) != 0),
		     in, NULL, NULL, NULL);
	if (!(done & FUSE_SET_ATTR_SIZE))
		return;
	note(req, CHANGE_OF(in, .op = "truncate", .size = (uint64_t)attr->st_size, .has_size = true), in, NULL, NULL, NULL);
	/* its content changed: recorded (hashed) at its last close, or now if none is open */
	if (in->wopens) {
		mark_written(in);
	} else {
		write_opened(req, in, true);	/* a handle of its own, opened and closed at once */
		write_closed(in, O_WRONLY, fh);
	}
}

static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct awfs_inode *in = inode_get(ino);
	int fh = fi ? (int)fi->fh : -1;
	struct stat st;
	int err, fd = -1, done = 0;	/* done: what reached the host, for the change record */

	err = check_object(req, setattr_op(to_set), in);
	if (!err)
		err = inode_fd(in, &fd);	/* EBADF: not a host inode */
	if (err)
		goto out;
	if (to_set & FUSE_SET_ATTR_MODE) {
		if (in->type == S_IFLNK)
			err = EOPNOTSUPP;
		else
			AS_CALLER(req, err, host_chmod(fd, attr->st_mode));
		if (err)
			goto out;
		done |= FUSE_SET_ATTR_MODE;
	}
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;

		AS_CALLER(req, err, host_chown(fd, uid, gid));
		if (err)
			goto out;
		done |= to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID);
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		AS_CALLER(req, err, host_truncate(fd, fh, attr->st_size));
		if (err)
			goto out;
		drop_setid(req, in, fh);
		done |= FUSE_SET_ATTR_SIZE;
	}
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
		struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT } };

		if (to_set & FUSE_SET_ATTR_ATIME_NOW)
			ts[0].tv_nsec = UTIME_NOW;
		else if (to_set & FUSE_SET_ATTR_ATIME)
			ts[0] = attr->st_atim;
		if (to_set & FUSE_SET_ATTR_MTIME_NOW)
			ts[1].tv_nsec = UTIME_NOW;
		else if (to_set & FUSE_SET_ATTR_MTIME)
			ts[1] = attr->st_mtim;
		AS_CALLER(req, err, host_utimens(fd, fh, ts, in->type == S_IFLNK));
		if (err)
			goto out;
		done |= FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME;
	}
	err = host_stat(fd, &st);
	if (!err)
		temp_attr(in, &st);
out:
	if (done && changes_on() && !in->staged)
		setattr_changed(req, in, attr, done, fh);
	if (err)
		reply_err(req, err);
	else
		fuse_reply_attr(req, &st, attr_ttl(in, &st));
}

static void ll_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct awfs_inode *in = inode_get(ino);
	char buf[PATH_MAX + 1];
	size_t len;
	int err, fd;

	if (in->kind != AWFS_INODE_HOST) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	err = inode_fd(in, &fd);
	if (!err)
		err = host_readlink(fd, buf, sizeof(buf), &len);
	if (!err && len >= sizeof(buf))
		err = ENAMETOOLONG;
	if (err) {
		reply_err(req, err);
		return;
	}
	buf[len] = '\0';
	fuse_reply_readlink(req, buf);
}

/* ------------------------------------------------------------ namespace */

/* After a successful create-like call: look the new entry up and reply. */
static void reply_new_entry(fuse_req_t req, struct awfs_inode *dir, const char *name)
{
	struct fuse_entry_param e;
	int err = do_lookup(dir, name, &e, NULL);

	if (err)
		reply_err(req, err);
	else
		fuse_reply_entry(req, &e);
}

/*
 * links = "read-only" (decide.h): may the agent's symlink to @target be
 * made? Only an absolute path under the root (the policy's, else the mount
 * point: the path the host reads the tree by), normalised, every entry on
 * it in a read-only position (which the agent can neither rename nor
 * replace), the object read-only with no mask and no writable rule below
 * it, and on the host an
 * object reached from the root through no link (looked at as the caller).
 * Then nothing the agent does later changes where the link leads.
 */
static bool link_target_ok(fuse_req_t req, const char *target)
{
	const char *top = cfg->policy->root ? cfg->policy->root : cfg->mountpoint;
	size_t tl = strlen(top);
	const struct awfs_state *st = classify_root(cfg->classifier);
	const struct awfs_rule *const *alive;
	char *rel, *save = NULL;
	size_t n;
	bool ok = true;
	int rfd, err;

	if (strncmp(target, top, tl) != 0 || target[tl] != '/' || !target[tl + 1])
		return false;
	rel = util_xstrdup(target + tl + 1);
	for (char *c = strtok_r(rel, "/", &save); c && ok; c = strtok_r(NULL, "/", &save)) {
		ok = strcmp(c, ".") != 0 && strcmp(c, "..") != 0 &&
		     !(st == classify_root(cfg->classifier) && info_is_name(inode_root(), c));
		if (ok) {
			st = classify_child(cfg->classifier, st, c);
			ok = classify_class(st) == AWFS_CLASS_RO;
		}
	}
	free(rel);
	/* "a//b", "a/" and the like: not the normalised form the walk above saw */
	if (!ok || strstr(target + tl, "//") || target[strlen(target) - 1] == '/')
		return false;
	/* read-only all the way down: no mask, and no writable hole the agent could fill with links */
	n = classify_alive(st, &alive);
	for (size_t i = 0; i < n && ok; i++)
		ok = alive[i]->cls == AWFS_CLASS_RO || alive[i]->ncomps <= classify_depth(st);
	if (!ok || inode_fd(inode_root(), &rfd) != 0)
		return false;
	AS_CALLER(req, err, host_beneath(rfd, target + tl + 1));
	return err == 0;
}

static void make_node(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      dev_t rdev, const char *link, const char *op)
{
	struct awfs_inode *dir = inode_get(parent);
	const struct awfs_entry_pos e = entry_pos(dir, name);
	struct awfs_decision d = link ? decide_symlink(&e) :
				 S_ISDIR(mode) ? decide_entry(&e) : decide_mknod(&e, mode);
	const struct awfs_other_end at = { NULL, dir, name };
	int dfd, err;

	if (!d.how && link && decide_links(e.st) == AWFS_LINKS_READ_ONLY && !link_target_ok(req, link))
		d = (struct awfs_decision){ AWFS_BLOCK_TARGET, 0, e.st, classify_rule(e.st) };
	err = d.how ? refuse(req, op, &d, &at, false) : inode_fd(dir, &dfd);

	if (err) {
		reply_err(req, err);
		return;
	}
	if (link)
		AS_CALLER(req, err, host_symlink(link, dfd, name));
	else if (S_ISDIR(mode))
		AS_CALLER(req, err, host_mkdir(dfd, name, mode & 07777));
	else
		AS_CALLER(req, err, host_mknod(dfd, name, mode, rdev));
	if (err) {
		reply_err(req, err);
		return;
	}
	if (changes_on())
		note(req, at_object(CHANGE(.op = op, .kind = kind_word(link ? S_IFLNK : mode & S_IFMT), .target = link),
				    dfd, name),
		     dir, name, NULL, NULL);
	reply_new_entry(req, dir, name);
}

static void ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	make_node(req, parent, name, mode, rdev, NULL, "mknod");
}

static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	make_node(req, parent, name, S_IFDIR | mode, 0, NULL, "mkdir");
}

static void ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	make_node(req, parent, name, S_IFLNK, 0, link, "symlink");
}

static void ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char *name)
{
	struct awfs_inode *in = inode_get(ino), *dir = inode_get(parent);
	const struct awfs_object_pos o = object_pos(in);
	const struct awfs_entry_pos e = entry_pos(dir, name);
	/*
	 * A temporary beside a single-file rule is linked nowhere: its one way
	 * onto the host is its rename onto the rule, and a second name would
	 * leave the rule's file linked to a path the agent keeps. Refused as
	 * the entry it is, in its read-only directory.
	 */
	const struct awfs_decision d = in->staged ? decide_entry(&(struct awfs_entry_pos){ .dir = in->parent->state,
									 .st = in->parent->state })
						: decide_link(&o, in->type, &e);
	const struct awfs_other_end at[2] = { { NULL, in, NULL }, { "to", dir, name } };
	int fd, dfd, err = d.how ? refuse(req, "link", &d, at, true) : inode_fd(in, &fd);

	if (!err)
		err = inode_fd(dir, &dfd);
	if (!err)
		AS_CALLER(req, err, host_link(fd, dfd, name));
	if (err) {
		reply_err(req, err);
		return;
	}
	if (changes_on())
		note(req, CHANGE_OF(in, .op = "link", .kind = kind_word(in->type)), in, NULL, dir, name);
	reply_new_entry(req, dir, name);
}

static void ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct awfs_inode *dir = inode_get(parent);
	struct awfs_staged *t = dir->kind == AWFS_INODE_HOST ? stage_find(dir, name) : NULL;
	int dfd, err;

	if (t) {
		temp_unlink(req, t);
		return;
	}
	err = check_entry(req, "unlink", dir, name);

	if (!err)
		err = inode_fd(dir, &dfd);
	if (!err)
		AS_CALLER(req, err, host_unlink(dfd, name));
	if (!err && changes_on())
		note(req, CHANGE(.op = "unlink"), dir, name, NULL, NULL);
	reply_err(req, err);
}

static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct awfs_inode *dir = inode_get(parent);
	int dfd, err = check_entry(req, "rmdir", dir, name);

	if (!err)
		err = inode_fd(dir, &dfd);
	if (!err)
		AS_CALLER(req, err, host_rmdir(dfd, name));
	if (!err && changes_on())
		note(req, CHANGE(.op = "rmdir"), dir, name, NULL, NULL);
	reply_err(req, err);
}

/*
 * What a rename made @name in @dir, @old in @from before, in state @was
 * there and @now here: a file's inode (of that class) is told its new
 * name, a directory takes the new state (see inode.c).
 */
static void moved_to(struct awfs_inode *from, const char *old, struct awfs_inode *dir, const char *name,
		     const struct awfs_state *was, const struct awfs_state *now)
{
	struct stat sb;
	int dfd;

	if (inode_fd(dir, &dfd) != 0 || host_stat_at(dfd, name, &sb) != 0)
		return;
	if (!S_ISDIR(sb.st_mode))
		inode_moved(sb.st_dev, sb.st_ino, was, from, old, dir, name);
	else if (was != now)
		inode_restate(sb.st_dev, sb.st_ino, now);
}

/*
 * The type of what @name in @dir holds, where a rename would move it into
 * a tree closed to links at @to (decide.h; 0 elsewhere, or if it is gone).
 * Looked at before the rename, which is refused unless @name is in such a
 * tree too: there the agent makes no special file, and no link but one to
 * read-only ground, so it cannot swap one in after the look.
 */
static mode_t moved_type(struct awfs_inode *dir, const char *name, const struct awfs_entry_pos *to)
{
	struct stat sb;
	int dfd;

	if (to->info || decide_links(to->st) == AWFS_LINKS_ANY || dir->kind != AWFS_INODE_HOST ||
	    inode_fd(dir, &dfd) != 0 || host_stat_at(dfd, name, &sb) != 0)
		return 0;
	return sb.st_mode & S_IFMT;
}

static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct awfs_inode *dir = inode_get(parent), *ndir = inode_get(newparent);
	const char *op = (flags & RENAME_EXCHANGE) ? "rename(exchange)" : "rename";
	const struct awfs_entry_pos from = entry_pos(dir, name), to = entry_pos(ndir, newname);
	struct awfs_staged *t = dir == ndir && dir->kind == AWFS_INODE_HOST && !(flags & RENAME_EXCHANGE)
					? stage_find(dir, name) : NULL;
	const struct awfs_decision d = t ? decide_replace(&from, &to)
					 : decide_rename(&from, moved_type(dir, name, &to),
							 &to, (flags & RENAME_EXCHANGE) ? moved_type(ndir, newname, &from) :
							      (flags & RENAME_WHITEOUT) ? S_IFCHR : 0);
	/* messages always read "rename SOURCE to DESTINATION", whichever end refused */
	const struct awfs_other_end at[2] = { { NULL, dir, name }, { "to", ndir, newname } };
	int dfd, ndfd, err = d.how ? refuse(req, op, &d, at, true) : 0;
	bool replaced = false, same = false;

	if (!err && t) {
		temp_replace(req, t, &to, newname, flags);
		return;
	}
	if (!err)
		err = inode_fd(dir, &dfd);
	if (!err)
		err = inode_fd(ndir, &ndfd);
	if (!err && changes_on()) {
		struct stat sb, sa;

		replaced = host_stat_at(ndfd, newname, &sb) == 0;
		/* onto another name of the same file: the host changes nothing */
		same = replaced && !(flags & RENAME_EXCHANGE) && host_stat_at(dfd, name, &sa) == 0 &&
		       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	}
	if (!err)
		AS_CALLER(req, err, host_rename(dfd, name, ndfd, newname, flags));
	if (!err && changes_on() && !same) {
		note(req, at_object(CHANGE(.op = (flags & RENAME_EXCHANGE) ? "exchange" : "rename",
					   .replaced = replaced), ndfd, newname),
		     dir, name, ndir, newname);
		if (flags & RENAME_WHITEOUT)	/* a device node 0:0 left at the source */
			note(req, at_object(CHANGE(.op = "mknod", .kind = "whiteout"), dfd, name), dir, name, NULL, NULL);
	}
	if (!err) {
		/* the kernel keeps its inodes: a directory takes the state of where
		 * it is now, a file is found there by the trimmer */
		moved_to(dir, name, ndir, newname, from.st, to.st);
		if (flags & RENAME_EXCHANGE)
			moved_to(ndir, newname, dir, name, to.st, from.st);
	}
	reply_err(req, err);
}

/* ------------------------------------------------------------ files */

/*
 * An open for reading only, with no flag that changes how the fd behaves
 * (a deny list: the kernel's O_LARGEFILE is not the C library's on 64-bit).
 */
static bool plain_read(int flags)
{
	return (flags & O_ACCMODE) == O_RDONLY &&
	       !(flags & (O_TRUNC | O_APPEND | O_DIRECT | O_NOATIME | O_NONBLOCK | O_SYNC | O_DSYNC |
			  O_ASYNC));
}

static const char *open_op(int flags)
{
	if ((flags & O_TRUNC) && (flags & O_ACCMODE) == O_RDONLY)
		return "open(O_RDONLY|O_TRUNC)";
	if (flags & O_TRUNC)
		return (flags & O_ACCMODE) == O_RDWR ? "open(O_RDWR|O_TRUNC)" : "open(O_WRONLY|O_TRUNC)";
	return (flags & O_ACCMODE) == O_RDWR ? "open(O_RDWR)" : "open(O_WRONLY)";
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct awfs_inode *in = inode_get(ino);
	const struct awfs_object_pos o = object_pos(in);
	const struct awfs_decision d = decide_open(fi->flags, &o);
	const struct awfs_other_end at = { NULL, in, NULL };
	int err = 0, fh = -1, fd = -1, dirfd = -1, id = 0;

	if (d.how)
		err = refuse(req, open_op(fi->flags), &d, &at, false);
	if (!err && in->kind == AWFS_INODE_HOST && !inode_may_open())
		err = EMFILE;	/* past the limit: open files fail, lookups do not */
	if (!err && in->kind == AWFS_INODE_HOST) {
		/* the directory's fd first (the name is tried there, below): the
		 * inode's, opened next, never closes the newest ones */
		if (in->parent && !in->unnamed && inode_fd(in->parent, &dirfd) != 0)
			dirfd = -1;
		err = inode_fd(in, &fd);
	}
	if (!err && in->kind == AWFS_INODE_HOST) {
		if (in->type == S_IFREG && plain_read(fi->flags) && !in->linked) {
			/*
			 * The inode's own fd, made readable once, serves every such
			 * open, after the kernel's check on its attributes; a file
			 * with more links may have an alias whose attributes are
			 * fresher (inode.c): it is opened as the caller instead.
			 */
			if (!in->readable)
				err = host_make_readable(fd, dirfd, in->name, in->dev, in->ino);
			in->readable = !err;
			fh = fd;
		} else {
			caller_begin(req);
			err = host_open_pinned(fd, dirfd, in->name, in->dev, in->ino, fi->flags & ~O_NOFOLLOW, &fh);
			if (!err)	/* as the caller, in the same switch */
				id = open_backing(req, in, fh, fi->flags, true);
			host_as_daemon();
		}
	}
	if (err) {
		reply_err(req, err);
		return;
	}
	if (fh >= 0 && (fi->flags & O_TRUNC))
		drop_setid(req, in, fh);
	if (in->kind == AWFS_INODE_INFO) {
		/* a snapshot, read directly: the text changes between opens */
		err = info_open(in, fuse_req_ctx(req)->uid, &fi->fh);
		if (err) {
			reply_err(req, err);
			return;
		}
		fi->direct_io = 1;
		if (fuse_reply_open(req, fi) == -ENOENT)
			info_release(fi->fh);
		return;
	}
	fi->fh = (uint64_t)(int64_t)fh;
	fi->keep_cache = cfg->keep_cache;
	if (fh != fd)
		opener_set(fh, req);
	if (fh >= 0 && fh == fd)	/* the inode's fd: registered now, before this handle counts among the inode's */
		id = open_backing(req, in, fh, fi->flags, false);
	inode_opened(in, fh != fd);	/* its fd stays open (it may be fh) until released */
	if (in->kind == AWFS_INODE_HOST && (handle_writes(fi->flags) || (fi->flags & O_TRUNC))) {
		write_opened(req, in, fi->flags & O_TRUNC);
		if (!handle_writes(fi->flags))	/* O_RDONLY | O_TRUNC: changed now, by no handle */
			write_closed(in, O_WRONLY, fh);
	}
	pt_opened(in, id, fi);
	if (fuse_reply_open(req, fi) == -ENOENT) {	/* the caller was interrupted */
		if (in->kind == AWFS_INODE_HOST)
			write_closed(in, fi->flags, fh);
		pt_released(in, fi);
		if (fh >= 0 && fh != fd)
			close(fh);
		inode_released(in, fh != fd);
	}
}

/*
 * A create of @name in @dir, at @pos, that the policy refuses: does the
 * host have the name (and it is not masked)?
 */
static bool exists_unmasked(struct awfs_inode *dir, const char *name, const struct awfs_entry_pos *pos)
{
	struct stat sb;
	int dfd;

	return dir->kind == AWFS_INODE_HOST && !pos->info && classify_class(pos->st) != AWFS_CLASS_MASK &&
	       !(stage_is_hidden(name) && decide_stages_in(dir->state)) &&
	       inode_fd(dir, &dfd) == 0 && host_stat_at(dfd, name, &sb) == 0;
}

static void ll_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct awfs_inode *dir = inode_get(parent), *in;
	const struct awfs_entry_pos pos = entry_pos(dir, name);
	const struct awfs_decision d = decide_entry(&pos);
	const struct awfs_other_end at = { NULL, dir, name };
	struct fuse_entry_param e;
	struct stat sb;
	int err, fh, pfd, dfd, id = 0;

	/*
	 * A name that exists, where the policy would refuse a create: the
	 * kernel's belief that it is absent was stale, and an open of it may
	 * well be allowed. ESTALE (unlogged: nothing was refused) has the
	 * kernel look again (see below).
	 */
	if (d.how && ((dir->kind == AWFS_INODE_HOST && stage_find(dir, name)) ||
		       exists_unmasked(dir, name, &pos))) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	/* a temporary beside a single-file rule, to be renamed over it */
	if (d.how && dir->kind == AWFS_INODE_HOST && !stage_is_hidden(name) && !decide_stage(&pos, name).how) {
		temp_create(req, dir, name, mode, fi);
		return;
	}
	err = d.how ? refuse(req, "create", &d, &at, false) : 0;
	if (!err && !inode_may_open())
		err = EMFILE;	/* past the limit: open files fail, lookups do not */
	if (!err)
		err = inode_fd(dir, &dfd);
	if (err) {
		reply_err(req, err);
		return;
	}
	caller_begin(req);
	err = host_create(dfd, name, fi->flags & ~O_NOFOLLOW, mode & 07777, &fh);
	id = end_create(req, err, dir->dev, fh, fi->flags);	/* as the caller, in the same switch */
	/*
	 * The name exists after all: the kernel's belief that it did not was
	 * stale (host_create() never opens an existing object). ESTALE makes
	 * the kernel look the name up again and open what it finds with the
	 * checks of an ordinary open; an O_EXCL create gets its EEXIST.
	 */
	if (err == EEXIST && !(fi->flags & O_EXCL))
		err = ESTALE;
	if (err) {
		reply_err(req, err);
		return;
	}
	/* pin the very object we created, not whatever the name holds now */
	err = host_reopen(fh, O_PATH, &pfd);
	if (!err) {
		err = host_stat(pfd, &sb);
		if (err)
			close(pfd);
	}
	if (err) {
		if (id > 0)
			pt_unregister(id);
		close(fh);
		reply_err(req, err);
		return;
	}
	in = inode_take_host(pfd, &sb, pos.st, dir, name);
	fill_entry(&e, in, &sb, dir);
	fi->fh = (uint64_t)fh;
	fi->keep_cache = cfg->keep_cache;
	opener_set(fh, req);
	id = adopt_backing(in, id);
	inode_opened(in, true);
	if (changes_on()) {
		note(req, CHANGE(.op = "create", .kind = "file", .has_object = true, .dev = sb.st_dev, .ino = sb.st_ino),
		     dir, name, NULL, NULL);
		/* recorded at its last close (size, hash); at once if opened read-only */
		write_opened(req, in, true);
		if (!handle_writes(fi->flags))
			write_closed(in, O_WRONLY, fh);
	}
	pt_opened(in, id, fi);
	if (fuse_reply_create(req, &e, fi) == -ENOENT) {
		write_closed(in, fi->flags, fh);
		pt_released(in, fi);
		close(fh);
		inode_released(in, true);
		inode_put(in, 1);
	}
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
	struct awfs_inode *in = inode_get(ino);

	if (in->kind == AWFS_INODE_INFO) {
		size_t len;
		const char *text = info_handle_text(fi->fh, &len);
		size_t o = off < 0 ? len : (size_t)off < len ? (size_t)off : len;

		fuse_reply_buf(req, text + o, size < len - o ? size : len - o);
		return;
	}
	if (in->kind != AWFS_INODE_HOST) {
		fuse_reply_buf(req, NULL, 0);	/* a masked file is empty */
		return;
	}
	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = (int)fi->fh;
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, 0);
}

/*
 * An O_DIRECT handle: the host wants the memory it writes from aligned, and
 * the data sits in libfuse's buffer just past the request header. Copy it
 * to a page-aligned buffer first, so the write behaves as on the host (an
 * offset or length the host file system cannot take directly still fails
 * with its EINVAL, as it would there).
 */
static ssize_t write_direct(int fd, struct fuse_bufvec *in_buf, off_t off)
{
	size_t len = fuse_buf_size(in_buf);
	struct fuse_bufvec mem = FUSE_BUFVEC_INIT(len);
	void *p;
	ssize_t n;

	if (posix_memalign(&p, 4096, len ? len : 1) != 0)
		return -ENOMEM;
	mem.buf[0].mem = p;
	n = fuse_buf_copy(&mem, in_buf, 0);
	if (n >= 0 && (n = pwrite(fd, p, (size_t)n, off)) < 0)
		n = -errno;
	free(p);
	return n;
}

static void ll_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in_buf, off_t off,
			 struct fuse_file_info *fi)
{
	struct awfs_inode *in = inode_get(ino);
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in_buf));
	ssize_t n;
	int err = check_object(req, "write", in);

	if (!err && in->kind != AWFS_INODE_HOST)
		err = EBADF;
	if (err) {
		reply_err(req, err);
		return;
	}
	/* fcntl(F_SETFL) never reaches us: follow the caller's O_APPEND now */
	host_match_append((int)fi->fh, fi->flags & O_APPEND);
	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = (int)fi->fh;
	out.buf[0].pos = off;
	AS_WRITER(req, (int)fi->fh, n,
		  (fi->flags & O_DIRECT) ? write_direct((int)fi->fh, in_buf, off) : fuse_buf_copy(&out, in_buf, 0));
	if (n > 0) {
		drop_setid(req, in, (int)fi->fh);
		mark_written(in);
	}
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct awfs_inode *in = inode_get(ino);

	if (in->kind == AWFS_INODE_INFO) {
		info_release(fi->fh);
	} else if (in->kind == AWFS_INODE_HOST) {
		/* its own fd, closed (not the inode's, which a plain read-only
		 * open shares: that stays open while the inode has open files) */
		bool own = (int)fi->fh != in->cfd;

		write_closed(in, fi->flags, (int)fi->fh);
		pt_released(in, fi);
		if (own) {
			opener_store((int)fi->fh, 0, 0);	/* a reused number has none */
			close((int)fi->fh);
		}
		inode_released(in, own);
	}
	fuse_reply_err(req, 0);
}

static void ll_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	fuse_reply_err(req, has_host_fh(ino) ? host_fsync((int)fi->fh, datasync) : 0);
}

static void ll_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
			 struct fuse_file_info *fi)
{
	int err = check_object(req, "fallocate", inode_get(ino));

	if (!err && has_host_fh(ino))
		drop_setid(req, inode_get(ino), (int)fi->fh);
	if (!err && !has_host_fh(ino))
		err = EBADF;
	if (!err)
		AS_WRITER(req, (int)fi->fh, err, host_fallocate((int)fi->fh, mode, offset, length));
	if (!err)
		mark_written(inode_get(ino));
	reply_err(req, err);
}

/*
 * The most one COPY_FILE_RANGE copies. The kernel passes the caller's
 * length whole when the file system implements the call, and the host's
 * copy of 2 GiB holds a worker for seconds: a short copy is legal (the
 * caller loops, as cp and the libc do), so each request is bounded in the
 * work it does and the workers go round the callers in turn (loop.c).
 */
#define AWFS_COPY_MAX (4u << 20)

static void ll_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			       struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			       struct fuse_file_info *fi_out, size_t len, int flags)
{
	size_t copied = 0;
	int err = check_object(req, "copy_file_range", inode_get(ino_out));

	if (!err && !has_host_fh(ino_out))
		err = EBADF;
	if (!err && inode_get(ino_in)->kind == AWFS_INODE_INFO)
		err = EOPNOTSUPP;	/* the caller falls back to read and write */
	if (!err)
		drop_setid(req, inode_get(ino_out), (int)fi_out->fh);
	if (len > AWFS_COPY_MAX)
		len = AWFS_COPY_MAX;
	if (!err && has_host_fh(ino_in))
		AS_WRITER(req, (int)fi_out->fh, err,
			  host_copy_file_range((int)fi_in->fh, off_in, (int)fi_out->fh, off_out, len,
					       (unsigned)flags, &copied));
	if (!err && copied)
		mark_written(inode_get(ino_out));
	if (err)
		reply_err(req, err);
	else
		fuse_reply_write(req, copied);	/* a masked source is empty: 0 bytes */
}

static void ll_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	off_t res;
	int err;

	if (!has_host_fh(ino)) {
		/* all data (information text), or none (a masked file): no holes inside */
		const struct awfs_inode *in = inode_get(ino);
		size_t len = 0;

		if (in->kind == AWFS_INODE_INFO)
			(void)info_handle_text(fi->fh, &len);
		if (off >= (off_t)len)
			fuse_reply_err(req, ENXIO);
		else
			fuse_reply_lseek(req, whence == SEEK_DATA ? off : (off_t)len);
		return;
	}
	err = host_lseek((int)fi->fh, off, whence, &res);
	if (err)
		reply_err(req, err);
	else
		fuse_reply_lseek(req, res);
}

/* ------------------------------------------------------------ directories */

/*
 * Listings (listing.c reads them page by page; here is what they show).
 * The information directory and a masked one have no host stream: their
 * few entries are the tail. A host directory's entries pass as the host
 * has them but for masks, made synthetic (never a host inode number or
 * type), awfs's own names (the information directory's place, a
 * temporary's hidden name), which are not listed, and then the literal
 * masks the host does not have, and the information directory at the root.
 */
static int list_open(struct awfs_inode *dir, DIR **dp)
{
	int err, dfd;

	*dp = NULL;
	if (dir->kind == AWFS_INODE_INFO || is_masked(dir))
		return 0;
	err = inode_fd(dir, &dfd);
	return err ? err : host_opendir(dfd, dp);
}

static bool list_shape(struct awfs_inode *dir, DIR *dp, const struct dirent *de,
		       struct dir_entry *out)
{
	const struct awfs_state *st;
	unsigned char t = de->d_type;

	*out = (struct dir_entry){ .ino = de->d_ino, .type = de->d_type };
	if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
		out->name = util_xstrdup(de->d_name);
		out->type = DT_DIR;
		return true;
	}
	if (info_is_name(dir, de->d_name))
		return false;	/* the information directory stands in its place */
	if (stage_is_hidden(de->d_name) && decide_stages_in(dir->state))
		return false;	/* a temporary's host name: awfs's own (stage.h) */
	st = classify_child(cfg->classifier, dir->state, de->d_name);
	note_if_unclassified(dir, de->d_name, st);
	if (classify_class(st) == AWFS_CLASS_MASK) {
		struct stat sb;

		if (t == DT_UNKNOWN)
			t = host_stat_at(dirfd(dp), de->d_name, &sb) == 0 && !S_ISDIR(sb.st_mode) ?
				    DT_REG : DT_DIR;
		out->ino = inode_mask_ino(dir, de->d_name);
		out->type = t == DT_DIR ? DT_DIR : DT_REG;
	}
	out->name = util_xstrdup(de->d_name);
	return true;
}

static void list_tail(struct awfs_inode *dir, DIR *dp,
		      void (*add)(void *ctx, const char *name, ino_t ino, unsigned char type),
		      void *ctx)
{
	const char *const *fixed;
	size_t nfixed;

	if (dir->kind == AWFS_INODE_INFO) {
		const struct awfs_inode *f;

		add(ctx, ".", info_ino(dir), DT_DIR);
		add(ctx, "..", inode_root()->ino, DT_DIR);
		for (size_t i = 0; (f = info_file(i)); i++)
			add(ctx, f->name, info_ino(f), DT_REG);
		return;
	}
	if (!dp) {	/* masked */
		const struct awfs_inode *p = dir->parent;

		add(ctx, ".", dir->mask_ino, DT_DIR);
		add(ctx, "..", p->kind != AWFS_INODE_HOST ? p->mask_ino : p->ino, DT_DIR);
		return;
	}
	/* a literal mask is listed whether or not the host has it: here when it has not */
	nfixed = classify_fixed_masks(dir->state, &fixed);
	for (size_t i = 0; i < nfixed; i++) {
		struct stat sb;

		if (!info_is_name(dir, fixed[i]) && host_stat_at(dirfd(dp), fixed[i], &sb) == ENOENT)
			add(ctx, fixed[i], inode_mask_ino(dir, fixed[i]), DT_DIR);
	}
	if (dir == inode_root() && cfg->info_dir)
		add(ctx, cfg->info_dir, info_ino(info_dir_node()), DT_DIR);
}

static const struct listing_shaper list_shaper = {
	.open = list_open,
	.shape = list_shape,
	.tail = list_tail,
};

/*
 * Listings carry no handle. OPENDIR answers ENOSYS once, after which the
 * kernel sends no OPENDIR or RELEASEDIR again and caches listings as awfs
 * would ask it to (FOPEN_KEEP_CACHE | FOPEN_CACHE_DIR, its default then):
 * two round trips less for every directory walked. With cache=never, every
 * open is answered, without caching. So a listing is known by its offsets
 * alone: each carries its number and the index of the next entry
 * (listing.h), and the READDIR that finds the end closes its stream.
 */
static bool no_opendir;	/* the kernel takes ENOSYS from OPENDIR as "never again" */

static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	if (no_opendir && cfg->keep_cache) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	fi->fh = 0;
	fi->keep_cache = cfg->keep_cache;
	fi->cache_readdir = cfg->keep_cache;
	fuse_reply_open(req, fi);
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct awfs_inode *dir = inode_get(ino);
	const struct dir_entry *de;
	struct listing *l;
	size_t i, used = 0;
	char *buf;
	int err;
	/* past the mark (inode.h), no inode for each name listed: the kernel
	 * looks a name up when it uses it */
	bool pressed = plus && inode_pressed();

	(void)fi;
	err = listing_at(dir, off, &l, &i);
	if (err) {
		reply_err(req, err);
		return;
	}
	buf = util_xmalloc(size);
	for (; (de = listing_entry(l, i, &err)) != NULL; i++) {
		size_t need;

		if (plus) {
			struct fuse_entry_param e;
			/* "." and "..", and (EMFILE and the like) an entry whose lookup
			 * failed, are listed without attributes: the kernel looks the
			 * latter up when it is used, and gets the error then */
			bool bare = pressed || strcmp(de->name, ".") == 0 || strcmp(de->name, "..") == 0;

			if (!bare) {
				int lerr = do_lookup(dir, de->name, &e, NULL);

				if (lerr == ENOENT)
					continue;	/* gone since it was read */
				bare = lerr != 0;
			}
			if (bare) {
				memset(&e, 0, sizeof(e));
				e.attr.st_ino = de->ino;
				e.attr.st_mode = (mode_t)DTTOIF(de->type);
			}
			need = fuse_add_direntry_plus(req, buf + used, size - used, de->name, &e,
						      listing_off(l, i));
			if (need > size - used) {
				if (e.ino)
					inode_put(inode_get(e.ino), 1);
				break;
			}
		} else {
			struct stat st = { .st_ino = de->ino, .st_mode = (mode_t)DTTOIF(de->type) };

			need = fuse_add_direntry(req, buf + used, size - used, de->name, &st,
						 listing_off(l, i));
			if (need > size - used)
				break;
		}
		used += need;
	}
	if (err && used == 0) {
		listing_end(l);
		reply_err(req, err);
	} else {
		if (!de && used == 0)
			listing_end(l);	/* the end, seen: this listing is over */
		fuse_reply_buf(req, buf, used);
	}
	free(buf);
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

static void ll_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct awfs_inode *in = inode_get(ino);
	int fd, err = 0;

	(void)fi;
	if (in->kind == AWFS_INODE_HOST) {
		err = inode_open(in, O_RDONLY | O_DIRECTORY, &fd);	/* a worker's own */
		if (!err) {
			err = host_fsync(fd, datasync);
			close(fd);
		}
	}
	reply_err(req, err);
}

static void ll_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct awfs_inode *in = inode_get(ino);
	struct statvfs sv;
	int fd, err = inode_fd(in->kind == AWFS_INODE_HOST ? in : inode_root(), &fd);

	if (!err)
		err = host_statfs(fd, &sv);
	if (err)
		reply_err(req, err);
	else
		fuse_reply_statfs(req, &sv);
}

/* ------------------------------------------------------------ xattrs */

/*
 * The host's POSIX ACLs are served whatever -o xattr says: with
 * FUSE_CAP_POSIX_ACL the kernel reads them through GETXATTR and checks them
 * beside the mode bits (default_permissions), so an ACL that denies a user
 * on the host denies it here, and one that grants, grants. Setting one is a
 * change to the object, checked like a chmod.
 *
 * Where a file system keeps no ACLs at all (no xattrs there: ramfs, a
 * virtiofs share exported without them in a guest), the host answers an
 * ACL read with EOPNOTSUPP, and a 6.1 kernel takes that for a failed
 * permission check, not for "no ACL": every access the ACL would decide
 * (by a uid that does not own the object) failed. There awfs answers
 * ENODATA, "this object has no ACL", which is the truth where the modes
 * are the file system's whole permission check (host_acls_absent()), so
 * the kernel checks the modes as the host would. Elsewhere (NFSv4, CIFS,
 * procfs, a FUSE file system other than virtiofs) the host may check more
 * than any ACL awfs could serve, and awfs opens for reading as itself:
 * the EOPNOTSUPP stays, and such accesses fail closed. (A FUSE daemon that
 * answers an ACL read otherwise, with ENODATA or an ACL it does not
 * enforce, and refuses callers on its own, is not covered: a limit in
 * docs/security.md, warned of at mount.) The answer is asked per object,
 * never decided for the mount: one mount may hold both (a FUSE
 * passthrough over several file systems), and mounts come and go below
 * the source. What the source's root says is in the mount line.
 */
static bool acls_on;	/* the kernel checks ACLs (FUSE_CAP_POSIX_ACL was granted) */

static bool is_acl_name(const char *name)
{
	return strcmp(name, "system.posix_acl_access") == 0 ||
	       strcmp(name, "system.posix_acl_default") == 0;
}

/*
 * What a getxattr/listxattr of @name (NULL: a listing) gets while xattrs are
 * off: ENOSYS stops the kernel asking at all (no GETXATTR before every
 * write), but it would stop its ACL reads too, so with ACLs on: EOPNOTSUPP.
 */
static int xattr_off_err(void)
{
	return acls_on ? EOPNOTSUPP : ENOSYS;
}

static void ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct awfs_inode *in = inode_get(ino);
	char *buf = size ? util_xmalloc(size) : NULL;
	size_t len = 0;
	int err, fd = -1;

	if (!cfg->xattr && !(acls_on && is_acl_name(name)))
		err = xattr_off_err();
	else if (in->kind != AWFS_INODE_HOST)
		err = ENODATA;	/* a mask has no xattrs */
	else if (!(err = inode_fd(in, &fd)))
		err = host_getxattr(fd, in->type == S_IFLNK, name, buf, size, &len);
	if (err == EOPNOTSUPP && acls_on && is_acl_name(name) && host_acls_absent(fd))
		err = ENODATA;	/* no ACL here: not a failed permission check (above) */
	if (err)
		reply_err(req, err);
	else if (size)
		fuse_reply_buf(req, buf, len);
	else
		fuse_reply_xattr(req, len);
	free(buf);
}

static void ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct awfs_inode *in = inode_get(ino);
	char *buf = size ? util_xmalloc(size) : NULL;
	size_t len = 0;
	int err = 0, fd;

	if (!cfg->xattr)
		err = xattr_off_err();
	else if (in->kind == AWFS_INODE_HOST && !(err = inode_fd(in, &fd)))
		err = host_listxattr(fd, in->type == S_IFLNK, buf, size, &len);
	if (err)
		reply_err(req, err);
	else if (size)
		fuse_reply_buf(req, buf, len);
	else
		fuse_reply_xattr(req, len);
	free(buf);
}

static void ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	struct awfs_inode *in = inode_get(ino);
	/* a refusal is still EROFS and logged; with xattrs off an allowed one is EOPNOTSUPP */
	int fd, err = check_object(req, "setxattr", in);

	if (!err && !cfg->xattr && !(acls_on && is_acl_name(name)))
		err = EOPNOTSUPP;
	if (!err)
		err = inode_fd(in, &fd);	/* EBADF: not a host inode */
	if (!err)
		AS_CALLER(req, err, host_setxattr(fd, in->type == S_IFLNK, name, value, size, flags));
	if (!err && changes_on())
		note(req, CHANGE_OF(in, .op = "xattr", .xattr = name), in, NULL, NULL, NULL);
	reply_err(req, err);
}

static void ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct awfs_inode *in = inode_get(ino);
	int fd, err = check_object(req, "removexattr", in);

	if (!err && !cfg->xattr && !(acls_on && is_acl_name(name)))
		err = EOPNOTSUPP;
	if (!err)
		err = inode_fd(in, &fd);	/* EBADF: not a host inode */
	if (!err)
		AS_CALLER(req, err, host_removexattr(fd, in->type == S_IFLNK, name));
	if (!err && changes_on())
		note(req, CHANGE_OF(in, .op = "xattr", .xattr = name, .removed = true), in, NULL, NULL, NULL);
	reply_err(req, err);
}

/* ------------------------------------------------------------ session */

static void ll_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	loop_patch_next_reply();	/* this thread's next reply is INIT's (loop.c) */
	/* O_TRUNC arrives with the open, so the check sees it in one place */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	/*
	 * No writeback cache: with it the kernel would accept a write and
	 * report our EROFS only later, or never. A denied write must fail at
	 * write() time.
	 */
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	if (conn->capable & FUSE_CAP_SPLICE_WRITE)
		conn->want |= FUSE_CAP_SPLICE_WRITE;
	if (conn->capable & FUSE_CAP_SPLICE_READ)
		conn->want |= FUSE_CAP_SPLICE_READ;
	no_opendir = conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT;
	/* the host's ACLs, checked by the kernel (see the xattrs section) */
	if (conn->capable & FUSE_CAP_POSIX_ACL) {
		conn->want |= FUSE_CAP_POSIX_ACL;
		acls_on = true;
	} else {
		log_msg(AWFS_LOG_WARN, "this kernel does not check POSIX ACLs on FUSE mounts: modes alone decide access here, whatever ACLs the host keeps");
	}
}

const struct fuse_lowlevel_ops ops_lowlevel = {
	.init = ll_init,
	.lookup = ll_lookup,
	.forget = ll_forget,
	.forget_multi = ll_forget_multi,
	.getattr = ll_getattr,
	.setattr = ll_setattr,
	.readlink = ll_readlink,
	.mknod = ll_mknod,
	.mkdir = ll_mkdir,
	.symlink = ll_symlink,
	.link = ll_link,
	.unlink = ll_unlink,
	.rmdir = ll_rmdir,
	.rename = ll_rename,
	.open = ll_open,
	.create = ll_create,
	.read = ll_read,
	.write_buf = ll_write_buf,
	.release = ll_release,
	.fsync = ll_fsync,
	.opendir = ll_opendir,
	.readdir = ll_readdir,
	.readdirplus = ll_readdirplus,
	.fsyncdir = ll_fsyncdir,
	.statfs = ll_statfs,
	.getxattr = ll_getxattr,
	.listxattr = ll_listxattr,
	.setxattr = ll_setxattr,
	.removexattr = ll_removexattr,
	.fallocate = ll_fallocate,
	.copy_file_range = ll_copy_file_range,
	.lseek = ll_lseek,
};
