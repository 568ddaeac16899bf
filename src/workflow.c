/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * workflow.c - a compiled workflow read with libyaml (workflow.h).
 *
 * The document API: libyaml builds the whole node graph (anchors and
 * aliases resolved by it), then this file walks jobs: -> NAME -> steps: ->
 * each step's scalars. A workflow is small (gh-aw's largest lock files are
 * a few hundred KiB), so holding it whole costs nothing worth saving.
 */
#include "workflow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util.h"

static int line_of(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

/* The scalar text of @n, or NULL when it is not a scalar. */
static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static char *dup_or_null(const char *s)
{
	return s ? util_xstrdup(s) : NULL;
}

/* The value of the scalar key @key in the mapping @m, or NULL. */
static yaml_node_t *member(yaml_document_t *d, const yaml_node_t *m, const char *key)
{
	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(d, p->key));

		if (k && strcmp(k, key) == 0)
			return yaml_document_get_node(d, p->value);
	}
	return NULL;
}

/* A mapping of scalars into @out; other values are left out. */
static void read_map(yaml_document_t *d, const yaml_node_t *m, struct awfs_wf_map *out)
{
	size_t cap;

	memset(out, 0, sizeof(*out));
	if (!m || m->type != YAML_MAPPING_NODE)
		return;
	cap = (size_t)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
	out->key = util_xcalloc(cap ? cap : 1, sizeof(*out->key));
	out->val = util_xcalloc(cap ? cap : 1, sizeof(*out->val));
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(d, p->key));
		const char *v = scalar(yaml_document_get_node(d, p->value));

		if (!k || !v)
			continue;
		out->key[out->n] = util_xstrdup(k);
		out->val[out->n++] = util_xstrdup(v);
	}
}

static void read_step(yaml_document_t *d, const yaml_node_t *s, struct awfs_wf_step *out)
{
	memset(out, 0, sizeof(*out));
	out->line = line_of(s);
	out->name = dup_or_null(scalar(member(d, s, "name")));
	out->id = dup_or_null(scalar(member(d, s, "id")));
	out->uses = dup_or_null(scalar(member(d, s, "uses")));
	out->run = dup_or_null(scalar(member(d, s, "run")));
	read_map(d, member(d, s, "env"), &out->env);
	read_map(d, member(d, s, "with"), &out->with);
}

static void read_job(yaml_document_t *d, const char *name, const yaml_node_t *j, struct awfs_wf_job *out)
{
	const yaml_node_t *steps = member(d, j, "steps");

	memset(out, 0, sizeof(*out));
	out->name = util_xstrdup(name);
	out->line = line_of(j);
	if (!steps || steps->type != YAML_SEQUENCE_NODE)
		return;	/* a job that calls a reusable workflow has none */
	out->steps = util_xcalloc((size_t)(steps->data.sequence.items.top - steps->data.sequence.items.start) + 1,
				  sizeof(*out->steps));
	for (yaml_node_item_t *i = steps->data.sequence.items.start; i < steps->data.sequence.items.top; i++) {
		const yaml_node_t *s = yaml_document_get_node(d, *i);

		if (s && s->type == YAML_MAPPING_NODE)
			read_step(d, s, &out->steps[out->nsteps++]);
	}
}

int workflow_parse(const char *text, size_t len, const char *file, struct awfs_workflow *out, char **err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root, *jobs;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	*err = NULL;
	if (!yaml_parser_initialize(&parser)) {
		*err = util_xasprintf("%s: cannot start the YAML parser (out of memory)", file);
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		*err = util_xasprintf("%s:%zu:%zu: not YAML: %s. Expected a compiled workflow (.lock.yml)", file,
				      parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				      parser.problem ? parser.problem : "unreadable");
		yaml_parser_delete(&parser);
		return -1;
	}
	root = yaml_document_get_root_node(&doc);
	jobs = member(&doc, root, "jobs");
	if (!root || root->type != YAML_MAPPING_NODE || !jobs || jobs->type != YAML_MAPPING_NODE) {
		*err = util_xasprintf("%s:%d:1: no jobs: mapping at the top level. Expected a GitHub Actions workflow, as gh-aw compiles it (jobs: NAME: steps: ...)",
				      file, root ? line_of(root) : 1);
		goto out;
	}
	out->file = util_xstrdup(file);
	out->jobs = util_xcalloc((size_t)(jobs->data.mapping.pairs.top - jobs->data.mapping.pairs.start) + 1,
				 sizeof(*out->jobs));
	for (yaml_node_pair_t *p = jobs->data.mapping.pairs.start; p < jobs->data.mapping.pairs.top; p++) {
		const char *name = scalar(yaml_document_get_node(&doc, p->key));
		const yaml_node_t *j = yaml_document_get_node(&doc, p->value);

		if (name && j && j->type == YAML_MAPPING_NODE)
			read_job(&doc, name, j, &out->jobs[out->njobs++]);
	}
	rc = 0;
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

int workflow_load(const char *file, struct awfs_workflow *out, char **err)
{
	FILE *f = fopen(file, "rb");
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!f) {
		*err = util_xasprintf("%s: cannot open: %s", file, strerror(errno));
		return -1;
	}
	do {
		if (len + 65536 > cap) {
			cap = cap ? cap * 2 : 65536;
			text = util_xrealloc(text, cap + 1);
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		*err = util_xasprintf("%s: cannot read: %s", file, strerror(errno));
		fclose(f);
		free(text);
		return -1;
	}
	fclose(f);
	rc = workflow_parse(text ? text : "", len, file, out, err);
	free(text);
	return rc;
}

const char *workflow_get(const struct awfs_wf_map *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->key[i], key) == 0)
			return m->val[i];
	return NULL;
}

static void map_free(struct awfs_wf_map *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->key[i]);
		free(m->val[i]);
	}
	free(m->key);
	free(m->val);
}

void workflow_free(struct awfs_workflow *w)
{
	for (size_t j = 0; j < w->njobs; j++) {
		struct awfs_wf_job *job = &w->jobs[j];

		for (size_t s = 0; s < job->nsteps; s++) {
			struct awfs_wf_step *st = &job->steps[s];

			free(st->name);
			free(st->id);
			free(st->uses);
			free(st->run);
			map_free(&st->env);
			map_free(&st->with);
		}
		free(job->steps);
		free(job->name);
	}
	free(w->jobs);
	free(w->file);
	memset(w, 0, sizeof(*w));
}
