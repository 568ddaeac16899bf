/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_decide.c - the enforcement rule (decide.h) without root or
 * /dev/fuse: positions classified by the real classifier from one policy,
 * then
 *  - a table of named cases, each an attack or a use it must refuse or
 *    allow, with the blocker, the position and the rule that decide;
 *  - every operation over every position (and pair of positions), checked
 *    against the matrix as decide.h states it.
 * tests/unit/mutate-decide.sh breaks decide.c in small ways; each mutant
 * must fail here.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "classify.h"
#include "decide.h"
#include "policy.h"
#include "walk.h"

/*
 * A writable tree with read-only and masked rules inside it (anchored at
 * rw and rw/x), a writable literal beside a read-only glob at the same
 * depth, two globs of equal shape, and read-only and masked trees.
 */
static const char policy_text[] =
	"version = 1;\n"
	"allow_write = (\n"
	"  { path = \"rw\"; reason = \"scratch\"; },\n"
	"  { path = \"ro/w\"; reason = \"a writable hole\"; },\n"
	"  { path = \"g\"; reason = \"g\"; },\n"
	"  { path = \"g/lit\"; reason = \"the literal one\"; },\n"
	"  { path = \"e\"; reason = \"e\"; },\n"
	"  { path = \"e/[ab]\"; reason = \"equal shape, writable\"; },\n"
	"  { path = \"n\"; reason = \"uploaded after the agent\"; links = \"none\"; },\n"
	"  { path = \"n/deep\"; reason = \"inherits n's links\"; },\n"
	"  { path = \"n/open\"; reason = \"a hole that allows them\"; links = \"any\"; },\n"
	"  { path = \"n2\"; reason = \"a second tree without links\"; links = \"none\"; },\n"
	"  { path = \"l\"; reason = \"links to read-only ground only\"; links = \"read-only\"; },\n"
	"  { path = \"n/h/hole\"; reason = \"a hole two levels down\"; links = \"any\"; },\n"
	"  { path = \"rw/c/closed\"; reason = \"a closed tree in an open one\"; links = \"none\"; },\n"
	"  { path = \"n*/tmp\"; reason = \"a glob below the closed trees, saying no links\"; }\n"
	");\n"
	"read_only = (\n"
	"  { path = \"rw/.git\"; reason = \"git\"; },\n"
	"  { path = \"rw/x/hooks\"; reason = \"hooks\"; },\n"
	"  { path = \"ro\"; reason = \"ro\"; },\n"
	"  { path = \"g/*\"; reason = \"any g entry\"; },\n"
	"  { path = \"e/[ac]\"; reason = \"equal shape, read-only\"; }\n"
	");\n"
	"mask = (\n"
	"  { path = \"rw/secret\"; reason = \"secret\"; },\n"
	"  { path = \"m\"; reason = \"masked\"; }\n"
	");\n";

#define INFO ".awfs"	/* the information directory's name here */

static struct awfs_policy *pol;
static struct awfs_classifier *cls;

static int setup(void **state)
{
	struct awfs_msgs errs = { 0 };

	(void)state;
	pol = policy_parse(policy_text, "test.conf", NULL, &errs);
	for (size_t i = 0; i < errs.n; i++)
		print_error("%s\n", errs.v[i]);
	msgs_clear(&errs);
	if (!pol)
		return -1;
	cls = classify_new(pol);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	classify_free(cls);
	policy_free(pol);
	return 0;
}

/* The state of @path ("." the root). */
static const struct awfs_state *at(const char *path)
{
	return walk(cls, path);
}

static bool in_info(const char *path)
{
	return strncmp(path, INFO, strlen(INFO)) == 0 &&
	       (path[strlen(INFO)] == '\0' || path[strlen(INFO)] == '/');
}

/* The position of the entry @path, as ops.c's entry_pos() makes it. */
static struct awfs_entry_pos entry(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path)) : util_xstrdup(".");
	struct awfs_entry_pos e = { .dir = at(dir), .info = in_info(path) };

	if (!e.info)
		e.st = at(path);
	free(dir);
	return e;
}

static struct awfs_object_pos object(const char *path)
{
	struct awfs_object_pos o = { .info = in_info(path) };

	o.st = at(path);
	return o;
}

/* ------------------------------------------------------------ named cases */

enum op { ENTRY, SYMLINK, OBJECT, OPEN_RDONLY, OPEN_WRONLY, OPEN_RDONLY_TRUNC, LINK, RENAME };

static const char *const op_names[] = {
	"entry", "symlink", "object", "open(O_RDONLY)", "open(O_WRONLY)", "open(O_RDONLY|O_TRUNC)",
	"link", "rename",
};

struct row {
	const char *why;
	enum op op;
	const char *a, *b;		/* the position(s): a link's object and new entry,
					   a rename's source and target */
	enum awfs_blocker how;
	unsigned end;
	const char *rule;		/* the deciding rule's path, or NULL */
};

static struct awfs_decision ask(enum op op, const char *a, const char *b)
{
	struct awfs_entry_pos ea = entry(a), eb;
	struct awfs_object_pos oa = object(a);

	switch (op) {
	case ENTRY:
		return decide_entry(&ea);
	case SYMLINK:
		return decide_symlink(&ea);
	case OBJECT:
		return decide_object(&oa);
	case OPEN_RDONLY:
		return decide_open(O_RDONLY, &oa);
	case OPEN_WRONLY:
		return decide_open(O_WRONLY, &oa);
	case OPEN_RDONLY_TRUNC:
		return decide_open(O_RDONLY | O_TRUNC, &oa);
	case LINK:
		eb = entry(b);
		return decide_link(&oa, S_IFREG, &eb);
	case RENAME:
		eb = entry(b);
		return decide_rename(&ea, S_IFREG, &eb, 0);
	}
	abort();
}

#define OK AWFS_ALLOWED
#define SELF AWFS_BLOCK_SELF
#define PARENT AWFS_BLOCK_PARENT
#define ENT AWFS_BLOCK_ENTRY
#define ANCHOR AWFS_BLOCK_ANCHOR
#define INF AWFS_BLOCK_INFO

static const struct row rows[] = {
	/* namespace changes: the directory AND the entry */
	{ "create in a writable tree", ENTRY, "rw/f", NULL, OK, 0, NULL },
	{ "create deep in a writable tree", ENTRY, "rw/a/b/c", NULL, OK, 0, NULL },
	{ "remove a writable tree itself: its parent is read-only", ENTRY, "rw", NULL, PARENT, 0, NULL },
	{ "create at the root (root default)", ENTRY, "new", NULL, PARENT, 0, NULL },
	{ "create in a read-only tree", ENTRY, "ro/f", NULL, PARENT, 0, "ro" },
	{ "remove a read-only tree's writable hole", ENTRY, "ro/w", NULL, PARENT, 0, "ro" },
	{ "create inside a read-only tree's writable hole", ENTRY, "ro/w/f", NULL, OK, 0, NULL },
	{ "create at an absent read-only rule's position (a .git file with gitdir:)",
	  ENTRY, "rw/.git", NULL, ENT, 0, "rw/.git" },
	{ "create at a deeper read-only rule's position", ENTRY, "rw/x/hooks", NULL, ENT, 0, "rw/x/hooks" },
	{ "create inside a read-only rule inside a writable tree", ENTRY, "rw/.git/config", NULL, PARENT, 0,
	  "rw/.git" },
	{ "create at a mask's position in a writable tree", ENTRY, "rw/secret", NULL, ENT, 0, "rw/secret" },
	{ "create inside a mask", ENTRY, "m/f", NULL, PARENT, 0, "m" },
	{ "create inside a mask inside a writable tree", ENTRY, "rw/secret/f", NULL, PARENT, 0, "rw/secret" },
	{ "create the information directory", ENTRY, INFO, NULL, INF, 0, NULL },
	{ "create in the information directory", ENTRY, INFO "/x", NULL, INF, 0, NULL },
	{ "a glob refuses beside a literal", ENTRY, "g/other", NULL, ENT, 0, "g/*" },
	{ "a literal beats a glob at the same depth", ENTRY, "g/lit", NULL, OK, 0, NULL },
	{ "equal shape: the stricter class wins", ENTRY, "e/a", NULL, ENT, 0, "e/[ac]" },
	{ "equal shape: the writable one alone", ENTRY, "e/b", NULL, OK, 0, NULL },
	{ "equal shape: the read-only one alone", ENTRY, "e/c", NULL, ENT, 0, "e/[ac]" },
	{ "unclassified top-level entry", ENTRY, "zz", NULL, PARENT, 0, NULL },

	/* symlinks: also not where a stricter rule is anchored */
	{ "symlink in a writable tree", SYMLINK, "rw/l", NULL, OK, 0, NULL },
	{ "symlink where a read-only rule is anchored below", SYMLINK, "rw/x", NULL, ANCHOR, 0, "rw/x/hooks" },
	{ "symlink at a read-only rule's position", SYMLINK, "rw/.git", NULL, ENT, 0, "rw/.git" },
	{ "symlink in a read-only tree", SYMLINK, "ro/l", NULL, PARENT, 0, "ro" },

	/* changes to an object */
	{ "setattr a writable file", OBJECT, "rw/f", NULL, OK, 0, NULL },
	{ "setattr a read-only file", OBJECT, "ro/f", NULL, SELF, 0, "ro" },
	{ "setxattr a read-only rule inside a writable tree", OBJECT, "rw/.git/config", NULL, SELF, 0,
	  "rw/.git" },
	{ "write a masked file", OBJECT, "m/f", NULL, SELF, 0, "m" },
	{ "chmod a writable tree itself", OBJECT, "rw", NULL, OK, 0, NULL },
	{ "chmod the root (root default)", OBJECT, ".", NULL, SELF, 0, NULL },
	{ "write an information file", OBJECT, INFO "/README", NULL, INF, 0, NULL },
	{ "open a read-only file for reading", OPEN_RDONLY, "ro/f", NULL, OK, 0, NULL },
	{ "open a masked file for reading", OPEN_RDONLY, "m/f", NULL, OK, 0, NULL },
	{ "open an information file for reading", OPEN_RDONLY, INFO "/denials", NULL, OK, 0, NULL },
	{ "open a read-only file for writing", OPEN_WRONLY, "ro/f", NULL, SELF, 0, "ro" },
	{ "open a read-only file O_RDONLY|O_TRUNC (truncates)", OPEN_RDONLY_TRUNC, "ro/f", NULL, SELF, 0,
	  "ro" },
	{ "open a writable file for writing", OPEN_WRONLY, "rw/f", NULL, OK, 0, NULL },

	/* link: the object, then the new entry, then no anchor there */
	{ "link within a writable tree", LINK, "rw/f", "rw/g", OK, 0, NULL },
	{ "link a read-only file into a writable tree", LINK, "ro/f", "rw/g", SELF, 0, "ro" },
	{ "link a writable file into a read-only directory", LINK, "rw/f", "ro/g", PARENT, 1, "ro" },
	{ "link at a read-only rule's position", LINK, "rw/f", "rw/.git", ENT, 1, "rw/.git" },
	{ "link where a rule is anchored below", LINK, "rw/f", "rw/x", ANCHOR, 1, "rw/x/hooks" },
	{ "link into the information directory", LINK, "rw/f", INFO "/f", INF, 1, NULL },

	/* rename: source entry, target entry, source anchor, target anchor */
	{ "rename within a writable tree", RENAME, "rw/a", "rw/b", OK, 0, NULL },
	{ "rename out of a read-only tree (the source side)", RENAME, "ro/f", "rw/f", PARENT, 0, "ro" },
	{ "rename into a read-only tree", RENAME, "rw/f", "ro/f", PARENT, 1, "ro" },
	{ "rename a read-only rule's directory away", RENAME, "rw/.git", "rw/old", ENT, 0, "rw/.git" },
	{ "rename over a read-only rule's position", RENAME, "rw/f", "rw/.git", ENT, 1, "rw/.git" },
	{ "rename an anchored directory away", RENAME, "rw/x", "rw/y", ANCHOR, 0, "rw/x/hooks" },
	{ "rename a directory over an anchored one", RENAME, "rw/y", "rw/x", ANCHOR, 1, "rw/x/hooks" },
	{ "rename a writable tree itself", RENAME, "rw", "rw2", PARENT, 0, NULL },
	{ "rename out of a mask", RENAME, "m/f", "rw/f", PARENT, 0, "m" },
	{ "rename the information directory", RENAME, INFO, "rw/i", INF, 0, NULL },
	{ "rename into the information directory", RENAME, "rw/f", INFO "/f", INF, 1, NULL },
};

static void test_named_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct awfs_decision d = ask(r->op, r->a, r->b);
		const char *rule = d.rule ? d.rule->path : NULL;

		if (d.how != r->how || (d.how && d.end != r->end) || (rule == NULL) != (r->rule == NULL) ||
		    (rule && strcmp(rule, r->rule) != 0))
			fail_msg("%s: %s %s%s%s: got blocker %d end %u rule %s; expected %d %u %s", r->why,
				 op_names[r->op], r->a, r->b ? " " : "", r->b ? r->b : "", (int)d.how, d.end,
				 rule ? rule : "(none)", (int)r->how, r->end, r->rule ? r->rule : "(none)");
	}
}

/* ------------------------------------------------------------ the whole matrix */

/* Positions of every class, anchored and not, and of the information directory. */
static const char *const positions[] = {
	".", "new", "zz", "rw", "rw/f", "rw/a/b", "rw/x", "rw/x/hooks", "rw/x/hooks/h", "rw/.git",
	"rw/.git/config", "rw/secret", "rw/secret/f", "ro", "ro/f", "ro/w", "ro/w/f", "m", "m/f",
	"g", "g/lit", "g/other", "e/a", "e/b", "e/c", INFO, INFO "/README", INFO "/f",
};
#define NPOS (sizeof(positions) / sizeof(positions[0]))

static bool w(const struct awfs_state *s)
{
	return classify_class(s) == AWFS_CLASS_WRITE;
}

/* What decide.h says of a namespace change at @e, the @end-th position. */
static struct awfs_decision expect_entry(const struct awfs_entry_pos *e, unsigned end)
{
	if (e->info)
		return (struct awfs_decision){ INF, end, NULL, NULL };
	if (!w(e->dir))
		return (struct awfs_decision){ PARENT, end, e->dir, classify_rule(e->dir) };
	if (!w(e->st))
		return (struct awfs_decision){ ENT, end, e->st, classify_rule(e->st) };
	return (struct awfs_decision){ OK, 0, NULL, NULL };
}

static struct awfs_decision expect_anchor(const struct awfs_entry_pos *e, unsigned end)
{
	const struct awfs_rule *g = classify_anchored(e->st);

	return g ? (struct awfs_decision){ ANCHOR, end, e->st, g } : (struct awfs_decision){ OK, 0, NULL, NULL };
}

static struct awfs_decision expect_object(const struct awfs_object_pos *o)
{
	if (o->info)
		return (struct awfs_decision){ INF, 0, NULL, NULL };
	if (!w(o->st))
		return (struct awfs_decision){ SELF, 0, o->st, classify_rule(o->st) };
	return (struct awfs_decision){ OK, 0, NULL, NULL };
}

static void same(struct awfs_decision got, struct awfs_decision want, const char *op, const char *a,
		 const char *b)
{
	if (got.how != want.how || (got.how && (got.end != want.end || got.st != want.st ||
						got.rule != want.rule)))
		fail_msg("%s %s %s: got blocker %d end %u rule %s; the matrix says %d %u %s", op, a, b ? b : "",
			 (int)got.how, got.end, got.rule ? got.rule->path : "(none)", (int)want.how, want.end,
			 want.rule ? want.rule->path : "(none)");
}

static void test_matrix(void **state)
{
	size_t refused = 0, allowed = 0;

	(void)state;
	for (size_t i = 0; i < NPOS; i++) {
		const char *a = positions[i];
		struct awfs_entry_pos ea = entry(a);
		struct awfs_object_pos oa = object(a);
		struct awfs_decision want = expect_entry(&ea, 0);

		same(decide_entry(&ea), want, "entry", a, NULL);
		same(decide_symlink(&ea), want.how ? want : expect_anchor(&ea, 0), "symlink", a, NULL);
		same(decide_object(&oa), expect_object(&oa), "object", a, NULL);
		same(decide_open(O_RDWR, &oa), expect_object(&oa), "open(O_RDWR)", a, NULL);
		same(decide_open(O_WRONLY | O_TRUNC, &oa), expect_object(&oa), "open(O_WRONLY|O_TRUNC)", a, NULL);
		same(decide_open(O_RDONLY | O_TRUNC, &oa), expect_object(&oa), "open(O_RDONLY|O_TRUNC)", a, NULL);
		same(decide_open(O_RDONLY | O_APPEND, &oa), (struct awfs_decision){ OK, 0, NULL, NULL },
		     "open(O_RDONLY)", a, NULL);
		for (size_t j = 0; j < NPOS; j++) {
			const char *b = positions[j];
			struct awfs_entry_pos eb = entry(b);
			struct awfs_decision l = expect_object(&oa), r = expect_entry(&ea, 0);

			if (!l.how)
				l = expect_entry(&eb, 1);
			if (!l.how)
				l = expect_anchor(&eb, 1);
			same(decide_link(&oa, S_IFREG, &eb), l, "link", a, b);
			if (!r.how)
				r = expect_entry(&eb, 1);
			if (!r.how)
				r = expect_anchor(&ea, 0);
			if (!r.how)
				r = expect_anchor(&eb, 1);
			same(decide_rename(&ea, S_IFREG, &eb, 0), r, "rename", a, b);
			r.how ? refused++ : allowed++;
		}
	}
	/* the positions reach both outcomes (a table that only refuses proves little) */
	assert_true(allowed > 10);
	assert_true(refused > allowed);
}

/* Whether @d refused as links = "none" does, at the end @end, under the rule @rule. */
static void kind(struct awfs_decision d, unsigned end, const char *rule, const char *what)
{
	if (d.how != AWFS_BLOCK_KIND || d.end != end || !d.rule || strcmp(d.rule->path, rule) != 0)
		fail_msg("%s: got blocker %d end %u rule %s; want links = \"none\" of %s at end %u", what,
			 (int)d.how, d.end, d.rule ? d.rule->path : "(none)", rule, end);
}

static void ok(struct awfs_decision d, const char *what)
{
	if (d.how)
		fail_msg("%s: refused (blocker %d end %u); want allowed", what, (int)d.how, d.end);
}

/* links = "none": what the host would follow or block on is never made or moved into the tree. */
static void test_links(void **state)
{
	static const mode_t specials[] = { S_IFLNK, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK };
	struct awfs_entry_pos n = entry("n/x"), deep = entry("n/deep/x"), open = entry("n/open/x"),
			      n2 = entry("n2/x"), rw = entry("rw/a"), ro = entry("ro/x"), l = entry("l/x");
	struct awfs_object_pos on = object("n/f"), orw = object("rw/f");

	(void)state;
	kind(decide_symlink(&n), 0, "n", "symlink in n");
	kind(decide_symlink(&deep), 0, "n/deep", "symlink in n/deep (inherited)");
	ok(decide_symlink(&open), "symlink in n/open (links = \"any\" below)");
	ok(decide_symlink(&rw), "symlink in rw (no links key)");
	assert_int_equal(decide_symlink(&ro).how, AWFS_BLOCK_PARENT);	/* the class decides first */
	for (size_t i = 0; i < sizeof(specials) / sizeof(*specials); i++) {
		kind(decide_mknod(&n, specials[i] | 0644), 0, "n", "mknod of a special in n");
		ok(decide_mknod(&rw, specials[i] | 0644), "mknod of a special in rw");
		kind(decide_link(&on, specials[i], &n2), 1, "n2", "link of a special into n2");
		ok(decide_link(&orw, specials[i], &rw), "link of a special in rw");
		/* never moved in, not even within the tree (a host-made relative link would point elsewhere) */
		kind(decide_rename(&n, specials[i], &deep, 0), 1, "n/deep", "rename of a special within n");
		ok(decide_rename(&n, specials[i], &rw, 0), "rename of a special out to rw");
	}
	ok(decide_mknod(&n, S_IFREG | 0644), "mknod of a regular file in n");
	ok(decide_link(&on, S_IFREG, &n2), "link of a regular file into n2");
	ok(decide_rename(&n, S_IFREG, &n2, 0), "rename of a file between two trees without links");
	ok(decide_rename(&n, S_IFDIR, &deep, 0), "rename of a directory within n");
	/* from a tree that allows links, nothing at all: the name may hold a link by the time it moves */
	kind(decide_rename(&rw, S_IFREG, &n, 0), 1, "n", "rename of a file from rw into n");
	kind(decide_rename(&open, S_IFDIR, &n, 0), 1, "n", "rename of a directory from n/open into n");
	ok(decide_rename(&n, S_IFREG, &rw, 0), "rename of a file from n out to rw");
	/* an exchange moves both ways */
	kind(decide_rename(&n, S_IFREG, &rw, S_IFREG), 0, "n", "exchange of n/x and rw/x");
	kind(decide_rename(&n, S_IFREG, &n2, S_IFLNK), 0, "n", "exchange bringing a link into n");
	ok(decide_rename(&n, S_IFREG, &n2, S_IFREG), "exchange of two files between trees without links");
	kind(decide_rename(&n, S_IFREG, &n2, S_IFCHR), 0, "n", "RENAME_WHITEOUT leaving a device node in n");
	ok(decide_rename(&rw, S_IFREG, &rw, S_IFCHR), "RENAME_WHITEOUT in rw");
	assert_true(decide_links(n.st) == AWFS_LINKS_NONE && decide_links(deep.st) == AWFS_LINKS_NONE &&
		    decide_links(open.st) == AWFS_LINKS_ANY && decide_links(rw.st) == AWFS_LINKS_ANY &&
		    decide_links(ro.st) == AWFS_LINKS_ANY && decide_links(l.st) == AWFS_LINKS_READ_ONLY);
	/* a rule that does not say links takes the strictest that may enclose it, globs included */
	assert_int_equal(decide_links(entry("n2/tmp/x").st), AWFS_LINKS_NONE);
	/* links = "read-only": a symlink may be made (ops.c checks its target), nothing else */
	ok(decide_symlink(&l), "symlink in l");
	for (size_t i = 1; i < sizeof(specials) / sizeof(*specials); i++)
		kind(decide_mknod(&l, specials[i] | 0644), 0, "l", "mknod of a FIFO, socket or device in l");
	kind(decide_link(&on, S_IFLNK, &l), 1, "l", "link of a symlink into l");
	kind(decide_rename(&l, S_IFLNK, &l, 0), 1, "l", "rename of a symlink within l");
	kind(decide_rename(&l, S_IFDIR, &n, 0), 1, "n", "rename of a directory from l (it may hold links) into n");
	ok(decide_rename(&n, S_IFDIR, &l, 0), "rename of a directory from n into l (stricter into looser)");
	ok(decide_rename(&l, S_IFDIR, &l, 0), "rename of a directory within l");
	kind(decide_rename(&rw, S_IFREG, &l, 0), 1, "l", "rename of a file from rw into l");
	/* a directory above a writable rule with other links would carry it (n/h/hole, rw/c/closed) */
	{
		struct awfs_entry_pos nh = entry("n/h"), nd = entry("n/d"), rc = entry("rw/c"), rd = entry("rw/d");

		kind(decide_rename(&nh, S_IFDIR, &nd, 0), 0, "n", "rename of n/h, above an \"any\" hole, within n");
		kind(decide_rename(&nd, S_IFDIR, &nh, 0), 1, "n", "rename onto n/h");
		kind(decide_rename(&rc, S_IFDIR, &rd, 0), 0, "rw", "rename of rw/c, above a \"none\" tree, within rw");
		kind(decide_rename(&rd, S_IFDIR, &rc, S_IFDIR), 1, "rw", "exchange with rw/c");
		ok(decide_rename(&nd, S_IFDIR, &n2, 0), "rename of n/d (nothing below) into n2");
	}
}

/* Only a writable class passes a change, whatever the operation: no position is writable twice over. */
static void test_only_writable_passes(void **state)
{
	(void)state;
	for (size_t i = 0; i < NPOS; i++) {
		struct awfs_entry_pos e = entry(positions[i]);
		struct awfs_object_pos o = object(positions[i]);

		if (!decide_entry(&e).how)
			assert_true(!e.info && w(e.dir) && w(e.st));
		if (!decide_symlink(&e).how)
			assert_true(!e.info && w(e.st) && !classify_anchored(e.st));
		if (!decide_object(&o).how)
			assert_true(!o.info && w(o.st));
	}
}

/* ------------------------------------------------------------ temporaries beside single files */

/*
 * A read-only root holding a single-file rule, a read-only directory with
 * one inside it, a read-only rule that a temporary's name could match, and
 * a masked and a plain read-only directory: where decide_stage() lets a
 * temporary be made and decide_replace() lets it be renamed.
 */
static const char stage_text[] =
	"version = 1;\n"
	"allow_write = (\n"
	"  { path = \"summary.md\"; reason = \"the step summary\"; create = \"file\"; },\n"
	"  { path = \"td/result.json\"; reason = \"the engine's result\"; create = \"file\"; },\n"
	"  { path = \"rw\"; reason = \"scratch\"; },\n"
	"  { path = \"notsingle.md\"; reason = \"a writable file not made single\"; }\n"
	");\n"
	"read_only = (\n"
	"  { path = \"sedRULE00\"; reason = \"a rule a temporary's name could match\"; },\n"
	"  { path = \"ro\"; reason = \"ro\"; },\n"
	"  { path = \"td\"; reason = \"the detection evidence\"; }\n"
	");\n"
	"mask = (\n"
	"  { path = \"m\"; reason = \"masked\"; }\n"
	");\n";

struct stage_row {
	const char *why;
	const char *path;	/* the entry created */
	bool allowed;
};

static const struct stage_row stage_rows[] = {
	{ "Claude Code's Write: the file's name and a suffix", "summary.md.tmp.4242.19af3c", true },
	{ "write-file-atomic: the file's name and a hash", "summary.md.2634066542", true },
	{ "the same, hidden", ".summary.md.XyZ12", true },
	{ "GNU sed -i", "sedAbC123", true },
	{ "perl -pi", "XXSAptZP", true },
	{ "Python's tempfile", "tmpk3_9xq0a", true },
	{ "mktemp", "tmp.AbCdEfGhIj", true },
	{ "a deeper read-only directory holding a single-file rule", "td/result.json.tmp.1.a", true },
	{ "a plain name stays refused", "notes.md", false },
	{ "the file's name alone is the file, not a temporary", "summary.md", false },
	{ "the file's name and a bare dot", "summary.md.", false },
	{ "a prefix of another file's name", "summary.mdx.tmp", false },
	{ "sed's name, one character short (and not perl's length)", "sedAbC1", false },
	{ "sed's name with a character sed never uses", "sedAbC-12", false },
	{ "Python's name with a capital it never uses", "tmpK3_9XQ0A", false },
	{ "perl's length with a dot", "XXSA.tZP", false },
	{ "a name with a read-only rule of its own", "sedRULE00", false },
	{ "a read-only directory without single files", "ro/sedAbC123", false },
	{ "a masked directory", "m/sedAbC123", false },
	{ "the information directory", INFO "/sedAbC123", false },
	{ "another directory's single file lends nothing to the root", "result.json.tmp.1.a", false },
	{ "a writable file not found single at mount", "notsingle.md.tmp.1.a", false },
};

static void test_stage(void **state)
{
	struct awfs_msgs errs = { 0 };
	struct awfs_policy *sp = policy_parse(stage_text, "stage.conf", NULL, &errs);
	struct awfs_classifier *saved = cls;

	(void)state;
	assert_non_null(sp);
	msgs_clear(&errs);
	for (size_t i = 0; i < sp->nrules; i++)	/* what boundary.c finds at mount */
		sp->rules[i].single_file = sp->rules[i].create_file;
	cls = classify_new(sp);
	for (size_t i = 0; i < sizeof(stage_rows) / sizeof(stage_rows[0]); i++) {
		const struct stage_row *r = &stage_rows[i];
		struct awfs_entry_pos e = entry(r->path);
		const char *name = strrchr(r->path, '/') ? strrchr(r->path, '/') + 1 : r->path;
		struct awfs_decision d = decide_stage(&e, name);

		if ((d.how == AWFS_ALLOWED) != r->allowed)
			fail_msg("stage %s (%s): %s", r->path, r->why, d.how ? "refused" : "allowed");
		if (!r->allowed)	/* a refusal is decide_entry()'s own */
			assert_int_equal(d.how, decide_entry(&e).how);
	}
	/* a temporary is renamed onto a single-file rule of its directory, and nothing else */
	{
		struct awfs_entry_pos t = entry("summary.md.tmp.1.a"), td = entry("td/result.json.tmp.1.a");
		struct awfs_entry_pos f = entry("summary.md"), tf = entry("td/result.json");
		struct awfs_entry_pos other = entry("notes.md"), ns = entry("notsingle.md"), rw = entry("rw/x");
		struct awfs_entry_pos ro = entry("sedRULE00");

		assert_int_equal(decide_replace(&t, &f).how, AWFS_ALLOWED);
		assert_int_equal(decide_replace(&td, &tf).how, AWFS_ALLOWED);
		assert_int_equal(decide_replace(&t, &tf).how, AWFS_BLOCK_PARENT);
		assert_int_equal(decide_replace(&td, &f).how, AWFS_BLOCK_PARENT);
		assert_int_equal(decide_replace(&t, &other).how, AWFS_BLOCK_PARENT);
		assert_int_equal(decide_replace(&t, &ns).how, AWFS_BLOCK_PARENT);
		assert_int_equal(decide_replace(&t, &rw).how, AWFS_BLOCK_PARENT);
		assert_int_equal(decide_replace(&t, &ro).how, AWFS_BLOCK_PARENT);
		assert_true(decide_stages_in(at(".")));
		assert_true(decide_stages_in(at("td")));
		assert_false(decide_stages_in(at("ro")));
		assert_false(decide_stages_in(at("rw")));
		assert_false(decide_stages_in(at("m")));
	}
	classify_free(cls);
	cls = saved;
	policy_free(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_cases),
		cmocka_unit_test(test_matrix),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_only_writable_passes),
		cmocka_unit_test(test_stage),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
