/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_workflow.c - libFuzzer target: any bytes as a compiled workflow
 * (.lock.yml), read with libyaml and checked against a fixed policy.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "classify.h"
#include "grants.h"
#include "lockcheck.h"
#include "policy.h"
#include "util.h"
#include "workflow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char policy_text[] =
	"version = 1;\n"
	"root = \"/tmp/gh-aw\";\n"
	"mask = ( { path = \"mcp-logs\"; reason = \"r\"; } );\n"
	"allow_write = ( { path = \"agent\"; reason = \"r\"; }, { path = \"cache-memory\"; reason = \"r\"; },\n"
	"  { path = \"summary.md\"; reason = \"r\"; } );\n"
	"read_only = ( { path = \"cache-memory/.git\"; reason = \"r\"; exception = true; },\n"
	"  { path = \"agent/graders\"; reason = \"r\"; } );\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct awfs_policy *p;
	static struct awfs_classifier *c;
	struct awfs_msgs errs = { 0 };
	struct awfs_workflow w;
	struct awfs_findings f = { 0 };
	char *err = NULL;

	if (!p) {
		p = policy_parse(policy_text, "fuzz.conf", NULL, &errs);
		if (!p)
			abort();
		c = classify_new(p);
	}
	if (workflow_parse((const char *)data, size, "fuzz.lock.yml", &w, &err) == 0) {
		lockcheck_run(&w, c, p, "/tmp/gh-aw", &f);
		grants_findings_free(&f);
		workflow_free(&w);
	}
	free(err);
	return 0;
}
