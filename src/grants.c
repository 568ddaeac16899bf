/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * grants.c - the engine's tool-permission string, and whether the policy
 * lets the agent write where the engine says it may.
 *
 * Parsing. An engine emits its permissions as one string of entries
 * ("Bash(git:*),Read,Write(/tmp/gh-aw/cache-memory/x)"), split at commas and
 * newlines outside parentheses and quotes. Entries, the whole string and an
 * argument may each be wrapped in quotes. Inside parentheses a quote is plain
 * text, so an apostrophe in a Bash argument (Bash(echo it's)) is fine; the
 * price is that a quoted ")" there (Bash(echo ")")) closes the argument.
 * The string comes from a workflow file and will be fuzzed: it is scanned
 * iteratively (no recursion on its depth), every buffer is sized from
 * the input, and parsing is linear in its length (quotes are unwrapped at
 * most MAX_UNWRAP levels deep, each level one more scan).
 *
 * Checking. A grant's argument is read as a gitignore-like pattern: "*", "?"
 * and "[...]" within one component, "**" as a whole component for any number
 * of components, a leading "//" (Claude Code's absolute form) as "/". A path
 * is normalised lexically ("", "." and ".." components) and never touches
 * the host: the question is only what the policy would make of the paths the
 * pattern names. Below the root that is answered with the classifier itself
 * (classify_child on each literal component, then on a sample name for each
 * wildcard component), and with the rules still alive below the pattern's
 * literal part for the exceptions.
 *
 * Findings, per Write, Edit, MultiEdit or NotebookEdit grant:
 *  - no argument, "", "*" or "**": WARN at the root, listing what is
 *    writable, masked and read-only under it; the same for a pattern whose
 *    wildcards begin above the root and reach into it ("**" right below
 *    /tmp), or name the root itself ("*" right below /tmp);
 *  - relative (or "~"), outside the root, or only a directory above it
 *    ("/tmp"): NOTE, not checked;
 *  - a literal path under the root: ERROR naming what refuses it, or NOTE
 *    naming the allow_write rule. It stands for that path only; what is
 *    inside a directory is granted, and checked, as "**" below it;
 *  - a pattern under the root: a sample path (each wildcard component
 *    replaced by a name no rule names) decides ERROR or NOTE. An ERROR's
 *    text lists the allow_write rules the pattern meets, and nothing else is
 *    reported for that grant: every read-only rule it meets would repeat the
 *    error. When covered, each read_only or mask rule the pattern meets is a
 *    WARN at that rule's path (its leading components spelt as in the
 *    grant); two globs are assumed to meet, so a WARN may be too cautious.
 *    An ERROR's path is the whole pattern.
 *
 * Invariants: no I/O; findings come out sorted by (entry, path, severity,
 * text), without duplicates, so output is deterministic.
 */
#include "grants.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "log.h"

#define EXAMPLE "Write(/tmp/gh-aw/agent/**)"
/* The whole string, then an entry: "'\"Write(/a)\",Read'" is two levels. */
#define MAX_UNWRAP 2
/* Bytes of the input echoed in one message. */
#define ECHO_MAX 40

/* ------------------------------------------------------------ strings */

struct sbuf {
	char *s;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->cap - b->len <= n) {
		size_t cap = b->cap ? b->cap : 64;

		while (cap - b->len <= n)
			cap *= 2;
		b->s = util_xrealloc(b->s, cap);
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void sb_addf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_addf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = util_xvasprintf(fmt, ap);
	va_end(ap);
	sb_str(b, s);
	free(s);
}

/* The built string, owned by the caller; the buffer is reset. */
static char *sb_take(struct sbuf *b)
{
	char *s = b->s ? b->s : util_xstrdup("");

	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

/* ------------------------------------------------------------ parsing */

struct slice {
	size_t a, b;		/* s[a..b) of the input */
	unsigned unwrapped;	/* quote levels already removed around it */
};

struct slices {
	struct slice *v;
	size_t n, cap;
};

static void slices_push(struct slices *v, size_t a, size_t b, unsigned unwrapped)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->v = util_xrealloc(v->v, v->cap * sizeof(*v->v));
	}
	v->v[v->n++] = (struct slice){ a, b, unwrapped };
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_quote(char c)
{
	return c == '"' || c == '\'';
}

static void trim(const char *s, size_t *a, size_t *b)
{
	while (*a < *b && is_space(s[*a]))
		(*a)++;
	while (*b > *a && is_space(s[*b - 1]))
		(*b)--;
}

/* Whether s[a..b) is one quoted string: its opening quote closes at its last byte. */
static bool wrapped(const char *s, size_t a, size_t b)
{
	if (b - a < 2 || !is_quote(s[a]))
		return false;
	return memchr(s + a + 1, s[a], b - a - 1) == s + b - 1;
}

/* Append the entries of s[a..b): split at ',' and '\n' outside parentheses and quotes. */
static void split(const char *s, size_t a, size_t b, unsigned unwrapped, struct slices *out)
{
	size_t depth = 0, start = a;
	char quote = 0;

	for (size_t i = a; i < b; i++) {
		char ch = s[i];

		if (quote) {
			if (ch == quote)
				quote = 0;
		} else if (is_quote(ch) && depth == 0) {
			/* inside parentheses a quote is text: Bash(echo it's) is fine */
			quote = ch;
		} else if (ch == '(') {
			depth++;
		} else if (ch == ')') {
			/* a stray ")" is reported by parse_entry(); keep splitting after it */
			if (depth)
				depth--;
		} else if ((ch == ',' || ch == '\n') && depth == 0) {
			slices_push(out, start, i, unwrapped);
			start = i + 1;
		}
	}
	slices_push(out, start, b, unwrapped);
}

/* s[a..b), escaped and shortened for a message. Caller frees. */
static char *echo(const char *s, size_t a, size_t b)
{
	char buf[16 * ECHO_MAX + 4];
	size_t n = b - a;

	log_escape(s + a, n > ECHO_MAX ? ECHO_MAX : n, buf, sizeof(buf));
	return util_xasprintf("%s%s", buf, n > ECHO_MAX ? "..." : "");
}

static void err_quote(struct awfs_msgs *errs, size_t at, char q)
{
	msgs_add(errs, "column %zu: unterminated quote: the %c opened here is never closed. Expected a closing %c before the end of the entry. Example: %c%s%c",
		 at + 1, q, q, q, EXAMPLE, q);
}

static void err_close(struct awfs_msgs *errs, size_t at)
{
	msgs_add(errs, "column %zu: unbalanced parentheses: this \")\" has no matching \"(\". Expected the argument in one pair of parentheses right after the tool name. Example: %s",
		 at + 1, EXAMPLE);
}

/*
 * Parse one entry s[a..b) (trimmed, not empty, unwrapped) into @out.
 * Returns false when it is malformed; every problem is in @errs.
 */
static bool parse_entry(const char *s, size_t a, size_t b, struct awfs_grant *out,
			struct awfs_msgs *errs)
{
	static const char *const writers[] = { "Write", "Edit", "MultiEdit", "NotebookEdit" };
	size_t open = b, close = b, ta = a, tb, qpos = 0, depth;
	char quote = 0;
	bool ok = true;

	/* the tool name runs up to the first "(" outside quotes */
	for (size_t i = a; i < b && open == b; i++) {
		if (quote) {
			if (s[i] == quote)
				quote = 0;
		} else if (is_quote(s[i])) {
			quote = s[i];
			qpos = i;
		} else if (s[i] == '(') {
			open = i;
		} else if (s[i] == ')') {
			err_close(errs, i);
			return false;
		}
	}
	if (quote) {
		err_quote(errs, qpos, quote);
		return false;
	}
	tb = open;
	trim(s, &ta, &tb);
	if (ta == tb) {
		msgs_add(errs, "column %zu: empty tool name before \"(\". Expected the name of a tool such as Write, Edit or Bash. Example: %s",
			 open + 1, EXAMPLE);
		ok = false;
	}
	for (size_t i = ta; i < tb; i++) {
		unsigned char ch = (unsigned char)s[i];
		char *bad, *name;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '_' || ch == '-' || ch == '.' || ch == ':')
			continue;
		bad = echo(s, i, i + 1);
		name = echo(s, ta, tb);
		msgs_add(errs, "column %zu: invalid character \"%s\" in tool name \"%s\". Expected letters, digits, \"_\", \"-\", \".\" or \":\", and a comma or newline between entries. Example: Bash(git:*),Read,mcp__github__get_issue",
			 i + 1, bad, name);
		free(bad);
		free(name);
		ok = false;
		break;
	}

	if (open < b) {
		size_t ra, rb = b;

		depth = 1;
		for (size_t i = open + 1; i < b && close == b; i++) {
			if (s[i] == '(')
				depth++;
			else if (s[i] == ')' && --depth == 0)
				close = i;
		}
		if (close == b) {
			msgs_add(errs, "column %zu: unbalanced parentheses: this \"(\" is never closed. Expected a \")\" at the end of the argument. Example: %s",
				 open + 1, EXAMPLE);
			return false;
		}
		ra = close + 1;
		trim(s, &ra, &rb);
		if (ra < rb && s[ra] == ')') {
			err_close(errs, ra);
			return false;
		}
		if (ra < rb) {
			char *text = echo(s, ra, rb);

			msgs_add(errs, "column %zu: text after the closing parenthesis: \"%s\". Expected a comma or newline before the next entry. Example: %s,Read",
				 ra + 1, text, EXAMPLE);
			free(text);
			return false;
		}
	}
	if (!ok)
		return false;

	out->entry = strndup(s + a, b - a);
	out->tool = strndup(s + ta, tb - ta);
	if (!out->entry || !out->tool)
		abort();
	out->arg = NULL;
	if (open < b) {
		size_t aa = open + 1, ab = close;

		trim(s, &aa, &ab);
		if (wrapped(s, aa, ab)) {
			aa++;
			ab--;
		}
		out->arg = strndup(s + aa, ab - aa);
		if (!out->arg)
			abort();
	}
	out->writes = false;
	for (size_t i = 0; i < AWFS_ARRAY_LEN(writers); i++)
		out->writes = out->writes || strcmp(out->tool, writers[i]) == 0;
	return true;
}

int grants_parse(const char *s, struct awfs_grants *out, struct awfs_msgs *errs)
{
	struct slices todo = { 0 }, parts = { 0 };
	size_t cap = 0, nerrs = errs->n;

	out->v = NULL;
	out->n = 0;
	if (!s)
		s = "";
	/* a stack of entries still to read, the next one on top */
	split(s, 0, strlen(s), 0, &parts);
	for (size_t i = parts.n; i-- > 0;)
		slices_push(&todo, parts.v[i].a, parts.v[i].b, 0);
	while (todo.n) {
		struct slice e = todo.v[--todo.n];

		trim(s, &e.a, &e.b);
		if (e.a == e.b)
			continue;
		if (e.unwrapped < MAX_UNWRAP && wrapped(s, e.a, e.b)) {
			/* a quoted entry, or a quoted list of entries */
			parts.n = 0;
			split(s, e.a + 1, e.b - 1, e.unwrapped + 1, &parts);
			for (size_t i = parts.n; i-- > 0;)
				slices_push(&todo, parts.v[i].a, parts.v[i].b, parts.v[i].unwrapped);
			continue;
		}
		if (out->n == cap) {
			cap = cap ? cap * 2 : 8;
			out->v = util_xrealloc(out->v, cap * sizeof(*out->v));
		}
		if (parse_entry(s, e.a, e.b, &out->v[out->n], errs))
			out->n++;
	}
	free(todo.v);
	free(parts.v);
	if (errs->n > nerrs) {
		grants_free(out);
		return -1;
	}
	return 0;
}

void grants_free(struct awfs_grants *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->v[i].entry);
		free(g->v[i].tool);
		free(g->v[i].arg);
	}
	free(g->v);
	g->v = NULL;
	g->n = 0;
}

/* ------------------------------------------------------------ paths */

/* A path split into components; v[] points into buf. */
struct path {
	char *buf;
	const char **v;
	size_t n;
};

static bool is_dstar(const char *comp)
{
	return strcmp(comp, "**") == 0;
}

/*
 * Split @s at '/', lexically: "" and "." components are dropped, ".." drops
 * the one before it (never above "/"), and a run of "**" is one "**".
 */
static void path_split(const char *s, struct path *p)
{
	char *rest, *tok;

	p->buf = util_xstrdup(s);
	p->v = util_xcalloc(strlen(s) / 2 + 1, sizeof(*p->v));
	p->n = 0;
	rest = p->buf;
	while ((tok = strsep(&rest, "/"))) {
		if (!*tok || strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0) {
			if (p->n)
				p->n--;
			continue;
		}
		if (is_dstar(tok) && p->n && is_dstar(p->v[p->n - 1]))
			continue;
		p->v[p->n++] = tok;
	}
}

static void path_free(struct path *p)
{
	free(p->buf);
	free(p->v);
}

/* Append "/a/b/c" for @root's components followed by @v, or "/" when there are none. */
static void sb_path(struct sbuf *b, const struct path *root, const char *const *v, size_t n,
		    char *const *w, size_t m)
{
	for (size_t i = 0; i < root->n; i++)
		sb_addf(b, "/%s", root->v[i]);
	for (size_t i = 0; i < n; i++)
		sb_addf(b, "/%s", v[i]);
	for (size_t i = 0; i < m; i++)
		sb_addf(b, "/%s", w[i]);
	if (root->n + n + m == 0)
		sb_str(b, "/");
}

/*
 * A name that @pat matches and no policy is likely to name: each "*" and
 * "?" becomes "\x01", each "[...]" the first byte it accepts. Falls back to
 * the pattern itself for what fnmatch reads otherwise. Caller frees.
 */
static char *sample(const char *pat)
{
	struct sbuf b = { 0 };

	for (size_t i = 0; pat[i]; i++) {
		if (pat[i] == '*' || pat[i] == '?') {
			sb_str(&b, "\x01");
		} else if (pat[i] == '\\' && pat[i + 1]) {
			sb_add(&b, &pat[++i], 1);
		} else if (pat[i] == '[') {
			size_t j = i + 1;
			char *set;
			int pick = 0;

			if (pat[j] == '!' || pat[j] == '^')
				j++;
			if (pat[j] == ']')
				j++;
			while (pat[j] && pat[j] != ']')
				j++;
			if (!pat[j]) {
				sb_add(&b, "[", 1);	/* fnmatch reads an unclosed "[" literally */
				continue;
			}
			set = strndup(pat + i, j + 1 - i);
			if (!set)
				abort();
			for (int c = 1; c < 256 && !pick; c++) {
				char one[2] = { (char)c, '\0' };

				if (c != '/' && fnmatch(set, one, 0) == 0)
					pick = c;
			}
			free(set);
			if (pick) {
				char one = (char)pick;

				sb_add(&b, &one, 1);
			}
			i = j;
		} else {
			sb_add(&b, &pat[i], 1);
		}
	}
	if (!b.s || fnmatch(pat, b.s, 0) != 0) {
		free(b.s);
		return util_xstrdup(pat);
	}
	return b.s;
}

/* Whether grant component @g and rule component @q can name the same entry. */
static bool comp_overlap(const char *g, const char *q, bool q_literal)
{
	if (q_literal)
		return fnmatch(g, q, 0) == 0;
	if (!policy_is_glob(g))
		return fnmatch(q, g, 0) == 0;
	return true;	/* two globs: assume they meet */
}

/*
 * Whether some path that @g (grant components, "**" for any number) names
 * begins with a path that @q (a rule's components, one each) names: then the
 * rule decides part of what the grant covers. A table of reachable
 * (grant position) sets, one row per rule component, so no backtracking.
 */
static bool overlaps(const char *const *g, size_t ng, char *const *q, const bool *qlit, size_t nq)
{
	bool *cur = util_xcalloc(ng + 1, sizeof(*cur)), *next = util_xcalloc(ng + 1, sizeof(*next));
	bool any = true;

	cur[0] = true;
	for (size_t j = 0; j <= nq && any; j++) {
		bool *t;

		/* "**" may also stand for no component */
		for (size_t i = 0; i < ng; i++)
			if (cur[i] && is_dstar(g[i]))
				cur[i + 1] = true;
		if (j == nq)
			break;
		memset(next, 0, (ng + 1) * sizeof(*next));
		any = false;
		for (size_t i = 0; i < ng; i++) {
			if (!cur[i])
				continue;
			if (is_dstar(g[i]))
				any = next[i] = true;
			else if (comp_overlap(g[i], q[j], qlit[j]))
				any = next[i + 1] = true;
		}
		t = cur;
		cur = next;
		next = t;
	}
	free(cur);
	free(next);
	return any;
}

/* ------------------------------------------------------------ checking */

struct check {
	struct awfs_classifier *c;
	const struct awfs_policy *p;
	struct path root;
	char *root_str;
	struct awfs_findings *out;
	size_t cap;
};

static void add(struct check *x, enum awfs_severity sev, const char *entry, char *path, char *text)
{
	struct awfs_findings *f = x->out;

	if (f->n == x->cap) {
		x->cap = x->cap ? x->cap * 2 : 16;
		f->v = util_xrealloc(f->v, x->cap * sizeof(*f->v));
	}
	f->v[f->n++] = (struct awfs_finding){ sev, util_xstrdup(entry), path, text };
}

/* Why rule @r (read_only or mask) keeps a path from being written (explain.h). */
static void why_rule(struct sbuf *b, const struct awfs_policy *p, const struct awfs_rule *r)
{
	char why[8192];

	explain_rule(p, r, why, sizeof(why));
	sb_str(b, why);
}

/* Why a path in state @s is not writable, as a denial line says it (explain.h). */
static void why_state(struct sbuf *b, const struct awfs_policy *p, const struct awfs_state *s)
{
	char why[8192];

	explain_state(p, s, why, sizeof(why));
	sb_str(b, why);
}

static void covered(struct sbuf *b, const struct awfs_policy *p, const struct awfs_state *s)
{
	const struct awfs_rule *r = classify_rule(s);

	sb_addf(b, "covered by allow_write rule \"%s\" (%s:%d)", r ? r->path : ".", p->file,
		r ? r->line : 0);
}

/* The rules of class @cls as absolute paths under the root, comma-separated. */
static size_t list_rules(struct sbuf *b, const struct check *x, enum awfs_class cls)
{
	size_t n = 0;

	for (size_t i = 0; i < x->p->nrules; i++) {
		const struct awfs_rule *r = &x->p->rules[i];

		if (r->cls != cls)
			continue;
		sb_str(b, n++ ? ", " : "");
		sb_path(b, &x->root, NULL, 0, r->comps, r->ncomps);
	}
	return n;
}

/*
 * For a grant that covers the whole root (or more): "LEAD, but under ROOT
 * only these are writable: ...; masked: ...; read-only: ...; everything else
 * is read-only".
 */
static char *summary(const struct check *x, const char *lead)
{
	struct sbuf b = { 0 }, w = { 0 }, m = { 0 }, ro = { 0 };
	size_t nw = list_rules(&w, x, AWFS_CLASS_WRITE);
	size_t nm = list_rules(&m, x, AWFS_CLASS_MASK);
	size_t nro = list_rules(&ro, x, AWFS_CLASS_RO);

	if (classify_class(classify_root(x->c)) == AWFS_CLASS_WRITE) {
		sb_addf(&b, "%s; under %s everything is writable (allow_write rule \".\")", lead, x->root_str);
		if (nm)
			sb_addf(&b, ", except masked: %s", m.s);
		if (nro)
			sb_addf(&b, "%s read-only: %s", nm ? ";" : ", except", ro.s);
	} else {
		if (nw)
			sb_addf(&b, "%s, but under %s only these are writable: %s", lead, x->root_str, w.s);
		else
			sb_addf(&b, "%s, but nothing under %s is writable", lead, x->root_str);
		if (nm)
			sb_addf(&b, "; masked: %s", m.s);
		if (nro)
			sb_addf(&b, "; read-only: %s", ro.s);
		sb_str(&b, "; everything else is read-only");
		if (x->p->unclassified == AWFS_UNCLASSIFIED_MASK)
			sb_str(&b, ", and top-level entries no rule names are masked");
	}
	free(w.s);
	free(m.s);
	free(ro.s);
	return sb_take(&b);
}

/* A grant whose path is under the root: @rel are its components below the root. */
static void check_under(struct check *x, const struct awfs_grant *g, const struct path *rel)
{
	const struct awfs_state *base = classify_root(x->c), *s;
	const struct awfs_rule *const *alive;
	struct sbuf path = { 0 }, text = { 0 }, wlist = { 0 };
	size_t k = 0, nalive, d, nw = 0, nexc = 0;
	const struct awfs_rule **exc;

	while (k < rel->n && !policy_is_glob(rel->v[k]))
		base = classify_child(x->c, base, rel->v[k++]);
	sb_path(&path, &x->root, rel->v, rel->n, NULL, 0);

	if (k == rel->n) {
		/*
		 * One path, a file or a directory. An engine may read a
		 * directory grant as covering what is inside (as gitignore
		 * does), so the rules that refuse parts below it are named too.
		 */
		if (classify_class(base) == AWFS_CLASS_WRITE) {
			covered(&text, x->p, base);
			add(x, AWFS_FINDING_NOTE, g->entry, sb_take(&path), sb_take(&text));
			nalive = classify_alive(base, &alive);
			d = classify_depth(base);
			for (size_t i = 0; i < nalive; i++) {
				const struct awfs_rule *r = alive[i];

				if (r->cls == AWFS_CLASS_WRITE)
					continue;
				sb_path(&path, &x->root, rel->v, k, r->comps + d, r->ncomps - d);
				sb_str(&text, r->exception ? "an exception the policy makes on purpose (exception = true), not writable although the grant may cover it (what is inside a directory): "
							   : "not writable although the grant may cover it (what is inside a directory): ");
				why_rule(&text, x->p, r);
				add(x, r->exception ? AWFS_FINDING_ACK : AWFS_FINDING_EXCEPT, g->entry, sb_take(&path),
				    sb_take(&text));
			}
		} else {
			sb_str(&text, "not writable although the grant covers it: ");
			why_state(&text, x->p, base);
			add(x, AWFS_FINDING_ERROR, g->entry, sb_take(&path), sb_take(&text));
		}
		return;
	}

	/* what an arbitrary new path the pattern names would be */
	s = base;
	for (size_t i = k; i < rel->n; i++) {
		char *name = sample(rel->v[i]);

		s = classify_child(x->c, s, name);
		free(name);
	}

	/* the rules below the literal part that decide some of what it names */
	nalive = classify_alive(base, &alive);
	d = classify_depth(base);
	if (nalive && d != k)
		abort();	/* a state with live rules stands for exactly its path */
	exc = util_xcalloc(nalive, sizeof(*exc));
	for (size_t i = 0; i < nalive; i++) {
		const struct awfs_rule *r = alive[i];

		if (!overlaps(rel->v + k, rel->n - k, r->comps + d, r->literal + d, r->ncomps - d))
			continue;
		if (r->cls == AWFS_CLASS_WRITE) {
			sb_str(&wlist, nw++ ? ", " : "");
			sb_path(&wlist, &x->root, rel->v, k, r->comps + d, r->ncomps - d);
		} else {
			exc[nexc++] = r;
		}
	}

	if (classify_class(s) != AWFS_CLASS_WRITE) {
		/*
		 * The grant is broken as a whole; the rules that refuse parts of
		 * it would only repeat that, so name what would work instead.
		 */
		sb_str(&text, "not writable although the grant covers it: ");
		why_state(&text, x->p, s);
		if (nw)
			sb_addf(&text, "; of what it covers only these are writable: %s", wlist.s);
		add(x, AWFS_FINDING_ERROR, g->entry, sb_take(&path), sb_take(&text));
	} else {
		covered(&text, x->p, s);
		if (nexc)
			sb_addf(&text, ", with %zu exception%s", nexc, nexc == 1 ? "" : "s");
		add(x, AWFS_FINDING_NOTE, g->entry, sb_take(&path), sb_take(&text));
		for (size_t i = 0; i < nexc; i++) {
			const struct awfs_rule *r = exc[i];

			sb_path(&path, &x->root, rel->v, k, r->comps + d, r->ncomps - d);
			sb_str(&text, r->exception ? "an exception the policy makes on purpose (exception = true), not writable although the grant covers it: "
						   : "not writable although the grant covers it: ");
			why_rule(&text, x->p, r);
			add(x, r->exception ? AWFS_FINDING_ACK : AWFS_FINDING_EXCEPT, g->entry, sb_take(&path),
			    sb_take(&text));
		}
	}
	free(exc);
	free(wlist.s);
	free(path.s);
	free(text.s);
}

enum reach {
	REACH_OUTSIDE,		/* names nothing at or below the root */
	REACH_ANCESTOR,		/* names only directories above the root */
	REACH_ROOT,		/* names the root itself, through a wildcard */
	REACH_WIDER,		/* names paths below the root, and others */
	REACH_UNDER,		/* its literal part is the root or below it */
};

/* Where absolute path @gp lies relative to the root @r. */
static enum reach reach(const struct path *gp, const struct path *r)
{
	size_t i;

	for (i = 0; i < r->n && i < gp->n; i++)
		if (policy_is_glob(gp->v[i]) || strcmp(gp->v[i], r->v[i]) != 0)
			break;
	if (i == r->n)
		return REACH_UNDER;
	for (i = 0;; i++) {
		if (i == r->n)
			return i == gp->n ? REACH_ROOT : REACH_WIDER;
		if (i == gp->n)
			return REACH_ANCESTOR;
		if (is_dstar(gp->v[i]))
			return REACH_WIDER;
		if (policy_is_glob(gp->v[i]) ? fnmatch(gp->v[i], r->v[i], 0) != 0
					     : strcmp(gp->v[i], r->v[i]) != 0)
			return REACH_OUTSIDE;
	}
}

static void check_grant(struct check *x, const struct awfs_grant *g)
{
	const char *arg = g->arg ? g->arg : "";
	struct path gp, rel;
	struct sbuf b = { 0 };

	if (!*arg || strcmp(arg, "*") == 0 || strcmp(arg, "**") == 0) {
		add(x, AWFS_FINDING_BROAD, g->entry, util_xstrdup(x->root_str),
		    summary(x, "the grant covers every path"));
		return;
	}
	if (arg[0] != '/') {
		add(x, AWFS_FINDING_NOTE, g->entry, util_xstrdup(arg),
		    util_xstrdup("relative to the engine's working directory; not checked against the mount root"));
		return;
	}
	path_split(arg, &gp);
	switch (reach(&gp, &x->root)) {
	case REACH_UNDER:
		rel = gp;
		rel.v += x->root.n;
		rel.n -= x->root.n;
		check_under(x, g, &rel);
		break;
	case REACH_WIDER:
		add(x, AWFS_FINDING_BROAD, g->entry, util_xstrdup(x->root_str),
		    summary(x, "the grant reaches beyond the mount root"));
		break;
	case REACH_ROOT:
		add(x, AWFS_FINDING_BROAD, g->entry, util_xstrdup(x->root_str),
		    summary(x, "the grant names the mount root itself"));
		break;
	case REACH_ANCESTOR:
		sb_path(&b, &gp, NULL, 0, NULL, 0);
		add(x, AWFS_FINDING_NOTE, g->entry, sb_take(&b),
		    util_xasprintf("names a directory above the mount root, not what is below it; not checked"));
		break;
	case REACH_OUTSIDE:
		sb_path(&b, &gp, NULL, 0, NULL, 0);
		add(x, AWFS_FINDING_NOTE, g->entry, sb_take(&b),
		    util_xstrdup("outside the mount root; not checked"));
		break;
	}
	path_free(&gp);
}

int grants_finding_cmp(const void *pa, const void *pb)
{
	const struct awfs_finding *a = pa, *b = pb;
	int r;

	if ((r = strcmp(a->entry, b->entry)) != 0 || (r = strcmp(a->path, b->path)) != 0)
		return r;
	if (a->severity != b->severity)
		return a->severity < b->severity ? -1 : 1;
	return strcmp(a->text, b->text);
}

static void finding_free(struct awfs_finding *f)
{
	free(f->entry);
	free(f->path);
	free(f->text);
}

void grants_check(const struct awfs_grants *g, struct awfs_classifier *c,
		  const struct awfs_policy *p, const char *root, struct awfs_findings *out)
{
	struct check x = { .c = c, .p = p, .out = out, .cap = out->n };
	struct sbuf b = { 0 };
	size_t n = 0;

	if (!root)
		root = p->root ? p->root : "/";
	path_split(root, &x.root);
	sb_path(&b, &x.root, NULL, 0, NULL, 0);
	x.root_str = sb_take(&b);
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].writes)
			check_grant(&x, &g->v[i]);
	path_free(&x.root);
	free(x.root_str);

	if (!out->n)
		return;
	/* the same entry twice gives the same findings twice: keep one */
	qsort(out->v, out->n, sizeof(*out->v), grants_finding_cmp);
	for (size_t i = 0; i < out->n; i++) {
		if (n && grants_finding_cmp(&out->v[n - 1], &out->v[i]) == 0)
			finding_free(&out->v[i]);
		else
			out->v[n++] = out->v[i];
	}
	out->n = n;
}

void grants_findings_free(struct awfs_findings *f)
{
	for (size_t i = 0; i < f->n; i++)
		finding_free(&f->v[i]);
	free(f->v);
	f->v = NULL;
	f->n = 0;
}
