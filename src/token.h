/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * token.h - how awfsctl verify's probes are told from an agent's writes.
 *
 * verify proves a read-only directory holds by trying to create a file
 * there; that refusal is awfs working, not a denial to count. A name alone
 * cannot say "this is verify": the agent can use any name, and behind
 * virtiofsd a guest's non-creating calls arrive as uid 0. So each mount
 * makes a random token, writes it where only root can read it (a file in
 * AWFS_TOKEN_DIR named after the mount point, root's, mode 0600), and
 * counts a refusal as verify's only when root asks for a name that starts
 * with AWFS_VERIFY_PREFIX and the token. Every other refusal is logged and
 * counted. Without the file (a read-only /run, awfs not root), verify's
 * refusals are logged and counted like any other.
 */
#ifndef AWFS_TOKEN_H
#define AWFS_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

#define AWFS_TOKEN_DIR "/run/awfs"
/* Names starting so are probes; verify's carry the token right after it. */
#define AWFS_VERIFY_PREFIX ".awfs-verify."
/* 128 random bits in hex. */
#define AWFS_TOKEN_LEN 32

/*
 * Make this mount's token and publish it for @mnt and each alias. Returns
 * 0, or an errno value (the token is then unset: no refusal is verify's).
 */
int token_publish(const char *mnt, char *const *aliases, size_t naliases, char *why, size_t len);
/* Remove the files token_publish() wrote. */
void token_withdraw(const char *mnt, char *const *aliases, size_t naliases);
/* Whether the refused @name is one of verify's probes (always false without a token). */
bool token_is_probe(const char *name);
/*
 * awfsctl verify: read the token of the mount at @mnt into @out (at least
 * AWFS_TOKEN_LEN + 1 bytes). Returns 0 or an errno value.
 */
int token_read(const char *mnt, char *out);

#endif
