/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inode.c - hash table of live inodes with reference counts.
 *
 * One directory, one view. A host directory is keyed by (st_dev, st_ino)
 * alone, and its classification state is the one of the name it was last
 * looked up (or renamed through awfs) by. Keying it by state as well gave a
 * directory moved between two allow_write rules a second node id at its
 * next lookup, and the kernel two unrelated views of it: the old one, held
 * by an open fd, kept negative entries that no change through the new one
 * corrected, so the kernel believed a name absent that held a root-only
 * file and sent CREATE for it. A directory has one position, so its state
 * follows it; what is cached below it was classified from a position the
 * rename check let it leave: ops.c refuses a rename into or out of any
 * position below which a stricter rule is anchored, so every name below
 * the old and the new position classifies alike.
 *
 * A non-directory is keyed by (st_dev, st_ino, state): a file has a class
 * per name (a hard link the host made between a read-only and a writable
 * directory is written through the writable name and refused through the
 * other), so it may have one inode per class. Such aliases lend nothing:
 * every call that changes a file or opens it for writing runs as the caller
 * and the host checks it on the file as it is (ops.c), and a plain
 * read-only open of a file with more than one link does too (its
 * attributes, which the kernel checks, may be an alias's, stale); a file
 * renamed through awfs keeps its inode and state, which its new position
 * classifies alike (the rename check again).
 *
 * The root keeps its own state: a name that leads back to the root's
 * directory (a bind mount of it below itself) gets an inode of its own.
 *
 * Descriptors. A host inode is referenced by its file handle, as
 * virtiofsd's --inode-file-handles does: taken at lookup from the fd the
 * lookup opened (name_to_handle_at), opened again on the source's mount
 * when a request needs it and the fd was closed (open_by_handle_at, which
 * needs CAP_DAC_READ_SEARCH: awfs re-obtains exactly the object it had
 * looked up, and checks it is the same (dev, ino); docs/security.md). The
 * fds open at a time are bounded: the cache of closable ones holds at most
 * cache_cap, the least recently used closed first, at once, on the listener
 * thread that opened the newest (so no request's fd in use is closed: a
 * request uses a few, the cap is at least 64). What stays open beyond it:
 * the fds of inodes with open files (opens, the plain read-only opens'
 * shared fd among them) and those of inodes with no handle (a file system
 * without, or more mounts than the table below holds), kept for life as
 * before, for which the trimmer (loop.c) still asks the kernel to forget.
 * So no lookup fails because of what awfs keeps, however many the kernel
 * caches, and the daemon's fds are bounded by its open files plus a
 * constant.
 *
 * Threads: the table (buckets, counts, the LRU list, the fd cache, refs)
 * is guarded by table_lock; an inode's state is written under it and read
 * without it (one aligned pointer: a reader sees the old or the new state,
 * both valid for the life of the policy). An inode's cfd is the listener's:
 * other threads open their own (inode_open()).
 */
#include "inode.h"
#include "changes.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "util.h"

#define AWFS_MASK_INO_BASE 0xfffffffe00000000ULL

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct awfs_inode root;
static struct awfs_inode **buckets;
static size_t nbuckets;
static uint64_t count;
static uint64_t id_key;		/* see inode_get() */
static struct util_list lru;	/* host non-directories, newest first */
static uint64_t nfiles;		/* on that list */
static uint64_t ndirs;		/* host directories (each holds an fd), not the root */
static void (*pressure_hook)(void);
static void (*dir_free)(struct awfs_inode *dir);
static uint64_t fd_high = UINT64_MAX, mem_high = UINT64_MAX;
static uint64_t nfixed;		/* host inodes keeping their fd for life, not the root */

/* the fd cache: handle inodes whose fd is open and closable, newest first */
static struct util_list cache;
static uint64_t ncached, nopen_pinned;	/* on that list; open, pinned by open files */
static uint64_t nown;		/* open files' own fds (all but the plain read-only opens') */
static uint64_t cache_cap = UINT64_MAX, fd_limit = UINT64_MAX;

/*
 * The fd budget (with a limit set): the open files' fds (their own and
 * their inodes'), the fds kept for life and the mount table's come first,
 * FD_RESERVE stays for awfs's own (/dev/fuse, logs, inotify...) and what a
 * request opens for a moment, and the cache gives way to the rest, down to
 * CACHE_FLOOR (more than one request uses at once). An open that would eat
 * into that is refused (inode_may_open()): so lookups keep working while
 * files callers hold open spend the limit.
 */
#define FD_RESERVE 48
#define CACHE_FLOOR 8
/*
 * > 0: this thread may use the listener's state. The thread that set the
 * table up (the listener) always; another (an io_uring queue's) while it
 * serves under loop.c's lock.
 */
static __thread unsigned listener_here;

/*
 * The mounts handles were taken on: an fd on each (its root directory, the
 * first object awfs met on it), which open_by_handle_at() needs, and not an
 * O_PATH one (the kernel takes no such fd there). A table of fixed size:
 * an inode on a mount beyond it, or on one whose root is not a directory
 * (a file bound over a name), keeps its fd for life. The agent cannot make
 * mounts (it has no capability); the host's are few.
 */
#define MOUNTS_MAX 64
static struct {
	int id, fd;
} mounts[MOUNTS_MAX];
static int nmounts;
static bool use_handles;

static void lru_unlink(struct awfs_inode *in)
{
	util_list_unlink(&lru, &in->lru);
}

static void lru_push(struct awfs_inode *in)
{
	util_list_push(&lru, &in->lru);
}

static bool on_lru(const struct awfs_inode *in)
{
	return in->kind == AWFS_INODE_HOST && in->name != NULL;
}

/* ---- the fd cache; table_lock held */

static void cache_unlink(struct awfs_inode *in)
{
	util_list_unlink(&cache, &in->cache);
	ncached--;
}

static void cache_push(struct awfs_inode *in)
{
	util_list_push(&cache, &in->cache);
	ncached++;
}

/* closable: a handle, no open file, an fd open (on the list exactly then) */
static bool in_cache(const struct awfs_inode *in)
{
	return in->handle && in->opens == 0 && in->cfd >= 0;
}

/* a handle, as name_to_handle_at() gives it */
union handle_buf {
	struct file_handle h;
	char bytes[sizeof(struct file_handle) + MAX_HANDLE_SZ];
};

/* the handle of @in (in->handle set) */
static const struct file_handle *fh_of(const struct awfs_inode *in)
{
	return (const struct file_handle *)(const void *)in->fhb;
}

static size_t handle_size(const struct file_handle *fh)
{
	return sizeof(*fh) + fh->handle_bytes;
}

/* fds neither the cache's nor awfs's own: the open files', those kept for life, the mounts' */
static uint64_t others(void)
{
	return nopen_pinned + nown + nfixed + (uint64_t)nmounts + changes_fds();
}

/* How many fds the cache may hold now (see FD_RESERVE). */
static uint64_t cache_room(void)
{
	uint64_t used = others() + FD_RESERVE, room;

	if (fd_limit == UINT64_MAX)
		return cache_cap;
	room = fd_limit > used ? fd_limit - used : 0;
	if (room < CACHE_FLOOR)
		room = CACHE_FLOOR;
	return room < cache_cap ? room : cache_cap;
}

/*
 * Close the least recently used fds past the cache's room. The listener's
 * only: the fds it closes are its own (the newest, in use, are at the head).
 */
static void cache_trim(void)
{
	uint64_t room = cache_room();

	while (ncached > room && cache.tail) {
		struct awfs_inode *in = util_entry(cache.tail, struct awfs_inode, cache);

		cache_unlink(in);
		close(in->cfd);
		in->cfd = -1;
		in->readable = 0;	/* made readable again at its next plain open */
	}
}

/* @fd is the fd of @in (a handle inode whose fd was closed) again */
static void adopt(struct awfs_inode *in, int fd)
{
	in->cfd = fd;
	if (in->opens) {
		nopen_pinned++;
	} else {
		cache_push(in);
		cache_trim();
	}
}

#define AWFS_FUSE_MAGIC 0x65735546

/*
 * Whether the file system of @fd opens its handles after it has dropped
 * the inode. A FUSE one (virtiofs in a guest) may not: without its
 * server's export support it answers ESTALE for an inode no longer in
 * memory, and awfs would then call an existing file gone.
 */
static bool durable_handles(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && sf.f_type != AWFS_FUSE_MAGIC;
}

/*
 * The slot of the mount @id in the table, adding it with a readable fd of
 * @fd's object when that is a directory (@type); -1 when it cannot be.
 */
static int mount_slot(int id, int fd, mode_t type)
{
	char name[32];
	int i, mfd;

	for (i = 0; i < nmounts; i++)
		if (mounts[i].id == id)
			return i;
	if (nmounts == MOUNTS_MAX || type != S_IFDIR || !durable_handles(fd))
		return -1;
	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	mfd = open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return -1;
	mounts[nmounts].id = id;
	mounts[nmounts].fd = mfd;
	return nmounts++;
}

/* The handle of the object @fd is open on into @out (*mount_id: its mount's); false: none. */
static bool handle_of(int fd, union handle_buf *out, int *mount_id)
{
	out->h.handle_bytes = MAX_HANDLE_SZ;
	return name_to_handle_at(fd, "", &out->h, mount_id, AT_EMPTY_PATH) == 0;
}

static bool same_handle(const struct file_handle *a, const struct file_handle *b)
{
	return a && b && a->handle_type == b->handle_type && a->handle_bytes == b->handle_bytes &&
	       memcmp(a->f_handle, b->f_handle, a->handle_bytes) == 0;
}

/*
 * Open @fh (on mount slot @mnt) with @flags, checked to be (dev, ino).
 * Run as the daemon, with CAP_DAC_READ_SEARCH (open_by_handle_at needs
 * it), never as a request's caller: it re-obtains the object awfs looked
 * up by name itself, what the fd the cache closed was; every call made on
 * it for a request is then made as the caller or after the kernel's check,
 * as on that fd (docs/security.md).
 */
static int open_handle(const struct file_handle *fh, int mnt, dev_t dev, ino_t ino, int flags,
		       int *out)
{
	struct stat st;
	int fd = open_by_handle_at(mounts[mnt].fd, (struct file_handle *)fh, flags | O_CLOEXEC);

	/* gone: what the host says of a name removed, to a caller's request */
	if (fd < 0)
		return errno == ESTALE ? ENOENT : errno ? errno : EIO;
	if (fstat(fd, &st) < 0 || st.st_dev != dev || st.st_ino != ino) {
		close(fd);
		return ENOENT;
	}
	*out = fd;
	return 0;
}

static size_t hash_key(dev_t dev, uint64_t ino, const void *salt)
{
	uint64_t h = (uint64_t)dev * 0x9e3779b97f4a7c15ULL;

	h ^= ino + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
	h ^= (uintptr_t)salt + (h << 6) + (h >> 2);
	return (size_t)(h ^ (h >> 29));
}

static size_t hash_of(const struct awfs_inode *in)
{
	if (in->kind != AWFS_INODE_HOST) {
		uint64_t h = (uintptr_t)in->parent;

		for (const char *p = in->name; *p; p++)
			h = h * 31 + (unsigned char)*p;
		return hash_key(0, h, in->state);
	}
	return hash_key(in->dev, in->ino, NULL);	/* not the state: it may change */
}

bool inode_init(int root_fd, const struct stat *root_st, const struct awfs_state *root_state,
		char *why, size_t whylen)
{
	union handle_buf fh;
	int mount_id, fd = -1, err;

	listener_here = 1;
	root.cfd = root_fd;
	root.kind = AWFS_INODE_HOST;
	root.dev = root_st->st_dev;
	root.ino = root_st->st_ino;
	root.type = S_IFDIR;
	root.state = root_state;
	root.refs = 2;	/* never reaches zero */
	nbuckets = 1024;
	buckets = util_xcalloc(nbuckets, sizeof(*buckets));
	if (getrandom(&id_key, sizeof(id_key), 0) != sizeof(id_key))
		id_key = (uint64_t)(uintptr_t)&id_key * 0x9e3779b97f4a7c15ULL;
	id_key |= 1ULL << 63;

	/* handles: only if the root's can be taken and opened again */
	use_handles = false;
	if (!handle_of(root_fd, &fh, &mount_id)) {
		err = errno;
	} else if (!durable_handles(root_fd)) {
		err = EREMOTE;
	} else if (mount_slot(mount_id, root_fd, S_IFDIR) != 0) {
		err = EMFILE;
	} else {
		err = open_handle(&fh.h, 0, root.dev, root.ino, O_PATH, &fd);
		if (!err)
			close(fd);
	}
	if (err && why)
		snprintf(why, whylen, "%s",
			 err == EPERM ? "no CAP_DAC_READ_SEARCH to open file handles" :
			 err == EREMOTE ? "a FUSE file system, virtiofs say, need not open a handle once it has dropped the inode" :
			 strerror(err));
	use_handles = !err;
	return use_handles;
}

struct awfs_inode *inode_root(void)
{
	return &root;
}

/*
 * Node ids reach the agent (inside file handles from name_to_handle_at), so
 * they are the inode's address masked with a random key: no address of the
 * daemon's memory is shown. Bit 63 of the key keeps every id above 1 (the
 * root's) for user-space addresses.
 */
struct awfs_inode *inode_get(uint64_t nodeid)
{
	return nodeid == 1 ? &root : (struct awfs_inode *)(uintptr_t)(nodeid ^ id_key);
}

uint64_t inode_nodeid(const struct awfs_inode *in)
{
	return in == &root ? 1 : (uint64_t)(uintptr_t)in ^ id_key;
}

static void grow(void)
{
	size_t nb = nbuckets * 2;
	struct awfs_inode **nbk = util_xcalloc(nb, sizeof(*nbk));

	for (size_t i = 0; i < nbuckets; i++) {
		for (struct awfs_inode *e = buckets[i], *nx; e; e = nx) {
			nx = e->next;
			e->next = nbk[hash_of(e) % nb];
			nbk[hash_of(e) % nb] = e;
		}
	}
	free(buckets);
	buckets = nbk;
	nbuckets = nb;
}

static void insert(struct awfs_inode *in)
{
	size_t b;

	if (count >= nbuckets)
		grow();
	b = hash_of(in) % nbuckets;
	in->next = buckets[b];
	buckets[b] = in;
	count++;
}

/*
 * The host inode of (dev, ino): a directory whatever its state, a
 * non-directory in @state; or NULL; table_lock held. The root answers only
 * for its own state. See the head of this file.
 */
static struct awfs_inode *find_host_locked(dev_t dev, ino_t ino, const struct awfs_state *state)
{
	if (dev == root.dev && ino == root.ino && state == root.state)
		return &root;
	for (struct awfs_inode *in = buckets[hash_key(dev, ino, NULL) % nbuckets]; in; in = in->next)
		if (in->kind == AWFS_INODE_HOST && !in->dead && in != &root && in->dev == dev && in->ino == ino &&
		    (in->type == S_IFDIR || in->state == state))
			return in;
	return NULL;
}

/* the name the kernel last had @in (a host non-directory) under */
static const char *kname_of(const struct awfs_inode *in)
{
	return in->kname ? in->kname : in->name;
}

static bool is_name(uint64_t kparent, const char *kname, uint64_t id, const char *name)
{
	return kname && kparent == id && strcmp(kname, name) == 0;
}

/* the kernel's latest name for @in is @name in directory @id; table_lock held */
static void set_kname(struct awfs_inode *in, uint64_t id, const char *name)
{
	free(in->kname);
	in->kparent = id;
	in->kname = strcmp(in->name, name) == 0 ? NULL : util_xstrdup(name);
}

/*
 * @in (a host non-directory) was just found as @name in @dir: the kernel
 * holds that name now, and may still hold the one before (a hard link), so
 * that one is kept as the second; table_lock held.
 */
static void kernel_name_locked(struct awfs_inode *in, const struct awfs_inode *dir, const char *name)
{
	uint64_t id = inode_nodeid(dir);

	if (is_name(in->kparent, kname_of(in), id, name) ||
	    is_name(in->kparent2, in->kname2, id, name))
		return;
	free(in->kname2);
	in->kparent2 = in->kparent;
	in->kname2 = in->kname ? in->kname : util_xstrdup(in->name);
	in->kname = NULL;
	set_kname(in, id, name);
}

/* Give the directory @in the state of the name it was just found by; table_lock held. */
static void restate_locked(struct awfs_inode *in, const struct awfs_state *state)
{
	if (in != &root && in->type == S_IFDIR && in->state != state)
		__atomic_store_n(&in->state, state, __ATOMIC_RELEASE);
}

/*
 * @handles: reference it by handle where the source gives one. @fresh: the
 * object is new (an unnamed file just made), so an inode of the same
 * (dev, ino) is an older object's whose number was reused: it is dead.
 */
static struct awfs_inode *take_host(int fd, const struct stat *st, const struct awfs_state *state,
				    struct awfs_inode *dir, const char *name, bool handles, bool fresh)
{
	struct awfs_inode *in;
	union handle_buf fh;
	int mount_id = 0, mnt = -1;
	bool pressed = false, looked = false, have = false;

	pthread_mutex_lock(&table_lock);
	for (;;) {
		in = find_host_locked(st->st_dev, st->st_ino, state);
		if (in && fresh && in != &root) {
			in->dead = 1;
			continue;
		}
		/* an inode whose fd is open holds its object: the number is its own */
		if ((in && (!in->handle || in->cfd >= 0)) || !handles)
			break;
		if (!looked) {	/* its handle, taken outside the lock, then look again */
			pthread_mutex_unlock(&table_lock);
			have = handle_of(fd, &fh, &mount_id);
			looked = true;
			pthread_mutex_lock(&table_lock);
			continue;
		}
		if (in && !(have && same_handle(fh_of(in), &fh.h))) {
			/* the number is another object's now: the old one was deleted
			 * while its fd was closed. Its node id stays the kernel's (and
			 * ESTALE), but no lookup finds it again */
			in->dead = 1;
			continue;
		}
		break;
	}
	if (in) {
		restate_locked(in, state);
		in->linked = st->st_nlink > 1;
		in->refs++;
		if (on_lru(in)) {	/* looked up again: the newest, under this name */
			lru_unlink(in);
			lru_push(in);
			kernel_name_locked(in, dir, name);
		}
		if (in != &root && in->cfd < 0) {	/* the fd in hand: cached */
			adopt(in, fd);
			fd = -1;
		} else if (in_cache(in)) {
			cache_unlink(in);
			cache_push(in);
		}
		pthread_mutex_unlock(&table_lock);
		if (fd >= 0)
			close(fd);
		return in;
	}
	if (have)
		mnt = mount_slot(mount_id, fd, st->st_mode & S_IFMT);
	in = util_xcalloc(1, sizeof(*in) + (mnt >= 0 ? handle_size(&fh.h) : 0));
	in->cfd = fd;
	in->kind = AWFS_INODE_HOST;
	if (mnt >= 0) {
		in->handle = 1;
		in->mnt = (unsigned char)mnt;
		memcpy(in->fhb, &fh, handle_size(&fh.h));
	} else {
		nfixed++;
	}
	in->dev = st->st_dev;
	in->ino = st->st_ino;
	in->type = st->st_mode & S_IFMT;
	in->state = state;
	in->linked = st->st_nlink > 1;
	in->refs = 1;
	if (in->type != S_IFDIR) {
		in->name = util_xstrdup(name);
		in->parent = dir;
		in->kparent = inode_nodeid(dir);
		dir->refs++;
		lru_push(in);
		nfiles++;
	} else {
		ndirs++;
	}
	pressed = (nfixed > fd_high || nfiles + ndirs > mem_high) && pressure_hook;
	insert(in);
	if (in->handle) {
		in->cfd = -1;
		adopt(in, fd);
	}
	pthread_mutex_unlock(&table_lock);
	if (pressed)
		pressure_hook();
	return in;
}

struct awfs_inode *inode_take_host(int fd, const struct stat *st, const struct awfs_state *state,
				   struct awfs_inode *dir, const char *name)
{
	return take_host(fd, st, state, dir, name, use_handles, false);
}

struct awfs_inode *inode_take_kept(int fd, const struct stat *st, const struct awfs_state *state,
				   struct awfs_inode *dir, const char *name)
{
	return take_host(fd, st, state, dir, name, false, true);
}

void inode_restate_file(struct awfs_inode *in, const struct awfs_state *state)
{
	pthread_mutex_lock(&table_lock);
	__atomic_store_n(&in->state, state, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&table_lock);
}

void inode_hold(struct awfs_inode *in)
{
	pthread_mutex_lock(&table_lock);
	in->refs++;
	pthread_mutex_unlock(&table_lock);
}

uint64_t inode_mask_ino(const struct awfs_inode *parent, const char *name)
{
	/* FNV-1a over the parent's served number and the name: the same in
	 * readdir and lookup, and made of nothing the host holds under the mask */
	uint64_t h = 0xcbf29ce484222325ULL;
	uint64_t pino = parent->kind != AWFS_INODE_HOST ? parent->mask_ino : (uint64_t)parent->ino;

	for (int i = 0; i < 8; i++)
		h = (h ^ ((pino >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return AWFS_MASK_INO_BASE + (h & 0xffffffffULL);
}

struct awfs_inode *inode_take_mask(struct awfs_inode *parent, const char *name, mode_t type,
				    const struct awfs_state *state)
{
	struct awfs_inode key = { .cfd = -1, .parent = parent, .name = (char *)name, .state = state };
	struct awfs_inode *in;
	size_t b;

	pthread_mutex_lock(&table_lock);
	b = hash_of(&key) % nbuckets;
	for (in = buckets[b]; in; in = in->next) {
		if (in->kind != AWFS_INODE_HOST && in->parent == parent && in->state == state &&
		    in->type == type && strcmp(in->name, name) == 0) {
			in->refs++;
			pthread_mutex_unlock(&table_lock);
			return in;
		}
	}
	in = util_xcalloc(1, sizeof(*in));
	in->cfd = -1;
	in->type = type;
	in->state = state;
	in->parent = parent;
	in->name = util_xstrdup(name);
	in->mask_ino = inode_mask_ino(parent, name);
	in->refs = 1;
	parent->refs++;
	insert(in);
	pthread_mutex_unlock(&table_lock);
	return in;
}

void inode_put(struct awfs_inode *in, uint64_t n)
{
	while (in) {
		struct awfs_inode *parent = NULL;
		struct awfs_inode **pp;

		if (in->kind == AWFS_INODE_INFO)
			return;	/* static, never freed */
		pthread_mutex_lock(&table_lock);
		if (in->refs < n)
			abort();	/* the kernel forgot more than it was given */
		in->refs -= n;
		if (in->refs > 0 || in == &root) {
			pthread_mutex_unlock(&table_lock);
			return;
		}
		for (pp = &buckets[hash_of(in) % nbuckets]; *pp != in; pp = &(*pp)->next)
			;
		*pp = in->next;
		count--;
		if (on_lru(in)) {
			lru_unlink(in);
			nfiles--;
		} else if (in->type == S_IFDIR && in->kind == AWFS_INODE_HOST) {
			ndirs--;
		}
		if (in_cache(in))
			cache_unlink(in);
		else if (in->handle && in->opens && in->cfd >= 0)
			nopen_pinned--;	/* (the kernel releases its files before it forgets) */
		if (in->kind == AWFS_INODE_HOST && !in->handle)
			nfixed--;
		pthread_mutex_unlock(&table_lock);

		if (in->type == S_IFDIR && dir_free)
			dir_free(in);
		if (in->cfd >= 0)
			close(in->cfd);
		parent = in->parent;
		free(in->name);
		free(in->kname);
		free(in->kname2);
		free(in);
		in = parent;	/* the child held one reference on it */
		n = 1;
	}
}

static uint64_t sum_locked(const uint64_t *a, const uint64_t *b)
{
	uint64_t n;

	pthread_mutex_lock(&table_lock);
	n = *a + (b ? *b : 0);
	pthread_mutex_unlock(&table_lock);
	return n;
}

static uint64_t read_locked(const uint64_t *v)
{
	return sum_locked(v, NULL);
}

uint64_t inode_count(void)
{
	return read_locked(&count);
}

void inode_set_dir_free(void (*fn)(struct awfs_inode *dir))
{
	dir_free = fn;
}

void inode_restate(dev_t dev, ino_t ino, const struct awfs_state *state)
{
	struct awfs_inode *in;

	pthread_mutex_lock(&table_lock);
	in = find_host_locked(dev, ino, state);
	if (in)
		restate_locked(in, state);
	pthread_mutex_unlock(&table_lock);
}

/*
 * The directory is named by its nodeid, without a reference: the kernel
 * cannot forget a directory while it keeps an entry below it, and an
 * invalidation sent for a nodeid it no longer has (or has again, for
 * another inode) only drops a cached entry, which a lookup brings back.
 */
void inode_moved(dev_t dev, ino_t ino, const struct awfs_state *state, const struct awfs_inode *from,
		 const char *old, const struct awfs_inode *dir, const char *name)
{
	uint64_t was = inode_nodeid(from);

	pthread_mutex_lock(&table_lock);
	for (struct awfs_inode *in = buckets[hash_key(dev, ino, NULL) % nbuckets]; in; in = in->next) {
		if (!on_lru(in) || in->dead || in->dev != dev || in->ino != ino || in->state != state)
			continue;
		if (is_name(in->kparent2, in->kname2, was, old)) {	/* the second name moved */
			free(in->kname2);
			in->kparent2 = inode_nodeid(dir);
			in->kname2 = util_xstrdup(name);
		} else {
			set_kname(in, inode_nodeid(dir), name);
		}
	}
	pthread_mutex_unlock(&table_lock);
}

char *inode_name_in(const struct awfs_inode *in, const struct awfs_inode *dir)
{
	uint64_t id = inode_nodeid(dir);
	char *n;

	pthread_mutex_lock(&table_lock);
	if (in->kparent == id)
		n = util_xstrdup(kname_of(in));
	else if (in->kname2 && in->kparent2 == id)
		n = util_xstrdup(in->kname2);
	else
		n = util_xstrdup(in->name);
	pthread_mutex_unlock(&table_lock);
	return n;
}

bool inode_pressed(void)
{
	bool p;

	pthread_mutex_lock(&table_lock);
	p = nfixed > fd_high || nfiles + ndirs > mem_high;
	pthread_mutex_unlock(&table_lock);
	return p;
}

uint64_t inode_pressure_mark(void)
{
	return read_locked(&fd_high);
}

uint64_t inode_fixed(void)
{
	return read_locked(&nfixed);
}

uint64_t inode_over(void)
{
	uint64_t a = 0, b = 0;

	pthread_mutex_lock(&table_lock);
	if (fd_high != UINT64_MAX && nfixed > fd_high - fd_high / 4)
		a = nfixed - (fd_high - fd_high / 4);
	if (mem_high != UINT64_MAX && nfiles + ndirs > mem_high - mem_high / 4)
		b = nfiles + ndirs - (mem_high - mem_high / 4);
	pthread_mutex_unlock(&table_lock);
	return a > b ? a : b;
}

int inode_fd(struct awfs_inode *in, int *fd)
{
	int err, nfd = -1;

	if (!inode_on_listener())
		abort();	/* another thread's use would race with the cache */
	pthread_mutex_lock(&table_lock);
	if (in->cfd >= 0) {
		if (in_cache(in) && cache.head != &in->cache) {	/* the newest */
			cache_unlink(in);
			cache_push(in);
		}
		*fd = in->cfd;
		pthread_mutex_unlock(&table_lock);
		return 0;
	}
	pthread_mutex_unlock(&table_lock);
	if (!in->handle)
		return EBADF;	/* not a host inode */
	err = open_handle(fh_of(in), in->mnt, in->dev, in->ino, O_PATH, &nfd);
	if (err)
		return err;
	pthread_mutex_lock(&table_lock);
	adopt(in, nfd);
	pthread_mutex_unlock(&table_lock);
	*fd = nfd;
	return 0;
}

bool inode_on_listener(void)
{
	return listener_here > 0;
}

void inode_listener_enter(void)
{
	listener_here++;
}

void inode_listener_leave(void)
{
	listener_here--;
}

int inode_open(struct awfs_inode *in, int flags, int *fd)
{
	char name[32];

	if (in->handle)
		return open_handle(fh_of(in), in->mnt, in->dev, in->ino, flags, fd);
	if (in->kind != AWFS_INODE_HOST)
		return EBADF;
	/* kept for life: its number stays valid while the inode lives (the
	 * magic link leads to the object itself, whatever its name now) */
	snprintf(name, sizeof(name), "/proc/self/fd/%d", in->cfd);
	*fd = open(name, flags | O_CLOEXEC);
	return *fd < 0 ? errno : 0;
}

void inode_set_fd_cache(uint64_t cap, uint64_t limit)
{
	pthread_mutex_lock(&table_lock);
	cache_cap = cap < 64 ? 64 : cap;
	fd_limit = limit;
	pthread_mutex_unlock(&table_lock);
}

uint64_t inode_fds(void)
{
	return sum_locked(&ncached, &nfixed);
}

bool inode_may_open(void)
{
	bool ok;

	pthread_mutex_lock(&table_lock);
	ok = fd_limit == UINT64_MAX || others() + 2 + FD_RESERVE + CACHE_FLOOR <= fd_limit;
	pthread_mutex_unlock(&table_lock);
	return ok;
}

uint64_t inode_open_fds(void)
{
	return sum_locked(&nopen_pinned, &nown);
}

void inode_opened(struct awfs_inode *in, bool own)
{
	if (in->kind != AWFS_INODE_HOST)
		return;
	pthread_mutex_lock(&table_lock);
	if (in_cache(in)) {	/* no longer closable */
		cache_unlink(in);
		nopen_pinned++;
	}
	in->opens++;
	nown += own;
	cache_trim();	/* the cache gives way to open files */
	pthread_mutex_unlock(&table_lock);
}

void inode_released(struct awfs_inode *in, bool own)
{
	if (in->kind != AWFS_INODE_HOST)
		return;
	pthread_mutex_lock(&table_lock);
	if (in->opens == 0) {	/* not opened through awfs: nothing to release */
		pthread_mutex_unlock(&table_lock);
		return;
	}
	nown -= own && nown > 0;
	if (--in->opens == 0 && in->handle && in->cfd >= 0) {
		nopen_pinned--;
		cache_push(in);
		cache_trim();
	}
	pthread_mutex_unlock(&table_lock);
}

uint64_t inode_find_host(dev_t dev, ino_t ino, const struct awfs_state *state)
{
	struct awfs_inode *in;
	uint64_t id;

	pthread_mutex_lock(&table_lock);
	in = find_host_locked(dev, ino, state);
	id = in ? inode_nodeid(in) : 0;
	pthread_mutex_unlock(&table_lock);
	return id;
}

size_t inode_collect(bool (*want)(const struct awfs_inode *in), struct inode_ref **out)
{
	size_t n = 0;

	pthread_mutex_lock(&table_lock);
	*out = util_xcalloc(count + 1, sizeof(**out));
	if (want(&root))
		(*out)[n++].id = 1;
	for (size_t b = 0; b < nbuckets; b++) {
		for (struct awfs_inode *in = buckets[b]; in; in = in->next) {
			if (in->kind != AWFS_INODE_HOST || !want(in))
				continue;
			(*out)[n].id = inode_nodeid(in);
			if (in->parent) {	/* where the kernel has it now */
				(*out)[n].parent_id = in->kparent;
				(*out)[n].name = util_xstrdup(kname_of(in));
			}
			n++;
		}
	}
	pthread_mutex_unlock(&table_lock);
	return n;
}

void inode_set_pressure(uint64_t fdh, uint64_t memh, void (*hook)(void))
{
	pthread_mutex_lock(&table_lock);
	fd_high = fdh;
	mem_high = memh;
	pressure_hook = hook;
	pthread_mutex_unlock(&table_lock);
}

uint64_t inode_host_files(void)
{
	return read_locked(&nfiles);
}

uint64_t inode_host_dirs(void)
{
	return read_locked(&ndirs);
}

size_t inode_oldest(struct inode_ref *out, size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&table_lock);
	while (n < max && n < nfiles && lru.tail) {
		struct awfs_inode *in = util_entry(lru.tail, struct awfs_inode, lru);

		out[n].id = inode_nodeid(in);
		out[n].parent_id = in->kparent;
		out[n].name = util_xstrdup(kname_of(in));
		out[n].parent_id2 = in->kparent2;
		out[n].name2 = util_xstrdup(in->kname2);
		n++;
		lru_unlink(in);	/* to the newest end: the next call names others */
		lru_push(in);
	}
	pthread_mutex_unlock(&table_lock);
	return n;
}
