/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check.c - awfsctl check.
 *
 * Exit status: 0 clean, 1 findings (errors, or warnings with --strict),
 * 2 unusable input (a bad policy or permission string, an unreadable tree).
 * Output is sorted, so two runs over the same input print the same lines.
 */
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify.h"
#include "grants.h"
#include "host.h"
#include "log.h"
#include "policy.h"
#include "util.h"

struct line {
	int severity;	/* 0 error, 1 warning, 2 note */
	char *text;	/* escaped, without the "error: " word */
};

struct lines {
	struct line *v;
	size_t n;
};

static void add(struct lines *l, int severity, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void add(struct lines *l, int severity, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = util_xvasprintf(fmt, ap);
	va_end(ap);
	l->v = util_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n].severity = severity;
	l->v[l->n].text = s;
	l->n++;
}

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	return strcmp(x->text, y->text);
}

/* Text for a terminal: controls and invalid bytes escaped, quotes kept. */
static const char *esc(const char *s, char *buf, size_t size)
{
	return log_escape_text(s, strlen(s), buf, size);
}

/* Literal allow_write targets: present, or to be created at mount. */
static void check_targets(const struct awfs_policy *p, int root_fd, const char *source,
			  struct lines *l)
{
	char a[3 * PATH_MAX], b[3 * PATH_MAX];

	for (size_t i = 0; i < p->nrules; i++) {
		const struct awfs_rule *r = &p->rules[i];
		int cur = root_fd, err = 0;

		if (r->cls != AWFS_CLASS_WRITE || !r->ncomps || !policy_rule_is_literal(r))
			continue;
		for (size_t k = 0; k < r->ncomps && !err; k++) {
			struct stat st;
			int next;

			err = host_lookup(cur, r->comps[k], &next, &st);
			if (cur != root_fd)
				close(cur);
			cur = err ? root_fd : next;
			if (!err && k + 1 < r->ncomps && !S_ISDIR(st.st_mode))
				err = ENOTDIR;
		}
		if (cur != root_fd)
			close(cur);
		if (err == ENOENT && r->create)
			add(l, 2, "allow_write path \"%s\" (%s:%d) does not exist in %s yet: awfs creates it at mount (create = %s)",
			    esc(r->path, a, sizeof(a)), p->file, r->line, esc(source, b, sizeof(b)),
			    r->create_file ? "\"file\"" : "true");
		else if (err == ENOENT)
			add(l, 0, "allow_write path \"%s\" (%s:%d) does not exist in %s and has no create: awfs would refuse to mount. Create it first, or set create = true; in the rule",
			    esc(r->path, a, sizeof(a)), p->file, r->line, esc(source, b, sizeof(b)));
		else if (err)
			add(l, 0, "allow_write path \"%s\" (%s:%d) in %s: %s", esc(r->path, a, sizeof(a)),
			    p->file, r->line, esc(source, b, sizeof(b)), strerror(err));
	}
}

/* Top-level entries no rule names. */
static void check_unclassified(struct awfs_classifier *c, int root_fd, const char *source,
			       const struct awfs_policy *p, bool strict, struct lines *l)
{
	char a[3 * NAME_MAX + 8], b[3 * PATH_MAX];
	struct dirent *de;
	DIR *dp;

	if (host_opendir(root_fd, &dp) != 0)
		return;
	while ((de = readdir(dp)) != NULL) {
		const struct awfs_state *st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		st = classify_child(c, classify_root(c), de->d_name);
		if (classify_origin(st) != AWFS_ORIGIN_UNCLASSIFIED)
			continue;
		if (strcmp(de->d_name, ".awfs") == 0) {
			add(l, 2, "%s/.awfs is hidden behind awfs's information directory (unless awfs runs with --info-dir or --no-info-dir)",
			    esc(source, b, sizeof(b)));
			continue;
		}
		add(l, strict ? 0 : 1, "unclassified top-level entry %s/%s: named by no rule, it would be served %s (unclassified = \"%s\"); add it to mask, allow_write or read_only",
		    esc(source, b, sizeof(b)), esc(de->d_name, a, sizeof(a)),
		    p->unclassified == AWFS_UNCLASSIFIED_MASK ? "empty" : "read-only",
		    p->unclassified == AWFS_UNCLASSIFIED_MASK ? "mask" : "warn");
	}
	closedir(dp);
}

static void check_grants(const struct awfs_check_opts *o, struct awfs_classifier *c,
			 const struct awfs_policy *p, const char *root, struct lines *l,
			 struct awfs_grants *g)
{
	struct awfs_findings f = { 0 };
	char a[4096], b[3 * PATH_MAX], t[8192];

	grants_check(g, c, p, root, &f);
	for (size_t i = 0; i < f.n; i++) {
		/*
		 * --strict makes every warning an error: a grant wider than the
		 * root, and a part of a grant a rule refuses (a read-only .git
		 * in a memory): the engine may write there and awfs will refuse,
		 * which is the lost write check is run to catch.
		 */
		int sev = f.v[i].severity == AWFS_FINDING_ERROR ? 0 :
			  f.v[i].severity == AWFS_FINDING_WARN || f.v[i].severity == AWFS_FINDING_EXCEPT ?
			  (o->strict ? 0 : 1) : 2;

		add(l, sev, "%s: %s: %s", esc(f.v[i].entry, a, sizeof(a)), esc(f.v[i].path, b, sizeof(b)),
		    esc(f.v[i].text, t, sizeof(t)));
	}
	grants_findings_free(&f);
}

int check_run(const struct awfs_check_opts *o, FILE *out, FILE *err)
{
	static const char *const words[] = { "error", "warning", "note" };
	struct awfs_msgs errs = { 0 };
	struct awfs_grants g = { 0 };
	struct awfs_policy *p;
	struct awfs_classifier *c;
	struct lines l = { 0 };
	const char *source = o->source;
	const char *root;
	size_t counts[3] = { 0 };
	int ret;

	p = policy_load(o->policy, o->runtime, &errs);
	if (!p) {
		for (size_t i = 0; i < errs.n; i++)
			fprintf(err, "%s\n", errs.v[i]);
		fprintf(err, "awfsctl check: %zu error%s in the policy\n", errs.n, errs.n == 1 ? "" : "s");
		msgs_clear(&errs);
		return 2;
	}
	if (o->allowed_tools && grants_parse(o->allowed_tools, &g, &errs) < 0) {
		for (size_t i = 0; i < errs.n; i++)
			fprintf(err, "awfsctl check: --allowed-tools: %s\n", errs.v[i]);
		msgs_clear(&errs);
		grants_free(&g);
		policy_free(p);
		return 2;
	}
	c = classify_new(p);
	if (!source && p->root && access(p->root, F_OK) == 0)
		source = p->root;
	/* the agent's view of the root, never the host path of the source */
	root = o->root ? o->root : p->root ? p->root : "/tmp/gh-aw";

	if (source) {
		struct stat st;
		int fd, e = host_open_root(source, &fd, &st);

		if (e) {
			fprintf(err, "awfsctl check: cannot open the source %s: %s\n", source, strerror(e));
			ret = 2;
			goto out;
		}
		check_targets(p, fd, source, &l);
		check_unclassified(c, fd, source, p, o->strict, &l);
		close(fd);
	} else {
		add(&l, 2, "no --source given and the policy sets no existing root: the tree was not checked");
	}
	if (o->allowed_tools)
		check_grants(o, c, p, root, &l, &g);

	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_line);
	for (int sev = 0; sev < 3; sev++) {
		for (size_t i = 0; i < l.n; i++) {
			if (l.v[i].severity != sev)
				continue;
			fprintf(out, "%s: %s\n", words[sev], l.v[i].text);
			counts[sev]++;
		}
	}
	fprintf(out, "awfsctl check: %s: %zu error%s, %zu warning%s\n", o->policy, counts[0],
		counts[0] == 1 ? "" : "s", counts[1], counts[1] == 1 ? "" : "s");
	ret = counts[0] ? 1 : 0;
out:
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].text);
	free(l.v);
	grants_free(&g);
	classify_free(c);
	policy_free(p);
	return ret;
}
