/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_workflow.c - a compiled workflow read with libyaml (workflow.h):
 * jobs and steps in file order, scalars only, anchors resolved, and the
 * refusals of what is not a workflow, with file, line and column.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "workflow.h"

static const char lock[] =
	"name: t\n"
	"on: push\n"
	"x-env: &common\n"
	"  GH_AW: \"1\"\n"
	"jobs:\n"
	"  activation:\n"
	"    uses: ./.github/workflows/reusable.yml\n"
	"  agent:\n"
	"    runs-on: ubuntu-latest\n"
	"    steps:\n"
	"      - name: Execute Claude Code CLI\n"
	"        id: agentic_execution\n"
	"        env:\n"
	"          <<: *common\n"
	"          GITHUB_STEP_SUMMARY: /tmp/gh-aw/agent-step-summary.md\n"
	"          LIST: [a, b]\n"
	"        run: |\n"
	"          claude --debug-file /tmp/gh-aw/claude-debug.log\n"
	"          echo done\n"
	"      - uses: actions/upload-artifact@v7\n"
	"        with:\n"
	"          path: |\n"
	"            /tmp/gh-aw/agent/\n"
	"            /tmp/gh-aw/aw_info.json\n"
	"      - just a string, not a step\n";

static void test_read(void **state)
{
	struct awfs_workflow w;
	char *err = NULL;
	const struct awfs_wf_job *agent;
	const struct awfs_wf_step *s;

	(void)state;
	assert_int_equal(workflow_parse(lock, strlen(lock), "t.lock.yml", &w, &err), 0);
	assert_null(err);
	assert_int_equal(w.njobs, 2);
	assert_string_equal(w.jobs[0].name, "activation");
	assert_int_equal(w.jobs[0].nsteps, 0);	/* a reusable workflow's job has no steps */
	agent = &w.jobs[1];
	assert_string_equal(agent->name, "agent");
	assert_int_equal(agent->nsteps, 2);	/* the string is no step */
	s = &agent->steps[0];
	assert_int_equal(s->line, 11);
	assert_string_equal(s->name, "Execute Claude Code CLI");
	assert_string_equal(s->id, "agentic_execution");
	assert_null(s->uses);
	assert_string_equal(s->run, "claude --debug-file /tmp/gh-aw/claude-debug.log\necho done\n");
	assert_string_equal(workflow_get(&s->env, "GITHUB_STEP_SUMMARY"), "/tmp/gh-aw/agent-step-summary.md");
	assert_null(workflow_get(&s->env, "LIST"));	/* not a scalar: left out */
	s = &agent->steps[1];
	assert_null(s->name);
	assert_string_equal(s->uses, "actions/upload-artifact@v7");
	assert_string_equal(workflow_get(&s->with, "path"), "/tmp/gh-aw/agent/\n/tmp/gh-aw/aw_info.json\n");
	workflow_free(&w);
}

struct bad_row {
	const char *text;
	const char *err;	/* what the message starts with */
};

static void test_refused(void **state)
{
	static const struct bad_row rows[] = {
		{ "jobs: [\n  unclosed", "b.lock.yml:3:1: not YAML: " },
		{ "name: x\non: push\n", "b.lock.yml:1:1: no jobs: mapping at the top level." },
		{ "jobs: [a, b]\n", "b.lock.yml:1:1: no jobs: mapping at the top level." },
		{ "- a\n- b\n", "b.lock.yml:1:1: no jobs: mapping at the top level." },
		{ "", "b.lock.yml:1:1: no jobs: mapping at the top level." },
		{ "a: *undefined\n", "b.lock.yml:1:4: not YAML: " },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct awfs_workflow w;
		char *err = NULL;

		assert_int_equal(workflow_parse(rows[i].text, strlen(rows[i].text), "b.lock.yml", &w, &err), -1);
		assert_non_null(err);
		if (strncmp(err, rows[i].err, strlen(rows[i].err)) != 0)
			fail_msg("row %zu: got \"%s\", expected it to start \"%s\"", i, err, rows[i].err);
		free(err);
		assert_int_equal(w.njobs, 0);
	}
}

static void test_load_missing(void **state)
{
	struct awfs_workflow w;
	char *err = NULL;

	(void)state;
	assert_int_equal(workflow_load("/nonexistent/x.lock.yml", &w, &err), -1);
	assert_string_equal(err, "/nonexistent/x.lock.yml: cannot open: No such file or directory");
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_load_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
