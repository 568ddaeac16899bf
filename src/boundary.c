/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * boundary.c - the policy's boundary on the source, at mount; see boundary.h.
 */
#include "config.h"

#include "boundary.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "host.h"
#include "log.h"
#include "util.h"
#include "verdict.h"

/*
 * Walk a literal rule path below the root without following symlinks; *st
 * is the target's on 0. No components would be the root itself, never a
 * target (rule_is_literal() passes none such; said here for the analyzer).
 */
static int check_target(int root_fd, const struct awfs_rule *r, struct stat *st)
{
	int cur = root_fd, err = 0;

	if (r->ncomps == 0)
		return EINVAL;
	for (size_t i = 0; i < r->ncomps; i++) {
		int next;

		err = host_lookup(cur, r->comps[i], &next, st);
		if (cur != root_fd)
			close(cur);
		if (err)
			return err;
		if (i + 1 < r->ncomps && !S_ISDIR(st->st_mode)) {
			close(next);
			return ENOTDIR;
		}
		cur = next;
	}
	if (cur != root_fd)
		close(cur);
	return 0;
}

static bool rule_is_literal(const struct awfs_rule *r)
{
	for (size_t i = 0; i < r->ncomps; i++)
		if (!r->literal[i])
			return false;
	return r->ncomps > 0;
}

int boundary_prepare_targets(struct awfs_policy *p, int root_fd, const struct stat *root_st,
			     const char *source)
{
	int bad = 0;

	for (int pass = 0; pass < 2 && !bad; pass++) {
		for (size_t i = 0; i < p->nrules; i++) {
			struct awfs_rule *r = &p->rules[i];
			struct stat st;
			int err;

			if (r->cls != AWFS_CLASS_WRITE || !rule_is_literal(r))
				continue;
			err = check_target(root_fd, r, &st);
			if (pass == 1)
				r->single_file = !err && S_ISREG(st.st_mode);
			if (err == ENOENT && r->create) {
				if (pass == 0)
					continue;
				err = host_make_target(root_fd, r->path, r->create_file, root_st);
				r->single_file = !err && r->create_file;
				if (!err)
					log_msg(AWFS_LOG_INFO, "created allow_write %s %s/%s (create at %s:%d)",
						r->create_file ? "file" : "directory", source, r->path,
						p->file, r->line);
			}
			if (err == ENOENT) {
				fprintf(stderr, "awfs: allow_write path \"%s\" (%s:%d) does not exist in %s: create it before mounting, or set create = true; (or create = \"file\";) in the rule\n",
					r->path, p->file, r->line, source);
				bad = 1;
			} else if (err) {
				fprintf(stderr, "awfs: allow_write path \"%s\" (%s:%d) in %s: %s\n", r->path,
					p->file, r->line, source,
					err == EAGAIN ? "the directory awfs made was replaced before it could be given its owner and mode (another writer of its parent?); nothing was changed on what replaced it" :
					strerror(err));
				bad = 1;
			}
		}
	}
	return bad;
}

/* qsort() order for names: byte for byte, as rules match them. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void boundary_log(const struct awfs_policy *p, struct awfs_classifier *c, int root_fd,
		  const char *mnt, const char *source, const char *info_dir)
{
	struct util_str lists[3] = { { 0 }, { 0 }, { 0 } }, uncl_text = { 0 };
	char **uncl = NULL;
	char esc[3 * PATH_MAX], emnt[3 * PATH_MAX], esrc[3 * PATH_MAX];
	size_t nuncl = 0;
	DIR *dp;

	for (size_t i = 0; i < p->nrules; i++) {
		log_escape(p->rules[i].path, strlen(p->rules[i].path), esc, sizeof(esc));
		util_str_join(&lists[p->rules[i].cls], ", ", esc);
	}
	if (host_opendir(root_fd, &dp) == 0) {
		struct dirent *de;

		while ((de = readdir(dp)) != NULL) {
			const struct awfs_state *st;

			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
			    (info_dir && strcmp(de->d_name, info_dir) == 0))
				continue;
			st = classify_child(c, classify_root(c), de->d_name);
			if (classify_origin(st) != AWFS_ORIGIN_UNCLASSIFIED)
				continue;
			uncl = util_xrealloc(uncl, (nuncl + 1) * sizeof(*uncl));
			uncl[nuncl++] = util_xstrdup(de->d_name);
		}
		closedir(dp);
	}
	if (nuncl)
		qsort(uncl, nuncl, sizeof(*uncl), cmp_str);
	for (size_t i = 0; i < nuncl; i++) {
		log_escape(uncl[i], strlen(uncl[i]), esc, sizeof(esc));
		util_str_join(&uncl_text, ", ", esc);
	}
	log_escape(mnt, strlen(mnt), emnt, sizeof(emnt));
	log_escape(source, strlen(source), esrc, sizeof(esrc));
	log_msg(AWFS_LOG_INFO, "mounted %s (source %s%s%s): masked: %s; writable: %s; read-only: %s; unclassified: %s",
		emnt, esrc, p->runtime ? ", runtime " : "", p->runtime ? p->runtime : "",
		lists[AWFS_CLASS_MASK].s ? lists[AWFS_CLASS_MASK].s : "none",
		lists[AWFS_CLASS_WRITE].s ? lists[AWFS_CLASS_WRITE].s : "none",
		lists[AWFS_CLASS_RO].s ? lists[AWFS_CLASS_RO].s : "none (everything else is read-only)",
		uncl_text.s ? uncl_text.s : "none");
	audit_mount(p, mnt, source, uncl, nuncl);
	for (size_t i = 0; i < nuncl; i++) {
		verdict_note_unclassified(uncl[i]);
		free(uncl[i]);
	}
	for (int i = 0; i < 3; i++)
		free(lists[i].s);
	free(uncl_text.s);
	free(uncl);
}

