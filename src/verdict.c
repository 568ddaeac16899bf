/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verdict.c - refusals and unclassified entries: counting, explaining,
 * logging, keeping for .awfs/denials, auditing.
 */
#include "verdict.h"
#include "token.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "explain.h"
#include "host.h"
#include "info.h"
#include "log.h"
#include "util.h"

#define AWFS_MAX_UNCLASSIFIED 4096
#define AWFS_MAX_OP_KEYS 64
#define AWFS_MAX_PATH_KEYS 256

static const struct awfs_ops_config *cfg;
static char *writable_hint;		/* escaped list of writable paths */
static const char writable_word[] = " Writable paths: ";	/* what precedes it in a log line */
static atomic_uint_fast64_t denials;
static atomic_uint_fast64_t expected_refusals;	/* refusals that lose nothing: not denials */

/* the limits and the counters behind the unmount summary (stats_lock) */
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct awfs_counts by_op, by_path;
/* the byte budget of denial lines and their audit records (log.h), for all */
static struct awfs_bytelimit bl;

/*
 * The limits are per caller (uid), so that one caller's flood hides no
 * other caller's refusals: each has its own lines a second and half of
 * the byte budgets (the whole still bounds them all). Within a caller the
 * first refusal of each kind (operation, directory, rule) is written
 * whatever its rate: a stream of refused creates in one place cannot hide
 * the one attempt elsewhere; only the byte budgets stop it. The kinds a
 * caller has had written are remembered, up to CALLER_KINDS (a caller past
 * that is rate-limited alone), and CALLERS callers at once (the least
 * recently refused one is forgotten: its limits start again).
 */
#define CALLERS 64
#define CALLER_KINDS 16384

struct caller {
	bool used;
	uint32_t uid;
	uint64_t seen;		/* when it was last refused (a count of refusals) */
	struct awfs_ratelimit rl;
	struct awfs_bytelimit bl;
	uint64_t *kinds;	/* a set of kinds' hashes (0: an empty slot), cap a power of 2 */
	size_t nkinds, cap;
};
static struct caller callers[CALLERS];
static uint64_t refusals_seen;
static uint64_t forgotten_suppressed;	/* the callers forgotten had these */

static pthread_mutex_t uncl_lock = PTHREAD_MUTEX_INITIALIZER;
static char **uncl_names;
static size_t uncl_n;

void verdict_init(const struct awfs_ops_config *c)
{
	struct util_str hint = { 0 };
	char mnt[3 * PATH_MAX];

	cfg = c;
	bytelimit_init(&bl, AWFS_LOG_BYTES_PER_HOUR / 3600.0, AWFS_LOG_BYTES_BURST,
		       AWFS_LOG_BYTES_PER_MOUNT);
	log_escape(c->mountpoint, strlen(c->mountpoint), mnt, sizeof(mnt));
	for (size_t i = 0; i < c->policy->nrules; i++) {
		const struct awfs_rule *r = &c->policy->rules[i];
		char esc[3 * PATH_MAX];

		if (r->cls != AWFS_CLASS_WRITE)
			continue;
		util_str_join(&hint, ", ", mnt);
		if (r->ncomps) {
			log_escape(r->path, strlen(r->path), esc, sizeof(esc));
			util_str_put(&hint, "/", 1);
			util_str_put(&hint, esc, strlen(esc));
		}
	}
	writable_hint = hint.s ? hint.s : util_xstrdup("none (the policy has no allow_write rule)");
}

void verdict_fini(void)
{
	free(writable_hint);
	writable_hint = NULL;
	for (size_t i = 0; i < uncl_n; i++)
		free(uncl_names[i]);
	free(uncl_names);
	uncl_names = NULL;
	for (size_t i = 0; i < CALLERS; i++)
		free(callers[i].kinds);
	memset(callers, 0, sizeof(callers));
	refusals_seen = forgotten_suppressed = 0;
	uncl_n = 0;
	counts_clear(&by_op);
	counts_clear(&by_path);
}

/* ------------------------------------------------------------ paths */

static void append(char *out, size_t size, const char *a, const char *b)
{
	size_t l = strlen(out);

	snprintf(out + l, size - l, "%s%s", a, b);
}

/*
 * The path under the mount as the agent sees it, raw bytes (never opened:
 * for messages only). The information directory's nodes are named from
 * the mount point; a masked entry is its parent's path plus its name; a
 * host entry is what its pinned fd says, under the mount.
 */
static int host_fd_path_of(const struct awfs_inode *cin, char *buf, size_t size)
{
	/* (opening its fd changes the inode's cache, not what it is) */
	struct awfs_inode *in = (struct awfs_inode *)cin;
	int fd, err;

	if (inode_on_listener()) {
		err = inode_fd(in, &fd);
		return err ? err : host_fd_path(fd, buf, size);
	}
	err = inode_open(in, O_PATH, &fd);	/* a worker's own */
	if (!err) {
		err = host_fd_path(fd, buf, size);
		close(fd);
	}
	return err;
}

static void raw_path(const struct awfs_inode *in, const char *name, char *out, size_t size)
{
	char host[PATH_MAX + 1];
	size_t srclen = strlen(cfg->source);

	out[0] = '\0';
	if (in->kind == AWFS_INODE_INFO) {
		/* named from the mount point, as the agent sees it, never the host */
		snprintf(out, size, "%s/%s", cfg->mountpoint, info_name());
		if (in != info_dir_node())
			append(out, size, "/", in->name);
	} else if (in->kind == AWFS_INODE_MASK) {
		raw_path(in->parent, NULL, out, size);
		append(out, size, "/", in->name);
	} else if (host_fd_path_of(in, host, sizeof(host)) == 0 &&
		   (in->type == S_IFDIR || strcmp(host, "/") != 0)) {
		if (strncmp(host, cfg->source, srclen) == 0 &&
		    (host[srclen] == '/' || host[srclen] == '\0'))
			snprintf(out, size, "%s%s", cfg->mountpoint, host + srclen);
		else if (strcmp(cfg->source, "/") == 0)
			snprintf(out, size, "%s%s", cfg->mountpoint, host);
		else
			snprintf(out, size, "%s", host);	/* moved out from under the source */
	} else if (in->type != S_IFDIR && in->parent) {
		/*
		 * A file's fd opened from its handle has no name (/proc shows "/":
		 * the kernel had dropped its dentry): where the kernel has it in
		 * the directory it was found in
		 */
		char *n = inode_name_in(in, in->parent);

		raw_path(in->parent, NULL, out, size);
		append(out, size, "/", n);
		free(n);
	} else {
		snprintf(out, size, "%s/?", cfg->mountpoint);
	}
	if (name)
		append(out, size, (out[0] && out[strlen(out) - 1] == '/') ? "" : "/", name);
}

void verdict_raw_path(const struct awfs_inode *in, const char *name, char *out, size_t size)
{
	raw_path(in, name, out, size);
}

/* The same, escaped for a log line (a long one shortened, marked). */
static void display_path(const struct awfs_inode *in, const char *name, char *out, size_t size)
{
	char raw[2 * PATH_MAX];

	raw_path(in, name, raw, sizeof(raw));
	log_quote_path(raw, strlen(raw), out, size);
}

/* The first component under the mount of @raw, for the per-path summary. */
static void path_key(const char *raw, char *out, size_t size)
{
	size_t ml = strlen(cfg->mountpoint);
	const char *rel = raw;

	if (strncmp(raw, cfg->mountpoint, ml) == 0 && (raw[ml] == '/' || raw[ml] == '\0'))
		rel = raw + ml;
	while (*rel == '/')
		rel++;
	if (!*rel)
		snprintf(out, size, ".");	/* the mount root itself */
	else
		snprintf(out, size, "%.*s", (int)strcspn(rel, "/"), rel);
}

/* ------------------------------------------------------------ refusals */

/* Who decided, in a few words, escaped: the part of a line that is never cut. */
static void decider(const struct awfs_refusal *r, char *out, size_t size)
{
	const struct awfs_rule *g = r->rule;
	char path[AWFS_LOG_PATH_MAX + 1], file[AWFS_LOG_PATH_MAX + 1];

	if (r->how == AWFS_BLOCK_INFO) {
		snprintf(out, size, "awfs's information directory");
		return;
	}
	if (r->how != AWFS_BLOCK_ANCHOR && classify_origin(r->at_state) == AWFS_ORIGIN_ROOT) {
		snprintf(out, size, "the root default (read-only)");
		return;
	}
	if (r->how != AWFS_BLOCK_ANCHOR && classify_origin(r->at_state) == AWFS_ORIGIN_UNCLASSIFIED) {
		snprintf(out, size, "unclassified = \"%s\"",
			 cfg->policy->unclassified == AWFS_UNCLASSIFIED_MASK ? "mask" : "warn");
		return;
	}
	log_escape_path(g->path, strlen(g->path), path, sizeof(path));
	log_escape_path(cfg->policy->file, strlen(cfg->policy->file), file, sizeof(file));
	snprintf(out, size, "%s%s rule \"%s\" (%s:%d)", r->how == AWFS_BLOCK_ANCHOR ? "anchored " : "",
		 policy_class_key(g->cls), path, file, g->line);
}

/*
 * A refusal that loses nothing: git takes .git/index.lock opportunistically
 * (git status, git diff refresh the index when they can lock it, and carry
 * on without a word when they cannot), so its create in a read-only .git is
 * what any read-only repository answers, not a lost write. Such a refusal
 * is logged and audited as expected, counted apart, and never trips
 * --fail-on-denial.
 */
static bool refusal_expected(const struct awfs_refusal *r, const char *path)
{
	static const char lock[] = "/.git/index.lock";
	size_t n = strlen(path);

	return strcmp(r->op, "create") == 0 && n >= sizeof(lock) - 1 &&
	       strcmp(path + n - (sizeof(lock) - 1), lock) == 0;
}

/*
 * A refusal in a read-only directory that holds single-file allow_write
 * rules (agent-step-summary.md): say that those files are writable in place
 * only, the fix for the tools that rewrite through a temporary sibling.
 */
static void single_file_hint(const struct awfs_refusal *r, char *out, size_t size)
{
	char raw[2 * PATH_MAX], names[2048] = "", q[AWFS_LOG_PATH_MAX + 8];
	size_t ml = strlen(cfg->mountpoint), nnames = 0;
	const char *rel, *self = NULL;

	out[0] = '\0';
	raw_path(r->at, r->at_name, raw, sizeof(raw));
	if (strncmp(raw, cfg->mountpoint, ml) != 0)
		return;
	for (rel = raw + ml; *rel == '/'; rel++)
		;
	for (size_t i = 0; i < cfg->policy->nrules; i++) {
		const struct awfs_rule *g = &cfg->policy->rules[i];
		const char *slash, *last;
		size_t plen;

		if (!g->single_file)
			continue;
		slash = strrchr(g->path, '/');
		plen = slash ? (size_t)(slash - g->path) : 0;
		last = slash ? slash + 1 : g->path;
		if (strlen(rel) != plen || strncmp(rel, g->path, plen) != 0)
			continue;
		if ((r->name && strcmp(r->name, last) == 0) ||
		    (r->other && r->other->name && strcmp(r->other->name, last) == 0))
			self = last;
		log_quote_path(last, strlen(last), q, sizeof(q));
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 nnames++ ? ", " : "", q);
	}
	if (self) {
		log_quote_path(self, strlen(self), q, sizeof(q));
		snprintf(out, size, "; %s is writable in place, or replaced by a temporary file made beside it and renamed onto it; it cannot be removed or renamed", q);
	} else if (nnames) {
		snprintf(out, size, "; in this directory only %s %s writable: in place (>, >>, truncate), or through a temporary file beside %s renamed onto %s, named as sed -i, perl -pi, Python's tempfile, mktemp or the file's own name and a suffix name theirs",
			 names, nnames == 1 ? "is" : "are", nnames == 1 ? "it" : "them", nnames == 1 ? "it" : "one");
	}
}

/* The sentence saying what refused, escaped. */
static void explain_refusal(const struct awfs_refusal *r, char *why, size_t size)
{
	char bpath[4 * PATH_MAX], ex[4096];

	switch (r->how) {
	case AWFS_ALLOWED:	/* not a refusal: never asked */
		why[0] = '\0';
		break;
	case AWFS_BLOCK_ANCHOR: {
		const struct awfs_rule *g = r->rule;
		char gp[3 * PATH_MAX], gf[3 * PATH_MAX];

		display_path(r->at, r->at_name, bpath, sizeof(bpath));
		log_escape(g->path, strlen(g->path), gp, sizeof(gp));
		log_escape(cfg->policy->file, strlen(cfg->policy->file), gf, sizeof(gf));
		snprintf(why, size, "%s rule \"%s\" (%s:%d) applies below %s, so nothing may be renamed or linked into or out of it, nor a symlink made there",
			 policy_class_key(g->cls), gp, gf, g->line, bpath);
		break;
	}
	case AWFS_BLOCK_INFO:
		snprintf(why, size, "it is awfs's read-only information directory");
		break;
	case AWFS_BLOCK_KIND:
	case AWFS_BLOCK_TARGET: {
		const struct awfs_rule *g = r->rule;
		char gp[3 * PATH_MAX], gf[3 * PATH_MAX], gr[3 * 1024];

		display_path(r->at, r->at_name, bpath, sizeof(bpath));
		log_escape(g->path, strlen(g->path), gp, sizeof(gp));
		log_escape(cfg->policy->file, strlen(cfg->policy->file), gf, sizeof(gf));
		log_escape(g->reason, strlen(g->reason), gr, sizeof(gr));
		if (r->how == AWFS_BLOCK_TARGET)
			snprintf(why, size, "allow_write rule \"%s\" (%s:%d) says links = \"read-only\": a symlink made at %s must name, by an absolute path under %s, an existing read-only object with nothing masked below it, reached through no other link; the host reads this tree after the agent and follows links (%s)",
				 gp, gf, g->line, bpath, cfg->policy->root ? cfg->policy->root : cfg->mountpoint, gr);
		else
			snprintf(why, size, "allow_write rule \"%s\" (%s:%d) says links = \"%s\": no %sFIFO, socket or device node may be made at %s, linked or moved there, nor anything moved in from a tree that allows any link; the host reads this tree after the agent and would follow or block on them (%s)",
				 gp, gf, g->line, g->links == AWFS_LINKS_NONE ? "none" : "read-only",
				 g->links == AWFS_LINKS_NONE ? "symlink, " : "symlink but one to read-only ground, ",
				 bpath, gr);
		break;
	}
	case AWFS_BLOCK_SELF:
	case AWFS_BLOCK_ENTRY:
		explain_state(cfg->policy, r->at_state, ex, sizeof(ex));
		if (r->at == r->in && r->at_name == r->name) {
			snprintf(why, size, "it is %s", ex);
		} else {
			display_path(r->at, r->at_name, bpath, sizeof(bpath));
			snprintf(why, size, "%s is %s", bpath, ex);
		}
		break;
	case AWFS_BLOCK_PARENT: {
		char hint[4096];

		explain_state(cfg->policy, r->at_state, ex, sizeof(ex));
		display_path(r->at, r->at_name, bpath, sizeof(bpath));
		single_file_hint(r, hint, sizeof(hint));
		snprintf(why, size, "its directory %s is %s%s", bpath, ex, hint);
		break;
	}
	}
}

static const char *origin_word(const struct awfs_refusal *r)
{
	if (r->how == AWFS_BLOCK_INFO)
		return "info directory";
	if (r->how == AWFS_BLOCK_ANCHOR)
		return "anchored rule";
	switch (classify_origin(r->at_state)) {
	case AWFS_ORIGIN_RULE:
		return "rule";
	case AWFS_ORIGIN_ROOT:
		return "root default";
	default:
		return "unclassified";
	}
}

/* ------------------------------------------------------------ per caller */

static void suppressed_line(uint64_t n, uint32_t uid)
{
	if (n)
		log_msg(AWFS_LOG_WARN, "%llu denial messages suppressed by the rate limit for uid %u "
			"(lines a second, bytes an hour or per mount)", (unsigned long long)n,
			(unsigned)uid);
}

/* The limits of @uid: its own, a free slot's, or the least recently refused one's (stats_lock). */
static struct caller *caller_of(uint32_t uid)
{
	struct caller *c = NULL, *old = &callers[0];

	for (size_t i = 0; i < CALLERS && !c; i++) {
		if (callers[i].used && callers[i].uid == uid)
			c = &callers[i];
		else if (!callers[i].used || (old->used && callers[i].seen < old->seen))
			old = &callers[i];
	}
	if (!c) {
		c = old;
		if (c->used) {
			suppressed_line(c->rl.suppressed, c->uid);
			forgotten_suppressed += c->rl.total_suppressed;
		}
		free(c->kinds);
		*c = (struct caller){ .used = true, .uid = uid };
		ratelimit_init(&c->rl, 10.0, 50.0);
		bytelimit_init(&c->bl, AWFS_LOG_BYTES_PER_HOUR / 3600.0 / 2, AWFS_LOG_BYTES_BURST / 2,
			       AWFS_LOG_BYTES_PER_MOUNT / 2);
	}
	c->seen = ++refusals_seen;
	return c;
}

/* The kind of a refusal: its operation, the directory of @path, its rule. Never 0. */
static uint64_t kind_of(const char *op, const char *path, const struct awfs_rule *rule)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (const char *p = op; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ 0xff) * 1099511628211ULL;
	for (size_t i = 0; i < dlen; i++)
		h = (h ^ (unsigned char)path[i]) * 1099511628211ULL;
	h = (h ^ (uint64_t)(uintptr_t)rule) * 1099511628211ULL;
	return h ? h : 1;
}

/* Whether @c had a refusal of kind @k written; @add: remember it (if there is room). */
static bool kind_seen(struct caller *c, uint64_t k, bool add)
{
	size_t i;

	if (c->cap == 0) {
		if (!add)
			return false;
		c->cap = 64;
		c->kinds = util_xcalloc(c->cap, sizeof(*c->kinds));
	}
	for (i = k & (c->cap - 1); c->kinds[i]; i = (i + 1) & (c->cap - 1))
		if (c->kinds[i] == k)
			return true;
	if (!add || c->nkinds >= CALLER_KINDS)
		return false;
	if (2 * (c->nkinds + 1) > c->cap) {	/* grow: at most half full */
		uint64_t *old = c->kinds;
		size_t ocap = c->cap;

		c->cap *= 2;
		c->kinds = util_xcalloc(c->cap, sizeof(*c->kinds));
		c->nkinds = 0;
		for (size_t j = 0; j < ocap; j++)
			if (old[j])
				(void)kind_seen(c, old[j], true);
		free(old);
		return kind_seen(c, k, true);
	}
	c->kinds[i] = k;
	c->nkinds++;
	return false;
}

/*
 * May the refusal of kind @k by @c be written now (stats_lock)? The byte
 * budgets (all callers', and @c's half) first, then @c's lines a second,
 * which the first of a kind passes anyway. *@suppressed: how many of @c's
 * were not written since its last line; *@first: whether this is the first
 * of its kind @c has written.
 */
static bool caller_admit(struct caller *c, uint64_t k, double now, uint64_t *suppressed,
			 bool *first)
{
	bool fresh = !kind_seen(c, k, false) && c->nkinds < CALLER_KINDS;

	*first = fresh;
	if (!bytelimit_allow(&bl, now) || !bytelimit_allow(&c->bl, now))
		return ratelimit_refuse(&c->rl);
	if (!ratelimit_take(&c->rl, now, suppressed)) {
		if (!fresh)
			return false;
		c->rl.suppressed--;	/* counted by the refusal above: it is written */
		c->rl.total_suppressed--;
		*suppressed = c->rl.suppressed;
		c->rl.suppressed = 0;
	}
	(void)kind_seen(c, k, true);
	return true;
}

void verdict_deny(fuse_req_t req, const struct awfs_refusal *r)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	char path[2 * PATH_MAX], opath[2 * PATH_MAX] = "", key[NAME_MAX + 2];
	char epath[AWFS_LOG_PATH_MAX + 8], eother[AWFS_LOG_PATH_MAX + 24] = "", why[8192];
	char comm[64], ecomm[256], who[2 * AWFS_LOG_PATH_MAX + 64];
	struct awfs_denial d = { 0 };
	uint64_t suppressed = 0;
	struct caller *c;
	size_t wrote;
	char *line;
	bool ok, first;

	/*
	 * awfsctl verify's probes are refused like any write, uncounted: root
	 * asking for a name with this mount's secret token (token.h), which
	 * neither an agent nor a guest behind virtiofsd can know.
	 */
	if (ctx->uid == 0 && r->name && token_is_probe(r->name))
		return;

	raw_path(r->in, r->name, path, sizeof(path));
	{
		/* counted under the protected area that refused, not the subject */
		char bpath[2 * PATH_MAX];

		raw_path(r->at, r->at_name, bpath, sizeof(bpath));
		path_key(bpath, key, sizeof(key));
	}
	d.expected = refusal_expected(r, path);
	atomic_fetch_add(d.expected ? &expected_refusals : &denials, 1);
	pthread_mutex_lock(&stats_lock);
	if (!d.expected) {
		counts_add(&by_op, r->op, AWFS_MAX_OP_KEYS);
		counts_add(&by_path, key, AWFS_MAX_PATH_KEYS);
	}
	c = caller_of(ctx->uid);
	ok = caller_admit(c, kind_of(r->op, path, r->rule), log_now(), &suppressed, &first);
	pthread_mutex_unlock(&stats_lock);
	if (!ok)
		return;
	suppressed_line(suppressed, ctx->uid);

	/*
	 * Who, by which rule, with which errno, first: every field there is
	 * bounded (comm is 16 bytes, the rule is the administrator's), and the
	 * agent's names, shortened when long, come after it.
	 */
	log_quote_path(path, strlen(path), epath, sizeof(epath));
	if (r->other) {
		raw_path(r->other->in, r->other->name, opath, sizeof(opath));
		snprintf(eother, sizeof(eother), " %s ", r->other->word);
		log_quote_path(opath, strlen(opath), eother + strlen(eother),
				sizeof(eother) - strlen(eother));
	}
	util_comm_of(ctx->pid, comm, sizeof(comm));
	log_escape(comm, strlen(comm), ecomm, sizeof(ecomm));
	decider(r, who, sizeof(who));
	explain_refusal(r, why, sizeof(why));
	line = util_xasprintf("%s %s for pid %d (\"%s\") uid %u gid %u by %s; EROFS: %s%s: %s%s.",
			      d.expected ? "refused (expected)" : "denied",
			      r->op, (int)ctx->pid, ecomm, (unsigned)ctx->uid, (unsigned)ctx->gid, who,
			      epath, eother, why,
			      d.expected ? " (git's opportunistic lock: nothing is lost, not counted as a denial)" : "");
	/* .awfs/denials keeps the line without the list of writable paths: its README has them */
	info_add_denial(line, ctx->uid, first);
	log_msg(AWFS_LOG_WARN, "%s%s%s", line, writable_word, writable_hint);
	wrote = strlen(line) + strlen(writable_word) + strlen(writable_hint);
	free(line);

	d.op = r->op;
	d.path = path;
	d.other = r->other ? opath : NULL;
	d.pid = ctx->pid;
	d.comm = comm;
	d.uid = ctx->uid;
	d.gid = ctx->gid;
	d.rule = r->rule;
	d.cls = r->how == AWFS_BLOCK_INFO ? "read-only" :
		r->how == AWFS_BLOCK_ANCHOR ? policy_class_word(d.rule->cls) :
		policy_class_word(classify_class(r->at_state));
	d.origin = origin_word(r);
	d.why = why;
	d.err = EROFS;
	d.suppressed = suppressed;
	wrote += audit_deny(&d);
	pthread_mutex_lock(&stats_lock);
	bytelimit_charge(&bl, wrote);
	c = caller_of(ctx->uid);	/* the same, unless 64 others came since */
	bytelimit_charge(&c->bl, wrote);
	pthread_mutex_unlock(&stats_lock);
}

/* ------------------------------------------------------------ unclassified */

bool verdict_note_unclassified(const char *name)
{
	char esc[3 * NAME_MAX + 8], mnt[3 * PATH_MAX];
	bool fresh = true;

	pthread_mutex_lock(&uncl_lock);
	for (size_t i = 0; i < uncl_n && fresh; i++)
		fresh = strcmp(uncl_names[i], name) != 0;
	if (fresh && uncl_n < AWFS_MAX_UNCLASSIFIED) {
		uncl_names = util_xrealloc(uncl_names, (uncl_n + 1) * sizeof(*uncl_names));
		uncl_names[uncl_n++] = util_xstrdup(name);
	} else if (fresh) {
		fresh = false;	/* past the cap: stop logging rather than grow */
	}
	pthread_mutex_unlock(&uncl_lock);
	if (fresh) {
		log_escape(name, strlen(name), esc, sizeof(esc));
		log_escape(cfg->mountpoint, strlen(cfg->mountpoint), mnt, sizeof(mnt));
		log_msg(AWFS_LOG_WARN, "unclassified top-level entry %s/%s: named by no rule, served %s (unclassified = \"%s\"); classify it in %s",
			mnt, esc,
			cfg->policy->unclassified == AWFS_UNCLASSIFIED_MASK ? "empty" : "read-only",
			cfg->policy->unclassified == AWFS_UNCLASSIFIED_MASK ? "mask" : "warn",
			cfg->policy->file);
		audit_unclassified(cfg->mountpoint, name);
	}
	return fresh;
}

uint64_t verdict_denials(void)
{
	return atomic_load(&denials);
}

void verdict_flush_suppressed(void)
{
	uint64_t n[CALLERS];
	uint32_t uid[CALLERS];

	pthread_mutex_lock(&stats_lock);
	for (size_t i = 0; i < CALLERS; i++) {
		n[i] = callers[i].used ? callers[i].rl.suppressed : 0;
		uid[i] = callers[i].uid;
		callers[i].rl.suppressed = 0;
	}
	pthread_mutex_unlock(&stats_lock);
	for (size_t i = 0; i < CALLERS; i++)
		suppressed_line(n[i], uid[i]);
}

/* Every refusal not written, all callers (stats_lock). */
static uint64_t total_suppressed(void)
{
	uint64_t n = forgotten_suppressed;

	for (size_t i = 0; i < CALLERS; i++)
		n += callers[i].used ? callers[i].rl.total_suppressed : 0;
	return n;
}

/* "create 3, unlink 1" (escaped), or "none". */
static char *counts_text(struct awfs_counts *c)
{
	struct util_str s = { 0 };

	counts_sort(c);
	for (size_t i = 0; i < c->n; i++) {
		char esc[3 * NAME_MAX + 8], n[32];
		int nl = snprintf(n, sizeof(n), " %llu", (unsigned long long)c->v[i].n);

		log_escape(c->v[i].key, strlen(c->v[i].key), esc, sizeof(esc));
		util_str_join(&s, ", ", esc);
		util_str_put(&s, n, (size_t)nl);
	}
	return s.s ? s.s : util_xstrdup("none");
}

char *verdict_summary(void)
{
	uint64_t n = verdict_denials(), x = atomic_load(&expected_refusals);
	char mnt[3 * PATH_MAX], xs[96] = "";
	char *ops, *paths, *line;

	if (x)
		snprintf(xs, sizeof(xs), "; %llu expected refusal%s (git's opportunistic locks), not counted",
			 (unsigned long long)x, x == 1 ? "" : "s");
	verdict_flush_suppressed();
	pthread_mutex_lock(&stats_lock);
	ops = counts_text(&by_op);
	paths = counts_text(&by_path);
	audit_unmount(cfg->mountpoint, n, x, total_suppressed(), &by_op, &by_path);
	pthread_mutex_unlock(&stats_lock);
	log_escape(cfg->mountpoint, strlen(cfg->mountpoint), mnt, sizeof(mnt));
	line = util_xasprintf("unmounting %s: %llu write%s denied (by operation: %s; by path: %s)%s",
			      mnt, (unsigned long long)n, n == 1 ? "" : "s", ops, paths, xs);
	log_msg(AWFS_LOG_INFO, "%s", line);
	free(ops);
	free(paths);
	return line;
}
