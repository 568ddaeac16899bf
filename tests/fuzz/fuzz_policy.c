/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_policy.c - libFuzzer target: any bytes as a policy. Must never crash,
 * leak or hang; a policy that loads must classify a few paths without
 * tripping the sanitizers either.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "policy.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const runtimes[] = { NULL, "docker", "nvx" };
	static const char *const paths[][3] = {
		{ "agent", "x", NULL }, { "cache-memory", ".git", "config" }, { "mcp-logs", "a", NULL },
		{ "a", "b", "c" }, { ".", NULL, NULL },
	};
	struct awfs_msgs errs = { 0 };
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';	/* the loader refuses NUL bytes before parsing */
	for (size_t r = 0; r < AWFS_ARRAY_LEN(runtimes); r++) {
		struct awfs_policy *p = policy_parse(text, "fuzz.conf", runtimes[r], &errs);

		msgs_clear(&errs);
		if (p) {
			struct awfs_classifier *c = classify_new(p);

			for (size_t i = 0; i < AWFS_ARRAY_LEN(paths); i++) {
				const struct awfs_state *s = classify_root(c);

				for (size_t k = 0; k < 3 && paths[i][k]; k++)
					s = classify_child(c, s, paths[i][k]);
				(void)classify_class(s);
				(void)classify_anchored(s);
			}
			classify_free(c);
			policy_free(p);
		}
	}
	free(text);
	return 0;
}
