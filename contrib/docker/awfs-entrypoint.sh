#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# awfs-entrypoint.sh - the agent container's entrypoint: mount awfs over the
# bind-mounted /tmp/gh-aw before the agent starts, prove it holds, then run
# the agent as its own user with no capabilities and no way to regain any.
#
#   awfs-entrypoint.sh AGENT-COMMAND [ARGS...]
#
# Runs as root, with /dev/fuse, CAP_SYS_ADMIN and CAP_DAC_READ_SEARCH (see
# docker-compose.awfs.yml).
# awfs stays root; the agent never has uid or gid 0, so it cannot signal awfs
# (kill(2) needs the same uid) to unmount it, nor read what root may read.
# This script stays too, as the agent's parent: when the agent ends (or the
# container is stopped: SIGTERM, SIGINT and SIGHUP go on to the agent), it
# kills whatever the agent left running, then stops awfs cleanly, so the
# log's unmount summary and the audit's unmount record are written before
# the container's init exits and the kernel kills what is left; nothing of
# the agent ever sees the directory beneath an unmounted awfs. It must run
# in a pid namespace of its own (a container's), where one kill(-1) as the
# agent's uid reaches only the agent's processes. Exit status: the agent's;
# 0 from the agent and 3 from awfs (-o fail_on_denial, a write was denied)
# is 3.
# The image needs util-linux's setpriv (busybox's has no --reuid) and an env
# that resets signals (GNU coreutils 8.31 or later: env --default-signal);
# both are tried, as the agent would be run, before anything is mounted.
# Whoever sets the environment (the compose file, the workflow) is trusted;
# the agent is not, and gets nothing of it but its uid and gid.
# Environment:
#   AWFS_DIR         the directory to guard             [/tmp/gh-aw]
#   AWFS_POLICY      the policy                         [/etc/awfs/policy.conf]
#   AWFS_AGENT_USER  UID:GID the agent runs as          [1000:1000 when unset]
#                    two decimal numbers, each from 1 to 4294967294, with no
#                    sign, no leading zero and no names; anything else
#                    (root, 0, -1, +0, 00, 1000 alone, an empty value) is
#                    refused with exit status 2 before anything is mounted
#   AWFS_ALSO_AT     a second path showing the same view (chroot mode:
#                    /host/tmp/gh-aw); optional
#   AWFS_LOG         awfs's log                         [/var/log/awfs/awfs.log]
#   AWFS_AUDIT       awfs's JSON audit file; optional
#   AWFS_OPTS        awfs -o options (e.g. xattr, cache=strict, or
#                    record_changes with AWFS_AUDIT); optional;
#                    never a setting with a variable of its own (policy,
#                    source, runtime, log, audit, also_at), nor auto_unmount
#   AWFS_BIN, AWFSCTL_BIN   the programs               [awfs, awfsctl]
set -eu

dir=${AWFS_DIR:-/tmp/gh-aw}
policy=${AWFS_POLICY:-/etc/awfs/policy.conf}
user=${AWFS_AGENT_USER-1000:1000}
awfs=${AWFS_BIN:-awfs}
awfsctl=${AWFSCTL_BIN:-awfsctl}

# id_ok N: N is a decimal uid or gid from 1 to 4294967294 (-1, the kernel's
# "no change", is 4294967295): digits only, no leading zero, at most 10 digits
id_ok() {
	case $1 in
	'' | 0* | *[!0-9]* | ???????????*) return 1 ;;
	esac
	[ "$1" -lt 4294967295 ]
}
bad_user() {
	printf 'awfs-entrypoint: AWFS_AGENT_USER must be UID:GID, two decimal numbers from 1 to 4294967294 (such as 1000:1000), not "%.40s": the agent never runs as root, nor under a name\n' "$user" >&2
	exit 2
}
case $user in
*:*:* | *[!0-9:]*) bad_user ;;
*:*) ;;
*) bad_user ;;
esac
uid=${user%%:*}
gid=${user#*:}
if ! id_ok "$uid" || ! id_ok "$gid"; then bad_user; fi
[ $# -gt 0 ] || { echo "awfs-entrypoint: no agent command given" >&2; exit 2; }
# AWFS_OPTS carries mount and cache options only: each setting this script
# passes itself, and that awfsctl verify must agree with, has its own
# variable (awfs refuses auto_unmount, and any setting said twice, anyway)
opts=${AWFS_OPTS:-}
case $opts in
*\\* | *"
"*)
	# awfs's option parser unescapes "\x" after splitting: "sour\ce=" would slip by
	echo "awfs-entrypoint: AWFS_OPTS may not hold a backslash or a newline" >&2
	exit 2 ;;
esac
while [ -n "$opts" ]; do
	o=${opts%%,*}
	case ${o%%=*} in
	policy | source | runtime | log | audit | also_at | info_dir | noinfo_dir | ready_fd | auto_unmount | -*)
		printf 'awfs-entrypoint: AWFS_OPTS may not set "%.40s": use AWFS_POLICY, AWFS_DIR, AWFS_LOG, AWFS_AUDIT or AWFS_ALSO_AT\n' "${o%%=*}" >&2
		exit 2 ;;
	esac
	case $opts in *,*) opts=${opts#*,} ;; *) opts= ;; esac
done

# the initial pid namespace's inode number is fixed (PROC_PID_INIT_INO):
# there a kill(-1) as the agent's uid would reach that uid's every process
if [ "$(readlink /proc/self/ns/pid)" = "pid:[4026531836]" ]; then
	echo "awfs-entrypoint: not in a container (this is the host's pid namespace): the agent's processes could not be ended for sure before awfs is; run it as a container's entrypoint" >&2
	exit 2
fi

# agent CMD...: become CMD as the agent (exec: in a subshell only): its own
# uid, no capabilities (bounding set emptied too), no setuid gain; INT and
# QUIT back to their defaults (sh ignores them in what it starts in the
# background)
agent() {
	exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --ambient-caps=-all \
		--bounding-set=-all --no-new-privs -- env --default-signal=INT,QUIT -- "$@"
}
# fail before mounting, not after, if the image cannot run the agent so
(agent true) || {
	echo "awfs-entrypoint: cannot run the agent as $uid:$gid (this image needs util-linux's setpriv and GNU coreutils' env 8.31 or later)" >&2
	exit 2
}

# stop_awfs: unmount (awfs removes its alias and writes its summary), wait
awfs_pid= agent_pid= woken=0
stop_awfs() {
	kill -TERM "$awfs_pid" 2>/dev/null || :
	wait "$awfs_pid"
}
# a signal before the agent runs stops awfs (if it runs) and ends this
# script; once the agent runs, the signal goes on to it
on_signal() {	# on_signal NAME NUMBER
	if [ -n "$agent_pid" ]; then
		woken=1
		kill -s "$1" "$agent_pid" 2>/dev/null || :
		return 0
	fi
	[ -z "$awfs_pid" ] || stop_awfs || :
	exit $((128 + $2))
}
trap 'on_signal TERM 15' TERM
trap 'on_signal INT 2' INT
trap 'on_signal HUP 1' HUP

# 1. mount: awfs stays this script's child (in the foreground), and says
#    "ready" on a FIFO once the mount and its alias serve
state=$(mktemp -d /run/awfs-entrypoint.XXXXXX 2>/dev/null || mktemp -d)
# awfs reaches its log only through directories no other user may write
# (Ubuntu's /var/log is group syslog's): the default is in one of root's own
[ -n "${AWFS_LOG:-}" ] || { AWFS_LOG=/var/log/awfs/awfs.log; mkdir -p -m 0755 /var/log/awfs; }
mkfifo -m 600 "$state/ready"
"$awfs" "$dir" --policy "$policy" --runtime docker ${AWFS_ALSO_AT:+--also-at "$AWFS_ALSO_AT"} \
	--log "$AWFS_LOG" ${AWFS_AUDIT:+--audit "$AWFS_AUDIT"} \
	${AWFS_OPTS:+-o "$AWFS_OPTS"} -f --ready-fd 3 3>"$state/ready" &
awfs_pid=$!
ready=
read -r ready <"$state/ready" || :
rm -rf "$state"
if [ "$ready" != ready ]; then
	echo "awfs-entrypoint: awfs did not mount" >&2
	stop_awfs || :
	exit 1
fi
# 2. fail closed: the agent never starts on a boundary that does not hold
"$awfsctl" verify "$dir" --policy "$policy" --runtime docker \
	${AWFS_ALSO_AT:+--also-at "$AWFS_ALSO_AT"} >&2 || {
	echo "awfs-entrypoint: awfsctl verify failed; not starting the agent" >&2
	stop_awfs || :
	exit 1
}
# 3. the agent, with this script's standard input (sh gives a background
#    command /dev/null otherwise); signals to this script go on to it
exec 4<&0
agent "$@" <&4 4<&- &
agent_pid=$!
exec 4<&-
while :; do
	woken=0 rc=0
	wait "$agent_pid" || rc=$?
	# a trapped signal ends wait early (status above 128): wait again
	[ "$woken" = 1 ] && [ "$rc" -gt 128 ] || break
done
# 4. the agent is gone, maybe not all it started: end every process of its
#    uid (one kill(-1) as that uid: the kernel signals them all while no
#    process can fork, and only in this pid namespace), then stop awfs
#    cleanly (the summary, the audit's record): an unmounted awfs would show
#    a survivor the directory beneath
trap - TERM INT HUP
(agent sh -c 'kill -KILL -1') 2>/dev/null || :
awfs_rc=0
stop_awfs || awfs_rc=$?
[ "$rc" != 0 ] || rc=$awfs_rc
exit "$rc"
