/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurp.h - read a whole fixture file in a cmocka unit test. Include after
 * <cmocka.h>; the caller frees the result.
 */
#ifndef AWFS_TEST_SLURP_H
#define AWFS_TEST_SLURP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Read a whole file, failing the test if it cannot be read. */
static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;

	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	if (getdelim(&buf, &cap, '\0', f) < 0) {
		/* an empty file */
		free(buf);
		buf = util_xstrdup("");
	}
	fclose(f);
	return buf;
}

#endif
