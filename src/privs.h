/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * privs.h - what the daemon keeps once it is mounted.
 *
 * Mounting needs root's full power; serving requests needs a few
 * capabilities. Once the mount and its aliases are in place, before the
 * first request, awfs keeps only AWFS_KEEP_CAPS (docs/security.md says
 * why each one), drops every other capability from its bounding set,
 * clears its ambient set, sets no-new-privileges (nothing it could exec
 * would gain a privilege) and installs a seccomp filter that refuses the
 * system calls a file server never makes (mount, namespaces, modules,
 * kexec, bpf, keys, ...: privs.c lists them) with EPERM.
 *
 * CAP_SYS_ADMIN stays permitted but not effective: no request is served
 * with it; the main thread raises it only to unmount (privs_for_unmount()),
 * after the request loop has ended. Capabilities are per thread: the drop
 * must happen before any thread is started.
 */
#ifndef AWFS_PRIVS_H
#define AWFS_PRIVS_H

#include <stddef.h>

/* CAP_CHOWN, DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER, FSETID, SETGID, SETUID, MKNOD */
#define AWFS_SERVE_CAPS 0x80000dfULL
/* ... and CAP_SYS_ADMIN (21), permitted only, to unmount at the end */
#define AWFS_KEEP_CAPS (AWFS_SERVE_CAPS | (1ULL << 21))

/*
 * Drop to what serving needs (see above). Returns 0, or -1 with the reason
 * in @why: awfs then unmounts rather than serve with more.
 */
int privs_drop(char *why, size_t len);
/* Make CAP_SYS_ADMIN effective again on this thread, to unmount. */
void privs_for_unmount(void);

#endif
