/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lockcheck.c - a compiled workflow against the policy (lockcheck.h).
 *
 * The scripts are read as text, not run or parsed as a shell would: a path
 * is a run of path characters that starts with the mount root, and what a
 * step does with it is read from the word before it. That misses a path
 * built from variables (${RUNNER_TEMP}/gh-aw, "$DIR/x"), which is why the
 * check is a second look at the workflow, not a proof about it.
 */
#include "lockcheck.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct lc {
	struct awfs_classifier *c;
	const struct awfs_policy *p;
	const char *root;		/* as the agent sees it, without a trailing slash */
	size_t rlen;
	const char *where;		/* "FILE: job J, step S" of the step being read */
	struct awfs_findings *out;
	char **seen;			/* top-level names already reported unclassified */
	size_t nseen;
};

static void add(struct lc *x, enum awfs_severity sev, const char *path, char *text)
{
	struct awfs_findings *f = x->out;

	f->v = util_xrealloc(f->v, (f->n + 1) * sizeof(*f->v));
	f->v[f->n].severity = sev;
	f->v[f->n].entry = util_xstrdup(x->where);
	f->v[f->n].path = util_xstrdup(path);
	f->v[f->n].text = text;
	f->n++;
}

/* ------------------------------------------------------------ classifying a path */

/* The state of @path (under the root, absolute as the agent sees it), or NULL outside it. */
static const struct awfs_state *state_of(struct lc *x, const char *path, const char **first)
{
	const struct awfs_state *s = classify_root(x->c);
	const char *p = path + x->rlen;
	char name[256];

	*first = NULL;
	if (strncmp(path, x->root, x->rlen) != 0 || (*p && *p != '/'))
		return NULL;
	while (*p) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!n)
			break;
		if (n >= sizeof(name))
			n = sizeof(name) - 1;
		memcpy(name, p, n);
		name[n] = '\0';
		if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
			if (!*first)
				*first = p;
			s = classify_child(x->c, s, name);
		}
		p += strcspn(p, "/");
	}
	return s;
}

/* Whether the agent can write @s or something below it. */
static bool agent_writes(const struct awfs_state *s)
{
	const struct awfs_rule *const *r;
	size_t n;

	if (classify_class(s) == AWFS_CLASS_WRITE)
		return true;
	n = classify_alive(s, &r);
	for (size_t i = 0; i < n; i++)
		if (r[i]->cls == AWFS_CLASS_WRITE)
			return true;
	return false;
}

/* A top-level name of @path the policy does not classify: reported once a workflow. */
static void note_unclassified(struct lc *x, const char *path)
{
	const char *first;
	const struct awfs_state *s = state_of(x, path, &first);
	const struct awfs_state *top;
	char name[256];
	size_t n;

	if (!s || !first)
		return;
	n = strcspn(first, "/");
	if (n >= sizeof(name))
		return;
	memcpy(name, first, n);
	name[n] = '\0';
	top = classify_child(x->c, classify_root(x->c), name);
	if (classify_origin(top) != AWFS_ORIGIN_UNCLASSIFIED)
		return;
	for (size_t i = 0; i < x->nseen; i++)
		if (strcmp(x->seen[i], name) == 0)
			return;
	x->seen = util_xrealloc(x->seen, (x->nseen + 1) * sizeof(*x->seen));
	x->seen[x->nseen++] = util_xstrdup(name);
	add(x, AWFS_FINDING_WARN, path,
	    util_xasprintf("the workflow names %s/%s, which no rule classifies: add it to mask, allow_write or read_only, with who writes it",
			   x->root, name));
}

/* ------------------------------------------------------------ the agent's step */

/* @path (a file, or a directory when @dir) is what the engine is told to write, by @how. */
static void told_to_write(struct lc *x, const char *path, bool dir, const char *how)
{
	struct awfs_grants g = { 0 };
	struct awfs_findings f = { 0 };
	struct awfs_msgs errs = { 0 };
	char *spec;
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (dir && n <= x->rlen && strncmp(x->root, path, n) == 0 && (n == x->rlen || x->root[n] == '/')) {
		/* the whole tree (copilot --add-dir of the root): the engine's breadth, as a Write of all of it */
		add(x, AWFS_FINDING_BROAD, path,
		    util_xasprintf("the agent may write anywhere under the mount root (%s): awfs refuses what the policy does not make writable, and each refusal says where writing is allowed",
				   how));
		return;
	}
	spec = util_xasprintf("Write(%.*s%s)", (int)n, path, dir ? "/**" : "");
	note_unclassified(x, path);
	if (grants_parse(spec, &g, &errs) == 0) {
		grants_check(&g, x->c, x->p, x->root, &f);
		for (size_t i = 0; i < f.n; i++) {
			if (f.v[i].severity == AWFS_FINDING_ERROR)
				add(x, AWFS_FINDING_ERROR, path,
				    util_xasprintf("the agent is told to write it (%s), but %s", how, f.v[i].text));
			else if (f.v[i].severity == AWFS_FINDING_EXCEPT)
				add(x, AWFS_FINDING_EXCEPT, f.v[i].path,
				    util_xasprintf("the agent is told to write %s (%s), but this part is %s", path, how,
						   f.v[i].text));
		}
	}
	grants_findings_free(&f);
	grants_free(&g);
	msgs_clear(&errs);
	free(spec);
}

/*
 * The argument after @flag in the script @run (a flag and its value, or
 * "--flag=value"), unquoted: '...', "..." and the '\'' of a script quoted
 * inside bash -c '...'. Each occurrence, through @fn.
 */
static void each_flag(struct lc *x, const char *run, const char *flag, bool dir, const char *how,
		      void (*fn)(struct lc *, const char *, bool, const char *))
{
	size_t fl = strlen(flag);

	for (const char *p = strstr(run, flag); p; p = strstr(p + 1, flag)) {
		const char *v = p + fl, *end;
		char *val;

		if (p > run && !isspace((unsigned char)p[-1]) && p[-1] != '\'' && p[-1] != '"')
			continue;
		if (*v == '=')
			v++;
		else if (*v == ' ' || *v == '\t')
			v += strspn(v, " \t");
		else
			continue;
		if (strncmp(v, "'\\''", 4) == 0) {
			v += 4;
			end = strstr(v, "'\\''");
		} else if (*v == '\'' || *v == '"') {
			end = strchr(v + 1, *v);
			v++;
		} else {
			end = v + strcspn(v, " \t\n;|&)'\"");
		}
		if (!end)
			continue;
		val = util_xstrndup(v, (size_t)(end - v));
		fn(x, val, dir, how);
		free(val);
	}
}

static void one_path(struct lc *x, const char *val, bool dir, const char *how)
{
	if (val[0] == '/')
		told_to_write(x, val, dir, how);
}

/* --allowed-tools: the engine's grants, checked as awfsctl check --allowed-tools does */
static void one_grants(struct lc *x, const char *val, bool dir, const char *how)
{
	struct awfs_grants g = { 0 };
	struct awfs_findings f = { 0 };
	struct awfs_msgs errs = { 0 };

	(void)dir;
	if (grants_parse(val, &g, &errs) != 0) {
		add(x, AWFS_FINDING_WARN, "", util_xasprintf("%s: cannot be read: %s", how, errs.n ? errs.v[0] : "?"));
	} else {
		grants_check(&g, x->c, x->p, x->root, &f);
		for (size_t i = 0; i < f.n; i++)
			add(x, f.v[i].severity, f.v[i].path, util_xasprintf("%s: %s", f.v[i].entry, f.v[i].text));
	}
	grants_findings_free(&f);
	grants_free(&g);
	msgs_clear(&errs);
}

/* AWF's filesystem.allowWrite: the quoted strings of its JSON array, wherever the script writes it */
static void allow_write_json(struct lc *x, const char *run)
{
	for (const char *p = strstr(run, "allowWrite"); p; p = strstr(p + 1, "allowWrite")) {
		const char *a = strchr(p, '['), *e = a ? strchr(a, ']') : NULL;

		if (!a || !e || a - p > 16)
			continue;
		for (const char *q = a; q < e;) {
			const char *s = memchr(q, '"', (size_t)(e - q)), *t;
			char *val;

			if (!s)
				break;
			t = memchr(s + 1, '"', (size_t)(e - s - 1));
			if (!t)
				break;
			val = util_xstrndup(s + 1, (size_t)(t - s - 1));
			if (val[0] == '/')
				told_to_write(x, val, true, "AWF filesystem.allowWrite");
			free(val);
			q = t + 1;
		}
	}
}

static void agent_step(struct lc *x, const struct awfs_wf_step *s)
{
	const char *summary = workflow_get(&s->env, "GITHUB_STEP_SUMMARY");

	if (summary && summary[0] == '/')
		told_to_write(x, summary, false, "GITHUB_STEP_SUMMARY");
	if (!s->run)
		return;
	each_flag(x, s->run, "--allowed-tools", false, "--allowed-tools", one_grants);
	each_flag(x, s->run, "--debug-file", false, "--debug-file", one_path);
	each_flag(x, s->run, "-o", false, "-o", one_path);
	each_flag(x, s->run, "--output", false, "--output", one_path);
	each_flag(x, s->run, "--session-state-dir", true, "--session-state-dir", one_path);
	each_flag(x, s->run, "--log-dir", true, "--log-dir", one_path);
	each_flag(x, s->run, "--add-dir", true, "--add-dir", one_path);
	each_flag(x, s->run, "--writable", false, "--writable", one_path);
	allow_write_json(x, s->run);
}

/* ------------------------------------------------------------ the steps after it */

static bool path_char(char c)
{
	return c && !isspace((unsigned char)c) && !strchr("'\"`;|&<>(),=$\\:", c);
}

/* The word before @at in @run, on its line, into @w (empty at a command's start). */
static void word_before(const char *run, const char *at, char *w, size_t size)
{
	const char *e = at, *b;

	while (e > run && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '"' || e[-1] == '\''))
		e--;
	b = e;
	while (b > run && !isspace((unsigned char)b[-1]) && !strchr(";|&(`", b[-1]))
		b--;
	snprintf(w, size, "%.*s", (int)(e - b), b);
}

/* What the script does with the path at @at: 'x' runs it, 'g' runs git in it, 0 else. */
static char use_of(const char *run, const char *at)
{
	static const char *const runners[] = { "bash", "sh", "source", ".", "node", "python", "python3",
						"perl", "exec", "sudo", "" };
	const char *line = at;
	char w[64];

	while (line > run && line[-1] != '\n')
		line--;
	word_before(run, at, w, sizeof(w));
	if (strcmp(w, "-C") == 0)
		return 'g';
	for (size_t i = 0; i < sizeof(runners) / sizeof(runners[0]); i++)
		if (strcmp(w, runners[i]) == 0)
			return 'x';
	if (strcmp(w, "cd") == 0 && strstr(at, "git ") && (!strchr(at, '\n') || strstr(at, "git ") < strchr(at, '\n')))
		return 'g';
	return 0;
}

/* Each path under the root in the script @run, through @fn. */
static void each_root_path(struct lc *x, const char *run, void (*fn)(struct lc *, const char *run, const char *at, const char *path))
{
	for (const char *p = strstr(run, x->root); p; p = strstr(p + 1, x->root)) {
		const char *e = p + x->rlen;
		char *path;

		if (p > run && path_char(p[-1]))
			continue;	/* inside another path: /x/tmp/gh-aw */
		if (*e && *e != '/' && path_char(*e))
			continue;	/* /tmp/gh-aw-other */
		while (path_char(*e))
			e++;
		path = util_xstrndup(p, (size_t)(e - p));
		fn(x, run, p, path);
		free(path);
	}
}

/* A path a step after the agent names: does it run it, or git in it? */
static void after_path(struct lc *x, const char *run, const char *at, const char *path)
{
	const struct awfs_state *st;
	const char *first;
	char use = use_of(run, at);

	note_unclassified(x, path);
	if (use == 'g') {
		char *git = util_xasprintf("%s/.git", path);

		st = state_of(x, git, &first);
		if (st && agent_writes(st))
			add(x, AWFS_FINDING_WARN, git,
			    util_xstrdup("this step runs git there after the agent, and the agent can write it (hooks, config): make it read_only"));
		free(git);
	} else if (use == 'x') {
		st = state_of(x, path, &first);
		if (st && agent_writes(st))
			add(x, AWFS_FINDING_WARN, path,
			    util_xstrdup("this step runs it after the agent, and the agent can write it: make it read_only"));
	}
}

/* A path a step before the agent names: only whether it is classified. */
static void before_path(struct lc *x, const char *run, const char *at, const char *path)
{
	(void)run;
	(void)at;
	note_unclassified(x, path);
}

/* actions/upload-artifact and actions/cache: the paths, one a line, of with: path */
static void after_uses(struct lc *x, const struct awfs_wf_step *s)
{
	const char *paths = workflow_get(&s->with, "path");
	const char *what;

	if (!s->uses || !paths)
		return;
	if (strncmp(s->uses, "actions/upload-artifact", 23) == 0)
		what = "uploads it as an artifact";
	else if (strncmp(s->uses, "actions/cache", 13) == 0)
		what = "saves it to the cache";
	else
		return;
	for (const char *p = paths; *p;) {
		size_t n = strcspn(p, "\n");
		char *one = util_xstrndup(p, n), *t = one;
		const char *first;
		const struct awfs_state *st;

		while (isspace((unsigned char)*t) || *t == '!')
			t++;
		t[strcspn(t, " \t\r")] = '\0';
		st = t[0] == '/' ? state_of(x, t, &first) : NULL;
		if (st) {
			note_unclassified(x, t);
			if (agent_writes(st))
				add(x, AWFS_FINDING_CONSUMED, t,
				    util_xasprintf("this step %s after the agent, and the agent can write it: what it left there (links included) is what the artifact's readers get",
						   what));
		}
		free(one);
		p += n;
		if (*p)
			p++;
	}
}

/* ------------------------------------------------------------ the workflow */

static bool is_agent_step(const struct awfs_wf_step *s)
{
	size_t n;

	if (s->id && (n = strlen(s->id)) >= 17 && strcmp(s->id + n - 17, "agentic_execution") == 0)
		return true;
	if (!s->name || strncmp(s->name, "Execute ", 8) != 0)
		return false;
	n = strlen(s->name);
	return (n > 12 && strcmp(s->name + n - 4, " CLI") == 0) ||
	       (n > 17 && strcmp(s->name + n - 9, " with AWF") == 0);
}

void lockcheck_run(const struct awfs_workflow *w, struct awfs_classifier *c, const struct awfs_policy *p,
		   const char *root, struct awfs_findings *out)
{
	char rbuf[4096];
	struct lc x = { .c = c, .p = p, .out = out };

	snprintf(rbuf, sizeof(rbuf), "%s", root ? root : p->root ? p->root : "/tmp/gh-aw");
	while (strlen(rbuf) > 1 && rbuf[strlen(rbuf) - 1] == '/')
		rbuf[strlen(rbuf) - 1] = '\0';
	x.root = rbuf;
	x.rlen = strlen(rbuf);
	for (size_t j = 0; j < w->njobs; j++) {
		const struct awfs_wf_job *job = &w->jobs[j];
		bool after = false;

		for (size_t i = 0; i < job->nsteps; i++) {
			const struct awfs_wf_step *s = &job->steps[i];
			char *where = util_xasprintf("%s:%d: job %s, step \"%s\"", w->file, s->line, job->name,
						     s->name ? s->name : s->id ? s->id : s->uses ? s->uses : "(unnamed)");

			x.where = where;
			if (is_agent_step(s)) {
				agent_step(&x, s);
				after = true;
			} else if (after) {
				if (s->run)
					each_root_path(&x, s->run, after_path);
				after_uses(&x, s);
			} else if (s->run) {
				each_root_path(&x, s->run, before_path);
			}
			free(where);
		}
	}
	for (size_t i = 0; i < x.nseen; i++)
		free(x.seen[i]);
	free(x.seen);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), grants_finding_cmp);
}

int lockcheck_file(const char *file, struct awfs_classifier *c, const struct awfs_policy *p, const char *root,
		   struct awfs_findings *out, char **err)
{
	struct awfs_workflow w;

	if (workflow_load(file, &w, err) < 0)
		return -1;
	lockcheck_run(&w, c, p, root, out);
	workflow_free(&w);
	return 0;
}
