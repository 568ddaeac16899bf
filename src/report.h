/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - the resolved rule set, for people (text) and for audit
 * pipelines (JSON): what awfsctl show prints and the audit mount record holds.
 *
 * Invariant: deterministic output: rules sorted by class (mask, allow_write,
 * read_only), then path; keys in a fixed order.
 */
#ifndef AWFS_REPORT_H
#define AWFS_REPORT_H

#include <stdio.h>

#include "json.h"
#include "policy.h"

/* Write the rules of @p as a JSON array of objects. */
void report_rules_json(struct awfs_json *j, const struct awfs_policy *p);
/*
 * Write the whole resolved policy as one JSON object: version, file,
 * runtime, root, unclassified, rules.
 */
void report_policy_json(struct awfs_json *j, const struct awfs_policy *p);
/* Print the resolved policy for people; paths shown under @root when given. */
void report_policy_text(FILE *out, const struct awfs_policy *p, const char *root);
/* What the paths no rule names are, in words ("everything else: read-only"). */
const char *report_rest(const struct awfs_policy *p);
/* The rules of @p in report order (a new array of pointers; caller frees). */
const struct awfs_rule **report_sorted_rules(const struct awfs_policy *p);

#endif
