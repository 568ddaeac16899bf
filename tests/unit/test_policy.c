/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_policy.c - the policy loader against fixture files.
 *
 * Every file in policies/good/ must load to exactly the rule set its table
 * row names; every file in policies/bad/ must be refused with exactly the
 * lines of its sibling NAME.expect (messages name the file by its base name,
 * so the expected text does not depend on where the tree is checked out).
 * policy_load() is tested on temporary copies for its owner and mode checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "policy.h"

#include "slurp.h"

#define FIXTURES AWFS_TEST_SRCDIR "/policies"
#define SHIPPED AWFS_TEST_SRCDIR "/../../etc/awfs/policy.conf"
#define MAX_BAD 256

static void print_msgs(const char *what, const struct awfs_msgs *m)
{
	print_message("%s (%zu):\n", what, m->n);
	for (size_t i = 0; i < m->n; i++)
		print_message("  %s\n", m->v[i]);
}

/*
 * The rule set in one line: "class:path" per rule in load order, with
 * "+create" and "@rt,rt" when set. Caller frees.
 */
static char *summary(const struct awfs_policy *p)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	for (size_t i = 0; i < p->nrules; i++) {
		const struct awfs_rule *r = &p->rules[i];

		fprintf(f, "%s%s:%s%s%s", i ? " " : "", policy_class_key(r->cls), r->path,
			r->create ? "+create" : "", r->create_file ? "=file" : "");
		for (size_t j = 0; r->runtimes && r->runtimes[j]; j++)
			fprintf(f, "%c%s", j ? ',' : '@', r->runtimes[j]);
	}
	fclose(f);
	return s;
}

/* ------------------------------------------------------------ good fixtures */

struct good_case {
	const char *file;
	const char *runtime;
	const char *root;
	enum awfs_unclassified unclassified;
	size_t nskipped;
	const char *rules;
};

static const struct good_case good_cases[] = {
	{ "minimal", NULL, NULL, AWFS_UNCLASSIFIED_WARN, 0, "" },
	{ "empty-lists", NULL, NULL, AWFS_UNCLASSIFIED_WARN, 0, "" },
	{ "shipped", NULL, "/tmp/gh-aw", AWFS_UNCLASSIFIED_WARN, 0,
	  "allow_write:agent+create allow_write:cache-memory+create allow_write:cache-memory-* "
	  "allow_write:repo-memory/* allow_write:agent-step-summary.md+create=file "
	  "allow_write:sandbox/agent/logs+create allow_write:sandbox/agent/session-state+create "
	  "read_only:cache-memory*/.git read_only:repo-memory/*/.git read_only:mcp-payloads "
	  "read_only:aw-prompts read_only:models.json read_only:difc-proxy-tls read_only:aw_info.json "
	  "mask:mcp-logs mask:sandbox/firewall/logs mask:sandbox/firewall/audit mask:proxy-logs "
	  "mask:aw-mcp/logs mask:mcp-scripts/logs" },
	{ "root-absolute", NULL, "/tmp/gh-aw", AWFS_UNCLASSIFIED_WARN, 0,
	  "allow_write:agent+create read_only:. mask:mcp-logs mask:sandbox/firewall/logs" },
	{ "runtimes", NULL, NULL, AWFS_UNCLASSIFIED_WARN, 4,
	  "allow_write:agent mask:mcp-logs" },
	{ "runtimes", "docker", NULL, AWFS_UNCLASSIFIED_WARN, 3,
	  "allow_write:agent mask:mcp-logs mask:work@docker" },
	{ "runtimes", "nvx", NULL, AWFS_UNCLASSIFIED_WARN, 2,
	  "allow_write:agent allow_write:guest-scratch@guest,nvx mask:mcp-logs "
	  "mask:vm-state@cloud-hypervisor,nvx,qemu" },
	{ "runtimes", "qemu", NULL, AWFS_UNCLASSIFIED_WARN, 3,
	  "allow_write:agent mask:mcp-logs mask:vm-state@cloud-hypervisor,nvx,qemu" },
	{ "runtimes", "host-user", NULL, AWFS_UNCLASSIFIED_WARN, 3,
	  "allow_write:agent read_only:snapshots@host-user mask:mcp-logs" },
	{ "globs", NULL, NULL, AWFS_UNCLASSIFIED_WARN, 0,
	  "allow_write:cache-memory-* allow_write:repo-memory/* allow_write:run-? "
	  "allow_write:logs/[a-m]* read_only:cache-memory*/.git read_only:repo-memory/*/.git" },
	{ "root-writable", NULL, NULL, AWFS_UNCLASSIFIED_WARN, 0,
	  "allow_write:. read_only:aw-prompts mask:mcp-logs" },
	{ "unclassified-mask", NULL, NULL, AWFS_UNCLASSIFIED_MASK, 0, "allow_write:agent+create" },
	{ "disjoint-runtimes", NULL, NULL, AWFS_UNCLASSIFIED_WARN, 2, "" },
	{ "disjoint-runtimes", "docker", NULL, AWFS_UNCLASSIFIED_WARN, 1, "mask:work@docker" },
	{ "disjoint-runtimes", "cloud-hypervisor", NULL, AWFS_UNCLASSIFIED_WARN, 1,
	  "allow_write:work@nvx,cloud-hypervisor" },
	{ "create-kinds", NULL, "/", AWFS_UNCLASSIFIED_WARN, 0,
	  "allow_write:tmp/gh-aw/agent+create allow_write:tmp/gh-aw/sandbox+create "
	  "allow_write:tmp/gh-aw/agent-step-summary.md+create=file allow_write:tmp/gh-aw/cache "
	  "read_only:." },
	{ "literal-beside-glob-mask", NULL, NULL, AWFS_UNCLASSIFIED_WARN, 0,
	  "allow_write:cache-memory-* mask:cache-memory-secret" },
};

/* One row of good_cases: loads, with exactly the expected rule set. */
static void test_good(void **state)
{
	const struct good_case *tc = *state;
	char path[PATH_MAX], name[NAME_MAX];
	struct awfs_msgs errs = { 0 };
	struct awfs_policy *p;
	char *text, *got;

	snprintf(path, sizeof(path), FIXTURES "/good/%s.conf", tc->file);
	snprintf(name, sizeof(name), "%s.conf", tc->file);
	text = slurp(path);
	p = policy_parse(text, name, tc->runtime, &errs);
	if (!p)
		print_msgs("unexpected errors", &errs);
	assert_non_null(p);
	assert_int_equal(errs.n, 0);
	assert_int_equal(p->version, 1);
	assert_string_equal(p->file, name);
	if (tc->runtime)
		assert_string_equal(p->runtime, tc->runtime);
	else
		assert_null(p->runtime);
	if (tc->root)
		assert_string_equal(p->root, tc->root);
	else
		assert_null(p->root);
	assert_int_equal(p->unclassified, tc->unclassified);
	assert_int_equal(p->nskipped, tc->nskipped);
	got = summary(p);
	assert_string_equal(got, tc->rules);
	free(got);
	policy_free(p);
	free(text);
}

/* Every good fixture loads cleanly for every runtime, and every rule has a reason. */
static void test_good_every_runtime(void **state)
{
	glob_t g;

	(void)state;
	assert_int_equal(glob(FIXTURES "/good/*.conf", 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 8);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char *text = slurp(g.gl_pathv[i]);
		const char *rt;
		size_t k = 0;

		do {	/* each named runtime, then the NULL that ends the list */
			struct awfs_msgs errs = { 0 };
			struct awfs_policy *p;

			rt = policy_runtime_names[k++];
			p = policy_parse(text, "good.conf", rt, &errs);
			if (!p)
				print_msgs(g.gl_pathv[i], &errs);
			assert_non_null(p);
			for (size_t r = 0; r < p->nrules; r++) {
				assert_non_null(p->rules[r].reason);
				assert_true(p->rules[r].line > 0);
			}
			policy_free(p);
		} while (rt);
		free(text);
	}
	globfree(&g);
}

/* The policy installed by make install parses, whatever the fixture copy says. */
static void test_installed_policy(void **state)
{
	char *text = slurp(SHIPPED);
	struct awfs_msgs errs = { 0 };
	struct awfs_policy *p = policy_parse(text, "policy.conf", "docker", &errs);

	(void)state;
	if (!p)
		print_msgs(SHIPPED, &errs);
	assert_non_null(p);
	assert_true(p->nrules > 0);
	policy_free(p);
	free(text);
}

/* Split paths, literal flags, lines and reasons are filled in. */
static void test_rule_fields(void **state)
{
	static const char text[] =
		"version = 1;\n"
		"allow_write = (\n"
		"  { path = \".\"; reason = \"scratch everywhere\"; },\n"
		"  { path = \"logs/[a-m]*/today\"; reason = \"some logs\"; }\n"
		");\n";
	struct awfs_msgs errs = { 0 };
	struct awfs_policy *p = policy_parse(text, "fields.conf", NULL, &errs);
	const struct awfs_rule *r;

	(void)state;
	assert_non_null(p);
	assert_int_equal(p->nrules, 2);
	r = &p->rules[0];
	assert_string_equal(r->path, ".");
	assert_int_equal(r->ncomps, 0);
	assert_int_equal(r->line, 3);
	assert_string_equal(r->reason, "scratch everywhere");
	assert_null(r->runtimes);
	assert_true(policy_rule_is_literal(r));	/* "." names one path: the root */
	r = &p->rules[1];
	assert_false(policy_rule_is_literal(r));
	assert_int_equal(r->ncomps, 3);
	assert_string_equal(r->comps[0], "logs");
	assert_string_equal(r->comps[1], "[a-m]*");
	assert_string_equal(r->comps[2], "today");
	assert_true(r->literal[0]);
	assert_false(r->literal[1]);
	assert_true(r->literal[2]);
	assert_int_equal(r->line, 4);
	assert_true(policy_is_glob("a?") && policy_is_glob("[ab]") && !policy_is_glob("a-b.c"));
	policy_free(p);
}

/* Every problem is reported, not just the first; earlier messages are not ours. */
static void test_all_problems_reported(void **state)
{
	static const char text[] =
		"version = 1;\n"
		"mask = (\n"
		"  { path = \"a/../b\"; reason = \"r\"; },\n"
		"  { path = \"c\"; },\n"
		"  { path = \"d\"; reason = \"r\"; runtimes = [\"podman\"]; }\n"
		");\n";
	static const char good[] = "version = 1;\n";
	struct awfs_msgs errs = { 0 };
	struct awfs_policy *p;

	(void)state;
	assert_null(policy_parse(text, "many.conf", NULL, &errs));
	assert_int_equal(errs.n, 3);
	assert_true(strncmp(errs.v[0], "many.conf:3: ", 13) == 0);
	assert_true(strncmp(errs.v[1], "many.conf:4: ", 13) == 0);
	assert_true(strncmp(errs.v[2], "many.conf:5: ", 13) == 0);
	/* a list that already holds messages does not make a good policy fail */
	p = policy_parse(good, "good.conf", NULL, &errs);
	assert_non_null(p);
	assert_int_equal(errs.n, 3);
	policy_free(p);
	msgs_clear(&errs);
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * The set checks on a policy of 20,000 rules (sorted, not a pass over every
 * pair): each duplicate and each rule inside a mask is reported, in file
 * order, naming the earlier rule and the first mask in the file; the same
 * path in rules whose runtimes do not overlap is not a duplicate.
 */
static void test_set_checks_at_scale(void **state)
{
	size_t cap = 4 << 20, len = 0;
	char *text = malloc(cap);
	struct awfs_msgs errs = { 0 };

	(void)state;
	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "version = 1;\nallow_write = (\n");
	for (int i = 0; i < 20000; i++)	/* lines 3..20002 */
		len += (size_t)snprintf(text + len, cap - len, "  { path = \"d%d/*/x%d\"; reason = \"r\"; },\n", i, i);
	/* 20003: a duplicate of line 10; 20004: the same path, other runtimes:
	 * no overlap with line 20005's; 20006: inside two masks, the glob one first */
	len += (size_t)snprintf(text + len, cap - len,
		"  { path = \"d7/*/x7\"; reason = \"twice\"; },\n"
		"  { path = \"same\"; reason = \"r\"; runtimes = [\"docker\"]; },\n"
		"  { path = \"same\"; reason = \"r\"; runtimes = [\"nvx\"]; },\n"
		"  { path = \"m1/in\"; reason = \"inside\"; }\n);\n"
		"mask = ( { path = \"m*\"; reason = \"glob\"; },\n"	/* 20008 */
		"  { path = \"m1\"; reason = \"literal\"; },\n"		/* 20009 */
		"  { path = \"d3/*/x3\"; reason = \"in two classes\"; } );\n");	/* 20010 */
	assert_null(policy_parse(text, "big.conf", NULL, &errs));
	print_msgs("set checks", &errs);
	assert_int_equal(errs.n, 3);
	assert_true(starts_with(errs.v[0], "big.conf:20003: path \"d7/*/x7\" is already listed in allow_write at line 10."));
	assert_true(starts_with(errs.v[1], "big.conf:20010: path \"d3/*/x3\" is in mask here and in allow_write at line 6."));
	assert_true(starts_with(errs.v[2], "big.conf:20006: allow_write rule \"m1/in\" is inside the masked subtree \"m*\" (line 20008)."));
	msgs_clear(&errs);
	free(text);
}

/* ------------------------------------------------------------- bad fixtures */

/* Whether @msg has the shape NAME:LINE: what. Expected ... Example: ... */
static bool well_formed(const char *msg, const char *name)
{
	size_t n = strlen(name);
	const char *p = msg + n + 1;

	if (strncmp(msg, name, n) != 0 || msg[n] != ':' || *p < '1' || *p > '9')
		return false;
	p += strspn(p, "0123456789");
	return strncmp(p, ": ", 2) == 0 && strstr(p, ". Expected ") &&
	       strstr(strstr(p, ". Expected "), ". Example: ");
}

/* Refused, with exactly the lines of NAME.expect, whatever the runtime. */
static void test_bad(void **state)
{
	const char *conf = *state;
	char expect_path[PATH_MAX], name[NAME_MAX];
	char *text = slurp(conf), *expect, *save = NULL;
	char *lines[16];
	size_t nlines = 0;
	const char *runtimes[] = { NULL, "docker" };

	snprintf(name, sizeof(name), "%s", strrchr(conf, '/') + 1);
	snprintf(expect_path, sizeof(expect_path), "%.*s.expect", (int)(strlen(conf) - 5), conf);
	expect = slurp(expect_path);
	for (char *l = strtok_r(expect, "\n", &save); l && nlines < 16; l = strtok_r(NULL, "\n", &save))
		lines[nlines++] = l;
	assert_true(nlines > 0);

	for (size_t k = 0; k < AWFS_ARRAY_LEN(runtimes); k++) {
		struct awfs_msgs errs = { 0 };

		assert_null(policy_parse(text, name, runtimes[k], &errs));
		if (errs.n != nlines)
			print_msgs("got", &errs);
		assert_int_equal(errs.n, nlines);
		for (size_t i = 0; i < nlines; i++) {
			assert_string_equal(errs.v[i], lines[i]);
			if (!well_formed(errs.v[i], name))
				fail_msg("not FILE:LINE: what. Expected ... Example: ...: %s", errs.v[i]);
		}
		msgs_clear(&errs);
	}
	free(expect);
	free(text);
}

/* ------------------------------------------------------------- policy_load */

struct load_fixture {
	char dir[64];
	char file[96];
};

/* A private directory holding a 0644 copy of the shipped-policy fixture. */
static int load_setup(void **state)
{
	struct load_fixture *f = util_xcalloc(1, sizeof(*f));
	char *text = slurp(FIXTURES "/good/shipped.conf");
	int fd;

	snprintf(f->dir, sizeof(f->dir), "/tmp/awfs-test-policy-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->file, sizeof(f->file), "%s/policy.conf", f->dir);
	fd = open(f->file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fchmod(fd, 0644) < 0)
		return -1;
	close(fd);
	free(text);
	*state = f;
	return 0;
}

static int load_teardown(void **state)
{
	struct load_fixture *f = *state;

	unlink(f->file);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Load @file and expect it refused with the single message @want. */
static void assert_refused(const char *file, const char *want)
{
	struct awfs_msgs errs = { 0 };

	assert_null(policy_load(file, NULL, &errs));
	if (errs.n != 1)
		print_msgs("got", &errs);
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.v[0], want);
	msgs_clear(&errs);
}

static void test_load_ok(void **state)
{
	struct load_fixture *f = *state;
	struct awfs_msgs errs = { 0 };
	struct awfs_policy *p;
	struct stat st;

	assert_int_equal(stat(f->file, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_uid, geteuid());	/* root-owned when run as root */
	p = policy_load(f->file, "docker", &errs);
	if (!p)
		print_msgs("got", &errs);
	assert_non_null(p);
	assert_string_equal(p->file, f->file);
	assert_int_equal(p->nrules, 20);
	policy_free(p);
	/* group- and other-readable is fine, only writable is not */
	assert_int_equal(chmod(f->file, 0400), 0);
	p = policy_load(f->file, NULL, &errs);
	assert_non_null(p);
	assert_int_equal(errs.n, 0);
	policy_free(p);
}

static void test_load_writable(void **state)
{
	static const mode_t modes[] = { 0664, 0646, 0620, 0602, 0666 };
	struct load_fixture *f = *state;

	for (size_t i = 0; i < AWFS_ARRAY_LEN(modes); i++) {
		char *want = util_xasprintf("%s: the policy is writable by group or others (mode %04o). Expected mode 0644 or stricter: chmod go-w %s",
					    f->file, (unsigned)modes[i], f->file);

		assert_int_equal(chmod(f->file, modes[i]), 0);
		assert_refused(f->file, want);
		free(want);
	}
}

static void test_load_foreign_owner(void **state)
{
	struct load_fixture *f = *state;
	char *want;

	if (geteuid() != 0) {
		print_message("skipped: chown to another uid needs root\n");
		skip();
	}
	assert_int_equal(chown(f->file, 12345, 12345), 0);
	want = util_xasprintf("%s: the policy is owned by uid 12345, neither root nor the user running awfs. Expected a policy owned by root (or by uid 0): chown root %s",
			      f->file, f->file);
	assert_refused(f->file, want);
	free(want);
}

static void test_load_missing(void **state)
{
	struct load_fixture *f = *state;
	char *missing = util_xasprintf("%s/no-such.conf", f->dir);
	char *want = util_xasprintf("%s: cannot open the policy: No such file or directory", missing);

	assert_refused(missing, want);
	free(want);
	free(missing);
}

static void test_load_directory(void **state)
{
	struct load_fixture *f = *state;
	char *want = util_xasprintf("%s: the policy is not a regular file. Expected a file such as /etc/awfs/policy.conf.",
				    f->dir);

	assert_refused(f->dir, want);
	free(want);
}

static void test_load_fifo(void **state)
{
	struct load_fixture *f = *state;
	char *want = util_xasprintf("%s: the policy is not a regular file. Expected a file such as /etc/awfs/policy.conf.",
				    f->file);

	/* refused at once, not by blocking until a writer shows up */
	assert_int_equal(unlink(f->file), 0);
	assert_int_equal(mkfifo(f->file, 0644), 0);
	assert_refused(f->file, want);
	free(want);
}

static void test_load_nul_byte(void **state)
{
	struct load_fixture *f = *state;
	char *want = util_xasprintf("%s: the policy contains a NUL byte. Expected a text file.", f->file);
	int fd = open(f->file, O_WRONLY | O_APPEND | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\0", 1), 1);
	close(fd);
	assert_refused(f->file, want);
	free(want);
}

static void test_load_too_large(void **state)
{
	struct load_fixture *f = *state;
	char *want = util_xasprintf("%s: the policy is larger than 16 MiB. Expected a policy file of reasonable size.",
				    f->file);

	assert_int_equal(truncate(f->file, (16 << 20) + 1), 0);	/* sparse */
	assert_refused(f->file, want);
	free(want);
}

/* Parse errors from a loaded file name the file as it was given. */
static void test_load_parse_error(void **state)
{
	struct load_fixture *f = *state;
	char *want = util_xasprintf("%s:2: unclassified must be \"warn\" or \"mask\". Expected \"warn\" (serve read-only and log) or \"mask\" (serve empty and log). Example: unclassified = \"warn\";",
				    f->file);
	FILE *out = fopen(f->file, "w");

	assert_non_null(out);
	fputs("version = 1;\nunclassified = \"deny\";\n", out);
	fclose(out);
	assert_refused(f->file, want);
	free(want);
}

/* ------------------------------------------------------------------- main */

int main(void)
{
	static const struct CMUnitTest other[] = {
		cmocka_unit_test(test_good_every_runtime),
		cmocka_unit_test(test_installed_policy),
		cmocka_unit_test(test_rule_fields),
		cmocka_unit_test(test_all_problems_reported),
		cmocka_unit_test(test_set_checks_at_scale),
	};
	static const struct CMUnitTest load[] = {
		cmocka_unit_test_setup_teardown(test_load_ok, load_setup, load_teardown),
		cmocka_unit_test_setup_teardown(test_load_writable, load_setup, load_teardown),
		cmocka_unit_test_setup_teardown(test_load_foreign_owner, load_setup, load_teardown),
		cmocka_unit_test_setup_teardown(test_load_missing, load_setup, load_teardown),
		cmocka_unit_test_setup_teardown(test_load_directory, load_setup, load_teardown),
		cmocka_unit_test_setup_teardown(test_load_fifo, load_setup, load_teardown),
		cmocka_unit_test_setup_teardown(test_load_nul_byte, load_setup, load_teardown),
		cmocka_unit_test_setup_teardown(test_load_too_large, load_setup, load_teardown),
		cmocka_unit_test_setup_teardown(test_load_parse_error, load_setup, load_teardown),
	};
	struct CMUnitTest good[AWFS_ARRAY_LEN(good_cases)], bad[MAX_BAD];
	glob_t g;
	int failed;

	for (size_t i = 0; i < AWFS_ARRAY_LEN(good_cases); i++)
		good[i] = (struct CMUnitTest){
			.name = util_xasprintf("%s.conf%s%s", good_cases[i].file,
					       good_cases[i].runtime ? " --runtime " : "",
					       good_cases[i].runtime ? good_cases[i].runtime : ""),
			.test_func = test_good,
			.initial_state = (void *)&good_cases[i],
		};

	/* one test per bad fixture, named after it, so a new file needs no code */
	if (glob(FIXTURES "/bad/*.conf", 0, NULL, &g) != 0 || g.gl_pathc < 30 || g.gl_pathc > MAX_BAD) {
		fprintf(stderr, "test_policy: expected 30 to %d fixtures in %s/bad\n", MAX_BAD, FIXTURES);
		return 1;
	}
	for (size_t i = 0; i < g.gl_pathc; i++)
		bad[i] = (struct CMUnitTest){
			.name = strrchr(g.gl_pathv[i], '/') + 1,
			.test_func = test_bad,
			.initial_state = g.gl_pathv[i],
		};

	failed = _cmocka_run_group_tests("good policies", good, AWFS_ARRAY_LEN(good), NULL, NULL);
	failed += cmocka_run_group_tests_name("policy details", other, NULL, NULL);
	failed += _cmocka_run_group_tests("bad policies", bad, g.gl_pathc, NULL, NULL);
	failed += cmocka_run_group_tests_name("policy_load", load, NULL, NULL);
	for (size_t i = 0; i < AWFS_ARRAY_LEN(good); i++)
		free((char *)good[i].name);
	globfree(&g);
	return failed != 0;
}
