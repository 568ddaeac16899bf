/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy.h - the awfs policy: loading a libconfig file into an immutable,
 * validated rule set.
 *
 * Invariants:
 *  - a policy is either loaded whole and valid, or not at all: policy_load()
 *    returns NULL and every problem found is in the message list;
 *  - after load nothing in a struct awfs_policy changes (classification state
 *    built from it lives in classify.c and is interned, not stored here);
 *  - every rule path is relative to the mount root, split into components
 *    with no "", "." or ".." component; the root itself is the rule ".".
 */
#ifndef AWFS_POLICY_H
#define AWFS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util.h"

/* Ordered from least to most restrictive: used to break ties. */
enum awfs_class {
	AWFS_CLASS_WRITE = 0,
	AWFS_CLASS_RO = 1,
	AWFS_CLASS_MASK = 2,
};

/* What kinds of entry the agent may make in an allow_write tree (links = ...). */
enum awfs_links {
	AWFS_LINKS_ANY = 0,	/* "any": symlinks, FIFOs, sockets, device nodes too (the default) */
	AWFS_LINKS_NONE = 1,	/* "none": regular files and directories only */
	AWFS_LINKS_READ_ONLY = 2,	/* "read-only": and symlinks whose target is an absolute
					 * path under the root naming an existing read-only,
					 * unmasked object through no link (decide.h) */
};

enum awfs_unclassified {
	AWFS_UNCLASSIFIED_WARN = 0,	/* serve read-only, log once */
	AWFS_UNCLASSIFIED_MASK = 1,	/* serve empty, log once */
};

struct awfs_rule {
	enum awfs_class cls;
	char *path;		/* normalised, relative; "." for the root */
	char **comps;		/* path split at '/' */
	bool *literal;		/* per component: true when it has no glob */
	size_t ncomps;		/* 0 for "." */
	char *reason;
	bool create;		/* allow_write only: make it at mount if missing */
	bool create_file;	/* ... as an empty file (create = "file"), not a directory */
	bool single_file;	/* allow_write only: a regular file at mount (set by awfs):
				 * writable in place, its directory not */
	enum awfs_links links;	/* allow_write only: what the agent may make in the tree */
	bool links_set;		/* links was given here; else inherited from the nearest
				 * enclosing allow_write rule that gives it, or "any" */
	bool exception;		/* read_only and mask only: it refuses part of a writable
				 * tree on purpose (awfsctl check: acknowledged, not an error) */
	char **runtimes;	/* NULL-terminated; NULL when it applies everywhere */
	int line;
};

struct awfs_policy {
	char *file;		/* as given, for messages */
	int version;
	enum awfs_unclassified unclassified;
	char *root;		/* optional absolute root, or NULL */
	char *runtime;		/* selected runtime, or NULL */
	bool record_changes;	/* record_changes = true: the change record (changes.h) */
	struct awfs_rule *rules;	/* every rule that applies to runtime */
	size_t nrules;
	size_t nskipped;	/* rules left out because of runtimes */
};

/* Names accepted in runtimes = [...] and by --runtime, NULL-terminated. */
extern const char *const policy_runtime_names[];

/* How strict a links value is: "any" 0, "read-only" 1, "none" 2. */
int policy_links_strictness(enum awfs_links l);
/* The policy-file name of a class: "mask", "allow_write", "read_only". */
const char *policy_class_key(enum awfs_class cls);
/* A short human word for a class: "masked", "writable", "read-only". */
const char *policy_class_word(enum awfs_class cls);

/*
 * Whether rule @r names exactly one path: no component is a glob. The root
 * rule "." is literal (it names the root); a literal rule is a target to
 * walk or create only below the root (ncomps > 0).
 */
bool policy_rule_is_literal(const struct awfs_rule *r);

/* The known runtime names as one comma-separated list, for messages. */
const char *policy_runtime_list(void);
/* Whether @name is a known runtime name. */
bool policy_runtime_known(const char *name);

/*
 * Load and validate the policy at @file for @runtime (NULL: rules with a
 * runtimes list are left out). Checks the file's owner and mode first.
 * Returns NULL with every problem appended to @errs.
 */
struct awfs_policy *policy_load(const char *file, const char *runtime, struct awfs_msgs *errs);

/*
 * policy_load(), for a command: on failure every problem is printed to
 * @err, then "@who: N errors in the policy@after", and NULL returned.
 */
struct awfs_policy *policy_load_or_report(const char *file, const char *runtime, FILE *err,
					  const char *who, const char *after);

/* Parse policy text already in memory; @name is used in messages. */
struct awfs_policy *policy_parse(const char *text, const char *name, const char *runtime,
				 struct awfs_msgs *errs);

/* Free a policy returned by policy_load() or policy_parse(). */
void policy_free(struct awfs_policy *p);

/*
 * Whether @pat contains a glob character (*, ? or [), or a backslash:
 * fnmatch() reads that as an escape, so the pattern is no literal name.
 */
bool policy_is_glob(const char *pat);

#endif
