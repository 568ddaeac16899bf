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
#include "explain.h"
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

bool check_is_target(const struct awfs_rule *r)
{
	return r->cls == AWFS_CLASS_WRITE && r->ncomps > 0 && policy_rule_is_literal(r);
}

int check_target(int root_fd, const struct awfs_rule *r, struct stat *st)
{
	int cur = root_fd, err;

	if (r->ncomps == 0)
		return EINVAL;	/* the root itself, never a target (check_is_target()) */
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

char *check_target_problem(const struct awfs_policy *p, const struct awfs_rule *r, const char *source,
			   int err)
{
	char a[3 * PATH_MAX], b[3 * PATH_MAX], f[3 * PATH_MAX];

	esc(r->path, a, sizeof(a));
	esc(source, b, sizeof(b));
	esc(p->file, f, sizeof(f));
	if (err == ENOENT && !r->create)
		return util_xasprintf("allow_write path \"%s\" (%s:%d) does not exist in %s and has no create: awfs refuses to mount. Create it before mounting, or set create = true; (or create = \"file\";) in the rule",
				      a, f, r->line, b);
	return util_xasprintf("allow_write path \"%s\" (%s:%d) in %s: %s", a, f, r->line, b,
			      err == EAGAIN ? "the directory awfs made was replaced before it could be given its owner and mode (another writer of its parent?); nothing was changed on what replaced it" :
			      strerror(err));
}

/* Literal allow_write targets: present, or to be created at mount. */
static void check_targets(const struct awfs_policy *p, int root_fd, const char *source,
			  struct lines *l)
{
	char a[3 * PATH_MAX], b[3 * PATH_MAX], f[3 * PATH_MAX];

	for (size_t i = 0; i < p->nrules; i++) {
		const struct awfs_rule *r = &p->rules[i];
		struct stat st;
		char *why;
		int err;

		if (!check_is_target(r))
			continue;
		err = check_target(root_fd, r, &st);
		if (err == ENOENT && r->create) {
			add(l, 2, "allow_write path \"%s\" (%s:%d) does not exist in %s yet: awfs creates it at mount (create = %s)",
			    esc(r->path, a, sizeof(a)), esc(p->file, f, sizeof(f)), r->line,
			    esc(source, b, sizeof(b)), r->create_file ? "\"file\"" : "true");
		} else if (err) {
			why = check_target_problem(p, r, source, err);
			add(l, 0, "%s", why);
			free(why);
		}
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **check_unclassified_names(struct awfs_classifier *c, int root_fd, const char *skip, size_t *n)
{
	struct dirent *de;
	char **v = NULL;
	DIR *dp;

	*n = 0;
	if (host_opendir(root_fd, &dp) != 0)
		return NULL;
	while ((de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    (skip && strcmp(de->d_name, skip) == 0))
			continue;
		if (classify_origin(classify_child(c, classify_root(c), de->d_name)) != AWFS_ORIGIN_UNCLASSIFIED)
			continue;
		v = util_xrealloc(v, (*n + 1) * sizeof(*v));
		v[(*n)++] = util_xstrdup(de->d_name);
	}
	closedir(dp);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

/* Top-level entries no rule names. */
static void check_unclassified(struct awfs_classifier *c, int root_fd, const char *source,
			       const struct awfs_policy *p, bool strict, struct lines *l)
{
	char a[3 * NAME_MAX + 8], b[3 * PATH_MAX], why[1024];
	size_t n;
	char **names = check_unclassified_names(c, root_fd, NULL, &n);

	for (size_t i = 0; i < n; i++) {
		if (strcmp(names[i], ".awfs") == 0) {
			add(l, 2, "%s/.awfs is hidden behind awfs's information directory (unless awfs runs with --info-dir or --no-info-dir)",
			    esc(source, b, sizeof(b)));
		} else {
			explain_state(p, classify_child(c, classify_root(c), names[i]), why, sizeof(why));
			add(l, strict ? 0 : 1, "unclassified top-level entry %s/%s: it would be %s; add it to mask, allow_write or read_only",
			    esc(source, b, sizeof(b)), esc(names[i], a, sizeof(a)), why);
		}
		free(names[i]);
	}
	free(names);
}

/*
 * The line a finding of @sev is (0 error, 1 warning, 2 note). What --strict
 * makes an error (awfsctl(1) says why): a part of a grant a rule refuses
 * that the policy does not mark as an exception it makes on purpose (the
 * engine may write there and awfs will refuse, the lost write check is run
 * to catch), a path a step after the agent runs that the agent could write,
 * a name nobody classified. A grant as wide as the mount root or wider, and
 * an upload of what the agent may write, stay warnings: the engine's
 * breadth, which the agent's own refusals explain (the denial line and
 * .awfs/README name where it may write), and the agent's products, which
 * the artifact is for. An exception the policy states is a note.
 */
static int level(const struct awfs_check_opts *o, enum awfs_severity sev)
{
	switch (sev) {
	case AWFS_FINDING_ERROR:
		return 0;
	case AWFS_FINDING_WARN:
	case AWFS_FINDING_EXCEPT:
		return o->strict ? 0 : 1;
	case AWFS_FINDING_BROAD:
	case AWFS_FINDING_CONSUMED:
		return 1;
	case AWFS_FINDING_ACK:
	case AWFS_FINDING_NOTE:
		break;
	}
	return 2;
}

static void check_grants(const struct awfs_check_opts *o, struct awfs_classifier *c,
			 const struct awfs_policy *p, const char *root, struct lines *l,
			 struct awfs_grants *g)
{
	struct awfs_findings f = { 0 };
	char a[4096], b[3 * PATH_MAX], t[8192];

	grants_check(g, c, p, root, &f);
	for (size_t i = 0; i < f.n; i++) {
		add(l, level(o, f.v[i].severity), "%s: %s: %s", esc(f.v[i].entry, a, sizeof(a)),
		    esc(f.v[i].path, b, sizeof(b)), esc(f.v[i].text, t, sizeof(t)));
	}
	grants_findings_free(&f);
}

/* Each compiled workflow against the policy (lockcheck.h). Returns -1 if one cannot be read. */
static int check_workflows(const struct awfs_check_opts *o, struct awfs_classifier *c,
			   const struct awfs_policy *p, const char *root, struct lines *l, FILE *err)
{
	char a[4096], b[3 * PATH_MAX], t[8192];
	int bad = 0;

	for (size_t w = 0; w < o->nworkflows; w++) {
		struct awfs_findings f = { 0 };
		char *why = NULL;

		if (o->check_workflow(o->workflows[w], c, p, root, &f, &why) < 0) {
			fprintf(err, "awfsctl check: --workflow %s\n", esc(why, t, sizeof(t)));
			free(why);
			bad = -1;
			continue;
		}
		for (size_t i = 0; i < f.n; i++) {
			if (*f.v[i].path)
				add(l, level(o, f.v[i].severity), "%s: %s: %s", esc(f.v[i].entry, a, sizeof(a)),
				    esc(f.v[i].path, b, sizeof(b)), esc(f.v[i].text, t, sizeof(t)));
			else
				add(l, level(o, f.v[i].severity), "%s: %s", esc(f.v[i].entry, a, sizeof(a)),
				    esc(f.v[i].text, t, sizeof(t)));
		}
		grants_findings_free(&f);
	}
	return bad;
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

	p = policy_load_or_report(o->policy, o->runtime, err, "awfsctl check", "");
	if (!p)
		return 2;
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
	if (o->nworkflows && check_workflows(o, c, p, root, &l, err) < 0) {
		ret = 2;	/* unreadable input: what and where was said */
		goto out;
	}

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
