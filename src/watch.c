/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch.c - inotify on the read-only directories the kernel holds; see
 * watch.h.
 *
 * What each event becomes (the directory's nodeid D, the name N):
 *  - N made, removed or renamed: N's entry in D is dropped, and D's
 *    attributes and cached listing;
 *  - N written, its attributes changed, or closed after writing: N's entry
 *    is dropped (the next use looks it up again), and the attributes and
 *    cached pages of the inode awfs has for it;
 *  - D's own attributes changed: D's;
 *  - the queue overflowed (events were lost): every read-only inode's
 *    attributes and pages, and every read-only file's entry.
 * Writes through an mmap are not reported until the writer closes the file,
 * nor changes made through a hard link outside watched directories: for
 * those the timeout (cfg->timeout_watched) still bounds what the kernel
 * keeps.
 *
 * Only directories on local file systems are watched (local_fs()): on a
 * network or FUSE file system (virtiofs in a guest, NFS) inotify reports
 * only what this kernel did, not what the host or another client does, so
 * there the short timeout stays.
 *
 * Only read-only directories are watched: awfs never changes them itself,
 * so every event is the host's (in writable paths awfs's own writes would
 * invalidate what the kernel just cached). For the same reason an event on
 * a writable name inside one (an allow_write file in a read-only
 * directory) is passed over.
 */
#include "config.h"

#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "host.h"
#include "log.h"
#include "util.h"

#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | \
		    IN_ATTRIB | IN_CLOSE_WRITE | IN_EXCL_UNLINK | IN_ONLYDIR)
#define NAMESPACE (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)

/* inode->wd of a directory that cannot be watched (tried once, not again) */
#define WD_NONE (-1)

struct wnode {
	int wd;
	struct awfs_inode *dir;
	struct wnode *next;
};

/* The one inotify instance, its table of watched directories, its thread. */
static struct {
	pthread_mutex_t lock;	/* the table, and a watched directory's fd while used */
	struct wnode **buckets;
	size_t nbuckets, count;
	int ifd, stopfd;
	int started, stop, done, limit_noted;
	pthread_t tid;
	struct fuse_session *se;
	struct awfs_classifier *classifier;
} watcher = { .lock = PTHREAD_MUTEX_INITIALIZER, .ifd = -1, .stopfd = -1 };

int watch_init(struct awfs_classifier *c)
{
	watcher.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (watcher.ifd < 0)
		return errno;
	watcher.stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (watcher.stopfd < 0) {
		int err = errno;

		close(watcher.ifd);
		watcher.ifd = -1;
		return err;
	}
	watcher.classifier = c;
	watcher.nbuckets = 256;
	watcher.buckets = util_xcalloc(watcher.nbuckets, sizeof(*watcher.buckets));
	return 0;
}

static struct wnode **slot(int wd)
{
	struct wnode **pp = &watcher.buckets[(unsigned)wd % watcher.nbuckets];

	while (*pp && (*pp)->wd != wd)
		pp = &(*pp)->next;
	return pp;
}

static void grow(void)
{
	size_t nb = watcher.nbuckets * 2;
	struct wnode **nbk = util_xcalloc(nb, sizeof(*nbk));

	for (size_t i = 0; i < watcher.nbuckets; i++) {
		for (struct wnode *e = watcher.buckets[i], *nx; e; e = nx) {
			nx = e->next;
			e->next = nbk[(unsigned)e->wd % nb];
			nbk[(unsigned)e->wd % nb] = e;
		}
	}
	free(watcher.buckets);
	watcher.buckets = nbk;
	watcher.nbuckets = nb;
}

#define ZFS_SUPER_MAGIC 0x2fc12fc1
#define BCACHEFS_SUPER_MAGIC 0xca451a4e

/* Whether inotify reports every change made to the file system of @fd. */
static bool local_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) != 0)
		return false;
	switch ((unsigned long)sf.f_type) {
	case EXT4_SUPER_MAGIC:	/* ext2, ext3 too */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case F2FS_SUPER_MAGIC:
	case ZFS_SUPER_MAGIC:
	case BCACHEFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case RAMFS_MAGIC:
	case OVERLAYFS_SUPER_MAGIC:	/* changes made through the overlay */
		return true;
	default:
		return false;
	}
}

bool watch_dir(struct awfs_inode *dir)
{
	struct wnode **pp, *n;
	int wd = __atomic_load_n(&dir->wd, __ATOMIC_ACQUIRE), err, fd;

	if (wd != 0)
		return wd > 0;	/* watched, or tried before (WD_NONE) */
	if (watcher.ifd < 0 || dir->kind != AWFS_INODE_HOST || inode_fd(dir, &fd) != 0)
		return false;
	__atomic_store_n(&dir->wd, WD_NONE, __ATOMIC_RELEASE);	/* unless watched below */
	if (!local_fs(fd))
		return false;
	pthread_mutex_lock(&watcher.lock);
	err = host_add_watch(watcher.ifd, fd, WATCH_MASK, &wd);
	if (err) {
		if (err == ENOSPC && !watcher.limit_noted) {
			watcher.limit_noted = 1;
			log_msg(AWFS_LOG_WARN, "the inotify watch limit is reached (fs.inotify.max_user_watches): "
				"host changes in read-only directories beyond it are seen within a second, not at once");
		}
		pthread_mutex_unlock(&watcher.lock);
		return false;
	}
	pp = slot(wd);
	if (*pp) {
		/* the same host directory under another awfs inode (another
		 * class): one watch serves one inode; this one is not watched */
		pthread_mutex_unlock(&watcher.lock);
		return false;
	}
	n = util_xcalloc(1, sizeof(*n));
	n->wd = wd;
	n->dir = dir;
	*pp = n;
	if (++watcher.count > watcher.nbuckets)
		grow();
	__atomic_store_n(&dir->wd, wd, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&watcher.lock);
	return true;
}

bool watch_covers(const struct awfs_inode *dir)
{
	return dir && __atomic_load_n(&dir->wd, __ATOMIC_ACQUIRE) > 0;
}

/* Drop the table's entry for @wd; the lock is held. */
static void unlink_wd(int wd)
{
	struct wnode **pp = slot(wd), *n = *pp;

	if (!n)
		return;
	*pp = n->next;
	watcher.count--;
	__atomic_store_n(&n->dir->wd, 0, __ATOMIC_RELEASE);
	free(n);
}

void watch_forget(struct awfs_inode *dir)
{
	int wd = __atomic_load_n(&dir->wd, __ATOMIC_ACQUIRE);

	if (wd <= 0)
		return;
	pthread_mutex_lock(&watcher.lock);
	unlink_wd(wd);
	(void)inotify_rm_watch(watcher.ifd, wd);	/* EINVAL: the kernel removed it already */
	pthread_mutex_unlock(&watcher.lock);
}

/* The nodeid of the inode awfs has for @name (in state @st) in @dir, or 0;
   the lock is held. The directory's fd is this thread's own (inode.h). */
static uint64_t child_id(struct awfs_inode *dir, const char *name, const struct awfs_state *st)
{
	struct stat sb;
	int fd, err = inode_open(dir, O_PATH, &fd);

	if (!err) {
		err = host_stat_at(fd, name, &sb);
		close(fd);
	}
	return err ? 0 : inode_find_host(sb.st_dev, sb.st_ino, st);
}

static void inval_entry(uint64_t dir, const char *name)
{
	/* -ENOENT: the kernel has no such entry (or no such directory) */
	(void)fuse_lowlevel_notify_inval_entry(watcher.se, dir, name, strlen(name));
}

static void inval_inode(uint64_t id)
{
	(void)fuse_lowlevel_notify_inval_inode(watcher.se, id, 0, 0);
}

static bool is_ro(const struct awfs_inode *in)
{
	return classify_class(in->state) == AWFS_CLASS_RO;
}

/* Events were lost: drop what the kernel keeps of every read-only inode. */
static void overflowed(void)
{
	struct inode_ref *r;
	size_t n = inode_collect(is_ro, &r);

	log_msg(AWFS_LOG_WARN, "the inotify queue overflowed: dropping what the kernel caches of "
		"%zu read-only inodes", n);
	for (size_t i = 0; i < n && !__atomic_load_n(&watcher.stop, __ATOMIC_RELAXED); i++) {
		if (r[i].name)
			inval_entry(r[i].parent_id, r[i].name);
		inval_inode(r[i].id);
	}
	for (size_t i = 0; i < n; i++)
		free(r[i].name);
	free(r);
}

static void handle(const struct inotify_event *ev)
{
	uint64_t dir = 0, child = 0;
	struct wnode *n;

	if (ev->mask & IN_Q_OVERFLOW) {
		overflowed();
		return;
	}
	pthread_mutex_lock(&watcher.lock);
	n = *slot(ev->wd);
	if (n && (ev->mask & IN_IGNORED)) {
		unlink_wd(ev->wd);	/* removed by the kernel: the directory is gone */
	} else if (n && ev->len) {
		const struct awfs_state *st =
			classify_child(watcher.classifier, n->dir->state, ev->name);

		/* a writable name in a read-only directory changes through awfs
		 * (its own writes: nothing to tell), like every writable path */
		if (classify_class(st) != AWFS_CLASS_WRITE) {
			dir = inode_nodeid(n->dir);
			if (!(ev->mask & NAMESPACE))
				child = child_id(n->dir, ev->name, st);
		}
	} else if (n) {
		dir = inode_nodeid(n->dir);
	}
	pthread_mutex_unlock(&watcher.lock);
	if (!dir)
		return;
	if (ev->len)
		inval_entry(dir, ev->name);
	if (!ev->len || (ev->mask & NAMESPACE))
		inval_inode(dir);
	if (child)
		inval_inode(child);
}

static void *watch_main(void *arg)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd p[2] = { { .fd = watcher.ifd, .events = POLLIN },
			       { .fd = watcher.stopfd, .events = POLLIN } };

	(void)arg;
	pthread_setname_np(pthread_self(), "awfs-watch");
	while (!__atomic_load_n(&watcher.stop, __ATOMIC_RELAXED)) {
		ssize_t len;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		len = read(watcher.ifd, buf, sizeof(buf));
		if (len < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (len <= 0)
			break;
		for (char *q = buf;
		     q < buf + len && !__atomic_load_n(&watcher.stop, __ATOMIC_RELAXED);) {
			const struct inotify_event *ev = (const struct inotify_event *)q;

			handle(ev);
			q += sizeof(*ev) + ev->len;
		}
	}
	__atomic_store_n(&watcher.done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int watch_start(struct fuse_session *se)
{
	sigset_t all, old;
	int err;

	if (watcher.ifd < 0)
		return 0;
	watcher.se = se;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&watcher.tid, NULL, watch_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err == 0)
		watcher.started = 1;
	return err;
}

void watch_stop(void)
{
	uint64_t one = 1;

	__atomic_store_n(&watcher.stop, 1, __ATOMIC_RELAXED);
	if (watcher.stopfd >= 0)
		(void)!write(watcher.stopfd, &one, sizeof(one));
}

bool watch_done(void)
{
	return !watcher.started || __atomic_load_n(&watcher.done, __ATOMIC_ACQUIRE);
}

/*
 * Closing an inotify instance that holds watches waits for the kernel to
 * free them (fsnotify: an SRCU grace period, 10-25 ms on this VM, measured
 * with strace -T), which held up the daemon's exit after every unmount. A
 * child sharing the instance (and holding nothing else) makes the last
 * close instead, once this process has exited (its pipe then reads
 * end-of-file): this close only drops a reference. This process waits
 * (a second pipe) until the child has closed everything else, so no host
 * file, no /dev/fuse and no output of this process outlives it. Without a
 * child (clone failed), the close waits.
 *
 * The child shares this process's memory (CLONE_VM: no page tables to
 * copy, which fork() took 0.3-0.5 ms of the unmount for) and runs on a
 * stack of its own below; it makes system calls only, starts with every
 * signal blocked, and touches no memory this process still uses. ASan
 * cannot follow a thread it did not start on a stack it did not make: a
 * sanitizer build forks.
 */
#if defined(__SANITIZE_ADDRESS__)
#define CLOSER_FORKS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLOSER_FORKS 1
#endif
#endif

struct closer {
	int keep[3];	/* sorted: the instance, the pipe's read end (end-of-file
			   once this process is gone), the ready pipe's write end */
	int rd, ready;
};

static int closer_main(void *arg)
{
	const struct closer *c = arg;
	unsigned from = 0;
	char ch = 0;

	/* hold nothing else: no host file (an unmount of the source would be
	 * busy), no /dev/fuse, no stdout or stderr (a reader would wait) */
	for (int i = 0; i < 3; i++) {
		if ((unsigned)c->keep[i] > from)
			(void)syscall(SYS_close_range, from, c->keep[i] - 1, 0);
		from = (unsigned)c->keep[i] + 1;
	}
	(void)syscall(SYS_close_range, from, ~0U, 0);
	(void)syscall(SYS_write, c->ready, &ch, 1);	/* the daemon may exit now */
	(void)syscall(SYS_close, c->ready);
	(void)syscall(SYS_read, c->rd, &ch, 1);	/* no EINTR: signals blocked */
	return 0;	/* the child's exit closes the instance: the last reference */
}

static void sort3(int *v)
{
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2 - i; j++)
			if (v[j] > v[j + 1]) {
				int t = v[j];

				v[j] = v[j + 1];
				v[j + 1] = t;
			}
}

static void close_detached(int fd)
{
	static struct closer c;
	int p[2], r[2];
	pid_t pid = -1;
	char ch;

	if (pipe2(p, O_CLOEXEC) < 0) {
		close(fd);	/* no child: this close waits */
		return;
	}
	if (pipe2(r, O_CLOEXEC) < 0) {
		close(p[0]);
		close(p[1]);
		close(fd);
		return;
	}
	c = (struct closer){ .keep = { fd, p[0], r[1] }, .rd = p[0], .ready = r[1] };
	sort3(c.keep);
#ifdef CLOSER_FORKS
	pid = fork();
	if (pid == 0)
		_exit(closer_main(&c));
#else
	{
		static char stack[16384] __attribute__((aligned(64)));
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		pid = clone(closer_main, stack + sizeof(stack), CLONE_VM | SIGCHLD, &c);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
#endif
	close(p[0]);
	close(r[1]);
	if (pid < 0)
		close(p[1]);
	else	/* until the child holds nothing but the instance and its pipes */
		while (read(r[0], &ch, 1) < 0 && errno == EINTR)
			;
	close(r[0]);
	/* p[1] stays open until this process exits: the child's end-of-file */
	close(fd);
}

void watch_fini(void)
{
	if (watcher.started) {
		watch_stop();
		pthread_join(watcher.tid, NULL);
	}
	watcher.started = 0;
	if (watcher.ifd >= 0 && watcher.count > 0)
		close_detached(watcher.ifd);
	else if (watcher.ifd >= 0)
		close(watcher.ifd);
	if (watcher.stopfd >= 0)
		close(watcher.stopfd);
	watcher.ifd = watcher.stopfd = -1;
	for (size_t i = 0; i < watcher.nbuckets; i++) {
		for (struct wnode *e = watcher.buckets[i], *nx; e; e = nx) {
			nx = e->next;
			__atomic_store_n(&e->dir->wd, 0, __ATOMIC_RELEASE);
			free(e);
		}
	}
	free(watcher.buckets);
	watcher.buckets = NULL;
	watcher.nbuckets = watcher.count = 0;
}
