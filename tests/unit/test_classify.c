/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_classify.c - classification as a table: a policy text and rows of
 * (path, class, origin, deciding rule), each path walked one component at a
 * time with classify_child() from classify_root(), as lookups do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "classify.h"
#include "policy.h"
#include "walk.h"

#define W AWFS_CLASS_WRITE
#define RO AWFS_CLASS_RO
#define M AWFS_CLASS_MASK
#define RULE AWFS_ORIGIN_RULE
#define ROOT AWFS_ORIGIN_ROOT
#define UNCL AWFS_ORIGIN_UNCLASSIFIED

struct row {
	const char *path;	/* "." for the root */
	enum awfs_class cls;
	enum awfs_origin origin;
	const char *rule;	/* the deciding rule's path, or NULL */
};

/* A parsed policy and its classifier. */
struct fixture {
	struct awfs_policy *p;
	struct awfs_classifier *c;
};

static struct fixture load(const char *text, const char *runtime)
{
	struct awfs_msgs errs = { 0 };
	struct fixture f = { .p = policy_parse(text, "test.conf", runtime, &errs) };

	for (size_t i = 0; i < errs.n; i++)
		print_error("%s\n", errs.v[i]);
	assert_non_null(f.p);
	msgs_clear(&errs);
	f.c = classify_new(f.p);
	return f;
}

static void unload(struct fixture *f)
{
	classify_free(f->c);
	policy_free(f->p);
}

static void check_rows(const char *text, const char *runtime, const struct row *rows, size_t n)
{
	struct fixture f = load(text, runtime);

	for (size_t i = 0; i < n; i++) {
		const struct awfs_state *s = walk(f.c, rows[i].path);
		const struct awfs_rule *r = classify_rule(s);
		const char *got = r ? r->path : NULL;

		if (classify_class(s) != rows[i].cls || classify_origin(s) != rows[i].origin ||
		    (got == NULL) != (rows[i].rule == NULL) || (got && strcmp(got, rows[i].rule) != 0))
			fail_msg("runtime %s, %s: got class %s origin %d rule %s; expected %s %d %s",
				 runtime ? runtime : "none", rows[i].path,
				 policy_class_key(classify_class(s)), (int)classify_origin(s),
				 got ? got : "(none)", policy_class_key(rows[i].cls), (int)rows[i].origin,
				 rows[i].rule ? rows[i].rule : "(none)");
	}
	unload(&f);
}

#define CHECK(text, runtime, rows) check_rows(text, runtime, rows, AWFS_ARRAY_LEN(rows))

/* Like the shipped policy, in small. */
static const char memory_policy[] =
	"version = 1;\n"
	"allow_write = (\n"
	"  { path = \"agent\"; reason = \"scratch\"; },\n"
	"  { path = \"cache-memory\"; reason = \"memory\"; },\n"
	"  { path = \"cache-memory-*\"; reason = \"named memories\"; }\n"
	");\n"
	"read_only = (\n"
	"  { path = \"cache-memory*/.git\"; reason = \"the host runs git here\"; }\n"
	");\n"
	"mask = (\n"
	"  { path = \"mcp-logs\"; reason = \"payloads\"; },\n"
	"  { path = \"sandbox/firewall/logs\"; reason = \"egress policy\"; }\n"
	");\n";

static void test_depth(void **state)
{
	static const char text[] =
		"version = 1;\n"
		"allow_write = ( { path = \"a\"; reason = \"r\"; }, { path = \"a/b/w\"; reason = \"r\"; },\n"
		"                { path = \"x\"; reason = \"r\"; } );\n"
		"read_only = ( { path = \"a/b\"; reason = \"r\"; }, { path = \"*/y\"; reason = \"r\"; } );\n"
		"mask = ( { path = \"a/b/m\"; reason = \"r\"; } );\n";
	static const struct row rows[] = {
		{ ".", RO, ROOT, NULL },
		{ "a", W, RULE, "a" },
		{ "a/other", W, RULE, "a" },
		{ "a/b", RO, RULE, "a/b" },
		{ "a/b/other/deeper", RO, RULE, "a/b" },
		{ "a/b/w", W, RULE, "a/b/w" },
		{ "a/b/w/deep/er", W, RULE, "a/b/w" },
		{ "a/b/m", M, RULE, "a/b/m" },
		{ "a/b/m/below", M, RULE, "a/b/m" },
		{ "x", W, RULE, "x" },
		{ "x/y", RO, RULE, "*/y" },	/* a deeper glob beats a shallower literal */
		{ "x/z", W, RULE, "x" },
		{ "a/y", RO, RULE, "*/y" },
	};

	(void)state;
	CHECK(text, NULL, rows);
}

static void test_literal_beats_glob(void **state)
{
	static const char text[] =
		"version = 1;\n"
		"allow_write = ( { path = \"cache-memory-*\"; reason = \"r\"; }, { path = \"p/*\"; reason = \"r\"; } );\n"
		"read_only = ( { path = \"*/q\"; reason = \"r\"; } );\n"
		"mask = ( { path = \"cache-memory-secret\"; reason = \"r\"; } );\n";
	static const struct row rows[] = {
		{ "cache-memory-secret", M, RULE, "cache-memory-secret" },
		{ "cache-memory-secret/x", M, RULE, "cache-memory-secret" },
		{ "cache-memory-a", W, RULE, "cache-memory-*" },
		{ "cache-memory-secretx", W, RULE, "cache-memory-*" },
		/* equal depth, both globs somewhere: the first literal component decides */
		{ "p/q", W, RULE, "p/*" },
		{ "o/q", RO, RULE, "*/q" },
	};

	(void)state;
	CHECK(text, NULL, rows);
}

static void test_stricter_wins(void **state)
{
	static const char text[] =
		"version = 1;\n"
		"allow_write = ( { path = \"data-*\"; reason = \"r\"; } );\n"
		"read_only = ( { path = \"*-ro\"; reason = \"r\"; } );\n"
		"mask = ( { path = \"*-secret\"; reason = \"r\"; } );\n";
	static const struct row rows[] = {
		{ "data-x", W, RULE, "data-*" },
		{ "data-ro", RO, RULE, "*-ro" },
		{ "data-secret", M, RULE, "*-secret" },
		{ "x-ro", RO, RULE, "*-ro" },
		{ "x", RO, UNCL, NULL },
	};

	(void)state;
	CHECK(text, NULL, rows);
}

static void test_runtimes(void **state)
{
	static const char text[] =
		"version = 1;\n"
		"allow_write = ( { path = \"agent\"; reason = \"r\"; },\n"
		"                { path = \"vm\"; reason = \"r\"; runtimes = [\"nvx\"]; } );\n"
		"mask = ( { path = \"work\"; reason = \"r\"; runtimes = [\"docker\"]; },\n"
		"         { path = \"agent/tokens\"; reason = \"r\"; runtimes = [\"docker\", \"nvx\"]; } );\n";
	static const struct row none[] = {
		{ "work", RO, UNCL, NULL },
		{ "vm", RO, UNCL, NULL },
		{ "agent/tokens", W, RULE, "agent" },
	};
	static const struct row docker[] = {
		{ "work", M, RULE, "work" },
		{ "vm", RO, UNCL, NULL },
		{ "agent/tokens", M, RULE, "agent/tokens" },
	};
	static const struct row nvx[] = {
		{ "work", RO, UNCL, NULL },
		{ "vm", W, RULE, "vm" },
		{ "agent/tokens", M, RULE, "agent/tokens" },
	};

	(void)state;
	CHECK(text, NULL, none);
	CHECK(text, "docker", docker);
	CHECK(text, "nvx", nvx);
}

static void test_read_only_inside_writable(void **state)
{
	static const struct row rows[] = {
		{ "cache-memory", W, RULE, "cache-memory" },
		{ "cache-memory/notes.md", W, RULE, "cache-memory" },
		{ "cache-memory/.git", RO, RULE, "cache-memory*/.git" },
		{ "cache-memory/.git/hooks/pre-commit", RO, RULE, "cache-memory*/.git" },
		{ "cache-memory-x", W, RULE, "cache-memory-*" },
		{ "cache-memory-x/.git", RO, RULE, "cache-memory*/.git" },
		{ "cache-memory-x/.git/config", RO, RULE, "cache-memory*/.git" },
		{ "cache-memory-x/src/.git", W, RULE, "cache-memory-*" },	/* only one level down */
		{ "cache-memory-x/.gitignore", W, RULE, "cache-memory-*" },
		/* named only by the read_only glob: the root default, not unclassified */
		{ "cache-memoryz", RO, ROOT, NULL },
		{ "cache-memoryz/.git", RO, RULE, "cache-memory*/.git" },
	};

	(void)state;
	CHECK(memory_policy, NULL, rows);
}

static void test_masks(void **state)
{
	static const char text[] =
		"version = 1;\n"
		"mask = ( { path = \"a\"; reason = \"r\"; }, { path = \"b/c/d\"; reason = \"r\"; },\n"
		"         { path = \"logs-*\"; reason = \"r\"; }, { path = \"e/*/secret\"; reason = \"r\"; } );\n";
	static const struct row rows[] = {
		{ "a", M, RULE, "a" },
		{ "a/x/y", M, RULE, "a" },
		{ "b", RO, ROOT, NULL },
		{ "b/c", RO, ROOT, NULL },
		{ "b/x", RO, ROOT, NULL },
		{ "b/c/d", M, RULE, "b/c/d" },
		{ "b/c/d/e/f", M, RULE, "b/c/d" },
		{ "b/c/x", RO, ROOT, NULL },
		{ "logs-1", M, RULE, "logs-*" },
		{ "logs-1/f", M, RULE, "logs-*" },
		{ "logs", RO, UNCL, NULL },
		{ "e/q/secret", M, RULE, "e/*/secret" },
		{ "e/q/secret/x", M, RULE, "e/*/secret" },
		{ "e/q/public", RO, ROOT, NULL },
	};

	(void)state;
	CHECK(text, NULL, rows);
}

static void test_unclassified(void **state)
{
	static const char warn[] =
		"version = 1;\n"
		"allow_write = ( { path = \"agent\"; reason = \"r\"; } );\n"
		"mask = ( { path = \"sandbox/firewall/logs\"; reason = \"r\"; } );\n";
	static const char mask[] =
		"version = 1;\nunclassified = \"mask\";\n"
		"allow_write = ( { path = \"agent\"; reason = \"r\"; } );\n"
		"mask = ( { path = \"sandbox/firewall/logs\"; reason = \"r\"; } );\n";
	static const struct row warn_rows[] = {
		{ "stray", RO, UNCL, NULL },
		{ "stray/deeper", RO, UNCL, NULL },
		{ "sandbox", RO, ROOT, NULL },		/* a prefix of a deeper rule */
		{ "sandbox/other", RO, ROOT, NULL },	/* only top-level entries are unclassified */
		{ "sandbox/firewall/logs", M, RULE, "sandbox/firewall/logs" },
		{ "agent", W, RULE, "agent" },
	};
	static const struct row mask_rows[] = {
		{ ".", RO, ROOT, NULL },
		{ "stray", M, UNCL, NULL },
		{ "stray/deeper", M, UNCL, NULL },
		{ "sandbox", RO, ROOT, NULL },
		{ "sandbox/other", RO, ROOT, NULL },
		{ "agent", W, RULE, "agent" },
	};

	/* no rule in force (all are for another runtime): still unclassified */
	static const char none[] =
		"version = 1;\nunclassified = \"mask\";\n"
		"mask = ( { path = \"work\"; reason = \"r\"; runtimes = [\"docker\"]; } );\n";
	static const struct row none_rows[] = {
		{ ".", RO, ROOT, NULL },
		{ "stray", M, UNCL, NULL },
		{ "work", M, UNCL, NULL },
		{ "work/compose.yml", M, UNCL, NULL },
	};
	static const struct row none_docker_rows[] = {
		{ "stray", M, UNCL, NULL },
		{ "work", M, RULE, "work" },
	};

	(void)state;
	CHECK(warn, NULL, warn_rows);
	CHECK(mask, NULL, mask_rows);
	CHECK(none, NULL, none_rows);
	CHECK(none, "docker", none_docker_rows);
}

static void test_dot_rule(void **state)
{
	static const char writable[] =
		"version = 1;\nunclassified = \"mask\";\n"
		"allow_write = ( { path = \".\"; reason = \"r\"; } );\n"
		"read_only = ( { path = \"aw-prompts\"; reason = \"r\"; } );\n"
		"mask = ( { path = \"mcp-logs\"; reason = \"r\"; } );\n";
	static const char read_only[] =
		"version = 1;\nread_only = ( { path = \".\"; reason = \"r\"; } );\n";
	static const struct row writable_rows[] = {
		{ ".", W, RULE, "." },
		{ "anything", W, RULE, "." },	/* named by ".", so not unclassified */
		{ "anything/deep", W, RULE, "." },
		{ "aw-prompts/x", RO, RULE, "aw-prompts" },
		{ "mcp-logs", M, RULE, "mcp-logs" },
	};
	static const struct row read_only_rows[] = {
		{ ".", RO, RULE, "." },
		{ "anything", RO, RULE, "." },
	};

	(void)state;
	CHECK(writable, NULL, writable_rows);
	CHECK(read_only, NULL, read_only_rows);
}

static void test_interning(void **state)
{
	struct fixture f = load(memory_policy, NULL);
	const struct awfs_state *root = classify_root(f.c);
	const struct awfs_state *agent = walk(f.c, "agent");
	const struct awfs_state *mask = walk(f.c, "mcp-logs");

	(void)state;
	/* equivalent paths share one state */
	assert_ptr_equal(walk(f.c, "cache-memory-a"), walk(f.c, "cache-memory-b"));
	assert_ptr_equal(walk(f.c, "cache-memory/.git"), walk(f.c, "cache-memory-a/.git"));
	assert_ptr_equal(walk(f.c, "stray-1"), walk(f.c, "stray-2"));
	assert_ptr_equal(classify_child(f.c, root, "sandbox"), classify_child(f.c, root, "sandbox"));
	assert_ptr_not_equal(walk(f.c, "cache-memory"), walk(f.c, "cache-memory-a"));
	/* below the last rule, and below a mask, the parent's state is returned */
	assert_ptr_equal(classify_child(f.c, agent, "x"), agent);
	assert_ptr_equal(walk(f.c, "agent/x/y/z"), agent);
	assert_ptr_equal(classify_child(f.c, mask, "x"), mask);
	assert_ptr_equal(walk(f.c, "mcp-logs/a/b"), mask);
	unload(&f);
}

static void test_anchored(void **state)
{
	static const char text[] =
		"version = 1;\n"
		"allow_write = ( { path = \"w\"; reason = \"r\"; }, { path = \"w/sub\"; reason = \"r\"; },\n"
		"                { path = \"w2\"; reason = \"r\"; } );\n"
		"mask = ( { path = \"w2/secret\"; reason = \"r\"; } );\n";
	struct fixture f = load(memory_policy, NULL), g = load(text, NULL);
	const struct awfs_rule *r;

	(void)state;
	r = classify_anchored(walk(f.c, "cache-memory"));
	assert_non_null(r);
	assert_string_equal(r->path, "cache-memory*/.git");
	assert_non_null(classify_anchored(walk(f.c, "cache-memory-x")));
	assert_non_null(classify_anchored(classify_root(f.c)));
	assert_null(classify_anchored(walk(f.c, "agent")));
	assert_null(classify_anchored(walk(f.c, "cache-memory/.git")));
	assert_null(classify_anchored(walk(f.c, "cache-memory/notes")));
	assert_null(classify_anchored(walk(f.c, "mcp-logs")));

	assert_null(classify_anchored(walk(g.c, "w")));	/* only writable rules below */
	r = classify_anchored(walk(g.c, "w2"));
	assert_non_null(r);
	assert_string_equal(r->path, "w2/secret");
	unload(&f);
	unload(&g);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The fixed masks of @path, sorted and joined with spaces. */
static char *fixed(struct awfs_classifier *c, const char *path)
{
	const char *const *names;
	size_t n = classify_fixed_masks(walk(c, path), &names);
	const char **v = util_xcalloc(n, sizeof(*v));
	char *s = util_xstrdup(""), *t;

	memcpy(v, names, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++, s = t) {
		t = util_xasprintf("%s%s%s", s, i ? " " : "", v[i]);
		free(s);
	}
	free(v);
	return s;
}

static void test_fixed_masks(void **state)
{
	static const char text[] =
		"version = 1;\n"
		"mask = ( { path = \"mcp-logs\"; reason = \"r\"; }, { path = \"proxy-*\"; reason = \"r\"; },\n"
		"         { path = \"sandbox/firewall/logs\"; reason = \"r\"; },\n"
		"         { path = \"sandbox/firewall/audit\"; reason = \"r\"; },\n"
		"         { path = \"sandbox/firewall/*.pcap\"; reason = \"r\"; },\n"
		"         { path = \"work\"; reason = \"r\"; runtimes = [\"docker\"]; } );\n"
		"read_only = ( { path = \"models.json\"; reason = \"r\"; } );\n";
	static const struct {
		const char *runtime, *path, *names;
	} cases[] = {
		{ NULL, ".", "mcp-logs" },	/* not the glob, not the deeper ones */
		{ "docker", ".", "mcp-logs work" },
		{ NULL, "sandbox", "" },
		{ NULL, "sandbox/firewall", "audit logs" },
		{ NULL, "sandbox/firewall/logs", "" },
		{ NULL, "mcp-logs", "" },
	};

	(void)state;
	for (size_t i = 0; i < AWFS_ARRAY_LEN(cases); i++) {
		struct fixture f = load(text, cases[i].runtime);
		char *got = fixed(f.c, cases[i].path);

		assert_string_equal(got, cases[i].names);
		free(got);
		unload(&f);
	}
}

/* 10,000 rules, 100,000 lookups: every answer checked, no timing asserted. */
static void test_large_policy(void **state)
{
	enum { FAMILIES = 2499, LOOKUPS = 100000 };
	static const struct {
		const char *fmt;
		enum awfs_class cls;
		enum awfs_origin origin;
	} kinds[] = {
		{ "proj%d", W, RULE },
		{ "proj%d/src/main.c", W, RULE },
		{ "proj%d/.git", RO, RULE },
		{ "proj%d/.git/objects/ab", RO, RULE },
		{ "proj%d/secrets", M, RULE },
		{ "logs%d/today", M, RULE },
		{ "cache-2-x/y", M, RULE },
		{ "other%d", RO, UNCL },
	};
	char *text = NULL, path[64];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct fixture fx;

	(void)state;
	fputs("version = 1;\nallow_write = (\n", f);
	for (int i = 0; i < FAMILIES; i++)
		fprintf(f, "%s{ path = \"proj%d\"; reason = \"r\"; }\n", i ? "," : "", i);
	fputs(");\nread_only = (\n", f);
	for (int i = 0; i < FAMILIES; i++)
		fprintf(f, "%s{ path = \"proj%d/.git\"; reason = \"r\"; }\n", i ? "," : "", i);
	fputs(");\nmask = (\n", f);
	for (int i = 0; i < FAMILIES; i++)
		fprintf(f, "{ path = \"proj%d/secrets\"; reason = \"r\"; },\n{ path = \"logs%d\"; reason = \"r\"; },\n",
			i, i);
	for (int i = 0; i < 4; i++)
		fprintf(f, "%s{ path = \"cache-%d-*\"; reason = \"r\"; }\n", i ? "," : "", i);
	fputs(");\n", f);
	fclose(f);

	fx = load(text, NULL);
	assert_int_equal(fx.p->nrules, 10000);
	for (int n = 0; n < LOOKUPS; n++) {
		size_t k = (size_t)n % AWFS_ARRAY_LEN(kinds);
		int fam = (int)(((unsigned)n * 7919u) % FAMILIES);
		const struct awfs_state *s;

		snprintf(path, sizeof(path), kinds[k].fmt, fam);
		s = walk(fx.c, path);
		if (classify_class(s) != kinds[k].cls || classify_origin(s) != kinds[k].origin)
			fail_msg("%s: class %s origin %d", path, policy_class_key(classify_class(s)),
				 (int)classify_origin(s));
	}
	assert_string_equal(classify_rule(walk(fx.c, "proj1234/.git/x"))->path, "proj1234/.git");
	assert_string_equal(classify_rule(walk(fx.c, "logs2498/a/b"))->path, "logs2498");
	assert_string_equal(classify_rule(walk(fx.c, "cache-3-z"))->path, "cache-3-*");
	assert_null(classify_rule(walk(fx.c, "proj2499")));	/* one past the last family */
	unload(&fx);
	free(text);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_literal_beats_glob),
		cmocka_unit_test(test_stricter_wins),
		cmocka_unit_test(test_runtimes),
		cmocka_unit_test(test_read_only_inside_writable),
		cmocka_unit_test(test_masks),
		cmocka_unit_test(test_unclassified),
		cmocka_unit_test(test_dot_rule),
		cmocka_unit_test(test_interning),
		cmocka_unit_test(test_anchored),
		cmocka_unit_test(test_fixed_masks),
		cmocka_unit_test(test_large_policy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
