/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * audit.c - JSON-lines audit records.
 */
#include "config.h"

#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "report.h"

static int audit_fd = -1;
static pthread_mutex_t audit_lock = PTHREAD_MUTEX_INITIALIZER;

int audit_open(const char *file, char *why, size_t len)
{
	audit_fd = util_open_append(file, why, len);
	return audit_fd < 0 ? -1 : 0;
}

bool audit_on(void)
{
	return audit_fd >= 0;
}

/* Start a record: {"time":...,"event":...  */
void audit_begin(struct awfs_json *j, const char *event)
{
	struct timespec ts;
	struct tm tm;
	char t[64];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(t + strlen(t), sizeof(t) - strlen(t), ".%03ldZ", ts.tv_nsec / 1000000);
	json_init(j);
	json_obj_begin(j);
	json_key(j, "time");
	json_str(j, t);
	json_key(j, "event");
	json_str(j, event);
}

/* End the record and write it in one write(); returns its length. */
size_t audit_finish(struct awfs_json *j)
{
	size_t len, off = 0;
	char *s;

	json_obj_end(j);
	s = json_take(j, &len);
	s = util_xrealloc(s, len + 2);
	s[len++] = '\n';
	pthread_mutex_lock(&audit_lock);
	while (off < len) {
		ssize_t n = write(audit_fd, s + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* a full disk: the log still has the line */
		off += (size_t)n;
	}
	pthread_mutex_unlock(&audit_lock);
	free(s);
	return len;
}

void audit_mount(const struct awfs_policy *p, const char *mnt, const char *src, const char *data_path,
		 const char *requests, char *const *uncl, size_t nuncl)
{
	struct awfs_json j;

	if (audit_fd < 0)
		return;
	audit_begin(&j, "mount");
	json_key(&j, "version");
	json_str(&j, PACKAGE_VERSION);
	json_key(&j, "mountpoint");
	json_str(&j, mnt);
	json_key(&j, "source");
	json_str(&j, src);
	json_key(&j, "runtime");
	json_str(&j, p->runtime);
	json_key(&j, "data_path");
	json_str(&j, data_path);
	json_key(&j, "requests");
	json_str(&j, requests);
	json_key(&j, "policy");
	report_policy_json(&j, p);
	json_key(&j, "unclassified");
	json_arr_begin(&j);
	for (size_t i = 0; i < nuncl; i++)
		json_name(&j, uncl[i]);
	json_arr_end(&j);
	audit_finish(&j);
}

size_t audit_deny(const struct awfs_denial *d)
{
	struct awfs_json j;

	if (audit_fd < 0)
		return 0;
	/* who and why first, the agent-chosen names last (as in the log line) */
	audit_begin(&j, "deny");
	json_key(&j, "expected");
	json_bool(&j, d->expected);
	json_key(&j, "op");
	json_str(&j, d->op);
	json_key(&j, "pid");
	json_int(&j, d->pid);
	json_key(&j, "comm");
	json_name(&j, d->comm);
	json_key(&j, "uid");
	json_uint(&j, d->uid);
	json_key(&j, "gid");
	json_uint(&j, d->gid);
	json_key(&j, "errno");
	json_str(&j, util_errno_name(d->err));
	json_key(&j, "class");
	json_str(&j, d->cls);
	json_key(&j, "origin");
	json_str(&j, d->origin);
	json_key(&j, "rule");
	json_str(&j, d->rule ? d->rule->path : NULL);
	json_key(&j, "line");
	if (d->rule)
		json_int(&j, d->rule->line);
	else
		json_null(&j);
	json_key(&j, "reason");
	json_str(&j, d->rule ? d->rule->reason : NULL);
	json_key(&j, "suppressed");
	json_uint(&j, d->suppressed);
	json_key(&j, "path");
	json_name(&j, d->path);
	json_key(&j, "other");
	json_name(&j, d->other);
	json_key(&j, "why");
	json_str(&j, d->why);
	return audit_finish(&j);
}

void audit_unclassified(const char *mnt, const char *name)
{
	struct awfs_json j;
	char *path;

	if (audit_fd < 0)
		return;
	path = util_xasprintf("%s/%s", mnt, name);
	audit_begin(&j, "unclassified");
	json_key(&j, "name");
	json_name(&j, name);
	json_key(&j, "path");
	json_name(&j, path);
	audit_finish(&j);
	free(path);
}

static void counts_json(struct awfs_json *j, const struct awfs_counts *c, bool names)
{
	json_obj_begin(j);
	for (size_t i = 0; i < c->n; i++) {
		if (names)
			json_key_name(j, c->v[i].key);
		else
			json_key(j, c->v[i].key);
		json_uint(j, c->v[i].n);
	}
	json_obj_end(j);
}

void audit_unmount(const char *mnt, uint64_t denials, uint64_t expected, uint64_t suppressed,
		   const struct awfs_counts *by_op, const struct awfs_counts *by_path)
{
	struct awfs_json j;

	if (audit_fd < 0)
		return;
	audit_begin(&j, "unmount");
	json_key(&j, "mountpoint");
	json_str(&j, mnt);
	json_key(&j, "denials");
	json_uint(&j, denials);
	json_key(&j, "expected");
	json_uint(&j, expected);
	json_key(&j, "suppressed");
	json_uint(&j, suppressed);
	json_key(&j, "by_op");
	counts_json(&j, by_op, false);
	json_key(&j, "by_path");
	counts_json(&j, by_path, true);
	audit_finish(&j);
}

void audit_close(void)
{
	if (audit_fd >= 0)
		close(audit_fd);
	audit_fd = -1;
}
