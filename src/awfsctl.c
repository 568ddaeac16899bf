/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * awfsctl.c - the policy tool: check, show, explain, verify.
 *
 * Exit status, for every command: 0 when all is well, 1 for findings (check)
 * or a failed probe (verify), 2 for unusable input (a bad policy, a bad
 * command line).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "classify.h"
#include "explain.h"
#include "json.h"
#include "lockcheck.h"
#include "log.h"
#include "policy.h"
#include "report.h"
#include "util.h"
#include "review.h"
#include "verify.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: awfsctl check   --policy FILE [--source DIR] [--runtime NAME] [--root PATH]\n"
		"                       [--allowed-tools STRING] [--workflow FILE.lock.yml...] [--strict]\n"
		"       awfsctl show    --policy FILE [--runtime NAME] [--json]\n"
		"       awfsctl explain --policy FILE [--runtime NAME] [--root PATH] PATH...\n"
		"       awfsctl verify  MOUNTPOINT --policy FILE [--runtime NAME] [--also-at PATH]...\n"
		"       awfsctl changes AUDIT [--since TIME] [--json]\n"
		"\n"
		"  check    validate the policy, then against the source tree (missing allow_write\n"
		"           targets, unclassified top-level entries) and, with --allowed-tools,\n"
		"           against the engine's tool permissions (Write/Edit/MultiEdit/NotebookEdit\n"
		"           paths awfs would refuse) and, with --workflow, against compiled gh-aw\n"
		"           workflows (what the agent's step is told to write, what steps after it\n"
		"           run or upload); --strict makes warnings errors (awfsctl(1) says which)\n"
		"  show     the resolved rule set, as text or JSON\n"
		"  explain  per path: its class and the rule that decides it\n"
		"  verify   prove through a live mount that masks are empty, read-only paths\n"
		"           refuse writes with EROFS and allow_write paths accept them\n"
		"  changes  what the agent changed, per top-level entry (created, modified\n"
		"           with hashes, renamed, removed), from the change record in an audit\n"
		"           trail (awfs --record-changes); --since TIME: from that time on\n"
		"\n"
		"  --root PATH   where the agent sees the mount root (default: the policy's\n"
		"                root, else /tmp/gh-aw)\n"
		"\n"
		"Exit status: 0 all well, 1 findings, a failed probe or an incomplete change\n"
		"record, 2 unusable input.\n");
}

enum { OPT_POLICY = 1, OPT_SOURCE, OPT_RUNTIME, OPT_ROOT, OPT_TOOLS, OPT_STRICT, OPT_JSON, OPT_ALSO, OPT_WORKFLOW };

static const struct option long_opts[] = {
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "source", required_argument, NULL, OPT_SOURCE },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "allowed-tools", required_argument, NULL, OPT_TOOLS },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "also-at", required_argument, NULL, OPT_ALSO },
	{ "workflow", required_argument, NULL, OPT_WORKFLOW },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct args {
	const char *policy, *source, *runtime, *root, *tools;
	bool strict, json;
	char **also;
	size_t nalso;
	const char **workflows;
	size_t nworkflows;
};

/* Which options each command takes: a string of OPT_* codes. */
static bool takes(const char *cmd, int opt)
{
	static const struct {
		const char *cmd;
		const char opts[9];
	} table[] = {
		{ "check", { OPT_POLICY, OPT_SOURCE, OPT_RUNTIME, OPT_ROOT, OPT_TOOLS, OPT_STRICT, OPT_WORKFLOW } },
		{ "show", { OPT_POLICY, OPT_RUNTIME, OPT_JSON } },
		{ "explain", { OPT_POLICY, OPT_RUNTIME, OPT_ROOT } },
		{ "verify", { OPT_POLICY, OPT_RUNTIME, OPT_ALSO } },
	};

	for (size_t i = 0; i < AWFS_ARRAY_LEN(table); i++)
		if (strcmp(table[i].cmd, cmd) == 0)
			return strchr(table[i].opts, opt) != NULL;
	return false;
}

static struct awfs_policy *load(const char *cmd, const struct args *a)
{
	char who[64];

	snprintf(who, sizeof(who), "awfsctl %s", cmd);
	return policy_load_or_report(a->policy, a->runtime, stderr, who, "");
}

static int cmd_show(const struct args *a)
{
	struct awfs_policy *p = load("show", a);

	if (!p)
		return 2;
	if (a->json) {
		struct awfs_json j;
		char *s;

		json_init(&j);
		report_policy_json(&j, p);
		s = json_take(&j, NULL);
		printf("%s\n", s);
		free(s);
	} else {
		report_policy_text(stdout, p, p->root);
	}
	policy_free(p);
	return 0;
}

/* PATH relative to the mount root: absolute under @root, or relative as is. */
static char *relative(const char *path, const char *root)
{
	size_t rl = strlen(root);

	if (path[0] != '/')
		return util_xstrdup(path);
	if (strcmp(root, "/") == 0)
		return util_xstrdup(path + 1);
	if (strncmp(path, root, rl) == 0 && (path[rl] == '/' || path[rl] == '\0'))
		return util_xstrdup(path[rl] ? path + rl + 1 : "");
	return NULL;
}

/* One path: walk it from the root and say what decides it. */
static int explain_one(struct awfs_classifier *c, const struct awfs_policy *p, const char *root,
		       const char *path)
{
	char *rel = relative(path, root), *save = NULL, *tok;
	const struct awfs_state *st = classify_root(c), *mask_at = NULL;
	const struct awfs_rule *g;
	char e[3 * PATH_MAX], why[8192], gp[3 * PATH_MAX];
	int depth = 0;

	log_escape(path, strlen(path), e, sizeof(e));
	if (!rel) {
		fprintf(stderr, "awfsctl explain: %s is not under the mount root %s\n", e, root);
		return 2;
	}
	for (tok = strtok_r(rel, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0) {
			fprintf(stderr, "awfsctl explain: %s: give a path without \"..\"\n", e);
			free(rel);
			return 2;
		}
		if (!mask_at && classify_class(st) == AWFS_CLASS_MASK)
			mask_at = st;
		st = classify_child(c, st, tok);
		depth++;
	}
	free(rel);
	explain_state(p, st, why, sizeof(why));
	printf("%s: %s", e, why);
	if (mask_at)
		printf("; it lies below a mask, so it is not reachable at all");
	g = classify_anchored(st);
	if (g && depth > 0)
		printf("; %s rule \"%s\" applies below it, so nothing may be renamed or linked into or out of it",
		       policy_class_key(g->cls), log_escape(g->path, strlen(g->path), gp, sizeof(gp)));
	printf("\n");
	return 0;
}

static int cmd_explain(const struct args *a, int n, char **paths)
{
	struct awfs_policy *p;
	struct awfs_classifier *c;
	const char *root;
	int ret = 0;

	if (n == 0) {
		fprintf(stderr, "awfsctl explain: no PATH given\n");
		return 2;
	}
	p = load("explain", a);
	if (!p)
		return 2;
	root = a->root ? a->root : p->root ? p->root : "/tmp/gh-aw";
	c = classify_new(p);
	for (int i = 0; i < n; i++) {
		int r = explain_one(c, p, root, paths[i]);

		ret = r > ret ? r : ret;
	}
	classify_free(c);
	policy_free(p);
	return ret;
}

/* awfsctl changes AUDIT [--since TIME] [--json] */
static int cmd_changes(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *since = NULL;
	bool json = false;
	FILE *in;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return 0;
		}
		if (opt == '?')
			return 2;
		if (opt == 's')
			since = optarg;
		else
			json = true;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "awfsctl changes: give exactly one AUDIT file (awfs --audit FILE --record-changes)\n");
		return 2;
	}
	in = strcmp(argv[optind], "-") == 0 ? stdin : fopen(argv[optind], "r");
	if (!in) {
		fprintf(stderr, "awfsctl changes: %s: %s\n", argv[optind], strerror(errno));
		return 2;
	}
	ret = review_changes(in, argv[optind], since, json, stdout, stderr);
	if (in != stdin)
		fclose(in);
	return ret;
}

int main(int argc, char **argv)
{
	struct args a = { 0 };
	const char *cmd;
	int opt, ret;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("awfsctl %s\n", PACKAGE_VERSION);
		return 0;
	}
	cmd = argv[1];
	if (strcmp(cmd, "changes") == 0)
		return cmd_changes(argc - 1, argv + 1);
	if (!takes(cmd, OPT_POLICY)) {
		fprintf(stderr, "awfsctl: unknown command `%s': expected check, show, explain, verify or changes\n", cmd);
		return 2;
	}
	argv++;
	argc--;
	while ((opt = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return 0;
		}
		if (opt == '?' || !takes(cmd, opt)) {
			if (opt != '?')
				fprintf(stderr, "awfsctl %s: option %s does not apply here\n", cmd, argv[optind - 1]);
			return 2;
		}
		switch (opt) {
		case OPT_POLICY: a.policy = optarg; break;
		case OPT_SOURCE: a.source = optarg; break;
		case OPT_RUNTIME: a.runtime = optarg; break;
		case OPT_ROOT: a.root = optarg; break;
		case OPT_TOOLS: a.tools = optarg; break;
		case OPT_STRICT: a.strict = true; break;
		case OPT_JSON: a.json = true; break;
		case OPT_ALSO:
			a.also = util_xrealloc(a.also, (a.nalso + 1) * sizeof(*a.also));
			a.also[a.nalso++] = optarg;
			break;
		case OPT_WORKFLOW:
			a.workflows = util_xrealloc(a.workflows, (a.nworkflows + 1) * sizeof(*a.workflows));
			a.workflows[a.nworkflows++] = optarg;
			break;
		}
	}
	if (!a.policy) {
		fprintf(stderr, "awfsctl %s: --policy FILE is required\n", cmd);
		return 2;
	}
	if (a.runtime && !policy_runtime_known(a.runtime)) {
		fprintf(stderr, "awfsctl %s: unknown runtime `%s': expected one of %s\n", cmd, a.runtime,
			policy_runtime_list());
		return 2;
	}
	if (strcmp(cmd, "show") == 0) {
		ret = optind < argc ? 2 : cmd_show(&a);
	} else if (strcmp(cmd, "explain") == 0) {
		ret = cmd_explain(&a, argc - optind, argv + optind);
	} else if (strcmp(cmd, "check") == 0) {
		struct awfs_check_opts o = {
			.policy = a.policy, .source = a.source, .runtime = a.runtime,
			.allowed_tools = a.tools, .root = a.root, .strict = a.strict,
		};

		/* --workflow A.lock.yml B.lock.yml ...: the files after the first are workflows too */
		while (a.nworkflows && optind < argc) {
			a.workflows = util_xrealloc(a.workflows, (a.nworkflows + 1) * sizeof(*a.workflows));
			a.workflows[a.nworkflows++] = argv[optind++];
		}
		o.workflows = a.workflows;
		o.nworkflows = a.nworkflows;
		o.check_workflow = lockcheck_file;
		ret = optind < argc ? 2 : check_run(&o, stdout, stderr);
	} else {
		struct awfs_verify_opts o = {
			.policy = a.policy, .runtime = a.runtime, .also_at = a.also, .nalso = a.nalso,
		};

		if (argc - optind != 1) {
			fprintf(stderr, "awfsctl verify: give exactly one MOUNTPOINT\n");
			ret = 2;
		} else {
			o.mountpoint = argv[optind];
			ret = verify_run(&o, stdout, stderr);
		}
	}
	if (ret == 2 && optind < argc && strcmp(cmd, "explain") != 0 && strcmp(cmd, "verify") != 0)
		fprintf(stderr, "awfsctl %s: unexpected argument `%s'\n", cmd, argv[optind]);
	free(a.also);
	free(a.workflows);
	return ret;
}
