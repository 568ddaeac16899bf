/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * info.c - the information directory: its nodes, their attributes and
 * open snapshots, and its text.
 */
#include "info.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inode.h"
#include "log.h"
#include "report.h"
#include "util.h"

static char *dir_name;
static char *readme;
static size_t readme_len;

/*
 * The denials kept, oldest first. When it is full, the line that goes is
 * the caller's with the most lines: its oldest repeat (a refusal of an
 * operation, directory and rule it was refused before), else its oldest:
 * a flood of one caller's refusals replaces its own lines, repeats first,
 * never another caller's while it has more.
 */
struct kept {
	char *line;
	uint32_t uid;
	bool first;
};
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kept ring[AWFS_INFO_KEPT];
static size_t ring_count;
static uint64_t ring_version;	/* counts the lines added */

/* Append one rule line "  PATH  REASON" to the text being built. */
static void rule_line(FILE *f, const char *mnt, const struct awfs_rule *r)
{
	char path[3 * 4096], reason[4096];
	char *full = util_xasprintf("%s%s%s", mnt, r->ncomps && strcmp(mnt, "/") != 0 ? "/" : "",
				    r->ncomps ? r->path : "");

	log_escape_text(full, strlen(full), path, sizeof(path));
	log_escape_text(r->reason, strlen(r->reason), reason, sizeof(reason));
	fprintf(f, "  %s\n      %s\n", path, reason);
	free(full);
}

static void build_readme(const struct awfs_policy *p, const char *mnt)
{
	const struct awfs_rule **v = report_sorted_rules(p);
	size_t n[3] = { 0 };
	char m[3 * 4096];
	FILE *f = open_memstream(&readme, &readme_len);

	if (!f)
		abort();
	for (size_t i = 0; i < p->nrules; i++)
		n[p->rules[i].cls]++;
	log_escape_text(mnt, strlen(mnt), m, sizeof(m));
	fprintf(f, "This is %s, a directory whose file policy is enforced by awfs.\n\n", m);
	if (n[AWFS_CLASS_WRITE]) {
		size_t files = 0;

		for (size_t i = 0; i < p->nrules; i++)
			files += v[i]->cls == AWFS_CLASS_WRITE && v[i]->single_file;
		if (n[AWFS_CLASS_WRITE] > files) {
			fprintf(f, "You can create, change and delete files here (and below):\n");
			for (size_t i = 0; i < p->nrules; i++)
				if (v[i]->cls == AWFS_CLASS_WRITE && !v[i]->single_file)
					rule_line(f, m, v[i]);
			fprintf(f, "A writable directory itself cannot be removed or renamed.\n\n");
		}
		if (files) {
			fprintf(f, "These single files can be written in place (>, >>, truncate), or replaced\n"
				   "by a temporary file made beside one and renamed onto it, as sed -i, perl -pi,\n"
				   "Python's tempfile with os.replace and npm's write-file-atomic do: the\n"
				   "temporary must be named as those tools name theirs (the file's own name and\n"
				   "a suffix, say) and is kept by awfs until that rename; nothing else can be\n"
				   "created beside them, and they cannot be removed or renamed:\n");
			for (size_t i = 0; i < p->nrules; i++)
				if (v[i]->cls == AWFS_CLASS_WRITE && v[i]->single_file)
					rule_line(f, m, v[i]);
			fputc('\n', f);
		}
	} else {
		fprintf(f, "Nothing here is writable.\n\n");
	}
	if (n[AWFS_CLASS_MASK]) {
		fprintf(f, "Masked: these paths are shown empty, whatever they hold:\n");
		for (size_t i = 0; i < p->nrules; i++)
			if (v[i]->cls == AWFS_CLASS_MASK)
				rule_line(f, m, v[i]);
		fputc('\n', f);
	}
	if (n[AWFS_CLASS_RO]) {
		fprintf(f, "Read-only on purpose (readable, never writable):\n");
		for (size_t i = 0; i < p->nrules; i++)
			if (v[i]->cls == AWFS_CLASS_RO)
				rule_line(f, m, v[i]);
		fputc('\n', f);
	}
	{
		bool root_writable = false, root_ruled = false;

		for (size_t i = 0; i < p->nrules; i++) {
			if (p->rules[i].ncomps == 0) {
				root_ruled = true;
				root_writable = p->rules[i].cls == AWFS_CLASS_WRITE;
			}
		}
		fprintf(f, "Everything else under %s is %s%s.\n", m,
			root_writable ? "writable" : "read-only",
			p->unclassified == AWFS_UNCLASSIFIED_MASK && !root_ruled ?
				" (and top-level entries that no rule names are shown empty)" : "");
	}
	fprintf(f, "A write anywhere else fails with \"Read-only file system\" (EROFS) and is\n"
		   "logged. Write to one of the writable paths above instead.\n"
		   "The most recent refusals, with the rule behind each: %s/%s/denials\n",
		m, dir_name);
	fclose(f);
	free(v);
}

void info_init(const char *name, const struct awfs_policy *p, const char *mnt)
{
	dir_name = util_xstrdup(name);
	if (name)
		build_readme(p, mnt);
}

const char *info_name(void)
{
	return dir_name;
}

/* The index of the line to drop from the full ring (ring_lock held). */
static size_t ring_victim(void)
{
	size_t most = 0, oldest = 0, n;
	uint32_t uid = 0;

	for (size_t i = 0; i < ring_count; i++) {
		n = 0;
		for (size_t k = 0; k < ring_count; k++)
			n += ring[k].uid == ring[i].uid;
		if (n > most) {
			most = n;
			uid = ring[i].uid;
			oldest = i;	/* the first seen of that uid: its oldest */
		}
	}
	for (size_t i = oldest; i < ring_count; i++)
		if (ring[i].uid == uid && !ring[i].first)
			return i;
	return oldest;
}

void info_add_denial(const char *line, uint32_t uid, bool first)
{
	if (!dir_name)
		return;
	pthread_mutex_lock(&ring_lock);
	if (ring_count == AWFS_INFO_KEPT) {
		size_t v = ring_victim();

		free(ring[v].line);
		memmove(ring + v, ring + v + 1, (ring_count - v - 1) * sizeof(*ring));
		ring_count--;
	}
	ring[ring_count++] = (struct kept){ .line = util_xstrdup(line), .uid = uid, .first = first };
	ring_version++;
	pthread_mutex_unlock(&ring_lock);
}

char *info_readme(size_t *len)
{
	*len = readme_len;
	return util_xstrdup(readme ? readme : "");
}

/* The recent denials, oldest first (caller frees), and the ring's version they are. */
static char *denials_text(size_t *len, uint64_t *version)
{
	char *s = NULL;
	FILE *f = open_memstream(&s, len);

	if (!f)
		abort();
	pthread_mutex_lock(&ring_lock);
	for (size_t i = 0; i < ring_count; i++)
		fprintf(f, "%s\n", ring[i].line);
	*version = ring_version;
	pthread_mutex_unlock(&ring_lock);
	fclose(f);
	return s;
}

char *info_denials(size_t *len)
{
	uint64_t version;

	return denials_text(len, &version);
}

void info_fini(void)
{
	for (size_t i = 0; i < ring_count; i++)
		free(ring[i].line);
	ring_count = 0;
	free(readme);
	readme = NULL;
	free(dir_name);
	dir_name = NULL;
}

/* ------------------------------------------------------------ its nodes */

#define AWFS_INFO_INO 0xfffffffd00000000ULL	/* + the node's AWFS_INFO_NODE_* */
#define AWFS_INFO_DIR_MODE (S_IFDIR | 01777)
#define AWFS_INFO_FILE_MODE (S_IFREG | 0666)

static struct awfs_inode node_dir = { .kind = AWFS_INODE_INFO, .info = AWFS_INFO_NODE_DIR,
				      .cfd = -1, .type = S_IFDIR };
static struct awfs_inode node_readme = { .kind = AWFS_INODE_INFO, .info = AWFS_INFO_NODE_README,
					 .cfd = -1, .type = S_IFREG,
					 .parent = &node_dir, .name = "README" };
static struct awfs_inode node_denials = { .kind = AWFS_INODE_INFO, .info = AWFS_INFO_NODE_DENIALS,
					  .cfd = -1, .type = S_IFREG,
					  .parent = &node_dir, .name = "denials" };
static struct awfs_inode *const files[] = { &node_readme, &node_denials };

/*
 * A version of a file's text, shared by every open that found it current:
 * an agent that holds thousands of opens of the denials file holds the
 * same text thousands of times, not thousands of copies. refs counts the
 * handles, and one more while it is the file's current version. Made and
 * freed on the listener only (open, release, attributes); a worker's READ
 * reads a text its handle holds.
 *
 * What versions held open cost is bounded per caller: a uid holds
 * AWFS_INFO_OPENS opens of these files at most (EMFILE past that), so the
 * agent that alternates a refusal and an open, making a version each time,
 * holds at most that many versions (each 100 lines at most), and never
 * makes another caller's open wait or read an older text.
 */
#define OPENERS 64	/* callers holding opens at once */

struct info_text {
	char *s;
	size_t len;
	unsigned long refs;
};

/* An open file: the version of its text it reads. The open ones are listed,
 * for those the kernel had not released when the session ended. */
struct info_handle {
	struct info_text *text;
	uint32_t uid;
	struct util_link open;
};
static struct util_list open_handles;
static struct info_text *current[2];	/* README's, denials' */
static uint64_t current_version;	/* the ring's version current[1] was made at */
static struct {
	uint32_t uid;
	unsigned n;			/* 0: a free slot */
} openers[OPENERS];

static void text_put(struct info_text *t)
{
	if (t && --t->refs == 0) {
		free(t->s);
		free(t);
	}
}

/* Count an open (@d 1) or a release (-1) of @uid; false when it may not open more. */
static bool opener_count(uint32_t uid, int d)
{
	size_t i, free_at = OPENERS;

	for (i = 0; i < OPENERS; i++) {
		if (openers[i].n && openers[i].uid == uid)
			break;
		if (!openers[i].n && free_at == OPENERS)
			free_at = i;
	}
	if (i == OPENERS) {
		if (d < 0 || free_at == OPENERS)
			return false;
		i = free_at;
		openers[i].uid = uid;
	}
	if (d > 0 && openers[i].n >= AWFS_INFO_OPENS)
		return false;
	openers[i].n = (unsigned)((int)openers[i].n + d);
	return true;
}

/* The current version of the text of @in (its reference is the file's, not the caller's). */
static struct info_text *text_now(const struct awfs_inode *in)
{
	bool is_readme = in->info == AWFS_INFO_NODE_README;
	struct info_text **cur = &current[is_readme ? 0 : 1], *t;
	uint64_t version;

	pthread_mutex_lock(&ring_lock);
	version = ring_version;
	pthread_mutex_unlock(&ring_lock);
	if (!*cur || (!is_readme && version != current_version)) {
		t = util_xcalloc(1, sizeof(*t));
		t->s = is_readme ? info_readme(&t->len) : denials_text(&t->len, &current_version);
		t->refs = 1;
		text_put(*cur);
		*cur = t;
	}
	return *cur;
}

void info_attach(struct awfs_inode *root)
{
	node_dir.parent = root;
	node_dir.name = dir_name;
	node_dir.state = node_readme.state = node_denials.state = root->state;
}

bool info_is_name(const struct awfs_inode *dir, const char *name)
{
	return dir_name && dir == node_dir.parent && strcmp(name, dir_name) == 0;
}

struct awfs_inode *info_dir_node(void)
{
	return &node_dir;
}

struct awfs_inode *info_lookup(const struct awfs_inode *dir, const char *name)
{
	if (dir != &node_dir)
		return info_is_name(dir, name) ? &node_dir : NULL;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (strcmp(name, files[i]->name) == 0)
			return files[i];
	return NULL;
}

const struct awfs_inode *info_file(size_t i)
{
	return i < sizeof(files) / sizeof(files[0]) ? files[i] : NULL;
}

uint64_t info_ino(const struct awfs_inode *in)
{
	return AWFS_INFO_INO + in->info;
}

void info_attr(const struct awfs_inode *in, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = info_ino(in);
	st->st_blksize = 4096;
	if (in->info == AWFS_INFO_NODE_DIR) {
		st->st_mode = AWFS_INFO_DIR_MODE;
		st->st_nlink = 2;
	} else {
		st->st_mode = AWFS_INFO_FILE_MODE;
		st->st_nlink = 1;
		st->st_size = (off_t)text_now(in)->len;
	}
}

int info_open(const struct awfs_inode *in, uint32_t uid, uint64_t *fh)
{
	struct info_handle *h;

	if (!opener_count(uid, 1))
		return EMFILE;
	h = util_xcalloc(1, sizeof(*h));
	h->text = text_now(in);
	h->text->refs++;
	h->uid = uid;
	util_list_push(&open_handles, &h->open);
	*fh = (uint64_t)(uintptr_t)h;
	return 0;
}

const char *info_handle_text(uint64_t fh, size_t *len)
{
	const struct info_handle *h = (const struct info_handle *)(uintptr_t)fh;

	*len = h->text->len;
	return h->text->s;
}

void info_release(uint64_t fh)
{
	struct info_handle *h = (struct info_handle *)(uintptr_t)fh;

	util_list_unlink(&open_handles, &h->open);
	(void)opener_count(h->uid, -1);
	text_put(h->text);
	free(h);
}

void info_release_all(void)
{
	while (open_handles.head)
		info_release((uint64_t)(uintptr_t)util_entry(open_handles.head, struct info_handle, open));
	for (size_t i = 0; i < 2; i++) {
		text_put(current[i]);
		current[i] = NULL;
	}
}
