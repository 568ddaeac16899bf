/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verify.c - awfsctl verify.
 *
 * Every probe goes through the mount by path, as an agent would: a mask must
 * look synthetic and empty, a read-only directory must refuse a create with
 * EROFS, a writable one must take a create and an unlink. Probe names are
 * new each time (random), so nothing an earlier run left behind (a cache
 * restored into a writable path) can stand in the way; the ones meant to be
 * refused carry the mount's token (token.h), so that awfs does not count a
 * verify before the run as a denial.
 */
#include "verify.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "mountinfo.h"
#include "policy.h"
#include "util.h"
#include "token.h"

struct probe {
	FILE *out, *err;
	const char *mnt;	/* resolved mount point */
	size_t held;
	char token[AWFS_TOKEN_LEN + 1];	/* the mount's, or "" */
};

/*
 * A fresh probe name in @dir: random, so no name planted by an earlier run
 * is in the way; with the mount's token when the create is meant to be
 * refused (and so not counted).
 */
static char *probe_name(const struct probe *pr, const char *dir, bool refused)
{
	unsigned char r[8];
	char hex[2 * sizeof(r) + 1];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		abort();	/* never a predictable name */
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(hex + 2 * i, 3, "%02x", r[i]);
	if (refused && pr->token[0])
		return util_xasprintf("%s/%s%s.%s", dir, AWFS_VERIFY_PREFIX, pr->token, hex);
	return util_xasprintf("%s/%s%s", dir, AWFS_VERIFY_PREFIX, hex);
}

static int fail(struct probe *pr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print a formatted line with its paths' controls and invalid bytes escaped. */
static void say(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
	char raw[8192], esc[3 * 8192];

	vsnprintf(raw, sizeof(raw), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): the callers start it
	fprintf(f, "%s%s\n", prefix, log_escape_text(raw, strlen(raw), esc, sizeof(esc)));
}

static int fail(struct probe *pr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(pr->err, "awfsctl verify: FAILED: ", fmt, ap);
	va_end(ap);
	return 1;
}

static void held(struct probe *pr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void held(struct probe *pr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(pr->out, "ok: ", fmt, ap);
	va_end(ap);
	pr->held++;
}

static void skipped(struct probe *pr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void skipped(struct probe *pr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(pr->out, "skip: ", fmt, ap);
	va_end(ap);
}

/* An awfs mount, with the options its guarantees rest on, is at @path. */
static int check_mount(struct probe *pr, const char *path)
{
	struct awfs_mount m;
	char real[PATH_MAX];
	int e;

	if (!realpath(path, real))
		return fail(pr, "%s: %s", path, strerror(errno));
	e = mountinfo_find(real, &m);
	if (e == ENOENT)
		return fail(pr, "nothing is mounted at %s (expected an awfs mount)", real);
	if (e)
		return fail(pr, "cannot read the mount table: %s", strerror(e));
	if (strcmp(m.fstype, "fuse.awfs") != 0) {
		fail(pr, "%s is a %s mount, not awfs", real, m.fstype);
		mountinfo_free(&m);
		return 1;
	}
	if (!strstr(m.super_options, "default_permissions")) {
		fail(pr, "the awfs mount at %s lacks default_permissions", real);
		mountinfo_free(&m);
		return 1;
	}
	held(pr, "awfs is mounted at %s (source %s)", real, m.source);
	mountinfo_free(&m);
	return 0;
}

static char *join(const char *mnt, const char *rel)
{
	return util_xasprintf("%s%s%s", mnt, rel[0] ? "/" : "", rel);
}

/* A masked path must be synthetic and empty, whatever the host holds. */
static int probe_mask_path(struct probe *pr, const char *rule, const char *path)
{
	struct stat st;
	char *below;
	int fd;

	if (lstat(path, &st) < 0)
		return fail(pr, "mask \"%s\": %s: %s", rule, path, strerror(errno));
	if (st.st_uid != 0 || st.st_gid != 0 || st.st_size != 0 || st.st_mtime != 0)
		return fail(pr, "mask \"%s\": %s shows an owner, size or time (expected root, 0, 1970): the host's entry leaks",
			    rule, path);
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;

		if ((st.st_mode & 07777) != 01777)
			return fail(pr, "mask \"%s\": %s has mode %04o (expected 1777)", rule, path,
				    (unsigned)(st.st_mode & 07777));
		if (!d)
			return fail(pr, "mask \"%s\": cannot list %s: %s", rule, path, strerror(errno));
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
				closedir(d);
				return fail(pr, "mask \"%s\": %s lists entries (expected it empty)", rule, path);
			}
		}
		closedir(d);
		below = probe_name(pr, path, false);
		fd = open(below, O_RDONLY);
		if (fd >= 0 || errno != ENOENT) {
			if (fd >= 0)
				close(fd);
			free(below);
			return fail(pr, "mask \"%s\": a name below %s was reachable", rule, path);
		}
		free(below);
	} else if (S_ISREG(st.st_mode)) {
		char c;
		ssize_t n;

		if ((st.st_mode & 07777) != 0666)
			return fail(pr, "mask \"%s\": %s has mode %04o (expected 0666)", rule, path,
				    (unsigned)(st.st_mode & 07777));
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return fail(pr, "mask \"%s\": cannot open %s: %s", rule, path, strerror(errno));
		n = read(fd, &c, 1);
		close(fd);
		if (n != 0)
			return fail(pr, "mask \"%s\": %s has content (expected it empty)", rule, path);
	} else {
		return fail(pr, "mask \"%s\": %s is neither an empty directory nor an empty file", rule, path);
	}
	held(pr, "mask \"%s\": %s is empty", rule, path);
	return 0;
}

/*
 * Glob rules are probed through the entries that match them on the mount:
 * each component is matched (fnmatch, as awfs classifies) against the
 * directory listed through the mount, so what is probed is what an agent
 * would reach. At most AWFS_VERIFY_MATCHES paths a rule.
 */
#define AWFS_VERIFY_MATCHES 256

typedef int (*probe_fn)(struct probe *pr, const struct awfs_rule *r, const char *path);

/* @path is a directory on the mount (not a symlink to one). */
static bool is_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int expand(struct probe *pr, const struct awfs_rule *r, size_t depth, const char *dir,
		  probe_fn fn, size_t *found)
{
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (depth == r->ncomps) {
		(*found)++;
		return fn(pr, r, dir);
	}
	if (r->literal[depth]) {
		char *next = util_xasprintf("%s/%s", dir, r->comps[depth]);

		if (depth + 1 == r->ncomps || is_dir(next))
			ret = expand(pr, r, depth + 1, next, fn, found);
		free(next);
		return ret;
	}
	d = opendir(dir);
	while (d && ret == 0 && *found < AWFS_VERIFY_MATCHES && (de = readdir(d)) != NULL) {
		char *next;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fnmatch(r->comps[depth], de->d_name, 0) != 0)
			continue;
		next = util_xasprintf("%s/%s", dir, de->d_name);
		/* only a directory has names below it */
		if (depth + 1 == r->ncomps || is_dir(next))
			ret = expand(pr, r, depth + 1, next, fn, found);
		free(next);
	}
	if (d)
		closedir(d);
	return ret;
}

/* Probe every path of @r on the mount with @fn; say so when none exists. */
static int probe_rule(struct probe *pr, const struct awfs_rule *r, probe_fn fn)
{
	size_t found = 0;
	int ret;

	if (policy_rule_is_literal(r)) {
		/* the path itself, whether or not it exists: @fn says what that means */
		char *path = join(pr->mnt, r->path);

		ret = fn(pr, r, path);
		free(path);
		return ret;
	}
	ret = expand(pr, r, 0, pr->mnt, fn, &found);

	if (!ret && !found)
		skipped(pr, "%s \"%s\": nothing on the mount matches it", policy_class_key(r->cls),
			r->path);
	return ret;
}

static int probe_mask(struct probe *pr, const struct awfs_rule *r, const char *path)
{
	struct stat st;
	char *parent = util_xstrdup(path);
	int ret = 0;

	/* a literal mask shows whether or not the host has it, if its directory exists */
	*strrchr(parent, '/') = '\0';
	if (stat(parent, &st) == 0 && S_ISDIR(st.st_mode))
		ret = probe_mask_path(pr, r->path, path);
	else
		skipped(pr, "mask \"%s\": %s does not exist", r->path, parent);
	free(parent);
	return ret;
}

/* A create in a read-only directory must fail with EROFS. */
static int probe_readonly_dir(struct probe *pr, const char *what, const char *dir)
{
	char *probe = probe_name(pr, dir, true);
	int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	int e = errno;

	if (fd >= 0) {
		close(fd);
		unlink(probe);
		free(probe);
		return fail(pr, "%s: a file could be created in %s (expected EROFS)", what, dir);
	}
	free(probe);
	if (e != EROFS)
		return fail(pr, "%s: a create in %s failed with %s (expected EROFS)", what, dir,
			    util_errno_name(e));
	held(pr, "%s: %s refuses writes with EROFS", what, dir);
	return 0;
}

/* A read-only directory of rule @r refuses a create (a file: nothing to probe). */
static int probe_readonly(struct probe *pr, const struct awfs_rule *r, const char *path)
{
	struct stat st;
	char *what;
	int ret;

	if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	what = util_xasprintf("read_only \"%s\"", r->path);
	ret = probe_readonly_dir(pr, what, path);
	free(what);
	return ret;
}

/* A writable directory takes a create and an unlink; a writable file opens for writing. */
static int probe_writable(struct probe *pr, const struct awfs_rule *r, const char *path)
{
	char *probe;
	struct stat st;
	int fd, ret = 0;

	if (lstat(path, &st) < 0) {
		ret = fail(pr, "allow_write \"%s\": %s: %s", r->path, path, strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		probe = probe_name(pr, path, false);
		fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
		if (fd < 0) {
			ret = fail(pr, "allow_write \"%s\": cannot create a file in %s: %s", r->path, path,
				   strerror(errno));
		} else {
			close(fd);
			if (unlink(probe) < 0)
				ret = fail(pr, "allow_write \"%s\": cannot remove %s: %s", r->path, probe,
					   strerror(errno));
			else
				held(pr, "allow_write \"%s\": %s takes a create and an unlink", r->path, path);
		}
		free(probe);
	} else if (!S_ISREG(st.st_mode)) {
		/* never through a symlink or into a FIFO or device an agent put there */
		skipped(pr, "allow_write \"%s\": %s is not a directory or a regular file", r->path, path);
	} else {
		fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (fd < 0) {
			ret = fail(pr, "allow_write \"%s\": cannot open %s for writing: %s", r->path, path,
				   strerror(errno));
		} else {
			close(fd);
			held(pr, "allow_write \"%s\": %s opens for writing", r->path, path);
		}
	}
	return ret;
}

int verify_run(const struct awfs_verify_opts *o, FILE *out, FILE *err)
{
	struct probe pr = { .out = out, .err = err };
	struct awfs_policy *p;
	char mnt[PATH_MAX];
	int ret = 0;

	p = policy_load_or_report(o->policy, o->runtime, err, "awfsctl verify", "");
	if (!p)
		return 2;
	if (check_mount(&pr, o->mountpoint)) {
		policy_free(p);
		return 1;
	}
	for (size_t i = 0; i < o->nalso; i++) {
		if (check_mount(&pr, o->also_at[i])) {
			policy_free(p);
			return 1;
		}
	}
	if (!realpath(o->mountpoint, mnt)) {
		policy_free(p);
		return fail(&pr, "%s: %s", o->mountpoint, strerror(errno));
	}
	pr.mnt = mnt;
	if (token_read(mnt, pr.token) != 0)
		pr.token[0] = '\0';	/* the refusals of its probes are then counted */

	/* masks first: what must never leak */
	for (size_t i = 0; i < p->nrules && !ret; i++)
		if (p->rules[i].cls == AWFS_CLASS_MASK)
			ret = probe_rule(&pr, &p->rules[i], probe_mask);
	/* the root, unless a rule names it, and each read-only directory */
	if (!ret) {
		bool root_ruled = false;

		for (size_t i = 0; i < p->nrules; i++)
			root_ruled = root_ruled || p->rules[i].ncomps == 0;
		if (!root_ruled)
			ret = probe_readonly_dir(&pr, "the root (read-only by default)", mnt);
	}
	for (size_t i = 0; i < p->nrules && !ret; i++)
		if (p->rules[i].ncomps == 0 && p->rules[i].cls == AWFS_CLASS_WRITE)
			ret = probe_writable(&pr, &p->rules[i], mnt);
	for (size_t i = 0; i < p->nrules && !ret; i++)
		if (p->rules[i].cls == AWFS_CLASS_RO && p->rules[i].ncomps)
			ret = probe_rule(&pr, &p->rules[i], probe_readonly);
	for (size_t i = 0; i < p->nrules && !ret; i++)
		if (p->rules[i].cls == AWFS_CLASS_WRITE && p->rules[i].ncomps)
			ret = probe_rule(&pr, &p->rules[i], probe_writable);
	if (!ret)
		fprintf(out, "awfsctl verify: %s: %zu checks held\n", mnt, pr.held);
	policy_free(p);
	return ret;
}
