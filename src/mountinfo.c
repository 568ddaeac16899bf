/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mountinfo.c - parse /proc/self/mountinfo (proc(5)): fields separated by
 * spaces, optional fields ended by " - ", and spaces, tabs, newlines and
 * backslashes in paths written as octal escapes (\040).
 */
#include "mountinfo.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "util.h"

/* Undo the kernel's octal escapes in place. */
static void unescape(char *s)
{
	char *o = s;

	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			*o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
}

void mountinfo_free(struct awfs_mount *m)
{
	free(m->path);
	free(m->fstype);
	free(m->source);
	free(m->options);
	free(m->super_options);
	memset(m, 0, sizeof(*m));
}

/*
 * Split one line of mountinfo into its fields (the mount point, fields[4],
 * unescaped) and find the " - " separator (*sep). False for a line that
 * is not one.
 */
static bool split_line(char *line, char *fields[16], int *sep)
{
	char *save = NULL, *tok;
	int n = 0;

	*sep = -1;
	line[strcspn(line, "\n")] = '\0';
	for (tok = strtok_r(line, " ", &save); tok && n < 16; tok = strtok_r(NULL, " ", &save)) {
		if (strcmp(tok, "-") == 0 && *sep < 0 && n >= 6)
			*sep = n;
		fields[n++] = tok;
	}
	/* id parent dev root mountpoint options [optional...] - type source superopts */
	if (*sep < 0 || n < *sep + 4)
		return false;
	unescape(fields[4]);
	return true;
}

int mountinfo_find(const char *path, struct awfs_mount *out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int found = ENOENT;

	memset(out, 0, sizeof(*out));
	if (!f)
		return errno;
	while (getline(&line, &cap, f) > 0) {
		char *fields[16];
		int sep;

		if (!split_line(line, fields, &sep) || strcmp(fields[4], path) != 0)
			continue;
		/* a later line is mounted on top of an earlier one: keep the last */
		mountinfo_free(out);
		unescape(fields[sep + 2]);
		out->path = util_xstrdup(fields[4]);
		out->fstype = util_xstrdup(fields[sep + 1]);
		out->source = util_xstrdup(fields[sep + 2]);
		out->options = util_xstrdup(fields[5]);
		out->super_options = util_xstrdup(fields[sep + 3]);
		found = 0;
	}
	free(line);
	fclose(f);
	return found;
}

int mountinfo_fstype_of(dev_t dev, char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int found = ENOENT;

	if (!f)
		return errno;
	while (found && getline(&line, &cap, f) > 0) {
		char *fields[16];
		unsigned int maj, min;
		int sep;

		/* field 3 is the device, major:minor, as st_dev has it */
		if (!split_line(line, fields, &sep) || sscanf(fields[2], "%u:%u", &maj, &min) != 2 ||
		    makedev(maj, min) != dev)
			continue;
		snprintf(buf, size, "%s", fields[sep + 1]);
		found = 0;
	}
	free(line);
	fclose(f);
	return found;
}
