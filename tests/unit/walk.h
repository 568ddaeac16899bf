/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * walk.h - for the unit tests: the state of a path, looked up component by
 * component from the root with classify_child(), as lookups do.
 */
#ifndef AWFS_TEST_WALK_H
#define AWFS_TEST_WALK_H

#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "util.h"

/* The state of @path ("." the root) under @c. */
static inline const struct awfs_state *walk(struct awfs_classifier *c, const char *path)
{
	const struct awfs_state *s = classify_root(c);
	char *copy = util_xstrdup(path), *save = NULL;

	if (strcmp(path, ".") != 0)
		for (char *t = strtok_r(copy, "/", &save); t; t = strtok_r(NULL, "/", &save))
			s = classify_child(c, s, t);
	free(copy);
	return s;
}

#endif
