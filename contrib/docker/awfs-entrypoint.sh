#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# awfs-entrypoint.sh - the agent container's entrypoint: mount awfs over the
# bind-mounted /tmp/gh-aw before the agent starts, prove it holds, then run
# the agent as its own user with no capabilities and no way to regain any.
#
#   awfs-entrypoint.sh AGENT-COMMAND [ARGS...]
#
# Runs as root, with /dev/fuse and CAP_SYS_ADMIN (see docker-compose.awfs.yml).
# Environment:
#   AWFS_DIR         the directory to guard             [/tmp/gh-aw]
#   AWFS_POLICY      the policy                         [/etc/awfs/policy.conf]
#   AWFS_AGENT_USER  UID:GID the agent runs as          [1000:1000]
#   AWFS_ALSO_AT     a second path showing the same view (chroot mode:
#                    /host/tmp/gh-aw); optional
#   AWFS_LOG         awfs's log                         [/var/log/awfs.log]
#   AWFS_AUDIT       awfs's JSON audit file; optional
#   AWFS_OPTS        awfs -o options (e.g. xattr, cache=strict); optional
#   AWFS_BIN, AWFSCTL_BIN   the programs               [awfs, awfsctl]
set -eu

dir=${AWFS_DIR:-/tmp/gh-aw}
policy=${AWFS_POLICY:-/etc/awfs/policy.conf}
user=${AWFS_AGENT_USER:-1000:1000}
awfs=${AWFS_BIN:-awfs}
awfsctl=${AWFSCTL_BIN:-awfsctl}
uid=${user%%:*}
gid=${user#*:}
[ $# -gt 0 ] || { echo "awfs-entrypoint: no agent command given" >&2; exit 2; }

# 1. mount (awfs returns once the mount and its alias are in place)
"$awfs" "$dir" --policy "$policy" --runtime docker ${AWFS_ALSO_AT:+--also-at "$AWFS_ALSO_AT"} \
	--log "${AWFS_LOG:-/var/log/awfs.log}" ${AWFS_AUDIT:+--audit "$AWFS_AUDIT"} \
	${AWFS_OPTS:+-o "$AWFS_OPTS"} ||
	{ echo "awfs-entrypoint: awfs did not mount" >&2; exit 1; }
# 2. fail closed: the agent never starts on a boundary that does not hold
"$awfsctl" verify "$dir" --policy "$policy" --runtime docker \
	${AWFS_ALSO_AT:+--also-at "$AWFS_ALSO_AT"} >&2 ||
	{ echo "awfs-entrypoint: awfsctl verify failed; not starting the agent" >&2; exit 1; }
# 3. the agent: its own uid, no capabilities (bounding set emptied too), no setuid gain
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --ambient-caps=-all \
	--bounding-set=-all --no-new-privs -- "$@"
