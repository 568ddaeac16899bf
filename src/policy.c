/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy.c - load a libconfig policy file into a validated, immutable rule set.
 *
 * This is the only file that includes libconfig.h.
 *
 * Invariants:
 *  - every problem is collected and reported as
 *    "FILE:LINE: what is wrong. What is expected. Example: ..."; a policy
 *    with any problem is never returned, so a partial policy never mounts;
 *  - the file is checked for owner and mode before it is read (a policy an
 *    agent could edit would be no boundary at all);
 *  - @include is refused: a policy is one self-contained, reviewable file.
 */
#include "policy.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <libconfig.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AWFS_POLICY_MAX_BYTES (16u << 20)

const char *const policy_runtime_names[] = {
	"docker", "cloud-hypervisor", "nvx", "qemu", "guest", "host-user", NULL,
};

static const char *const class_keys[] = {
	[AWFS_CLASS_WRITE] = "allow_write",
	[AWFS_CLASS_RO] = "read_only",
	[AWFS_CLASS_MASK] = "mask",
};

static const char *const class_words[] = {
	[AWFS_CLASS_WRITE] = "writable",
	[AWFS_CLASS_RO] = "read-only",
	[AWFS_CLASS_MASK] = "masked",
};

/* What a reader of each error is shown as a working example. */
static const char *const class_examples[] = {
	[AWFS_CLASS_WRITE] = "allow_write = ( { path = \"agent\"; reason = \"agent scratch space\"; create = true; } );",
	[AWFS_CLASS_RO] = "read_only = ( { path = \"mcp-payloads\"; reason = \"the agent reads spilled payloads\"; } );",
	[AWFS_CLASS_MASK] = "mask = ( { path = \"mcp-logs\"; reason = \"gateway logs hold tool-call payloads\"; } );",
};

const char *policy_class_key(enum awfs_class cls)
{
	return class_keys[cls];
}

const char *policy_class_word(enum awfs_class cls)
{
	return class_words[cls];
}

const char *policy_runtime_list(void)
{
	static char list[256];

	if (!list[0])
		for (size_t i = 0; policy_runtime_names[i]; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", policy_runtime_names[i]);
	return list;
}

bool policy_runtime_known(const char *name)
{
	for (size_t i = 0; policy_runtime_names[i]; i++)
		if (strcmp(name, policy_runtime_names[i]) == 0)
			return true;
	return false;
}

bool policy_is_glob(const char *pat)
{
	return strpbrk(pat, "*?[\\") != NULL;
}

bool policy_rule_is_literal(const struct awfs_rule *r)
{
	for (size_t i = 0; i < r->ncomps; i++)
		if (!r->literal[i])
			return false;
	return true;
}

static void rule_free(struct awfs_rule *r)
{
	free(r->path);
	for (size_t i = 0; i < r->ncomps; i++)
		free(r->comps[i]);
	free(r->comps);
	free(r->literal);
	free(r->reason);
	if (r->runtimes)
		for (size_t i = 0; r->runtimes[i]; i++)
			free(r->runtimes[i]);
	free(r->runtimes);
}

void policy_free(struct awfs_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nrules; i++)
		rule_free(&p->rules[i]);
	free(p->rules);
	free(p->file);
	free(p->root);
	free(p->runtime);
	free(p);
}

/* Loader state: the file name for messages and the collected errors. */
struct loader {
	const char *file;
	struct awfs_msgs *errs;
	size_t nerrs_at_start;
};

static int line_of(const config_setting_t *s)
{
	int line = s ? (int)config_setting_source_line(s) : 0;

	return line > 0 ? line : 1;
}

/*
 * Split and check a rule path. Returns 0 and fills @r's path/comps, or -1
 * after reporting what is wrong.
 */
static int parse_path(struct loader *ld, int line, enum awfs_class cls, const char *in,
		      const char *root, struct awfs_rule *r)
{
	const char *key = class_keys[cls];
	const char *ex = "path = \"sandbox/firewall/logs\";";
	const char *rel = in;
	char *copy, *save = NULL, *tok;

	if (in[0] == '\0') {
		msgs_add(ld->errs, "%s:%d: %s rule has an empty path. Expected a path relative to the mount root, or \".\" for the root itself. Example: %s",
			 ld->file, line, key, ex);
		return -1;
	}
	if (in[0] == '/') {
		size_t rl = root ? strlen(root) : 0;

		if (!root) {
			msgs_add(ld->errs, "%s:%d: path \"%s\" is absolute but the policy sets no root. Expected a path relative to the mount root, or root = \"/tmp/gh-aw\"; to accept absolute paths under it. Example: %s",
				 ld->file, line, in, ex);
			return -1;
		}
		if (rl == 1)
			rl = 0;	/* root = "/": every absolute path is under it */
		if (strncmp(in, root, rl) != 0 || (in[rl] != '\0' && in[rl] != '/')) {
			msgs_add(ld->errs, "%s:%d: path \"%s\" is outside root \"%s\". Expected a path under the root. Example: path = \"%s/agent\";",
				 ld->file, line, in, root, root);
			return -1;
		}
		rel = in[rl] == '\0' || strcmp(in, "/") == 0 ? "." : in + rl + 1;
		if (rel[0] == '\0' || rel[0] == '/') {
			msgs_add(ld->errs, "%s:%d: path \"%s\" has an empty component. Expected components separated by single slashes, with no trailing slash. Example: %s",
				 ld->file, line, in, ex);
			return -1;
		}
	}
	if (strlen(rel) >= PATH_MAX) {
		msgs_add(ld->errs, "%s:%d: path \"%.40s...\" is longer than PATH_MAX. Expected a path shorter than %d bytes. Example: %s",
			 ld->file, line, in, PATH_MAX, ex);
		return -1;
	}
	if (strcmp(rel, ".") == 0) {
		r->path = util_xstrdup(".");
		return 0;
	}
	copy = util_xstrdup(rel);
	for (const char *c = rel;; c++) {
		/* strtok would hide empty components: find them first */
		if ((*c == '/' && (c == rel || c[1] == '/' || c[1] == '\0'))) {
			msgs_add(ld->errs, "%s:%d: path \"%s\" has an empty component. Expected components separated by single slashes, with no trailing slash. Example: %s",
				 ld->file, line, in, ex);
			free(copy);
			return -1;
		}
		if (*c == '\0')
			break;
	}
	for (tok = strtok_r(copy, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, "..") == 0 || strcmp(tok, ".") == 0) {
			msgs_add(ld->errs, "%s:%d: path \"%s\" contains \"%s\". Expected a path below the mount root without \".\" or \"..\" components (\".\" alone names the root). Example: %s",
				 ld->file, line, in, tok, ex);
			goto fail;
		}
		if (strlen(tok) > NAME_MAX) {
			msgs_add(ld->errs, "%s:%d: path \"%s\" has a component longer than NAME_MAX. Expected components of at most %d bytes. Example: %s",
				 ld->file, line, in, NAME_MAX, ex);
			goto fail;
		}
		r->comps = util_xrealloc(r->comps, (r->ncomps + 1) * sizeof(*r->comps));
		r->literal = util_xrealloc(r->literal, (r->ncomps + 1) * sizeof(*r->literal));
		r->comps[r->ncomps] = util_xstrdup(tok);
		r->literal[r->ncomps] = !policy_is_glob(tok);
		r->ncomps++;
	}
	free(copy);
	r->path = util_xstrdup(rel);
	return 0;
fail:
	free(copy);
	for (size_t i = 0; i < r->ncomps; i++)
		free(r->comps[i]);
	free(r->comps);
	free(r->literal);
	r->comps = NULL;
	r->literal = NULL;
	r->ncomps = 0;
	return -1;
}

static int parse_runtimes(struct loader *ld, const config_setting_t *s, struct awfs_rule *r)
{
	int n = config_setting_length(s);
	int type = config_setting_type(s);
	const char *ex = "runtimes = [\"docker\", \"cloud-hypervisor\"];";
	int bad = 0;

	if ((type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST) || n == 0) {
		msgs_add(ld->errs, "%s:%d: runtimes must be a non-empty list of runtime names. Expected an array of strings; leave runtimes out for a rule that applies everywhere. Example: %s",
			 ld->file, line_of(s), ex);
		return -1;
	}
	r->runtimes = util_xcalloc((size_t)n + 1, sizeof(*r->runtimes));
	for (int i = 0, j = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		const char *name = config_setting_get_string(e);

		if (!name) {
			msgs_add(ld->errs, "%s:%d: runtimes must hold strings. Expected quoted runtime names. Example: %s",
				 ld->file, line_of(e), ex);
			bad = -1;
			continue;
		}
		if (!policy_runtime_known(name)) {
			msgs_add(ld->errs, "%s:%d: unknown runtime \"%s\". Expected one of: %s. Example: %s",
				 ld->file, line_of(e), name, policy_runtime_list(), ex);
			bad = -1;
		}
		r->runtimes[j++] = util_xstrdup(name);
	}
	return bad;
}

/* Parse one { path = ...; reason = ...; ... } group into @r. */
static int parse_rule(struct loader *ld, const config_setting_t *g, enum awfs_class cls,
		      const char *root, struct awfs_rule *r)
{
	const char *key = class_keys[cls];
	const char *ex = class_examples[cls];
	const char *path = NULL, *reason = NULL;
	int line = line_of(g);
	int bad = 0;
	int n;

	r->cls = cls;
	r->line = line;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
		msgs_add(ld->errs, "%s:%d: each %s entry must be a group. Expected { path = \"...\"; reason = \"...\"; }. Example: %s",
			 ld->file, line, key, ex);
		return -1;
	}
	n = config_setting_length(g);
	for (int i = 0; i < n; i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		const char *name = config_setting_name(m);
		int ml = line_of(m);

		if (strcmp(name, "path") == 0) {
			path = config_setting_get_string(m);
			if (!path) {
				msgs_add(ld->errs, "%s:%d: path must be a string. Expected a quoted path. Example: path = \"mcp-logs\";",
					 ld->file, ml);
				bad = -1;
			}
		} else if (strcmp(name, "reason") == 0) {
			reason = config_setting_get_string(m);
			if (!reason) {
				msgs_add(ld->errs, "%s:%d: reason must be a string. Expected a quoted sentence saying why. Example: reason = \"proxy logs reveal the egress policy\";",
					 ld->file, ml);
				bad = -1;
			}
		} else if (strcmp(name, "create") == 0) {
			const char *how = config_setting_get_string(m);

			if (config_setting_type(m) != CONFIG_TYPE_BOOL &&
			    (!how || (strcmp(how, "dir") != 0 && strcmp(how, "file") != 0))) {
				msgs_add(ld->errs, "%s:%d: create must be true, false, \"dir\" or \"file\". Expected true or \"dir\" for a directory, \"file\" for an empty file. Example: create = true;",
					 ld->file, ml);
				bad = -1;
			} else if (cls != AWFS_CLASS_WRITE) {
				msgs_add(ld->errs, "%s:%d: create is only valid in allow_write rules. Expected create only where awfs may make the writable path at mount. Example: %s",
					 ld->file, ml, class_examples[AWFS_CLASS_WRITE]);
				bad = -1;
			} else if (how) {
				r->create = true;
				r->create_file = strcmp(how, "file") == 0;
			} else {
				r->create = config_setting_get_bool(m);
			}
		} else if (strcmp(name, "links") == 0) {
			const char *how = config_setting_get_string(m);

			if (!how || (strcmp(how, "none") != 0 && strcmp(how, "any") != 0 &&
				     strcmp(how, "read-only") != 0)) {
				msgs_add(ld->errs, "%s:%d: links must be \"none\", \"read-only\" or \"any\". Expected \"none\" where the host reads the tree after the agent (no symlink, FIFO, socket or device node may be made or renamed in), \"read-only\" to allow symlinks to read-only paths under the root by absolute path, \"any\" to allow them all. Example: links = \"none\";",
					 ld->file, ml);
				bad = -1;
			} else if (cls != AWFS_CLASS_WRITE) {
				msgs_add(ld->errs, "%s:%d: links is only valid in allow_write rules. Expected it where the agent may make entries. Example: %s",
					 ld->file, ml, class_examples[AWFS_CLASS_WRITE]);
				bad = -1;
			} else {
				r->links = strcmp(how, "none") == 0	 ? AWFS_LINKS_NONE :
					   strcmp(how, "read-only") == 0 ? AWFS_LINKS_READ_ONLY :
									   AWFS_LINKS_ANY;
				r->links_set = true;
			}
		} else if (strcmp(name, "runtimes") == 0) {
			if (parse_runtimes(ld, m, r) < 0)
				bad = -1;
		} else if (strcmp(name, "exception") == 0) {
			if (config_setting_type(m) != CONFIG_TYPE_BOOL) {
				msgs_add(ld->errs, "%s:%d: exception must be true or false. Expected exception = true; on a rule that refuses part of a writable tree on purpose. Example: { path = \"cache-memory/.git\"; reason = \"the host runs git here\"; exception = true; }",
					 ld->file, ml);
				bad = -1;
			} else if (cls == AWFS_CLASS_WRITE) {
				msgs_add(ld->errs, "%s:%d: exception is only valid in read_only and mask rules. Expected it on a rule that refuses part of a writable tree on purpose. Example: { path = \"cache-memory/.git\"; reason = \"the host runs git here\"; exception = true; }",
					 ld->file, ml);
				bad = -1;
			} else {
				r->exception = config_setting_get_bool(m);
			}
		} else {
			msgs_add(ld->errs, "%s:%d: %s rule has an unknown key \"%s\". Expected path, reason, runtimes%s. Example: %s",
				 ld->file, ml, key, name, cls == AWFS_CLASS_WRITE ? ", create, links" : ", exception", ex);
			bad = -1;
		}
	}
	if (!path) {
		if (!config_setting_get_member(g, "path"))
			msgs_add(ld->errs, "%s:%d: %s rule has no path. Expected path = \"...\" relative to the mount root. Example: %s",
				 ld->file, line, key, ex);
		return -1;
	}
	if (parse_path(ld, line, cls, path, root, r) < 0)
		bad = -1;
	if (!reason || reason[strspn(reason, " \t\n\r\v\f")] == '\0') {
		if (reason || !config_setting_get_member(g, "reason"))
			msgs_add(ld->errs, "%s:%d: %s rule \"%s\" has no reason. Expected reason = \"why this path is %s\". Example: %s",
				 ld->file, line, key, path, class_words[cls], ex);
		bad = -1;
	} else {
		r->reason = util_xstrdup(reason);
	}
	if (cls == AWFS_CLASS_MASK && r->path && r->ncomps == 0) {
		msgs_add(ld->errs, "%s:%d: mask rule on the root \".\". Expected masks below the root: a masked root would serve nothing at all. Example: %s",
			 ld->file, line, ex);
		bad = -1;
	}
	if (r->create && r->path) {
		if (!policy_rule_is_literal(r)) {
			msgs_add(ld->errs, "%s:%d: create on the pattern \"%s\". Expected create only on a literal path (awfs cannot create a glob). Example: %s",
				 ld->file, line, path, class_examples[AWFS_CLASS_WRITE]);
			bad = -1;
		}
		if (r->ncomps == 0) {
			msgs_add(ld->errs, "%s:%d: create on the root \".\". Expected create only below the root, which always exists. Example: %s",
				 ld->file, line, class_examples[AWFS_CLASS_WRITE]);
			bad = -1;
		}
	}
	return bad;
}

static bool runtimes_overlap(const struct awfs_rule *a, const struct awfs_rule *b)
{
	if (!a->runtimes || !b->runtimes)
		return true;
	for (size_t i = 0; a->runtimes[i]; i++)
		for (size_t j = 0; b->runtimes[j]; j++)
			if (strcmp(a->runtimes[i], b->runtimes[j]) == 0)
				return true;
	return false;
}

static bool rule_applies(const struct awfs_rule *r, const char *runtime)
{
	if (!r->runtimes)
		return true;
	if (!runtime)
		return false;
	for (size_t i = 0; r->runtimes[i]; i++)
		if (strcmp(r->runtimes[i], runtime) == 0)
			return true;
	return false;
}

/*
 * Whether every path @inner names lies under what mask @m covers: @m is
 * shorter and each of its components matches @inner's (a glob in @inner is
 * only covered by the identical glob in @m).
 */
static bool rule_inside(const struct awfs_rule *m, const struct awfs_rule *inner)
{
	if (m->ncomps >= inner->ncomps)
		return false;
	for (size_t i = 0; i < m->ncomps; i++) {
		if (inner->literal[i]) {
			if (fnmatch(m->comps[i], inner->comps[i], 0) != 0)
				return false;
		} else if (strcmp(m->comps[i], inner->comps[i]) != 0) {
			return false;
		}
	}
	return true;
}

/*
 * Whether rule @o may name a path above some path @r names: @o is shorter
 * and each of its components can match @r's (two globs are taken to
 * overlap: which paths both match is not worked out here).
 */
static bool may_enclose(const struct awfs_rule *o, const struct awfs_rule *r)
{
	if (o->ncomps >= r->ncomps)
		return false;
	for (size_t i = 0; i < o->ncomps; i++) {
		if (r->literal[i] ? fnmatch(o->comps[i], r->comps[i], 0) != 0
				  : o->literal[i] && fnmatch(r->comps[i], o->comps[i], 0) != 0)
			return false;
	}
	return true;
}

int policy_links_strictness(enum awfs_links l)
{
	return l == AWFS_LINKS_NONE ? 2 : l == AWFS_LINKS_READ_ONLY ? 1 : 0;
}

/*
 * An allow_write rule that does not say links takes the strictest of the
 * allow_write rules that say it and may name a path above one it names, so
 * a writable path inside a tree is never looser than the tree by omission
 * (with globs, erring on the strict side).
 */
static void inherit_links(struct awfs_policy *p)
{
	for (size_t i = 0; i < p->nrules; i++) {
		struct awfs_rule *r = &p->rules[i];

		if (r->cls != AWFS_CLASS_WRITE || r->links_set)
			continue;
		for (size_t j = 0; j < p->nrules; j++) {
			const struct awfs_rule *o = &p->rules[j];

			if (o->cls == AWFS_CLASS_WRITE && o->links_set && may_enclose(o, r) &&
			    policy_links_strictness(o->links) > policy_links_strictness(r->links))
				r->links = o->links;
		}
	}
}

/* rule indices (qsort_r over @rules) by path, or by first component; then by position */
static int by_path(const void *a, const void *b, void *rules)
{
	const struct awfs_rule *r = rules;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(r[i].path, r[j].path);

	return c ? c : (i > j) - (i < j);
}

static int by_first(const void *a, const void *b, void *rules)
{
	const struct awfs_rule *r = rules;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(r[i].comps[0], r[j].comps[0]);

	return c ? c : (i > j) - (i < j);
}

/* a rule listed twice: with another at line j (the earlier one) */
static void check_twice(struct loader *ld, const struct awfs_rule *r, const struct awfs_rule *e)
{
	if (r->cls == e->cls)
		msgs_add(ld->errs, "%s:%d: path \"%s\" is already listed in %s at line %d. Expected each pattern once. Example: %s",
			 ld->file, r->line, r->path, class_keys[e->cls], e->line, class_examples[r->cls]);
	else
		msgs_add(ld->errs, "%s:%d: path \"%s\" is in %s here and in %s at line %d. Expected each pattern in one class only, or in rules whose runtimes do not overlap. Example: mask = ( { path = \"work\"; reason = \"compose file holds tokens\"; runtimes = [\"docker\"]; } );",
			 ld->file, r->line, r->path, class_keys[r->cls], class_keys[e->cls], e->line);
}

/*
 * The rules as a set: no path twice (in one class or two) where runtimes
 * overlap, and nothing inside a mask. n log n, not a pass over every pair:
 * generated policies (a rule per tool grant, per repository) grow.
 * Messages come out in file order, as a pass over the rules would give them.
 */
static void check_set(struct loader *ld, struct awfs_rule *rules, size_t n)
{
	size_t *ord = util_xcalloc(n + 1, sizeof(*ord)), *masks = util_xcalloc(n + 1, sizeof(*masks));
	size_t *first = util_xcalloc(n + 1, sizeof(*first));	/* per rule: its group's first index in ord */
	size_t nmasks = 0, nglob = 0;

	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, n, sizeof(*ord), by_path, rules);
	for (size_t k = 0; k < n; k++)
		first[ord[k]] = k > 0 && strcmp(rules[ord[k]].path, rules[ord[k - 1]].path) == 0 ?
					first[ord[k - 1]] : k;
	for (size_t i = 0; i < n; i++) {
		/* the same path earlier in the file: i's group, sorted by position */
		for (size_t k = first[i]; k < n && ord[k] < i; k++)
			if (strcmp(rules[ord[k]].path, rules[i].path) == 0 &&
			    runtimes_overlap(&rules[i], &rules[ord[k]]))
				check_twice(ld, &rules[i], &rules[ord[k]]);
	}

	/* masks by their first component (literal ones, sorted; globs apart) */
	for (size_t i = 0; i < n; i++)
		if (rules[i].cls == AWFS_CLASS_MASK && rules[i].ncomps > 0 && rules[i].literal[0])
			masks[nmasks++] = i;
	qsort_r(masks, nmasks, sizeof(*masks), by_first, rules);
	for (size_t i = 0; i < n; i++)
		if (rules[i].cls == AWFS_CLASS_MASK && rules[i].ncomps > 0 && !rules[i].literal[0])
			ord[nglob++] = i;	/* ord is free again: the glob-first masks */
	for (size_t i = 0; i < n; i++) {
		const struct awfs_rule *r = &rules[i], *in = NULL;
		size_t lo = 0, hi = nmasks;

		if (r->cls == AWFS_CLASS_MASK || r->ncomps == 0)
			continue;
		/* the first literal mask whose first component is r's */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (strcmp(rules[masks[mid]].comps[0], r->comps[0]) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* the earliest in the file of the two kinds (each list is in file order) */
		for (size_t k = lo; k < nmasks && !in && strcmp(rules[masks[k]].comps[0], r->comps[0]) == 0; k++)
			if (runtimes_overlap(r, &rules[masks[k]]) && rule_inside(&rules[masks[k]], r))
				in = &rules[masks[k]];
		for (size_t k = 0; k < nglob && (!in || &rules[ord[k]] < in); k++)
			if (runtimes_overlap(r, &rules[ord[k]]) && rule_inside(&rules[ord[k]], r)) {
				in = &rules[ord[k]];
				break;
			}
		if (in)
			msgs_add(ld->errs, "%s:%d: %s rule \"%s\" is inside the masked subtree \"%s\" (line %d). Expected %s paths outside every mask: nothing below a mask is reachable. Example: %s",
				 ld->file, r->line, class_keys[r->cls], r->path, in->path, in->line,
				 class_words[r->cls], class_examples[r->cls]);
	}
	free(first);
	free(masks);
	free(ord);
}

static void parse_class(struct loader *ld, const config_setting_t *list, enum awfs_class cls,
			const char *root, struct awfs_rule **rules, size_t *n)
{
	int len;

	if (config_setting_type(list) != CONFIG_TYPE_LIST) {
		msgs_add(ld->errs, "%s:%d: %s must be a list of rules. Expected %s = ( { ... }, { ... } );. Example: %s",
			 ld->file, line_of(list), class_keys[cls], class_keys[cls], class_examples[cls]);
		return;
	}
	len = config_setting_length(list);
	for (int i = 0; i < len; i++) {
		struct awfs_rule r = { 0 };

		if (parse_rule(ld, config_setting_get_elem(list, (unsigned)i), cls, root, &r) < 0) {
			rule_free(&r);
			continue;
		}
		if ((*n & (*n - 1)) == 0)	/* 0, 1, 2, 4...: room doubles, n appends cost n */
			*rules = util_xrealloc(*rules, (*n ? 2 * *n : 1) * sizeof(**rules));
		(*rules)[(*n)++] = r;
	}
}

/* Refuse @include: libconfig 1.5 would read any file it names. */
static void check_includes(struct loader *ld, const char *text)
{
	int line = 1;

	for (const char *p = text; *p; p++) {
		const char *q = p;

		while (*q == ' ' || *q == '\t')
			q++;
		if (strncmp(q, "@include", 8) == 0)
			msgs_add(ld->errs, "%s:%d: @include is not supported. Expected one self-contained policy file, so what it allows can be reviewed in one place. Example: %s",
				 ld->file, line, class_examples[AWFS_CLASS_MASK]);
		p = strchr(p, '\n');
		if (!p)
			break;
		line++;
	}
}

static bool valid_root(const char *root)
{
	size_t n = strlen(root);

	if (root[0] != '/' || n >= PATH_MAX || (n > 1 && root[n - 1] == '/'))
		return false;
	return strstr(root, "//") == NULL && strstr(root, "/./") == NULL &&
	       strstr(root, "/../") == NULL && (n < 2 || strcmp(root + n - 2, "/.") != 0) &&
	       (n < 3 || strcmp(root + n - 3, "/..") != 0);
}

/* Report what libconfig refused, in words that say what to change. */
static void syntax_error(struct awfs_msgs *errs, const char *name, const config_t *cfg)
{
	const char *what = config_error_text(cfg);
	const char *expected = "libconfig syntax: name = value; with lists in ( ) and rules in { }";
	int line = config_error_line(cfg) > 0 ? config_error_line(cfg) : 1;

	if (!what || strcmp(what, "syntax error") == 0) {
		/* bison's text adds nothing to "syntax error" */
		what = NULL;
	} else if (strcmp(what, "duplicate setting name") == 0) {
		what = "a setting is given twice";
		expected = "each setting once at the top level and once per rule (all rules of a class in one list)";
	} else if (strcmp(what, "mismatched element type in array") == 0) {
		what = "an array mixes value types";
		expected = "[ ] arrays whose values all have one type, such as quoted strings";
	}
	msgs_add(errs, "%s:%d: syntax error%s%s. Expected %s. Example: %s", name, line,
		 what ? ": " : "", what ? what : "", expected, class_examples[AWFS_CLASS_MASK]);
}

struct awfs_policy *policy_parse(const char *text, const char *name, const char *runtime,
				 struct awfs_msgs *errs)
{
	static const char *const top_keys[] = {
		"version", "root", "unclassified", "record_changes", "mask", "allow_write", "read_only",
	};
	struct loader ld = { .file = name, .errs = errs, .nerrs_at_start = errs->n };
	struct awfs_policy *p = util_xcalloc(1, sizeof(*p));
	struct awfs_rule *all = NULL;
	size_t nall = 0;
	config_t cfg;
	config_setting_t *top, *s;
	int n;

	check_includes(&ld, text);
	if (errs->n > ld.nerrs_at_start) {
		free(p);
		return NULL;
	}
	config_init(&cfg);
	if (config_read_string(&cfg, text) != CONFIG_TRUE) {
		syntax_error(errs, name, &cfg);
		config_destroy(&cfg);
		free(p);
		return NULL;
	}
	top = config_root_setting(&cfg);
	n = config_setting_length(top);
	for (int i = 0; i < n; i++) {
		config_setting_t *m = config_setting_get_elem(top, (unsigned)i);
		const char *key = config_setting_name(m);
		bool known = false;

		for (size_t k = 0; k < AWFS_ARRAY_LEN(top_keys); k++)
			known = known || strcmp(key, top_keys[k]) == 0;
		if (!known)
			msgs_add(errs, "%s:%d: unknown setting \"%s\". Expected one of: version, root, unclassified, record_changes, mask, allow_write, read_only. Example: %s",
				 name, line_of(m), key, class_examples[AWFS_CLASS_WRITE]);
	}

	s = config_setting_get_member(top, "version");
	if (!s) {
		msgs_add(errs, "%s:1: missing setting \"version\". Expected version = 1; at the top of the policy. Example: version = 1;",
			 name);
	} else if (config_setting_type(s) != CONFIG_TYPE_INT) {
		msgs_add(errs, "%s:%d: version must be a plain integer. Expected version = 1; with no quotes or decimal point. Example: version = 1;",
			 name, line_of(s));
	} else if (config_setting_get_int(s) != 1) {
		msgs_add(errs, "%s:%d: unsupported policy version %d. Expected version = 1; (the only format this awfs reads). Example: version = 1;",
			 name, line_of(s), config_setting_get_int(s));
	} else {
		p->version = 1;
	}

	s = config_setting_get_member(top, "unclassified");
	if (s) {
		const char *v = config_setting_get_string(s);

		if (v && strcmp(v, "warn") == 0)
			p->unclassified = AWFS_UNCLASSIFIED_WARN;
		else if (v && strcmp(v, "mask") == 0)
			p->unclassified = AWFS_UNCLASSIFIED_MASK;
		else
			msgs_add(errs, "%s:%d: unclassified must be \"warn\" or \"mask\". Expected \"warn\" (serve read-only and log) or \"mask\" (serve empty and log). Example: unclassified = \"warn\";",
				 name, line_of(s));
	}

	s = config_setting_get_member(top, "record_changes");
	if (s) {
		if (config_setting_type(s) != CONFIG_TYPE_BOOL)
			msgs_add(errs, "%s:%d: record_changes must be true or false. Expected true to record every change the agent makes in the audit trail (awfs(1) --record-changes). Example: record_changes = true;",
				 name, line_of(s));
		else
			p->record_changes = config_setting_get_bool(s);
	}

	s = config_setting_get_member(top, "root");
	if (s) {
		const char *v = config_setting_get_string(s);

		if (!v || !valid_root(v))
			msgs_add(errs, "%s:%d: root must be an absolute, normalised directory path. Expected a quoted path with no trailing slash, \".\" or \"..\". Example: root = \"/tmp/gh-aw\";",
				 name, line_of(s));
		else
			p->root = util_xstrdup(v);
	}

	for (int c = AWFS_CLASS_WRITE; c <= AWFS_CLASS_MASK; c++) {
		s = config_setting_get_member(top, class_keys[c]);
		if (s)
			parse_class(&ld, s, (enum awfs_class)c, p->root, &all, &nall);
	}
	check_set(&ld, all, nall);
	config_destroy(&cfg);

	if (errs->n > ld.nerrs_at_start) {
		for (size_t i = 0; i < nall; i++)
			rule_free(&all[i]);
		free(all);
		policy_free(p);
		return NULL;
	}
	/* keep only the rules for this runtime, in file order per class */
	p->rules = util_xcalloc(nall, sizeof(*p->rules));
	for (size_t i = 0; i < nall; i++) {
		if (rule_applies(&all[i], runtime)) {
			p->rules[p->nrules++] = all[i];
		} else {
			rule_free(&all[i]);
			p->nskipped++;
		}
	}
	free(all);
	inherit_links(p);
	p->file = util_xstrdup(name);
	p->runtime = util_xstrdup(runtime);
	return p;
}

/* Read the whole policy file after checking who may have written it. */
static char *read_checked(const char *file, struct awfs_msgs *errs)
{
	struct stat st;
	char *buf;
	size_t len = 0;
	int fd;

	/* O_NONBLOCK: a FIFO must be refused below, not block the open */
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		msgs_add(errs, "%s: cannot open the policy: %s", file, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		msgs_add(errs, "%s: cannot stat the policy: %s", file, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		msgs_add(errs, "%s: the policy is not a regular file. Expected a file such as /etc/awfs/policy.conf.", file);
		close(fd);
		return NULL;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		msgs_add(errs, "%s: the policy is writable by group or others (mode %04o). Expected mode 0644 or stricter: chmod go-w %s",
			 file, (unsigned)(st.st_mode & 07777), file);
		close(fd);
		return NULL;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		msgs_add(errs, "%s: the policy is owned by uid %u, neither root nor the user running awfs. Expected a policy owned by root (or by uid %u): chown root %s",
			 file, (unsigned)st.st_uid, (unsigned)geteuid(), file);
		close(fd);
		return NULL;
	}
	if ((unsigned long long)st.st_size > AWFS_POLICY_MAX_BYTES) {
		msgs_add(errs, "%s: the policy is larger than %u MiB. Expected a policy file of reasonable size.",
			 file, AWFS_POLICY_MAX_BYTES >> 20);
		close(fd);
		return NULL;
	}
	buf = util_xmalloc((size_t)st.st_size + 1);
	while (len < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + len, (size_t)st.st_size - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	if (memchr(buf, '\0', len)) {
		msgs_add(errs, "%s: the policy contains a NUL byte. Expected a text file.", file);
		free(buf);
		return NULL;
	}
	return buf;
}

struct awfs_policy *policy_load(const char *file, const char *runtime, struct awfs_msgs *errs)
{
	struct awfs_policy *p;
	char *text = read_checked(file, errs);

	if (!text)
		return NULL;
	p = policy_parse(text, file, runtime, errs);
	free(text);
	return p;
}

struct awfs_policy *policy_load_or_report(const char *file, const char *runtime, FILE *err,
					  const char *who, const char *after)
{
	struct awfs_msgs errs = { 0 };
	struct awfs_policy *p = policy_load(file, runtime, &errs);

	if (!p) {
		for (size_t i = 0; i < errs.n; i++)
			fprintf(err, "%s\n", errs.v[i]);
		fprintf(err, "%s: %zu error%s in the policy%s\n", who, errs.n, errs.n == 1 ? "" : "s",
			after);
	}
	msgs_clear(&errs);
	return p;
}
