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
 * Threads: the table (buckets, counts, the LRU list, refs) is guarded by
 * table_lock; an inode's state is written under it and read without it
 * (one aligned pointer: a reader sees the old or the new state, both valid
 * for the life of the policy).
 */
#include "inode.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "util.h"

#define AWFS_SYNTH_INO_BASE 0xfffffffe00000000ULL

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct awfs_inode root;
static struct awfs_inode **buckets;
static size_t nbuckets;
static uint64_t count;
static uint64_t id_key;		/* see inode_get() */
static struct awfs_inode *lru_head, *lru_tail;	/* host non-directories, newest first */
static uint64_t nfiles;		/* on that list */
static uint64_t ndirs;		/* host directories (each holds an fd), not the root */
static uint64_t pressure_high = UINT64_MAX;
static void (*pressure_hook)(void);
static void (*dir_free)(struct awfs_inode *dir);

static void lru_unlink(struct awfs_inode *in)
{
	if (in->lru_prev)
		in->lru_prev->lru_next = in->lru_next;
	else
		lru_head = in->lru_next;
	if (in->lru_next)
		in->lru_next->lru_prev = in->lru_prev;
	else
		lru_tail = in->lru_prev;
	in->lru_prev = in->lru_next = NULL;
}

static void lru_push(struct awfs_inode *in)
{
	in->lru_prev = NULL;
	in->lru_next = lru_head;
	if (lru_head)
		lru_head->lru_prev = in;
	else
		lru_tail = in;
	lru_head = in;
}

static bool on_lru(const struct awfs_inode *in)
{
	return in->fd >= 0 && in->name != NULL;
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
	if (in->fd < 0) {
		uint64_t h = (uintptr_t)in->parent;

		for (const char *p = in->name; *p; p++)
			h = h * 31 + (unsigned char)*p;
		return hash_key(0, h, in->state);
	}
	return hash_key(in->dev, in->ino, NULL);	/* not the state: it may change */
}

void inode_init(int root_fd, const struct stat *root_st, const struct awfs_state *root_state)
{
	root.fd = root_fd;
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
		if (in->fd >= 0 && in != &root && in->dev == dev && in->ino == ino &&
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

struct awfs_inode *inode_take_host(int fd, const struct stat *st, const struct awfs_state *state,
				   struct awfs_inode *dir, const char *name)
{
	struct awfs_inode *in;
	bool pressed = false;

	pthread_mutex_lock(&table_lock);
	in = find_host_locked(st->st_dev, st->st_ino, state);
	if (in) {
		restate_locked(in, state);
		in->linked = st->st_nlink > 1;
		in->refs++;
		if (on_lru(in)) {	/* looked up again: the newest, under this name */
			lru_unlink(in);
			lru_push(in);
			kernel_name_locked(in, dir, name);
		}
		pthread_mutex_unlock(&table_lock);
		close(fd);
		return in;
	}
	in = util_xcalloc(1, sizeof(*in));
	in->fd = fd;
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
	pressed = nfiles + ndirs > pressure_high && pressure_hook;
	insert(in);
	pthread_mutex_unlock(&table_lock);
	if (pressed)
		pressure_hook();
	return in;
}

uint64_t inode_synth_ino(const struct awfs_inode *parent, const char *name)
{
	/* FNV-1a over the parent's served number and the name: the same in
	 * readdir and lookup, and made of nothing the host holds under the mask */
	uint64_t h = 0xcbf29ce484222325ULL;
	uint64_t pino = parent->fd < 0 ? parent->synth_ino : (uint64_t)parent->ino;

	for (int i = 0; i < 8; i++)
		h = (h ^ ((pino >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return AWFS_SYNTH_INO_BASE + (h & 0xffffffffULL);
}

struct awfs_inode *inode_take_synth(struct awfs_inode *parent, const char *name, mode_t type,
				    const struct awfs_state *state)
{
	struct awfs_inode key = { .fd = -1, .parent = parent, .name = (char *)name, .state = state };
	struct awfs_inode *in;
	size_t b;

	pthread_mutex_lock(&table_lock);
	b = hash_of(&key) % nbuckets;
	for (in = buckets[b]; in; in = in->next) {
		if (in->fd < 0 && in->parent == parent && in->state == state &&
		    in->type == type && strcmp(in->name, name) == 0) {
			in->refs++;
			pthread_mutex_unlock(&table_lock);
			return in;
		}
	}
	in = util_xcalloc(1, sizeof(*in));
	in->fd = -1;
	in->type = type;
	in->state = state;
	in->parent = parent;
	in->name = util_xstrdup(name);
	in->synth_ino = inode_synth_ino(parent, name);
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

		if (in->virt)
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
		} else if (in->type == S_IFDIR && in->fd >= 0) {
			ndirs--;
		}
		pthread_mutex_unlock(&table_lock);

		if (in->type == S_IFDIR && dir_free)
			dir_free(in);
		if (in->fd >= 0)
			close(in->fd);
		parent = in->parent;
		free(in->name);
		free(in->kname);
		free(in->kname2);
		free(in);
		in = parent;	/* the child held one reference on it */
		n = 1;
	}
}

static uint64_t read_locked(const uint64_t *v)
{
	uint64_t n;

	pthread_mutex_lock(&table_lock);
	n = *v;
	pthread_mutex_unlock(&table_lock);
	return n;
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
		if (!on_lru(in) || in->dev != dev || in->ino != ino || in->state != state)
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

bool inode_pressed(void)
{
	return read_locked(&nfiles) + read_locked(&ndirs) > read_locked(&pressure_high);
}

uint64_t inode_pressure_mark(void)
{
	return read_locked(&pressure_high);
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
			if (in->fd < 0 || !want(in))
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

void inode_set_pressure(uint64_t high, void (*hook)(void))
{
	pthread_mutex_lock(&table_lock);
	pressure_high = high;
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
	while (n < max && n < nfiles && lru_tail) {
		struct awfs_inode *in = lru_tail;

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
