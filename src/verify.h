/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verify.h - awfsctl verify: prove, through the live mount, that the policy
 * holds, before an agent or virtiofsd is started on it. Fails closed: the
 * first failure ends it with a message naming what did not hold.
 */
#ifndef AWFS_VERIFY_H
#define AWFS_VERIFY_H

#include <stddef.h>
#include <stdio.h>

struct awfs_verify_opts {
	const char *mountpoint;
	const char *policy;
	const char *runtime;
	char **also_at;		/* aliases that must be awfs mounts too */
	size_t nalso;
};

/* Run the probes; report to @out/@err. Returns 0 (all held), 1 (a failure) or 2 (bad input). */
int verify_run(const struct awfs_verify_opts *o, FILE *out, FILE *err);

#endif
