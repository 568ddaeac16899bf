/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * changes.c - the change record (changes.h says what it holds and when).
 */
#include "config.h"

#include "changes.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "json.h"
#include "log.h"
#include "sha256.h"
#include "util.h"

#define QUEUE_MAX 8192			/* changes waiting for the recorder */
#define HELD_MAX 64			/* written files waiting for their record */
#define QUIET_NS 1000000000LL		/* a written file's record: a second after its last close */
#define HELD_NS 10000000000LL		/* ... ten after its first, at most */
#define BYTES_MAX (64ull << 20)		/* records a mount */
#define FDS_MAX 256			/* written files' fds on their way to the recorder
					   (counted in inode.c's fd budget: changes_fds()) */
#define HASH_FILE_MAX (1ull << 30)	/* bytes hashed of one file: past it, its size only */
#define HASH_MOUNT_MAX (8ull << 30)	/* ... of all files of a mount */

/* A change on its way to the recorder: a struct awfs_change, owned, or a written file. */
struct event {
	struct awfs_change c;	/* strings owned; op "write" for a written file */
	int fd;			/* a written file's fd, or -1 */
	bool written;		/* a written file (op "write") */
	dev_t dev;
	ino_t ino;
	struct event *next;
};

/* A written file whose record is held, to take its next closes in. */
struct held {
	struct event *e;	/* op "write" */
	unsigned closes;
	int64_t first, last;	/* CLOCK_MONOTONIC, ns */
};

static bool enabled;
static bool running;
static pthread_t recorder;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct event *head, **tail = &head;	/* lock */
static size_t queued;				/* lock */
static bool stopping;				/* lock */
static uint64_t dropped_queue;			/* lock: past QUEUE_MAX */
static size_t fds_out;				/* lock: written files' fds queued or held */
static int64_t open_written;			/* lock: write handles of files written and not
						   closed (recorded at their last close) */
static uint64_t unhashed_busy;			/* lock: written files past FDS_MAX */

/* the recorder's own */
static struct held held[HELD_MAX];
static size_t nheld;
static uint64_t written_bytes, records, dropped_bytes, coalesced, hashed_bytes;

static char *dup_or_null(const char *s)
{
	return s ? util_xstrdup(s) : NULL;
}

static void event_free(struct event *e)
{
	if (e->fd >= 0) {
		close(e->fd);
		pthread_mutex_lock(&lock);
		fds_out--;
		pthread_mutex_unlock(&lock);
	}
	free((char *)e->c.op);
	free((char *)e->c.path);
	free((char *)e->c.to);
	free((char *)e->c.target);
	free((char *)e->c.kind);
	free((char *)e->c.xattr);
	free(e);
}

void changes_enable(void)
{
	enabled = true;
}

bool changes_on(void)
{
	return enabled;
}

size_t changes_fds(void)
{
	size_t n;

	if (!enabled)
		return 0;
	pthread_mutex_lock(&lock);
	n = fds_out;
	pthread_mutex_unlock(&lock);
	return n;
}

void changes_open_written(int delta)
{
	pthread_mutex_lock(&lock);
	open_written += delta;
	pthread_mutex_unlock(&lock);
}

static void enqueue(struct event *e)
{
	pthread_mutex_lock(&lock);
	if (!running || stopping || queued >= QUEUE_MAX) {
		dropped_queue++;
		pthread_mutex_unlock(&lock);
		event_free(e);
		return;
	}
	*tail = e;
	tail = &e->next;
	queued++;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
}

void changes_note(const struct awfs_change *c)
{
	struct event *e;

	if (!enabled)
		return;
	e = util_xcalloc(1, sizeof(*e));
	e->c = *c;
	e->c.op = util_xstrdup(c->op);
	e->c.path = dup_or_null(c->path);
	e->c.to = dup_or_null(c->to);
	e->c.target = dup_or_null(c->target);
	e->c.kind = dup_or_null(c->kind);
	e->c.xattr = dup_or_null(c->xattr);
	e->fd = -1;
	enqueue(e);
}

void changes_written(int fd, dev_t dev, ino_t ino, const char *path, uid_t uid, pid_t pid)
{
	struct event *e;

	if (!enabled) {
		if (fd >= 0)
			close(fd);
		return;
	}
	e = util_xcalloc(1, sizeof(*e));
	e->c = (struct awfs_change){ .op = util_xstrdup("write"), .path = util_xstrdup(path), .uid = uid,
				     .pid = pid };
	e->written = true;
	e->c.has_object = true;
	e->c.dev = dev;
	e->c.ino = ino;
	e->dev = dev;
	e->ino = ino;
	pthread_mutex_lock(&lock);
	if (fd >= 0 && fds_out >= FDS_MAX) {
		/* the recorder is far behind: recorded, not hashed (and said so) */
		close(fd);
		fd = -1;
		unhashed_busy++;
	} else if (fd >= 0) {
		fds_out++;
	}
	pthread_mutex_unlock(&lock);
	e->fd = fd;
	enqueue(e);
}

/* ------------------------------------------------------------ the recorder */

/*
 * The size and SHA-256 of the file @fd is an fd of, read through an fd of
 * awfs's own (opened again through /proc: @fd may be write-only or O_PATH).
 * For the record only: nothing read reaches a caller. Returns 0 or an errno.
 */
static int hash_file(int fd, uint64_t *size, char hex[65])
{
	static unsigned char buf[1 << 20];
	struct sha256 s;
	struct stat st;
	char p[64];
	int rfd, err = 0;
	ssize_t n;

	/* bounded: a sparse terabyte would hold the recorder (and the unmount) for hours */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		if ((uint64_t)st.st_size > HASH_FILE_MAX)
			return EFBIG;
		if (hashed_bytes + (uint64_t)st.st_size > HASH_MOUNT_MAX)
			return ENOSPC;
		hashed_bytes += (uint64_t)st.st_size;
	}
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	/* O_NONBLOCK: a lease another process holds on it answers at once */
	rfd = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (rfd < 0)
		return errno;
	if (fstat(rfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(rfd);
		return EINVAL;
	}
	sha256_init(&s);
	*size = 0;
	while ((n = read(rfd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		sha256_update(&s, buf, (size_t)n);
		*size += (uint64_t)n;
	}
	close(rfd);
	if (!err)
		sha256_hex(&s, hex);
	return err;
}

static void opt_name(struct awfs_json *j, const char *key, const char *v)
{
	if (v) {
		json_key(j, key);
		json_name(j, v);
	}
}

static void opt_uint(struct awfs_json *j, const char *key, bool has, uint64_t v)
{
	if (has) {
		json_key(j, key);
		json_uint(j, v);
	}
}

/* Write @e's record, within the mount's budget. */
static void record(const struct event *e, unsigned closes)
{
	const struct awfs_change *c = &e->c;
	struct awfs_json j;
	char comm[64], mode[16], hex[65];
	uint64_t size = 0;
	size_t len;
	int err = 0;

	if (written_bytes >= BYTES_MAX) {
		dropped_bytes++;
		return;
	}
	if (e->fd >= 0)
		err = hash_file(e->fd, &size, hex);
	else if (e->written)
		err = EBUSY;
	util_comm_of(c->pid, comm, sizeof(comm));
	audit_begin(&j, "change");
	json_key(&j, "op");
	json_str(&j, c->op);
	opt_name(&j, "path", c->path);
	opt_name(&j, "to", c->to);
	json_key(&j, "uid");
	json_uint(&j, c->uid);
	json_key(&j, "pid");
	json_int(&j, c->pid);
	json_key(&j, "comm");
	json_name(&j, comm);
	if (c->has_object) {
		char obj[48];

		snprintf(obj, sizeof(obj), "%llu:%llu", (unsigned long long)c->dev, (unsigned long long)c->ino);
		json_key(&j, "object");
		json_str(&j, obj);
	}
	if (c->kind) {
		json_key(&j, "kind");
		json_str(&j, c->kind);
	}
	opt_name(&j, "target", c->target);
	opt_name(&j, "xattr", c->xattr);
	if (c->xattr) {
		json_key(&j, "removed");
		json_bool(&j, c->removed);
	}
	if (c->has_mode) {
		snprintf(mode, sizeof(mode), "%04llo", (unsigned long long)c->mode & 07777);
		json_key(&j, "mode");
		json_str(&j, mode);
	}
	opt_uint(&j, "owner", c->has_owner, c->owner);
	opt_uint(&j, "group", c->has_group, c->group);
	opt_uint(&j, "size", c->has_size, c->size);
	if (c->times) {
		json_key(&j, "times");
		json_bool(&j, true);
	}
	if (strcmp(c->op, "rename") == 0 || strcmp(c->op, "exchange") == 0) {
		json_key(&j, "replaced");
		json_bool(&j, c->replaced);
	}
	if (e->written) {
		json_key(&j, "closes");
		json_uint(&j, closes);
		if (err) {
			json_key(&j, "unhashed");
			json_str(&j, err == EBUSY  ? "the recorder was behind" :
				     err == EFBIG  ? "larger than 1 GiB" :
				     err == ENOSPC ? "the mount's 8 GiB of hashing is spent" : strerror(err));
			if (err == EFBIG || err == ENOSPC) {
				json_key(&j, "size");
				json_uint(&j, size);
			}
		} else {
			json_key(&j, "size");
			json_uint(&j, size);
			json_key(&j, "sha256");
			json_str(&j, hex);
		}
	}
	len = audit_finish(&j);
	written_bytes += len;
	records++;
}

static void release_held(size_t i)
{
	record(held[i].e, held[i].closes);
	event_free(held[i].e);
	held[i] = held[--nheld];
}

/* Whether @path is @top or lies below it. */
static bool at_or_below(const char *path, const char *top)
{
	size_t n = strlen(top);

	return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Before a change to @path: the held files it may rename or remove away from their path. */
static void release_under(const char *path)
{
	for (size_t i = 0; i < nheld;)
		if (path && at_or_below(held[i].e->c.path, path))
			release_held(i);
		else
			i++;
}

/* Those held long enough (all, with @all); returns the ns until the next is due, or -1. */
static int64_t release_due(bool all)
{
	int64_t t = (int64_t)util_now_ns(), next = -1;

	for (size_t i = 0; i < nheld;) {
		int64_t due = held[i].last + QUIET_NS < held[i].first + HELD_NS ? held[i].last + QUIET_NS
										 : held[i].first + HELD_NS;

		if (all || due <= t) {
			release_held(i);
			continue;
		}
		if (next < 0 || due - t < next)
			next = due - t;
		i++;
	}
	return next;
}

static void take(struct event *e)
{
	if (!e->written) {
		release_under(e->c.path);
		release_under(e->c.to);
		record(e, 0);
		event_free(e);
		return;
	}
	for (size_t i = 0; i < nheld; i++) {
		if (held[i].e->dev == e->dev && held[i].e->ino == e->ino &&
		    strcmp(held[i].e->c.path, e->c.path) == 0) {
			/* closed again before its record: one record, the newest fd hashed */
			event_free(held[i].e);
			held[i].e = e;
			held[i].closes++;
			held[i].last = (int64_t)util_now_ns();
			coalesced++;
			return;
		}
	}
	if (nheld == HELD_MAX) {
		size_t old = 0;

		for (size_t i = 1; i < nheld; i++)
			if (held[i].first < held[old].first)
				old = i;
		release_held(old);
	}
	held[nheld++] = (struct held){ e, 1, (int64_t)util_now_ns(), (int64_t)util_now_ns() };
}

static void *run(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		struct event *e = head;

		if (e) {
			head = e->next;
			if (!head)
				tail = &head;
			queued--;
			pthread_mutex_unlock(&lock);
			e->next = NULL;
			take(e);
			pthread_mutex_lock(&lock);
			continue;
		}
		if (stopping)
			break;
		pthread_mutex_unlock(&lock);
		{
			int64_t next = release_due(false);
			struct timespec ts;

			pthread_mutex_lock(&lock);
			if (head || stopping)
				continue;
			if (next < 0) {
				pthread_cond_wait(&wake, &lock);
			} else {
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_sec += next / 1000000000LL;
				ts.tv_nsec += next % 1000000000LL;
				if (ts.tv_nsec >= 1000000000L) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000L;
				}
				pthread_cond_timedwait(&wake, &lock, &ts);
			}
		}
	}
	pthread_mutex_unlock(&lock);
	release_due(true);
	return NULL;
}

int changes_start(void)
{
	int err;

	if (!enabled)
		return 0;
	if (!audit_on())
		return EINVAL;
	{
		sigset_t all, old;

		/* signals are the listener's (loop.c): none for the recorder */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		err = pthread_create(&recorder, NULL, run, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (!err)
		running = true;
	return err;
}

void changes_stop(void)
{
	struct awfs_json j;
	uint64_t lost;

	if (!running)
		return;
	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
	pthread_join(recorder, NULL);
	running = false;
	lost = dropped_queue + dropped_bytes;
	audit_begin(&j, "changes");
	json_key(&j, "records");
	json_uint(&j, records);
	json_key(&j, "coalesced");
	json_uint(&j, coalesced);
	json_key(&j, "dropped");
	json_uint(&j, lost);
	json_key(&j, "unhashed");
	json_uint(&j, unhashed_busy);
	json_key(&j, "open");
	json_uint(&j, (uint64_t)(open_written > 0 ? open_written : 0));
	json_key(&j, "complete");
	json_bool(&j, lost == 0);
	audit_finish(&j);
	if (open_written > 0)
		log_msg(AWFS_LOG_WARN, "change record: %lld handles were still open for writing at unmount (their RELEASE not served, or a process still holds them): a write after a file's last recorded close is not in the record",
			(long long)open_written);
	if (lost)
		log_msg(AWFS_LOG_WARN, "the change record is incomplete: %llu changes not recorded (%llu past the queue of %d, %llu past %llu MiB of records)",
			(unsigned long long)lost, (unsigned long long)dropped_queue, QUEUE_MAX,
			(unsigned long long)dropped_bytes, (unsigned long long)(BYTES_MAX >> 20));
	else
		log_msg(AWFS_LOG_INFO, "change record: %llu records, %llu closes coalesced into them",
			(unsigned long long)records, (unsigned long long)coalesced);
}
