/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * review.c - what the agent changed (review.h says how it is worked out).
 */
#include "config.h"

#include "review.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

/* ------------------------------------------------------------ one record */

#define FIELDS 32

/* A record's top-level members: strings decoded, numbers and booleans as written, others NULL. */
struct rec {
	char *key[FIELDS];
	char *val[FIELDS];
	size_t n;
};

static void rec_free(struct rec *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->key[i]);
		free(r->val[i]);
	}
	r->n = 0;
}

static const char *get(const struct rec *r, const char *key)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->key[i], key) == 0)
			return r->val[i];
	return NULL;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

static void put_utf8(struct util_str *s, unsigned long cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp, n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6)), b[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12)), b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
	} else {
		b[0] = (char)(0xf0 | (cp >> 18)), b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), b[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
	}
	util_str_put(s, b, n);
}

static bool hex4(const char *p, unsigned long *v)
{
	char t[5];
	char *end;

	if (strnlen(p, 4) < 4)
		return false;
	memcpy(t, p, 4);
	t[4] = '\0';
	if (strspn(t, "0123456789abcdefABCDEF") != 4)
		return false;
	*v = strtoul(t, &end, 16);
	return true;
}

/* A JSON string at @p (its opening quote); the decoded text in @out, or NULL. */
static const char *string(const char *p, char **out)
{
	struct util_str s = { 0 };

	util_str_put(&s, "", 0);
	for (p++; *p && *p != '"'; p++) {
		unsigned long cp, lo;

		if (*p != '\\') {
			util_str_put(&s, p, 1);
			continue;
		}
		switch (*++p) {
		case 'b': util_str_put(&s, "\b", 1); break;
		case 'f': util_str_put(&s, "\f", 1); break;
		case 'n': util_str_put(&s, "\n", 1); break;
		case 'r': util_str_put(&s, "\r", 1); break;
		case 't': util_str_put(&s, "\t", 1); break;
		case 'u':
			if (!hex4(p + 1, &cp))
				goto bad;
			p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && p[1] == '\\' && p[2] == 'u' && hex4(p + 3, &lo) &&
			    lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			put_utf8(&s, cp);
			break;
		case '"': case '\\': case '/':
			util_str_put(&s, p, 1);
			break;
		default:
			goto bad;
		}
	}
	if (*p != '"')
		goto bad;
	*out = s.s;
	return p + 1;
bad:
	free(s.s);
	return NULL;
}

/* Past the value at @p (any kind); NULL if it is malformed. */
static const char *skip_value(const char *p)
{
	int depth = 0;

	p = skip_ws(p);
	do {
		if (*p == '"') {
			char *t;

			p = string(p, &t);
			if (!p)
				return NULL;
			free(t);
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if (*p == '}' || *p == ']')
			depth--;
		else if (!*p)
			return NULL;
		else if (depth == 0 && (*p == ',' ))
			return p;
		if (depth < 0)
			return p;	/* the enclosing object's end */
		p++;
	} while (depth > 0 || (*p && *p != ',' && *p != '}'));
	return p;
}

/* Parse the object on @line into @r; false if it is not one. */
static bool parse(const char *line, struct rec *r)
{
	const char *p = skip_ws(line);

	r->n = 0;
	if (*p++ != '{')
		return false;
	p = skip_ws(p);
	if (*p == '}')
		return true;
	for (;;) {
		char *key = NULL, *val = NULL;
		const char *v;

		p = skip_ws(p);
		if (*p != '"' || !(p = string(p, &key)))
			return false;
		p = skip_ws(p);
		if (*p++ != ':') {
			free(key);
			return false;
		}
		v = skip_ws(p);
		if (*v == '"') {
			p = string(v, &val);
		} else {
			p = skip_value(v);
			if (p && *v != '{' && *v != '[')
				val = util_xstrndup(v, (size_t)(p - v));
		}
		if (!p) {
			free(key);
			return false;
		}
		if (r->n < FIELDS) {
			r->key[r->n] = key;
			r->val[r->n++] = val;
		} else {
			free(key);
			free(val);
		}
		p = skip_ws(p);
		if (*p == '}')
			return true;
		if (*p++ != ',')
			return false;
	}
}

/* ------------------------------------------------------------ the model */

/* What a file is, shared by its names (a hard link the record saw made is one object). */
struct obj {
	char *sha;		/* of its last write */
	uint64_t size;
	bool content, meta, unhashed;
	struct obj *next;	/* every object, for freeing */
};

struct node {
	char *path;		/* where it is now, relative to the mount point */
	char *orig;		/* where it was before the agent, or NULL: the agent made it */
	char *kind;		/* as the record says what was made, or NULL */
	char *target;		/* a symlink's */
	struct obj *o;
	bool live;
};

/* An open-addressing table of strings to nodes (or, for "gone", to nothing). */
struct table {
	char **keys;
	void **vals;
	size_t cap, n, used;	/* used: slots ever taken (tombstones included) */
};

static char tomb[1];

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static size_t slot(const struct table *t, const char *k)
{
	size_t i = (size_t)hash(k) & (t->cap - 1);
	size_t free_at = SIZE_MAX;

	while (t->keys[i]) {
		if (t->keys[i] == tomb) {
			if (free_at == SIZE_MAX)
				free_at = i;
		} else if (strcmp(t->keys[i], k) == 0) {
			return i;
		}
		i = (i + 1) & (t->cap - 1);
	}
	return free_at != SIZE_MAX ? free_at : i;
}

static void t_grow(struct table *t)
{
	struct table o = *t;

	t->cap = o.cap ? o.cap * 2 : 64;
	while (t->cap < (o.n + 1) * 2)
		t->cap *= 2;
	t->keys = util_xcalloc(t->cap, sizeof(*t->keys));
	t->vals = util_xcalloc(t->cap, sizeof(*t->vals));
	t->n = t->used = 0;
	for (size_t i = 0; i < o.cap; i++)
		if (o.keys[i] && o.keys[i] != tomb) {
			size_t j = slot(t, o.keys[i]);

			t->keys[j] = o.keys[i];
			t->vals[j] = o.vals[i];
			t->n++, t->used++;
		}
	free(o.keys);
	free(o.vals);
}

static bool t_has(const struct table *t, const char *k, void *v)
{
	size_t i;

	if (!t->cap)
		return false;
	i = slot(t, k);
	if (!t->keys[i] || t->keys[i] == tomb)
		return false;
	if (v)
		*(void **)v = t->vals[i];
	return true;
}

static void t_put(struct table *t, const char *k, void *v)
{
	size_t i;

	if ((t->used + 1) * 2 > t->cap)
		t_grow(t);
	i = slot(t, k);
	if (!t->keys[i] || t->keys[i] == tomb) {
		if (!t->keys[i])
			t->used++;
		t->keys[i] = util_xstrdup(k);
		t->n++;
	}
	t->vals[i] = v;
}

static void t_del(struct table *t, const char *k)
{
	size_t i;

	if (!t->cap)
		return;
	i = slot(t, k);
	if (t->keys[i] && t->keys[i] != tomb) {
		free(t->keys[i]);
		t->keys[i] = tomb;
		t->n--;
	}
}

struct model {
	uint64_t unattributed;	/* changes to files the record knows no current name of */
	struct obj *objs;
	struct table ids;	/* "dev:ino" -> the obj the record last saw at it */
	struct table cur;	/* path now -> node */
	struct table gone;	/* original paths whose object left them */
	struct node **all;	/* every node made, for freeing */
	size_t nall;
};

static struct node *node_new(struct model *m, const char *path, const char *orig)
{
	struct node *n = util_xcalloc(1, sizeof(*n));

	n->path = util_xstrdup(path);
	n->orig = orig ? util_xstrdup(orig) : NULL;
	n->live = true;
	n->o = util_xcalloc(1, sizeof(*n->o));
	n->o->next = m->objs;
	m->objs = n->o;
	m->all = util_xrealloc(m->all, (m->nall + 1) * sizeof(*m->all));
	m->all[m->nall++] = n;
	t_put(&m->cur, path, n);
	return n;
}

/* @a then @b, allocated. */
static char *concat(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 1;
	char *s = util_xcalloc(1, n);

	snprintf(s, n, "%s%s", a, b);
	return s;
}

/* @path's parent (NULL for a top-level name), allocated. */
static char *parent_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? util_xstrndup(path, (size_t)(s - path)) : NULL;
}

static bool at_or_below(const char *path, const char *top)
{
	size_t n = strlen(top);

	return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Where what @path holds was before the agent, allocated; NULL: the agent made it. */
static char *origin(const struct model *m, const char *path)
{
	char *a = util_xstrdup(path);

	while (a) {
		struct node *n;
		char *up;

		if (t_has(&m->cur, a, &n)) {
			char *o = NULL;

			if (n->orig)
				o = concat(n->orig, path + strlen(a));
			free(a);
			return o;
		}
		up = parent_of(a);
		free(a);
		a = up;
	}
	return util_xstrdup(path);
}

static void gone_add(struct model *m, const char *o)
{
	if (o)
		t_put(&m->gone, o, NULL);
}

/* Take the nodes at and below @path out of the table; with @dest, put them back under @dest. */
static void move_tree(struct model *m, const char *path, const char *dest)
{
	size_t plen = strlen(path), k = 0;
	struct node **moved = NULL;

	for (size_t i = 0; i < m->nall; i++) {
		struct node *n = m->all[i];

		if (n->live && at_or_below(n->path, path)) {
			t_del(&m->cur, n->path);
			moved = util_xrealloc(moved, (k + 1) * sizeof(*moved));
			moved[k++] = n;
		}
	}
	for (size_t i = 0; i < k; i++) {
		struct node *n = moved[i];
		char *np;

		if (!dest) {
			n->live = false;
			continue;
		}
		np = concat(dest, n->path + plen);
		free(n->path);
		n->path = np;
		t_put(&m->cur, np, n);
	}
	free(moved);
}

static struct node *node_at(struct model *m, const char *path)
{
	struct node *n;
	char *o;

	if (t_has(&m->cur, path, &n))
		return n;
	o = origin(m, path);
	n = node_new(m, path, o);
	free(o);
	return n;
}

static void op_remove(struct model *m, const char *p)
{
	char *o = origin(m, p);

	move_tree(m, p, NULL);
	gone_add(m, o);
	free(o);
}

static void op_rename(struct model *m, const char *a, const char *b, bool replaced, bool exchange)
{
	char *oa = origin(m, a), *ob = origin(m, b);
	const char *tmp = "/exchange";	/* no path is absolute here */

	if (replaced && !exchange) {
		move_tree(m, b, NULL);
		gone_add(m, ob);
	}
	/* a node at each end that moves, carrying where it came from */
	if (!t_has(&m->cur, a, NULL))
		node_new(m, a, oa);
	if (exchange) {
		if (!t_has(&m->cur, b, NULL))
			node_new(m, b, ob);
		move_tree(m, a, tmp);
		move_tree(m, b, a);
		move_tree(m, tmp, b);
		gone_add(m, ob);
	} else {
		move_tree(m, a, b);
	}
	gone_add(m, oa);
	free(oa);
	free(ob);
}

static char *dup_or_null(const char *s)
{
	return s ? util_xstrdup(s) : NULL;
}

/* Whether @path is not where its object is now (/proc's name for an fd whose name was removed). */
static bool stale_path(const char *path)
{
	size_t n = strlen(path);

	return n > 10 && strcmp(path + n - 10, " (deleted)") == 0;
}

/*
 * The object @id (a record's "dev:ino") is what @n holds now: one object
 * for all its names. @fresh: a new object (create, mkdir...): the number
 * may be an old one's, reused.
 */
static void bind(struct model *m, struct node *n, const char *id, bool fresh)
{
	struct obj *o;

	if (!id || !n)
		return;
	if (!fresh && t_has(&m->ids, id, &o) && o != n->o) {
		/* what the node knew of the content, unless the object knows more */
		if (!o->content && n->o->content) {
			o->content = true;
			free(o->sha);
			o->sha = dup_or_null(n->o->sha);
			o->size = n->o->size;
			o->unhashed = n->o->unhashed;
		}
		o->meta = o->meta || n->o->meta;
		n->o = o;
		return;
	}
	t_put(&m->ids, id, n->o);
}

/* Apply one change record (@rel, @rel2: its paths, relative). */
static void apply(struct model *m, const struct rec *r, const char *op, const char *rel, const char *rel2)
{
	const char *id = get(r, "object");
	struct node *n;

	if (!strcmp(op, "create") || !strcmp(op, "mkdir") || !strcmp(op, "mknod") || !strcmp(op, "symlink")) {
		move_tree(m, rel, NULL);	/* (nothing can be there: the host's create succeeded) */
		n = node_new(m, rel, NULL);
		n->kind = dup_or_null(get(r, "kind"));
		n->target = dup_or_null(get(r, "target"));
		bind(m, n, id, true);
	} else if (!strcmp(op, "link") && rel2) {
		struct node *src;

		src = node_at(m, rel);
		move_tree(m, rel2, NULL);
		n = node_new(m, rel2, NULL);
		n->kind = dup_or_null(get(r, "kind"));
		n->o = src->o;	/* one file, two names: a write through either changes both */
		bind(m, n, id, false);
	} else if (!strcmp(op, "unlink") || !strcmp(op, "rmdir")) {
		op_remove(m, rel);
	} else if ((!strcmp(op, "rename") || !strcmp(op, "exchange")) && rel2) {
		const char *rp = get(r, "replaced");

		op_rename(m, rel, rel2, rp && !strcmp(rp, "true"), !strcmp(op, "exchange"));
		bind(m, t_has(&m->cur, rel2, &n) ? n : NULL, id, false);
	} else if (!strcmp(op, "write") || !strcmp(op, "truncate") || !strcmp(op, "setattr") ||
		   !strcmp(op, "xattr")) {
		struct obj *o = NULL;

		/* the object, found by its number where the name is stale, else by its name */
		if (!stale_path(rel)) {
			n = node_at(m, rel);
			bind(m, n, id, false);
			o = n->o;
		} else if (!id || !t_has(&m->ids, id, &o)) {
			m->unattributed++;	/* written through a removed name; its other names are unknown */
			return;
		}
		if (!strcmp(op, "setattr")) {
			o->meta = o->meta || get(r, "mode") || get(r, "owner") || get(r, "group");
		} else if (!strcmp(op, "xattr")) {
			o->meta = true;
		} else {
			o->content = true;
			if (!strcmp(op, "write")) {
				const char *sha = get(r, "sha256"), *size = get(r, "size");

				free(o->sha);
				o->sha = dup_or_null(sha);
				o->size = size ? strtoull(size, NULL, 10) : 0;
				o->unhashed = !sha && get(r, "unhashed");
			}
		}
	}
}

/* ------------------------------------------------------------ the report */

enum what { CREATED, MODIFIED, RENAMED, REMOVED };
static const char *const what_word[] = { "created", "modified", "renamed", "removed" };

struct item {
	enum what what;
	const char *path;	/* now (removed: before) */
	const char *from;	/* renamed: before */
	const struct node *n;	/* NULL for removed */
	bool replaced;		/* it took the place of an object that was there */
};

static int by_path(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (int)x->what - (int)y->what;
}

/* The top-level entry of @path: its first component. */
static size_t top_len(const char *path)
{
	return strcspn(path, "/");
}

/* @s for a terminal: printable ASCII and UTF-8 as it is, a control or a bare byte \xNN. */
static void put_text(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
}

static void text_item(FILE *out, const struct item *it)
{
	fprintf(out, "  %-9s ", what_word[it->what]);
	if (it->from) {
		put_text(out, it->from);
		fputs(" -> ", out);
	}
	put_text(out, it->path);
	if (it->n) {
		const struct node *n = it->n;
		bool any = false;

		fputs(" (", out);
		if (n->kind && it->what == CREATED) {
			fprintf(out, "%s", n->kind);
			any = true;
		}
		if (n->target) {
			fputs(any ? ", to " : "to ", out);
			put_text(out, n->target);
			any = true;
		}
		if (it->replaced) {
			fputs(any ? ", replaced" : "replaced", out);
			any = true;
		}
		if (n->o->content && n->o->sha) {
			fprintf(out, "%s%llu bytes, sha256 %s", any ? ", " : "", (unsigned long long)n->o->size, n->o->sha);
			any = true;
		} else if (n->o->content) {
			fprintf(out, "%scontent changed, not hashed", any ? ", " : "");
			any = true;
		}
		if (n->o->meta && it->what != CREATED) {
			fprintf(out, "%smode, owner or xattrs changed", any ? ", " : "");
			any = true;
		}
		if (it->what == RENAMED && !n->o->content && !n->o->meta && !any)
			fputs("unchanged", out);
		fputs(")", out);
	}
	fputc('\n', out);
}

static void json_item(struct awfs_json *j, const struct item *it)
{
	json_obj_begin(j);
	json_key(j, "change");
	json_str(j, what_word[it->what]);
	json_key(j, "path");
	json_str(j, it->path);
	if (it->from) {
		json_key(j, "from");
		json_str(j, it->from);
	}
	if (it->n) {
		const struct node *n = it->n;

		if (n->kind) {
			json_key(j, "kind");
			json_str(j, n->kind);
		}
		if (n->target) {
			json_key(j, "target");
			json_str(j, n->target);
		}
		json_key(j, "replaced");
		json_bool(j, it->replaced);
		json_key(j, "content");
		json_bool(j, n->o->content);
		if (n->o->sha) {
			json_key(j, "size");
			json_uint(j, n->o->size);
			json_key(j, "sha256");
			json_str(j, n->o->sha);
		}
		json_key(j, "meta");
		json_bool(j, n->o->meta);
	}
	json_obj_end(j);
}

static char *relative(const char *path, const char *mnt)
{
	size_t n = mnt ? strlen(mnt) : 0;

	if (n && strncmp(path, mnt, n) == 0 && path[n] == '/')
		return util_xstrdup(path + n + 1);
	return util_xstrdup(path);	/* not under it: as recorded */
}

int review_changes(FILE *in, const char *name, const char *since, bool json, FILE *out, FILE *err)
{
	struct model m = { 0 };
	struct rec r = { 0 };
	char *line = NULL, *mnt = NULL, *first = NULL, *last = NULL;
	size_t cap = 0, lineno = 0, nitems = 0, counts[4] = { 0 };
	uint64_t dropped = 0, unhashed = 0, bad = 0, open_at_end = 0;
	bool closed = true, any_change = false;
	struct item *items = NULL;
	int ret = 0;

	while (getline(&line, &cap, in) > 0) {
		const char *ev, *t, *op, *p, *p2;

		lineno++;
		if (!parse(line, &r)) {
			bad++;
			continue;
		}
		ev = get(&r, "event");
		t = get(&r, "time");
		if (ev && !strcmp(ev, "mount")) {
			free(mnt);
			mnt = dup_or_null(get(&r, "mountpoint"));
		} else if (ev && !strcmp(ev, "changes")) {
			const char *d = get(&r, "dropped"), *o = get(&r, "open");

			if (!since || (t && strcmp(t, since) >= 0)) {
				dropped += d ? strtoull(d, NULL, 10) : 0;
				open_at_end += o ? strtoull(o, NULL, 10) : 0;
				closed = true;
			}
		} else if (ev && !strcmp(ev, "change") && (!since || (t && strcmp(t, since) >= 0)) &&
			   (op = get(&r, "op")) && (p = get(&r, "path"))) {
			char *rel = relative(p, mnt), *rel2 = (p2 = get(&r, "to")) ? relative(p2, mnt) : NULL;

			if (!first)
				first = dup_or_null(t);
			free(last);
			last = dup_or_null(t);
			closed = false;
			any_change = true;
			apply(&m, &r, op, rel, rel2);
			free(rel);
			free(rel2);
		}
		rec_free(&r);
	}
	free(line);
	if (bad && !lineno) {
		fprintf(err, "awfsctl changes: %s: no records\n", name);
		return 2;
	}
	if (bad == lineno && lineno) {
		fprintf(err, "awfsctl changes: %s: not an audit trail (no line is a JSON record)\n", name);
		free(mnt);
		return 2;
	}

	/* what is there now */
	for (size_t i = 0; i < m.nall; i++) {
		struct node *n = m.all[i];
		struct item it = { .path = n->path, .n = n };

		if (!n->live)
			continue;
		it.replaced = t_has(&m.gone, n->path, NULL);
		if (!n->orig) {
			it.what = it.replaced ? MODIFIED : CREATED;
		} else if (!strcmp(n->orig, n->path)) {
			if (!n->o->content && !n->o->meta)
				continue;
			it.what = MODIFIED;
		} else {
			it.what = RENAMED;
			it.from = n->orig;
		}
		items = util_xrealloc(items, (nitems + 1) * sizeof(*items));
		items[nitems++] = it;
	}
	/* what is not: gone, not moved elsewhere, not under something removed whole */
	for (size_t i = 0; i < m.gone.cap; i++) {
		const char *g = m.gone.keys[i];
		bool moved = false, under = false;
		char *up;

		if (!g || g == tomb || t_has(&m.cur, g, NULL))
			continue;
		for (size_t k = 0; k < m.nall && !moved; k++)
			moved = m.all[k]->live && m.all[k]->orig && !strcmp(m.all[k]->orig, g);
		for (up = parent_of(g); up && !under;) {
			char *next;

			if (t_has(&m.gone, up, NULL) && !t_has(&m.cur, up, NULL)) {
				bool up_moved = false;

				for (size_t k = 0; k < m.nall && !up_moved; k++)
					up_moved = m.all[k]->live && m.all[k]->orig && !strcmp(m.all[k]->orig, up);
				under = !up_moved;
			}
			next = parent_of(up);
			free(up);
			up = next;
		}
		free(up);
		if (moved || under)
			continue;
		items = util_xrealloc(items, (nitems + 1) * sizeof(*items));
		items[nitems++] = (struct item){ .what = REMOVED, .path = g };
	}
	if (nitems)
		qsort(items, nitems, sizeof(*items), by_path);
	for (size_t i = 0; i < nitems; i++) {
		counts[items[i].what]++;
		if (items[i].n && items[i].n->o->unhashed)
			unhashed++;
	}
	if (dropped || unhashed || m.unattributed || (any_change && !closed))
		ret = 1;

	if (json) {
		struct awfs_json j;
		char *s;
		size_t slen;

		json_init(&j);
		json_obj_begin(&j);
		json_key(&j, "mountpoint");
		if (mnt)
			json_str(&j, mnt);
		else
			json_null(&j);
		json_key(&j, "first");
		first ? json_str(&j, first) : json_null(&j);
		json_key(&j, "last");
		last ? json_str(&j, last) : json_null(&j);
		json_key(&j, "complete");
		json_bool(&j, ret == 0);
		json_key(&j, "dropped");
		json_uint(&j, dropped);
		json_key(&j, "unhashed");
		json_uint(&j, unhashed);
		json_key(&j, "unattributed");
		json_uint(&j, m.unattributed);
		json_key(&j, "open");
		json_uint(&j, open_at_end);
		json_key(&j, "closed");
		json_bool(&j, !any_change || closed);
		for (int w = CREATED; w <= REMOVED; w++) {
			json_key(&j, what_word[w]);
			json_uint(&j, counts[w]);
		}
		json_key(&j, "entries");
		json_arr_begin(&j);
		for (size_t i = 0; i < nitems;) {
			size_t tl = top_len(items[i].path), k = i;

			json_obj_begin(&j);
			json_key(&j, "entry");
			json_strn(&j, items[i].path, tl);
			json_key(&j, "changes");
			json_arr_begin(&j);
			for (; k < nitems && top_len(items[k].path) == tl && !strncmp(items[k].path, items[i].path, tl); k++)
				json_item(&j, &items[k]);
			json_arr_end(&j);
			json_obj_end(&j);
			i = k;
		}
		json_arr_end(&j);
		json_obj_end(&j);
		s = json_take(&j, &slen);
		fprintf(out, "%s\n", s);
		free(s);
	} else {
		fprintf(out, "changes under ");
		put_text(out, mnt ? mnt : "?");
		fprintf(out, "%s%s%s%s: %zu created, %zu modified, %zu renamed, %zu removed\n",
			first ? ", " : "", first ? first : "", first ? " to " : "", last ? last : "",
			counts[CREATED], counts[MODIFIED], counts[RENAMED], counts[REMOVED]);
		for (size_t i = 0; i < nitems;) {
			size_t tl = top_len(items[i].path), k = i;

			fprintf(out, "%.*s\n", (int)tl, items[i].path);
			for (; k < nitems && top_len(items[k].path) == tl && !strncmp(items[k].path, items[i].path, tl); k++)
				text_item(out, &items[k]);
			i = k;
		}
		if (dropped)
			fprintf(out, "INCOMPLETE: %llu changes were not recorded (the recorder's queue or byte budget was full)\n",
				(unsigned long long)dropped);
		if (unhashed)
			fprintf(out, "INCOMPLETE: %llu written files were recorded without a hash (their records say why)\n",
				(unsigned long long)unhashed);
		if (m.unattributed)
			fprintf(out, "INCOMPLETE: %llu changes were made through a name removed since, to a file whose other names the record never saw (a hard link the host made)\n",
				(unsigned long long)m.unattributed);
		if (open_at_end)
			fprintf(out, "NOTE: %llu write handles were still open when awfs stopped: a write after a file's last recorded close is not in the record\n",
				(unsigned long long)open_at_end);
		if (any_change && !closed)
			fprintf(out, "INCOMPLETE: no summary closes the record (awfs is still running, or did not stop cleanly)\n");
	}
	free(items);
	for (size_t i = 0; i < m.nall; i++) {
		free(m.all[i]->path);
		free(m.all[i]->orig);
		free(m.all[i]->kind);
		free(m.all[i]->target);
		free(m.all[i]);
	}
	free(m.all);
	for (struct obj *o = m.objs, *next; o; o = next) {
		next = o->next;
		free(o->sha);
		free(o);
	}
	for (size_t i = 0; i < m.cur.cap; i++)
		if (m.cur.keys[i] != tomb)
			free(m.cur.keys[i]);
	for (size_t i = 0; i < m.gone.cap; i++)
		if (m.gone.keys[i] != tomb)
			free(m.gone.keys[i]);
	free(m.cur.keys);
	free(m.cur.vals);
	free(m.gone.keys);
	free(m.gone.vals);
	for (size_t i = 0; i < m.ids.cap; i++)
		if (m.ids.keys[i] != tomb)
			free(m.ids.keys[i]);
	free(m.ids.keys);
	free(m.ids.vals);
	free(mnt);
	free(first);
	free(last);
	return ret;
}
