/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c - the resolved rule set as text and JSON.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

static int class_rank(enum awfs_class c)
{
	return c == AWFS_CLASS_MASK ? 0 : c == AWFS_CLASS_WRITE ? 1 : 2;
}

static int cmp_rule(const void *a, const void *b)
{
	const struct awfs_rule *x = *(const struct awfs_rule *const *)a;
	const struct awfs_rule *y = *(const struct awfs_rule *const *)b;
	int d = class_rank(x->cls) - class_rank(y->cls);

	return d ? d : strcmp(x->path, y->path) ? strcmp(x->path, y->path) : x->line - y->line;
}

const struct awfs_rule **report_sorted_rules(const struct awfs_policy *p)
{
	const struct awfs_rule **v = util_xcalloc(p->nrules + 1, sizeof(*v));

	for (size_t i = 0; i < p->nrules; i++)
		v[i] = &p->rules[i];
	qsort(v, p->nrules, sizeof(*v), cmp_rule);
	return v;
}

static const char *create_word(const struct awfs_rule *r)
{
	return !r->create ? NULL : r->create_file ? "file" : "dir";
}

void report_rules_json(struct awfs_json *j, const struct awfs_policy *p)
{
	const struct awfs_rule **v = report_sorted_rules(p);

	json_arr_begin(j);
	for (size_t i = 0; i < p->nrules; i++) {
		const struct awfs_rule *r = v[i];

		json_obj_begin(j);
		json_key(j, "class");
		json_str(j, policy_class_key(r->cls));
		json_key(j, "path");
		json_str(j, r->path);
		json_key(j, "reason");
		json_str(j, r->reason);
		json_key(j, "runtimes");
		if (r->runtimes) {
			json_arr_begin(j);
			for (size_t k = 0; r->runtimes[k]; k++)
				json_str(j, r->runtimes[k]);
			json_arr_end(j);
		} else {
			json_null(j);
		}
		json_key(j, "create");
		if (r->create)
			json_str(j, create_word(r));
		else
			json_bool(j, false);
		json_key(j, "line");
		json_int(j, r->line);
		json_obj_end(j);
	}
	json_arr_end(j);
	free(v);
}

void report_policy_json(struct awfs_json *j, const struct awfs_policy *p)
{
	json_obj_begin(j);
	json_key(j, "version");
	json_int(j, p->version);
	json_key(j, "file");
	json_str(j, p->file);
	json_key(j, "runtime");
	json_str(j, p->runtime);
	json_key(j, "root");
	json_str(j, p->root);
	json_key(j, "unclassified");
	json_str(j, p->unclassified == AWFS_UNCLASSIFIED_MASK ? "mask" : "warn");
	json_key(j, "rules");
	report_rules_json(j, p);
	json_obj_end(j);
}

const char *report_rest(const struct awfs_policy *p)
{
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].ncomps == 0)
			return p->rules[i].cls == AWFS_CLASS_WRITE ?
				       "everything else: writable (the root itself is allow_write)" :
				       "everything else: read-only (the root's own rule)";
	return "everything else: read-only";
}

void report_policy_text(FILE *out, const struct awfs_policy *p, const char *root)
{
	const struct awfs_rule **v = report_sorted_rules(p);
	char path[3 * 4096], reason[4096];
	int last = -1;

	fprintf(out, "policy %s (version %d)%s%s; unclassified top-level entries: %s\n", p->file,
		p->version, p->runtime ? ", runtime " : "", p->runtime ? p->runtime : "",
		p->unclassified == AWFS_UNCLASSIFIED_MASK ? "mask (served empty)" : "warn (read-only)");
	for (size_t i = 0; i < p->nrules; i++) {
		const struct awfs_rule *r = v[i];
		char *full;

		if (class_rank(r->cls) != last) {
			last = class_rank(r->cls);
			fprintf(out, "%s:\n", r->cls == AWFS_CLASS_MASK ? "masked (served empty)" :
					      r->cls == AWFS_CLASS_WRITE ? "writable (allow_write)" :
					      "read-only on purpose (read_only)");
		}
		full = util_xasprintf("%s%s%s", root ? root : "",
				      root && r->ncomps && strcmp(root, "/") != 0 ? "/" : "",
				      r->ncomps || !root ? r->path : "");
		log_escape(full, strlen(full), path, sizeof(path));
		log_escape(r->reason, strlen(r->reason), reason, sizeof(reason));
		fprintf(out, "  %-32s %s", path, reason);
		if (r->runtimes) {
			fputs(" [runtimes:", out);
			for (size_t k = 0; r->runtimes[k]; k++)
				fprintf(out, " %s", r->runtimes[k]);
			fputs("]", out);
		}
		if (r->create)
			fprintf(out, " [created at mount as a %s]", r->create_file ? "file" : "directory");
		fprintf(out, " (line %d)\n", r->line);
		free(full);
	}
	if (p->nrules == 0)
		fputs("no rules\n", out);
	fputs(report_rest(p), out);
	fputc('\n', out);
	free(v);
}
