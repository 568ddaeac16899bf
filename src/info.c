/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * info.c - the information directory: its nodes, their attributes and
 * open snapshots, and its text.
 */
#include "info.h"

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

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static char *ring[AWFS_INFO_KEPT];
static size_t ring_next, ring_count;

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

void info_add_denial(const char *line)
{
	if (!dir_name)
		return;
	pthread_mutex_lock(&ring_lock);
	free(ring[ring_next]);
	ring[ring_next] = util_xstrdup(line);
	ring_next = (ring_next + 1) % AWFS_INFO_KEPT;
	if (ring_count < AWFS_INFO_KEPT)
		ring_count++;
	pthread_mutex_unlock(&ring_lock);
}

char *info_readme(size_t *len)
{
	*len = readme_len;
	return util_xstrdup(readme ? readme : "");
}

char *info_denials(size_t *len)
{
	char *s = NULL;
	FILE *f = open_memstream(&s, len);

	if (!f)
		abort();
	pthread_mutex_lock(&ring_lock);
	for (size_t k = 0; k < ring_count; k++) {
		size_t i = (ring_next + AWFS_INFO_KEPT - ring_count + k) % AWFS_INFO_KEPT;

		fprintf(f, "%s\n", ring[i]);
	}
	pthread_mutex_unlock(&ring_lock);
	fclose(f);
	return s;
}

void info_fini(void)
{
	for (size_t i = 0; i < AWFS_INFO_KEPT; i++) {
		free(ring[i]);
		ring[i] = NULL;
	}
	ring_count = ring_next = 0;
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
 * The snapshot of a file's text, taken at open. The open ones are listed
 * (listener thread): those the kernel had not released when the session
 * ended (an unmount right after a read) are freed by info_release_all().
 */
struct info_handle {
	char *text;
	size_t len;
	struct util_link open;
};
static struct util_list open_handles;

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

/* The current text of the file @in (caller frees). */
static char *text_of(const struct awfs_inode *in, size_t *len)
{
	return in->info == AWFS_INFO_NODE_README ? info_readme(len) : info_denials(len);
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
		size_t len;

		free(text_of(in, &len));
		st->st_mode = AWFS_INFO_FILE_MODE;
		st->st_nlink = 1;
		st->st_size = (off_t)len;
	}
}

uint64_t info_open(const struct awfs_inode *in)
{
	struct info_handle *h = util_xcalloc(1, sizeof(*h));

	h->text = text_of(in, &h->len);
	util_list_push(&open_handles, &h->open);
	return (uint64_t)(uintptr_t)h;
}

const char *info_handle_text(uint64_t fh, size_t *len)
{
	const struct info_handle *h = (const struct info_handle *)(uintptr_t)fh;

	*len = h->len;
	return h->text;
}

void info_release(uint64_t fh)
{
	struct info_handle *h = (struct info_handle *)(uintptr_t)fh;

	util_list_unlink(&open_handles, &h->open);
	free(h->text);
	free(h);
}

void info_release_all(void)
{
	while (open_handles.head)
		info_release((uint64_t)(uintptr_t)util_entry(open_handles.head, struct info_handle, open));
}
