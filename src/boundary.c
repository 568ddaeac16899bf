/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * boundary.c - the policy's boundary on the source, at mount; see boundary.h.
 */
#include "config.h"

#include "boundary.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "check.h"
#include "host.h"
#include "log.h"
#include "util.h"
#include "verdict.h"

int boundary_prepare_targets(struct awfs_policy *p, int root_fd, const struct stat *root_st,
			     const char *source)
{
	int bad = 0;

	for (int pass = 0; pass < 2 && !bad; pass++) {
		for (size_t i = 0; i < p->nrules; i++) {
			struct awfs_rule *r = &p->rules[i];
			struct stat st;
			int err;

			if (!check_is_target(r))
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
			if (err) {
				char *why = check_target_problem(p, r, source, err);

				fprintf(stderr, "awfs: %s\n", why);
				free(why);
				bad = 1;
			}
		}
	}
	return bad;
}

void boundary_log(const struct awfs_policy *p, struct awfs_classifier *c, int root_fd,
		  const char *mnt, const char *source, const char *info_dir, enum host_acls acls,
		  const char *data_path, const char *data_word, const char *requests,
		  const char *requests_word)
{
	struct util_str lists[3] = { { 0 }, { 0 }, { 0 } }, uncl_text = { 0 };
	char **uncl = NULL;
	char esc[3 * PATH_MAX], emnt[3 * PATH_MAX], esrc[3 * PATH_MAX];
	size_t nuncl = 0;

	for (size_t i = 0; i < p->nrules; i++) {
		log_escape(p->rules[i].path, strlen(p->rules[i].path), esc, sizeof(esc));
		util_str_join(&lists[p->rules[i].cls], ", ", esc);
	}
	uncl = check_unclassified_names(c, root_fd, info_dir, &nuncl);
	for (size_t i = 0; i < nuncl; i++) {
		log_escape(uncl[i], strlen(uncl[i]), esc, sizeof(esc));
		util_str_join(&uncl_text, ", ", esc);
	}
	log_escape(mnt, strlen(mnt), emnt, sizeof(emnt));
	log_escape(source, strlen(source), esrc, sizeof(esrc));
	log_msg(AWFS_LOG_INFO, "mounted %s (source %s%s%s, %s; %s; %s): masked: %s; writable: %s; read-only: %s; unclassified: %s",
		emnt, esrc, p->runtime ? ", runtime " : "", p->runtime ? p->runtime : "",
		acls == HOST_ACLS_KEPT ? "its POSIX ACLs enforced" :
		acls == HOST_ACLS_NONE ? "no POSIX ACLs there: modes alone decide access" :
		"no POSIX ACLs there, and checks of its own: others than an object's owner are refused",
		data_path, requests, lists[AWFS_CLASS_MASK].s ? lists[AWFS_CLASS_MASK].s : "none",
		lists[AWFS_CLASS_WRITE].s ? lists[AWFS_CLASS_WRITE].s : "none",
		lists[AWFS_CLASS_RO].s ? lists[AWFS_CLASS_RO].s : "none (everything else is read-only)",
		uncl_text.s ? uncl_text.s : "none");
	audit_mount(p, mnt, source, data_word, requests_word, uncl, nuncl);
	for (size_t i = 0; i < nuncl; i++) {
		verdict_note_unclassified(uncl[i]);
		free(uncl[i]);
	}
	for (int i = 0; i < 3; i++)
		free(lists[i].s);
	free(uncl_text.s);
	free(uncl);
}

