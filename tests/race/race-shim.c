/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * race-shim.c - an LD_PRELOAD library that plays, inside awfs, the writer
 * of a directory who acts between two of awfs's system calls: a window no
 * scheduler would open on demand, opened here every time.
 *
 * Right after awfs creates the entry named $AWFS_RACE_NAME (a file with
 * openat(O_CREAT), or a directory with mkdirat), the entry is renamed away
 * and replaced: by a hard link to $AWFS_RACE_LINK (a file), or by a new
 * directory owned by $AWFS_RACE_UID. What a writer of the parent could do
 * as itself, done here with awfs's credentials for determinism.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fired;

static int is_target(const char *name)
{
	const char *want = getenv("AWFS_RACE_NAME");

	return !fired && want && strcmp(name, want) == 0;
}

static void swap(int dirfd, const char *name, int dir)
{
	char away[4096];
	const char *uid = getenv("AWFS_RACE_UID");

	fired = 1;
	snprintf(away, sizeof(away), "%s.made-by-awfs", name);
	if (renameat(dirfd, name, dirfd, away) < 0)
		return;
	if (dir) {
		if (mkdirat(dirfd, name, 0700) == 0 && uid)
			(void)fchownat(dirfd, name, (uid_t)atoi(uid), (gid_t)atoi(uid), AT_SYMLINK_NOFOLLOW);
	} else if (getenv("AWFS_RACE_LINK")) {
		(void)linkat(AT_FDCWD, getenv("AWFS_RACE_LINK"), dirfd, name, 0);
	}
}

int mkdirat(int dirfd, const char *name, mode_t mode)
{
	int (*real)(int, const char *, mode_t) = (int (*)(int, const char *, mode_t))dlsym(RTLD_NEXT, "mkdirat");
	int r = real(dirfd, name, mode);

	if (r == 0 && is_target(name))
		swap(dirfd, name, 1);
	return r;
}

static int open_common(const char *sym, int dirfd, const char *name, int flags, mode_t mode)
{
	int (*real)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, sym);
	int fd = real(dirfd, name, flags, mode);

	if (fd >= 0 && (flags & O_CREAT) && is_target(name))
		swap(dirfd, name, 0);
	return fd;
}

int openat(int dirfd, const char *name, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	return open_common("openat", dirfd, name, flags, mode);
}

int openat64(int dirfd, const char *name, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	return open_common("openat64", dirfd, name, flags, mode);
}
