/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_grants.c - the engine's tool-permission string, as tables.
 *
 * Parsing: real-looking permission strings and what they parse to, then
 * malformed ones with their exact messages. Coverage: per grant string, the
 * exact list of findings (severity and path, in output order), checked
 * against the shipped policy and against a small policy written here that
 * reproduces the seed (cache-memory granted to the engine, not writable).
 * Last, inputs no engine would write, which must only never crash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "classify.h"
#include "grants.h"
#include "policy.h"

#include "slurp.h"

#define SHIPPED AWFS_TEST_SRCDIR "/policies/good/shipped.conf"
#define ROOT "/tmp/gh-aw"

static const char *const sev_names[] = {
	[AWFS_FINDING_ERROR] = "ERROR",
	[AWFS_FINDING_BROAD] = "BROAD",
	[AWFS_FINDING_EXCEPT] = "EXCEPT",
	[AWFS_FINDING_ACK] = "ACK",
	[AWFS_FINDING_NOTE] = "NOTE",
};

static char *append(char *s, const char *sep, const char *t)
{
	char *r = util_xasprintf("%s%s%s", s, *s ? sep : "", t);

	free(s);
	return r;
}

/* ------------------------------------------------------------ parsing */

/*
 * A parse as one line: per grant "tool", or "tool<arg>" when it has
 * parentheses, with a leading "+" when it writes; " | " between grants.
 */
static char *render(const struct awfs_grants *g)
{
	char *s = util_xstrdup(""), *one;

	for (size_t i = 0; i < g->n; i++) {
		if (g->v[i].arg)
			one = util_xasprintf("%s%s<%s>", g->v[i].writes ? "+" : "", g->v[i].tool, g->v[i].arg);
		else
			one = util_xasprintf("%s%s", g->v[i].writes ? "+" : "", g->v[i].tool);
		s = append(s, " | ", one);
		free(one);
	}
	return s;
}

struct parse_row {
	const char *in;
	const char *want;
};

static const struct parse_row parse_rows[] = {
	/* the seed's string, as the compiler emitted it */
	{ "Bash(git:*),Read,Write(/tmp/gh-aw/cache-memory/*),Edit(/tmp/gh-aw/cache-memory/*),MultiEdit(/tmp/gh-aw/cache-memory/*)",
	  "Bash<git:*> | Read | +Write</tmp/gh-aw/cache-memory/*> | +Edit</tmp/gh-aw/cache-memory/*> | +MultiEdit</tmp/gh-aw/cache-memory/*>" },
	/* gh-aw's default tool list: bare Edit, MultiEdit, NotebookEdit and Write write; TodoWrite does not */
	{ "Bash(cat),Bash(date),Bash(echo),Bash(grep),Bash(head),Bash(ls),Bash(pwd),Bash(sort),Bash(tail),Bash(uniq),Bash(wc),Bash(yq),BashOutput,Edit,ExitPlanMode,Glob,Grep,KillBash,LS,MultiEdit,NotebookEdit,NotebookRead,Read,Task,TodoWrite,Write,mcp__github__get_issue,mcp__github__list_pull_requests",
	  "Bash<cat> | Bash<date> | Bash<echo> | Bash<grep> | Bash<head> | Bash<ls> | Bash<pwd> | Bash<sort> | Bash<tail> | Bash<uniq> | Bash<wc> | Bash<yq> | BashOutput | +Edit | ExitPlanMode | Glob | Grep | KillBash | LS | +MultiEdit | +NotebookEdit | NotebookRead | Read | Task | TodoWrite | +Write | mcp__github__get_issue | mcp__github__list_pull_requests" },
	{ "Bash(git add:*),Bash(git branch:*),Bash(git checkout:*),Bash(git commit:*),Bash(git merge:*),Bash(git rm:*),Bash(git status),Bash(git switch:*)",
	  "Bash<git add:*> | Bash<git branch:*> | Bash<git checkout:*> | Bash<git commit:*> | Bash<git merge:*> | Bash<git rm:*> | Bash<git status> | Bash<git switch:*>" },
	/* spaces around entries and arguments */
	{ "  Bash(git:*) ,  Read ,Write( /tmp/gh-aw/agent/** )  ",
	  "Bash<git:*> | Read | +Write</tmp/gh-aw/agent/**>" },
	{ "Bash (git log:*), Edit ( /tmp/gh-aw/agent/x.md )", "Bash<git log:*> | +Edit</tmp/gh-aw/agent/x.md>" },
	{ "\tRead\t,\tGlob\t", "Read | Glob" },
	/* one entry a line, with CRLF or blank lines */
	{ "Bash(git:*)\nRead\nWrite(/tmp/gh-aw/agent/**)\n", "Bash<git:*> | Read | +Write</tmp/gh-aw/agent/**>" },
	{ "Read\r\nWrite(/tmp/x)\r\n", "Read | +Write</tmp/x>" },
	{ "Read,\nWrite(/a),\n\n  Edit(/b)\n", "Read | +Write</a> | +Edit</b>" },
	/* the whole string quoted, for a shell */
	{ "'Bash(git:*),Read,Write(/tmp/gh-aw/agent/**)'", "Bash<git:*> | Read | +Write</tmp/gh-aw/agent/**>" },
	{ "\"Bash(git:*),Read,Write(/tmp/gh-aw/agent/**)\"", "Bash<git:*> | Read | +Write</tmp/gh-aw/agent/**>" },
	/* each entry quoted, and both at once */
	{ "\"Bash(git log:*)\", \"Read\",\"Write(/tmp/gh-aw/agent/**)\"", "Bash<git log:*> | Read | +Write</tmp/gh-aw/agent/**>" },
	{ "'\"Write(/a)\",\"Read\"'", "+Write</a> | Read" },
	{ "Bash(x),\"Write(/a),Read\"", "Bash<x> | +Write</a> | Read" },
	/* a quoted argument */
	{ "Write(\"/tmp/gh-aw/agent/x.md\"),Edit( '/tmp/gh-aw/agent/y.md' )",
	  "+Write</tmp/gh-aw/agent/x.md> | +Edit</tmp/gh-aw/agent/y.md>" },
	/* commas, parentheses and quotes inside a Bash argument */
	{ "Bash(echo a,b),Read", "Bash<echo a,b> | Read" },
	{ "Bash(echo $(date +%s)),Bash(test -f x && (cat x || true)),Read",
	  "Bash<echo $(date +%s)> | Bash<test -f x && (cat x || true)> | Read" },
	/* inside parentheses quotes are text: an apostrophe needs no partner */
	{ "Write(\"/tmp/x)", "+Write<\"/tmp/x>" },
	{ "Bash(echo it's),Bash(printf '%s,%s' a b)", "Bash<echo it's> | Bash<printf '%s,%s' a b>" },
	{ "Bash(git commit -m \"fix: a, b (c)\"),Bash(jq '.items[] | select(.x)')",
	  "Bash<git commit -m \"fix: a, b (c)\"> | Bash<jq '.items[] | select(.x)'>" },
	{ "Bash(echo a\nb),Read", "Bash<echo a\nb> | Read" },
	/* MCP and other tool names */
	{ "mcp__github__get_issue,mcp__github__search_code,mcp__safeoutputs__create_issue,mcp__playwright__browser_navigate",
	  "mcp__github__get_issue | mcp__github__search_code | mcp__safeoutputs__create_issue | mcp__playwright__browser_navigate" },
	{ "mcp__my-server__do.thing,server:tool,WebFetch(domain:github.com),WebSearch",
	  "mcp__my-server__do.thing | server:tool | WebFetch<domain:github.com> | WebSearch" },
	/* empty entries, leading and trailing commas */
	{ "Read,,Write(/a),,,", "Read | +Write</a>" },
	{ ",Read,", "Read" },
	{ ", ,\n,", "" },
	{ "", "" },
	{ "\"\",''", "" },
	/* Claude Code's absolute form; tool names are case-sensitive */
	{ "Edit(//tmp/gh-aw/agent/**)", "+Edit<//tmp/gh-aw/agent/**>" },
	{ "write(/a),WRITE(/b),NotebookEdit(/c),Writer(/d)", "write</a> | WRITE</b> | +NotebookEdit</c> | Writer</d>" },
	/* empty parentheses: an empty argument, not none */
	{ "Write()", "+Write<>" },
};

static void test_parse_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < AWFS_ARRAY_LEN(parse_rows); i++) {
		struct awfs_msgs errs = { 0 };
		struct awfs_grants g;
		char *got;

		if (grants_parse(parse_rows[i].in, &g, &errs) != 0)
			fail_msg("row %zu: refused: %s", i, errs.n ? errs.v[0] : "(no message)");
		assert_int_equal(errs.n, 0);
		got = render(&g);
		if (strcmp(got, parse_rows[i].want) != 0)
			fail_msg("row %zu: got\n  %s\nexpected\n  %s", i, got, parse_rows[i].want);
		free(got);
		grants_free(&g);
	}
}

/* The entry is kept as written, less the spaces and quotes around it. */
static void test_parse_entry_text(void **state)
{
	struct awfs_msgs errs = { 0 };
	struct awfs_grants g;

	(void)state;
	assert_int_equal(grants_parse(" \"Write( '/tmp/x' )\" ,\n 'Bash(echo \"a,b\")' ", &g, &errs), 0);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.v[0].entry, "Write( '/tmp/x' )");
	assert_string_equal(g.v[0].tool, "Write");
	assert_string_equal(g.v[0].arg, "/tmp/x");
	assert_true(g.v[0].writes);
	assert_string_equal(g.v[1].entry, "Bash(echo \"a,b\")");
	assert_string_equal(g.v[1].arg, "echo \"a,b\"");
	assert_false(g.v[1].writes);
	grants_free(&g);
	assert_int_equal(g.n, 0);
	assert_null(g.v);
}

struct bad_row {
	const char *in;
	const char *errs;	/* every message, in order, one a line */
};

#define EX "Example: Write(/tmp/gh-aw/agent/**)"
#define NEVER_CLOSED "unbalanced parentheses: this \"(\" is never closed. Expected a \")\" at the end of the argument. " EX
#define NO_OPEN "unbalanced parentheses: this \")\" has no matching \"(\". Expected the argument in one pair of parentheses right after the tool name. " EX
#define EMPTY_TOOL "empty tool name before \"(\". Expected the name of a tool such as Write, Edit or Bash. " EX
#define BAD_TOOL "Expected letters, digits, \"_\", \"-\", \".\" or \":\", and a comma or newline between entries. Example: Bash(git:*),Read,mcp__github__get_issue"
#define AFTER "Expected a comma or newline before the next entry. " EX ",Read"

static const struct bad_row bad_rows[] = {
	{ "Write(/tmp/gh-aw/agent/**", "column 6: " NEVER_CLOSED },
	{ "Read,Write(/a)x", "column 15: text after the closing parenthesis: \"x\". " AFTER },
	{ "Write(/a) Read", "column 11: text after the closing parenthesis: \"Read\". " AFTER },
	{ "(foo)", "column 1: " EMPTY_TOOL },
	{ "Read,  (foo),Glob", "column 8: " EMPTY_TOOL },
	{ "Read,'Write(/a)",
	  "column 6: unterminated quote: the ' opened here is never closed. Expected a closing ' before the end of the entry. Example: 'Write(/tmp/gh-aw/agent/**)'" },
	/* the price of taking quotes inside arguments as text: a quoted ")" closes */
	{ "Bash(echo \")\")",
	  "column 13: text after the closing parenthesis: \"\\\")\". Expected a comma or newline before the next entry. Example: Write(/tmp/gh-aw/agent/**),Read" },
	{ "Read)", "column 5: " NO_OPEN },
	{ "Write(/a))", "column 10: " NO_OPEN },
	{ "Wr ite(/a)", "column 3: invalid character \" \" in tool name \"Wr ite\". " BAD_TOOL },
	/* space-separated, as on Claude Code's command line: not this format */
	{ "Read Write", "column 5: invalid character \" \" in tool name \"Read Write\". " BAD_TOOL },
	/* control bytes and non-ASCII are escaped in the message */
	{ "Re\001ad,Wr\303\251te(/a)",
	  "column 3: invalid character \"\\x01\" in tool name \"Re\\x01ad\". " BAD_TOOL "\n"
	  "column 9: invalid character \"\\xc3\" in tool name \"Wr\303\251te\". " BAD_TOOL },
	/* every problem is reported, each at its column in the whole input */
	{ "(a),Bash(b,Edit(/c)", "column 1: " EMPTY_TOOL "\ncolumn 9: " NEVER_CLOSED },
	{ "Read\nWrite(/a)x\n(b)\nEdit(/c", "column 15: text after the closing parenthesis: \"x\". " AFTER
	  "\ncolumn 17: " EMPTY_TOOL "\ncolumn 25: " NEVER_CLOSED },
	/* a long tail is cut in the message */
	{ "Write(/a)xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	  "column 10: text after the closing parenthesis: \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\". " AFTER },
};

static void test_parse_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < AWFS_ARRAY_LEN(bad_rows); i++) {
		struct awfs_msgs errs = { 0 };
		struct awfs_grants g = { .v = (void *)&g, .n = 7 };	/* overwritten, not freed */
		char *got = util_xstrdup("");

		assert_int_equal(grants_parse(bad_rows[i].in, &g, &errs), -1);
		assert_int_equal(g.n, 0);
		assert_null(g.v);
		for (size_t k = 0; k < errs.n; k++)
			got = append(got, "\n", errs.v[k]);
		if (strcmp(got, bad_rows[i].errs) != 0)
			fail_msg("row %zu (%s): got\n%s\nexpected\n%s", i, bad_rows[i].in, got, bad_rows[i].errs);
		free(got);
		msgs_clear(&errs);
	}
}

/* Errors are appended after what @errs already holds. */
static void test_parse_appends_errors(void **state)
{
	struct awfs_msgs errs = { 0 };
	struct awfs_grants g;

	(void)state;
	msgs_add(&errs, "earlier");
	assert_int_equal(grants_parse("Read", &g, &errs), 0);
	assert_int_equal(g.n, 1);
	grants_free(&g);
	assert_int_equal(grants_parse("(x)", &g, &errs), -1);
	assert_int_equal(errs.n, 2);
	assert_string_equal(errs.v[0], "earlier");
	msgs_clear(&errs);
}

/*
 * Quoting, exactly as awfsctl(1) SYNTAX states it (each row is one of its
 * examples or claims): outside parentheses a quote only wraps; inside them a
 * quote is an ordinary character, the argument ends at the ")" that balances
 * the "(", and one pair around the whole argument is removed.
 */
static const struct parse_row doc_quote_rows[] = {
	/* "\"Write(/tmp/gh-aw/agent/x.md)\", \"Read\"" is two entries */
	{ "\"Write(/tmp/gh-aw/agent/x.md)\", \"Read\"", "+Write</tmp/gh-aw/agent/x.md> | Read" },
	/* Write("/tmp/x") is the argument /tmp/x */
	{ "Write(\"/tmp/x\")", "+Write</tmp/x>" },
	/* '"Write(/a)","Read"' is two entries: two levels unwrapped */
	{ "'\"Write(/a)\",\"Read\"'", "+Write</a> | Read" },
	/* Bash(echo it's) is fine, its argument is echo it's */
	{ "Bash(echo it's)", "Bash<echo it's>" },
	/* Write("/tmp/x) is the argument "/tmp/x, with its quote */
	{ "Write(\"/tmp/x)", "+Write<\"/tmp/x>" },
	/* quotes are kept unless one pair wraps the whole argument */
	{ "Write('/a'b)", "+Write<'/a'b>" },
	/* a quoted comma inside parentheses is text as any comma there is */
	{ "Bash(echo \"a,b\"),Read", "Bash<echo \"a,b\"> | Read" },
};

static const struct bad_row doc_quote_bad[] = {
	/* Bash(echo ")") is an error: the argument closes at the quoted ")" */
	{ "Bash(echo \")\")",
	  "column 13: text after the closing parenthesis: \"\\\")\". " AFTER },
	/* a quoted "(" inside the argument still counts: never closed */
	{ "Bash(echo \"(\")", "column 5: " NEVER_CLOSED },
	/* a quote anywhere else in a tool name is an error */
	{ "Read\"a,b\"", "column 5: invalid character \"\\\"\" in tool name \"Read\\\"a,b\\\"\". " BAD_TOOL },
};

static void test_parse_quotes_as_documented(void **state)
{
	(void)state;
	for (size_t i = 0; i < AWFS_ARRAY_LEN(doc_quote_rows); i++) {
		struct awfs_msgs errs = { 0 };
		struct awfs_grants g;
		char *got;

		if (grants_parse(doc_quote_rows[i].in, &g, &errs) != 0)
			fail_msg("row %zu (%s): refused: %s", i, doc_quote_rows[i].in,
				 errs.n ? errs.v[0] : "(no message)");
		got = render(&g);
		if (strcmp(got, doc_quote_rows[i].want) != 0)
			fail_msg("row %zu: got\n  %s\nexpected\n  %s", i, got, doc_quote_rows[i].want);
		free(got);
		grants_free(&g);
	}
	for (size_t i = 0; i < AWFS_ARRAY_LEN(doc_quote_bad); i++) {
		struct awfs_msgs errs = { 0 };
		struct awfs_grants g;
		char *got = util_xstrdup("");

		assert_int_equal(grants_parse(doc_quote_bad[i].in, &g, &errs), -1);
		for (size_t k = 0; k < errs.n; k++)
			got = append(got, "\n", errs.v[k]);
		if (strcmp(got, doc_quote_bad[i].errs) != 0)
			fail_msg("row %zu (%s): got\n%s\nexpected\n%s", i, doc_quote_bad[i].in, got,
				 doc_quote_bad[i].errs);
		free(got);
		msgs_clear(&errs);
	}
}

/* ------------------------------------------------------------ coverage */

struct fixture {
	struct awfs_policy *p;
	struct awfs_classifier *c;
};

static struct fixture load(const char *text, const char *name)
{
	struct awfs_msgs errs = { 0 };
	struct fixture f = { .p = policy_parse(text, name, NULL, &errs) };

	for (size_t i = 0; i < errs.n; i++)
		print_error("%s\n", errs.v[i]);
	assert_non_null(f.p);
	msgs_clear(&errs);
	f.c = classify_new(f.p);
	return f;
}

static struct fixture load_shipped(void)
{
	char *text = slurp(SHIPPED);
	struct fixture f = load(text, "shipped.conf");

	free(text);
	return f;
}

static void unload(struct fixture *f)
{
	classify_free(f->c);
	policy_free(f->p);
}

/* Parse @grants (which must be well-formed) and check it. */
static void check(struct fixture *f, const char *grants, const char *root, struct awfs_findings *out)
{
	struct awfs_msgs errs = { 0 };
	struct awfs_grants g;

	if (grants_parse(grants, &g, &errs) != 0)
		fail_msg("%s: refused: %s", grants, errs.v[0]);
	grants_check(&g, f->c, f->p, root, out);
	grants_free(&g);
}

struct cov_row {
	const char *grants;
	/*
	 * The findings in output order, one a line: "SEVERITY path", and
	 * optionally " ~ text" that the finding's text must contain.
	 */
	const char *want;
};

static void print_findings(const struct awfs_findings *f)
{
	for (size_t i = 0; i < f->n; i++)
		print_message("  %s %s (%s): %s\n", sev_names[f->v[i].severity], f->v[i].path,
			      f->v[i].entry, f->v[i].text);
}

static void check_rows(struct fixture *f, const char *root, const struct cov_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct awfs_findings out = { 0 };
		char *want = util_xstrdup(rows[i].want), *save = NULL, *line;
		size_t k = 0;

		check(f, rows[i].grants, root, &out);
		for (line = strtok_r(want, "\n", &save); line; line = strtok_r(NULL, "\n", &save), k++) {
			char *needle = strstr(line, " ~ "), *got;

			if (needle) {
				*needle = '\0';
				needle += 3;
			}
			if (k >= out.n) {
				print_findings(&out);
				fail_msg("%s: %zu findings, expected more (next: %s)", rows[i].grants, out.n, line);
			}
			got = util_xasprintf("%s %s", sev_names[out.v[k].severity], out.v[k].path);
			if (strcmp(got, line) != 0) {
				print_findings(&out);
				fail_msg("%s: finding %zu is \"%s\", expected \"%s\"", rows[i].grants, k, got, line);
			}
			if (needle && !strstr(out.v[k].text, needle)) {
				print_findings(&out);
				fail_msg("%s: finding %zu: \"%s\" does not say \"%s\"", rows[i].grants, k,
					 out.v[k].text, needle);
			}
			free(got);
		}
		if (k != out.n) {
			print_findings(&out);
			fail_msg("%s: %zu findings, expected %zu", rows[i].grants, out.n, k);
		}
		free(want);
		grants_findings_free(&out);
	}
}

static const struct cov_row shipped_rows[] = {
	/* the seed's string: covered, but the host's .git is not the agent's */
	{ "Bash(git:*),Read,Write(/tmp/gh-aw/cache-memory/*),Edit(/tmp/gh-aw/cache-memory/*),MultiEdit(/tmp/gh-aw/cache-memory/*)",
	  "NOTE /tmp/gh-aw/cache-memory/* ~ covered by allow_write rule \"cache-memory\" (shipped.conf:40), with 1 exception\n"
	  "EXCEPT /tmp/gh-aw/cache-memory/.git ~ read-only by read_only rule \"cache-memory*/.git\" (shipped.conf:63: \n"
	  "NOTE /tmp/gh-aw/cache-memory/*\n"
	  "EXCEPT /tmp/gh-aw/cache-memory/.git\n"
	  "NOTE /tmp/gh-aw/cache-memory/*\n"
	  "EXCEPT /tmp/gh-aw/cache-memory/.git" },
	{ "Write(/tmp/gh-aw/cache-memory/**)",
	  "NOTE /tmp/gh-aw/cache-memory/**\n"
	  "EXCEPT /tmp/gh-aw/cache-memory/.git ~ \"cache-memory*/.git\"" },
	{ "Write(/tmp/gh-aw/cache-memory/notes/**)", "NOTE /tmp/gh-aw/cache-memory/notes/**" },
	{ "Edit(/tmp/gh-aw/mcp-payloads/*)",
	  "ERROR /tmp/gh-aw/mcp-payloads/* ~ read-only by read_only rule \"mcp-payloads\" (shipped.conf:67: exemption" },
	{ "Write(/tmp/gh-aw/agent/**)", "NOTE /tmp/gh-aw/agent/** ~ covered by allow_write rule \"agent\" (shipped.conf:37)" },
	{ "Write(/tmp/gh-aw/agent/*.md)", "NOTE /tmp/gh-aw/agent/*.md" },
	/* arbitrary top-level entries: one error that names what would work */
	{ "Write(/tmp/gh-aw/*)",
	  "ERROR /tmp/gh-aw/* ~ read-only: unclassified (its top-level entry is named by no rule; unclassified = \"warn\"); of what it covers only these are writable: /tmp/gh-aw/agent, /tmp/gh-aw/cache-memory, /tmp/gh-aw/cache-memory-*, /tmp/gh-aw/agent-step-summary.md" },
	{ "Write(/tmp/gh-aw/**)", "ERROR /tmp/gh-aw/** ~ /tmp/gh-aw/sandbox/agent/session-state" },
	/* bare and wider grants: what is writable under the root, and what not */
	{ "Write", "BROAD /tmp/gh-aw ~ the grant covers every path, but under /tmp/gh-aw only these are writable: /tmp/gh-aw/agent," },
	{ "Edit(*),MultiEdit(**),Write()", "BROAD /tmp/gh-aw\nBROAD /tmp/gh-aw\nBROAD /tmp/gh-aw" },
	{ "Write(/tmp/**)", "BROAD /tmp/gh-aw ~ the grant reaches beyond the mount root, but under /tmp/gh-aw only these are writable:" },
	{ "Write(/**)", "BROAD /tmp/gh-aw ~ masked: /tmp/gh-aw/mcp-logs," },
	{ "Write(//tmp/**)", "BROAD /tmp/gh-aw ~ read-only: /tmp/gh-aw/cache-memory*/.git," },
	{ "Write(/tmp/*)", "BROAD /tmp/gh-aw ~ the grant names the mount root itself" },
	{ "Write(/t*/gh-aw/agent/x)", "BROAD /tmp/gh-aw ~ reaches beyond" },
	/* not checked: outside the root, above it, or relative */
	{ "Write(/workspace/**)", "NOTE /workspace/** ~ outside the mount root; not checked" },
	{ "Write(/tmp/gh-aw-other/x),Edit(/tmp/gh/*)", "NOTE /tmp/gh/*\nNOTE /tmp/gh-aw-other/x" },
	{ "Write(/tmp)", "NOTE /tmp ~ names a directory above the mount root" },
	{ "Write(src/**),Edit(~/notes.md),MultiEdit(./out.txt)",
	  "NOTE ~/notes.md ~ relative to the engine's working directory; not checked against the mount root\nNOTE ./out.txt\nNOTE src/**" },
	/* single paths */
	{ "Write(/tmp/gh-aw/agent-step-summary.md)", "NOTE /tmp/gh-aw/agent-step-summary.md" },
	{ "Write(/tmp/gh-aw/aw_info.json)", "ERROR /tmp/gh-aw/aw_info.json ~ read_only rule \"aw_info.json\" (shipped.conf:75: " },
	{ "Write(/tmp/gh-aw/mcp-logs/x.log)", "ERROR /tmp/gh-aw/mcp-logs/x.log ~ masked by mask rule \"mcp-logs\" (shipped.conf:17: " },
	{ "Write(/tmp/gh-aw/new-dir/x)", "ERROR /tmp/gh-aw/new-dir/x ~ read-only: unclassified (its top-level entry is named by no rule" },
	{ "Write(/tmp/gh-aw/sandbox/x)", "ERROR /tmp/gh-aw/sandbox/x ~ read-only: no rule makes it writable" },
	{ "Write(/tmp/gh-aw/cache-memory/.git/config)", "ERROR /tmp/gh-aw/cache-memory/.git/config ~ \"cache-memory*/.git\"" },
	{ "Write(/tmp/gh-aw)", "ERROR /tmp/gh-aw ~ read-only: no rule makes it writable" },
	{ "Write(/tmp/gh-aw/agent/../mcp-payloads/./x)", "ERROR /tmp/gh-aw/mcp-payloads/x" },
	{ "Write(/tmp/gh-aw/cache-memory-notes/todo.md)", "NOTE /tmp/gh-aw/cache-memory-notes/todo.md ~ \"cache-memory-*\"" },
	/* globs in the policy */
	{ "Write(/tmp/gh-aw/sandbox/**)",
	  "ERROR /tmp/gh-aw/sandbox/** ~ read-only: no rule makes it writable; of what it covers only these are writable: /tmp/gh-aw/sandbox/agent/logs, /tmp/gh-aw/sandbox/agent/session-state" },
	{ "Write(/tmp/gh-aw/repo-memory/**)",
	  "NOTE /tmp/gh-aw/repo-memory/** ~ \"repo-memory/*\"\nEXCEPT /tmp/gh-aw/repo-memory/*/.git ~ \"repo-memory/*/.git\"" },
	/* a literal directory grant: what a rule refuses inside it is named */
	{ "Write(/tmp/gh-aw/cache-memory)",
	  "NOTE /tmp/gh-aw/cache-memory\nEXCEPT /tmp/gh-aw/cache-memory/.git ~ may cover it (what is inside a directory)" },
	{ "Write(/tmp/gh-aw/repo-memory/*/notes/**)", "NOTE /tmp/gh-aw/repo-memory/*/notes/**" },
	{ "Write(/tmp/gh-aw/repo-memory/wiki/.git/**)", "ERROR /tmp/gh-aw/repo-memory/wiki/.git/**" },
	{ "Write(/tmp/gh-aw/cache-memory-*/**)",
	  "EXCEPT /tmp/gh-aw/cache-memory*/.git\nNOTE /tmp/gh-aw/cache-memory-*/** ~ \"cache-memory-*\"" },
	/* cache-memoryx is named by no allow_write rule */
	{ "Write(/tmp/gh-aw/cache-memory*)",
	  "ERROR /tmp/gh-aw/cache-memory* ~ only these are writable: /tmp/gh-aw/cache-memory, /tmp/gh-aw/cache-memory-*" },
	{ "NotebookEdit(/tmp/gh-aw/sandbox/agent/logs/*.ipynb)", "NOTE /tmp/gh-aw/sandbox/agent/logs/*.ipynb" },
	/* only the writing tools are checked; a repeated entry is reported once */
	{ "Bash(rm -rf /tmp/gh-aw),Read(/tmp/gh-aw/**),Glob,TodoWrite", "" },
	{ "Write(/tmp/gh-aw/agent/**),Write(/tmp/gh-aw/agent/**)", "NOTE /tmp/gh-aw/agent/**" },
};

static void test_shipped(void **state)
{
	struct fixture f = load_shipped();

	(void)state;
	check_rows(&f, ROOT, shipped_rows, AWFS_ARRAY_LEN(shipped_rows));
	unload(&f);
}

/*
 * The seed in small: the workflow made cache-memory a git repository (so
 * its .git is read-only) but nobody made cache-memory writable.
 */
static const char small_policy[] =
	"version = 1;\n"
	"allow_write = (\n"
	"  { path = \"agent\"; reason = \"scratch\"; },\n"
	"  { path = \"data\"; reason = \"the report the workflow publishes\"; }\n"
	");\n"
	"read_only = (\n"
	"  { path = \"cache-memory/.git\"; reason = \"the host runs git here\"; },\n"
	"  { path = \"data/*.lock\"; reason = \"the host holds these locks\"; },\n"
	"  { path = \"prompts\"; reason = \"the prompt the agent runs\"; }\n"
	");\n"
	"mask = (\n"
	"  { path = \"data/secrets\"; reason = \"tokens\"; },\n"
	"  { path = \"logs\"; reason = \"payloads\"; }\n"
	");\n";

static const struct cov_row small_rows[] = {
	{ "Bash(git:*),Read,Write(/tmp/gh-aw/cache-memory/*),Edit(/tmp/gh-aw/cache-memory/*),MultiEdit(/tmp/gh-aw/cache-memory/*)",
	  "ERROR /tmp/gh-aw/cache-memory/* ~ read-only: no rule makes it writable\n"
	  "ERROR /tmp/gh-aw/cache-memory/*\n"
	  "ERROR /tmp/gh-aw/cache-memory/*" },
	{ "Write(/tmp/gh-aw/cache-memory/notes.md)", "ERROR /tmp/gh-aw/cache-memory/notes.md ~ read-only: no rule makes it writable" },
	{ "Write(/tmp/gh-aw/data/*)",
	  "NOTE /tmp/gh-aw/data/* ~ covered by allow_write rule \"data\" (small.conf:4), with 2 exceptions\n"
	  "EXCEPT /tmp/gh-aw/data/*.lock ~ read-only by read_only rule \"data/*.lock\" (small.conf:8: the host holds these locks)\n"
	  "EXCEPT /tmp/gh-aw/data/secrets ~ masked by mask rule \"data/secrets\" (small.conf:12: tokens)" },
	/* two globs are assumed to meet: *.json and *.lock cannot, but it is only a warning */
	{ "Write(/tmp/gh-aw/data/*.json)", "NOTE /tmp/gh-aw/data/*.json\nEXCEPT /tmp/gh-aw/data/*.lock" },
	{ "Write(/tmp/gh-aw/data/s*/**)", "EXCEPT /tmp/gh-aw/data/*.lock\nNOTE /tmp/gh-aw/data/s*/**\nEXCEPT /tmp/gh-aw/data/secrets" },
	{ "Write(/tmp/gh-aw/data/report.json)", "NOTE /tmp/gh-aw/data/report.json ~ \"data\"" },
	{ "Write(/tmp/gh-aw/data/x.lock)", "ERROR /tmp/gh-aw/data/x.lock ~ read_only rule \"data/*.lock\"" },
	{ "Write(/tmp/gh-aw/data/secrets/token)", "ERROR /tmp/gh-aw/data/secrets/token ~ mask rule \"data/secrets\"" },
	{ "Write(/tmp/gh-aw/data/sub/*)", "NOTE /tmp/gh-aw/data/sub/*" },
	{ "Write(/tmp/gh-aw/logs/**)", "ERROR /tmp/gh-aw/logs/** ~ masked by mask rule \"logs\" (small.conf:13: payloads)" },
	{ "Write(/tmp/gh-aw/prompts/*)", "ERROR /tmp/gh-aw/prompts/* ~ read_only rule \"prompts\"" },
	{ "Write(/tmp/gh-aw/?gent/x)", "ERROR /tmp/gh-aw/?gent/x ~ only these are writable: /tmp/gh-aw/agent" },
	{ "Write(/tmp/gh-aw/[a]gent/x)", "NOTE /tmp/gh-aw/[a]gent/x" },
	{ "Write(/tmp/gh-aw/**/x.lock)",
	  "ERROR /tmp/gh-aw/**/x.lock ~ only these are writable: /tmp/gh-aw/agent, /tmp/gh-aw/data" },
};

static void test_small(void **state)
{
	struct fixture f = load(small_policy, "small.conf");
	struct awfs_findings out = { 0 };

	(void)state;
	check_rows(&f, ROOT, small_rows, AWFS_ARRAY_LEN(small_rows));

	/* the whole texts, as awfsctl check prints them */
	check(&f, "Write(/tmp/gh-aw/cache-memory/*)", ROOT, &out);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.v[0].severity, AWFS_FINDING_ERROR);
	assert_string_equal(out.v[0].entry, "Write(/tmp/gh-aw/cache-memory/*)");
	assert_string_equal(out.v[0].path, "/tmp/gh-aw/cache-memory/*");
	assert_string_equal(out.v[0].text,
			    "not writable although the grant covers it: read-only: no rule makes it writable");
	grants_findings_free(&out);

	check(&f, "Write(/tmp/gh-aw/data/**)", ROOT, &out);
	assert_int_equal(out.n, 3);
	assert_string_equal(out.v[2].text,
			    "not writable although the grant covers it: masked by mask rule \"data/secrets\" (small.conf:12: tokens)");
	grants_findings_free(&out);

	check(&f, "Write", ROOT, &out);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.v[0].text,
			    "the grant covers every path, but under /tmp/gh-aw only these are writable: "
			    "/tmp/gh-aw/agent, /tmp/gh-aw/data; masked: /tmp/gh-aw/data/secrets, /tmp/gh-aw/logs; "
			    "read-only: /tmp/gh-aw/cache-memory/.git, /tmp/gh-aw/data/*.lock, /tmp/gh-aw/prompts; "
			    "everything else is read-only");
	grants_findings_free(&out);

	check(&f, "Write(/tmp/gh-aw/foo)", ROOT, &out);
	assert_string_equal(out.v[0].text,
			    "not writable although the grant covers it: read-only: unclassified (its top-level entry is named by no rule; unclassified = \"warn\")");
	grants_findings_free(&out);
	unload(&f);
}

/* A mount root of "/", or taken from the policy; other policies' summaries. */
static void test_roots(void **state)
{
	static const char with_root[] =
		"version = 1;\nroot = \"/srv/scratch\";\nunclassified = \"mask\";\n"
		"allow_write = ( { path = \"out\"; reason = \"r\"; } );\n";
	static const char dot[] =
		"version = 1;\n"
		"allow_write = ( { path = \".\"; reason = \"r\"; } );\n"
		"read_only = ( { path = \"aw-prompts\"; reason = \"r\"; } );\n"
		"mask = ( { path = \"mcp-logs\"; reason = \"r\"; } );\n";
	static const char nothing[] = "version = 1;\n";
	static const struct cov_row slash_rows[] = {
		{ "Write(/agent/x),Write(/tmp/gh-aw/agent/x)",
		  "NOTE /agent/x\nERROR /tmp/gh-aw/agent/x ~ unclassified" },
		{ "Write(/**)", "ERROR /** ~ only these are writable: /agent, /data" },
		{ "Write(relative)", "NOTE relative" },
	};
	static const struct cov_row policy_root_rows[] = {
		{ "Write(/srv/scratch/out/x),Write(/srv/scratch/x)",
		  "NOTE /srv/scratch/out/x\nERROR /srv/scratch/x ~ masked: unclassified (its top-level entry is named by no rule; unclassified = \"mask\")" },
		{ "Write", "BROAD /srv/scratch ~ only these are writable: /srv/scratch/out; everything else is read-only, and top-level entries no rule names are masked" },
	};
	static const struct cov_row dot_rows[] = {
		{ "Write(/tmp/gh-aw/x/**)", "NOTE /tmp/gh-aw/x/** ~ covered by allow_write rule \".\"" },
		{ "Write(/tmp/gh-aw/*)", "NOTE /tmp/gh-aw/* ~ with 2 exceptions\nEXCEPT /tmp/gh-aw/aw-prompts\nEXCEPT /tmp/gh-aw/mcp-logs" },
		/* a directory grant names the rules that refuse parts inside it */
		{ "Write(/tmp/gh-aw/)", "NOTE /tmp/gh-aw\nEXCEPT /tmp/gh-aw/aw-prompts\nEXCEPT /tmp/gh-aw/mcp-logs" },
	};
	struct fixture f = load(small_policy, "small.conf");
	struct awfs_findings out = { 0 };

	(void)state;
	check_rows(&f, "/", slash_rows, AWFS_ARRAY_LEN(slash_rows));
	/* a trailing slash on the root changes nothing */
	check(&f, "Write(/tmp/gh-aw/agent/x)", "/tmp/gh-aw/", &out);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.v[0].path, "/tmp/gh-aw/agent/x");
	assert_int_equal(out.v[0].severity, AWFS_FINDING_NOTE);
	grants_findings_free(&out);
	unload(&f);

	f = load(with_root, "root.conf");
	check_rows(&f, NULL, policy_root_rows, AWFS_ARRAY_LEN(policy_root_rows));
	unload(&f);

	f = load(dot, "dot.conf");
	check_rows(&f, ROOT, dot_rows, AWFS_ARRAY_LEN(dot_rows));
	check(&f, "Write", ROOT, &out);
	assert_string_equal(out.v[0].text,
			    "the grant covers every path; under /tmp/gh-aw everything is writable (allow_write rule \".\"), "
			    "except masked: /tmp/gh-aw/mcp-logs; read-only: /tmp/gh-aw/aw-prompts");
	grants_findings_free(&out);
	unload(&f);

	/* a rule that says it refuses part of a writable tree on purpose: acknowledged, not an exception */
	{
		static const char acked[] =
			"version = 1;\n"
			"allow_write = ( { path = \"mem\"; reason = \"r\"; } );\n"
			"read_only = ( { path = \"mem/.git\"; reason = \"git\"; exception = true; },\n"
			"  { path = \"mem/hooks\"; reason = \"hooks\"; } );\n";
		static const struct cov_row acked_rows[] = {
			{ "Write(/tmp/gh-aw/mem/*)",
			  "NOTE /tmp/gh-aw/mem/* ~ with 2 exceptions\nACK /tmp/gh-aw/mem/.git ~ an exception the policy makes on purpose (exception = true)\nEXCEPT /tmp/gh-aw/mem/hooks" },
			{ "Write(/tmp/gh-aw/mem)", "NOTE /tmp/gh-aw/mem\nACK /tmp/gh-aw/mem/.git\nEXCEPT /tmp/gh-aw/mem/hooks" },
			/* a grant into the excepted tree itself is still the lost write */
			{ "Write(/tmp/gh-aw/mem/.git/config)", "ERROR /tmp/gh-aw/mem/.git/config ~ not writable although the grant covers it" },
		};

		f = load(acked, "acked.conf");
		check_rows(&f, ROOT, acked_rows, AWFS_ARRAY_LEN(acked_rows));
		unload(&f);
	}

	f = load(nothing, "empty.conf");
	check(&f, "Write", ROOT, &out);
	assert_string_equal(out.v[0].text,
			    "the grant covers every path, but nothing under /tmp/gh-aw is writable; everything else is read-only");
	grants_findings_free(&out);
	unload(&f);
}

/* Findings are appended, then everything is sorted (entry, path, severity, text). */
static void test_append_and_order(void **state)
{
	struct fixture f = load_shipped();
	struct awfs_findings out = { 0 };

	(void)state;
	check(&f, "Write(/tmp/gh-aw/zzz)", ROOT, &out);
	check(&f, "Edit(/tmp/gh-aw/cache-memory/**),Edit(/tmp/gh-aw/agent/x)", ROOT, &out);
	assert_int_equal(out.n, 4);
	assert_string_equal(out.v[0].entry, "Edit(/tmp/gh-aw/agent/x)");
	assert_string_equal(out.v[1].entry, "Edit(/tmp/gh-aw/cache-memory/**)");
	assert_string_equal(out.v[1].path, "/tmp/gh-aw/cache-memory/**");
	assert_string_equal(out.v[2].path, "/tmp/gh-aw/cache-memory/.git");
	assert_string_equal(out.v[3].entry, "Write(/tmp/gh-aw/zzz)");
	for (size_t i = 1; i < out.n; i++) {
		int c = strcmp(out.v[i - 1].entry, out.v[i].entry);

		if (!c)
			c = strcmp(out.v[i - 1].path, out.v[i].path);
		assert_true(c < 0 || (c == 0 && out.v[i - 1].severity <= out.v[i].severity));
	}
	grants_findings_free(&out);
	assert_int_equal(out.n, 0);
	unload(&f);
}

/* ------------------------------------------------------------ robustness */

/* A small deterministic generator, so a failure can be replayed. */
static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Parse @s; when it parses, check it too. Only the absence of a crash is asserted. */
static void survive(struct fixture *f, const char *s)
{
	struct awfs_msgs errs = { 0 };
	struct awfs_grants g;
	struct awfs_findings out = { 0 };

	if (grants_parse(s, &g, &errs) == 0) {
		assert_int_equal(errs.n, 0);
		grants_check(&g, f->c, f->p, ROOT, &out);
		grants_findings_free(&out);
		grants_free(&g);
	} else {
		assert_true(errs.n > 0);
		assert_int_equal(g.n, 0);
	}
	msgs_clear(&errs);
}

static void test_no_crash(void **state)
{
	static const char alphabet[] = "(),\"' \nW/*";
	static const char path_alphabet[] = "/*?[]!\\.a-";
	struct fixture f = load_shipped();
	size_t big = 200000;
	char *s = util_xcalloc(big + 1, 1);
	char small[8];
	uint32_t seed = 12345;

	(void)state;
	/* every string of up to five bytes over the characters that matter */
	for (size_t len = 0; len <= 5; len++) {
		size_t total = 1;

		for (size_t k = 0; k < len; k++)
			total *= sizeof(alphabet) - 1;
		for (size_t n = 0; n < total; n++) {
			size_t v = n;

			for (size_t k = 0; k < len; k++, v /= sizeof(alphabet) - 1)
				small[k] = alphabet[v % (sizeof(alphabet) - 1)];
			small[len] = '\0';
			survive(&f, small);
		}
	}
	/* random grant paths below the root, with every glob character */
	for (int n = 0; n < 20000; n++) {
		int len = (int)(rnd(&seed) % 24);
		int o = snprintf(s, big, "Write(/tmp/gh-aw/");

		for (int k = 0; k < len; k++)
			s[o++] = path_alphabet[rnd(&seed) % (sizeof(path_alphabet) - 1)];
		s[o++] = ')';
		s[o] = '\0';
		survive(&f, s);
	}
	/* random bytes */
	for (int n = 0; n < 2000; n++) {
		size_t len = rnd(&seed) % 64;

		for (size_t k = 0; k < len; k++)
			s[k] = (char)(rnd(&seed) % 255 + 1);
		s[len] = '\0';
		survive(&f, s);
	}
	/* deep nesting, long runs, many entries: no recursion, no fixed buffer */
	memset(s, '(', big);
	survive(&f, s);
	memset(s, ')', big);
	survive(&f, s);
	memset(s, '"', big);
	survive(&f, s);
	memset(s, '\'', big);
	survive(&f, s);
	memset(s, ',', big);
	survive(&f, s);
	for (size_t k = 0; k < big; k++)
		s[k] = "W(/"[k % 3];
	survive(&f, s);
	memcpy(s, "Write(/tmp/gh-aw/", 17);
	for (size_t k = 17; k < big - 1; k++)
		s[k] = k % 2 ? '/' : '*';
	s[big - 1] = ')';
	survive(&f, s);
	for (size_t k = 0; k < big / 2; k++)
		s[k] = '(';
	for (size_t k = big / 2; k < big; k++)
		s[k] = ')';
	memcpy(s, "Bash", 4);
	survive(&f, s);
	free(s);
	unload(&f);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_entry_text),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_appends_errors),
		cmocka_unit_test(test_parse_quotes_as_documented),
		cmocka_unit_test(test_shipped),
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_roots),
		cmocka_unit_test(test_append_and_order),
		cmocka_unit_test(test_no_crash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
