/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * token.c - the mount's verify token (see token.h).
 */
#include "token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static char token[AWFS_TOKEN_LEN + 1];

/* The file for mount point @mnt: a hash of the path, the path inside to check. */
static void token_name(const char *mnt, char *out, size_t size)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)mnt; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	snprintf(out, size, "verify-%016llx", (unsigned long long)h);
}

/* The token directory, root's (or ours) and closed to others, opened. */
static int open_dir(bool create)
{
	struct stat st;
	int fd;

	if (create && mkdir(AWFS_TOKEN_DIR, 0700) < 0 && errno != EEXIST)
		return -1;
	fd = open(AWFS_TOKEN_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

static int write_one(int dfd, const char *mnt)
{
	char name[64];
	int fd, n, err = 0;

	token_name(mnt, name, sizeof(name));
	(void)unlinkat(dfd, name, 0);	/* a stale one from a dead awfs */
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	n = dprintf(fd, "%s\n%s\n", token, mnt);
	if (n < 0)
		err = EIO;
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

int token_publish(const char *mnt, char *const *aliases, size_t naliases, char *why, size_t len)
{
	unsigned char raw[AWFS_TOKEN_LEN / 2];
	int dfd, err = 0;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		snprintf(why, len, "no random bytes: %s", strerror(errno));
		return EIO;
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(token + 2 * i, 3, "%02x", raw[i]);
	dfd = open_dir(true);
	if (dfd < 0) {
		err = errno;
		snprintf(why, len, "%s: %s", AWFS_TOKEN_DIR, strerror(err));
	}
	for (size_t i = 0; !err && i <= naliases; i++) {
		err = write_one(dfd, i ? aliases[i - 1] : mnt);
		if (err)
			snprintf(why, len, "%s: %s", AWFS_TOKEN_DIR, strerror(err));
	}
	if (dfd >= 0)
		close(dfd);
	if (err) {
		token_withdraw(mnt, aliases, naliases);
		token[0] = '\0';
	}
	return err;
}

void token_withdraw(const char *mnt, char *const *aliases, size_t naliases)
{
	char name[64];
	int dfd = open_dir(false);

	if (dfd < 0)
		return;
	for (size_t i = 0; i <= naliases; i++) {
		char got[AWFS_TOKEN_LEN + 1];

		/* only ours: another awfs may have taken the mount point since */
		if (token[0] && token_read(i ? aliases[i - 1] : mnt, got) == 0 && strcmp(got, token) == 0) {
			token_name(i ? aliases[i - 1] : mnt, name, sizeof(name));
			(void)unlinkat(dfd, name, 0);
		}
	}
	close(dfd);
}

bool token_is_probe(const char *name)
{
	size_t pl = strlen(AWFS_VERIFY_PREFIX);

	return token[0] && strncmp(name, AWFS_VERIFY_PREFIX, pl) == 0 &&
	       strncmp(name + pl, token, AWFS_TOKEN_LEN) == 0;
}

int token_read(const char *mnt, char *out)
{
	char name[64], buf[AWFS_TOKEN_LEN + 2 + 4096 + 2];
	struct stat st;
	ssize_t n;
	int dfd, fd, err = 0;
	size_t ml = strlen(mnt);

	dfd = open_dir(false);
	if (dfd < 0)
		return errno;
	token_name(mnt, name, sizeof(name));
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & 077))
		err = EPERM;
	else if ((n = read(fd, buf, sizeof(buf) - 1)) < 0)
		err = errno;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	/* "<token>\n<mount point>\n": the hash named the file, the path confirms it */
	if ((size_t)n != AWFS_TOKEN_LEN + 1 + ml + 1 || buf[AWFS_TOKEN_LEN] != '\n' ||
	    strncmp(buf + AWFS_TOKEN_LEN + 1, mnt, ml) != 0 || buf[n - 1] != '\n')
		return ENOENT;
	memcpy(out, buf, AWFS_TOKEN_LEN);
	out[AWFS_TOKEN_LEN] = '\0';
	return 0;
}
