/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * explain.c - why a path is what it is, in words (explain.h).
 */
#include "explain.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

void explain_rule(const struct awfs_policy *p, const struct awfs_rule *r, char *out, size_t size)
{
	char path[3 * PATH_MAX], reason[1024], file[3 * PATH_MAX];

	log_escape(r->path, strlen(r->path), path, sizeof(path));
	log_escape(r->reason, strlen(r->reason), reason, sizeof(reason));
	log_escape(p->file, strlen(p->file), file, sizeof(file));
	snprintf(out, size, "%s by %s rule \"%s\" (%s:%d: %s)", policy_class_word(r->cls),
		 policy_class_key(r->cls), path, file, r->line, reason);
}

void explain_state(const struct awfs_policy *p, const struct awfs_state *st, char *out,
		      size_t size)
{
	switch (classify_origin(st)) {
	case AWFS_ORIGIN_RULE:
		explain_rule(p, classify_rule(st), out, size);
		break;
	case AWFS_ORIGIN_ROOT:
		snprintf(out, size, "read-only: no rule makes it writable");
		break;
	case AWFS_ORIGIN_UNCLASSIFIED:
		snprintf(out, size, "%s: unclassified (its top-level entry is named by no rule; unclassified = \"%s\")",
			 policy_class_word(classify_class(st)),
			 p->unclassified == AWFS_UNCLASSIFIED_MASK ? "mask" : "warn");
		break;
	}
}
