/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * info.c - the text of the information directory.
 */
#include "info.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "report.h"
#include "util.h"

static char *dir_name;
static char *readme;
static size_t readme_len;

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static char *ring[AWFS_INFO_DENIALS];
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
			fprintf(f, "These single files can be written in place only: write to them directly\n"
				   "(>, >>, truncate, an editor that saves in place). They cannot be removed,\n"
				   "renamed or replaced, so tools that write a temporary file beside one and\n"
				   "rename it over (sed -i, perl -pi, mv, install, rsync) fail:\n");
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
	ring_next = (ring_next + 1) % AWFS_INFO_DENIALS;
	if (ring_count < AWFS_INFO_DENIALS)
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
		size_t i = (ring_next + AWFS_INFO_DENIALS - ring_count + k) % AWFS_INFO_DENIALS;

		fprintf(f, "%s\n", ring[i]);
	}
	pthread_mutex_unlock(&ring_lock);
	fclose(f);
	return s;
}

void info_fini(void)
{
	for (size_t i = 0; i < AWFS_INFO_DENIALS; i++) {
		free(ring[i]);
		ring[i] = NULL;
	}
	ring_count = ring_next = 0;
	free(readme);
	readme = NULL;
	free(dir_name);
	dir_name = NULL;
}
