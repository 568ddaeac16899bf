/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_grants.c - libFuzzer target: any bytes as an engine's tool-permission
 * string, parsed and checked against a fixed policy.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "grants.h"
#include "policy.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char policy_text[] =
	"version = 1;\n"
	"root = \"/tmp/gh-aw\";\n"
	"mask = ( { path = \"mcp-logs\"; reason = \"r\"; }, { path = \"*.key\"; reason = \"r\"; } );\n"
	"allow_write = ( { path = \"agent\"; reason = \"r\"; }, { path = \"cache-memory-*\"; reason = \"r\"; },\n"
	"  { path = \"repo-memory/*\"; reason = \"r\"; } );\n"
	"read_only = ( { path = \"cache-memory*/.git\"; reason = \"r\"; }, { path = \"repo-memory/*/.git\"; reason = \"r\"; } );\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct awfs_policy *p;
	static struct awfs_classifier *c;
	struct awfs_msgs errs = { 0 };
	struct awfs_grants g = { 0 };
	struct awfs_findings f = { 0 };
	char *text;

	if (!p) {
		p = policy_parse(policy_text, "fuzz.conf", NULL, &errs);
		if (!p)
			abort();
		c = classify_new(p);
	}
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (grants_parse(text, &g, &errs) == 0) {
		grants_check(&g, c, p, "/tmp/gh-aw", &f);
		grants_findings_free(&f);
	}
	grants_free(&g);
	msgs_clear(&errs);
	free(text);
	return 0;
}
