#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# demo.sh - install what is missing, build awfs, and mount it with the
# shipped default policy (etc/awfs/policy.conf) over a demo copy of the
# /tmp/gh-aw layout, in the foreground: you see a mask, a pass-through
# write and a denied write with its log line. Run as root on Debian 12.
#
#   contrib/demo.sh [DIR]               from the source tree: builds awfs
#   /usr/share/awfs/demo.sh [DIR]       installed by the package: the
#                                       installed awfs and /etc/awfs/policy.conf
#
# Without DIR the demo makes a fresh private directory,
# /tmp/gh-aw-demo.XXXXXX/gh-aw, and removes it at exit. DIR must not exist
# yet and its parent must be writable by root only: the demo creates it, and
# refuses a DIR that is already there (someone else may have made it).
#
# Root writes nothing through a path another user controls: it creates DIR
# (in a directory only root can write, so no one can swap it for a symlink)
# and hands it to the agent uid, which builds the layout itself; everything
# the demo reads inside DIR it reads as the agent.
#
# With a terminal, awfs stays mounted until you press Enter; without one
# (CI, a pipe) it unmounts right after the demonstration.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/deps.sh" ]; then
	# in the source tree (contrib/demo.sh): the tree's policy; AWFS_BIN
	# names an awfs already built (the test suite does), else build here
	top=$(cd "$here/.." && pwd)
	. "$here/deps.sh"
	POLICY_SRC=$top/etc/awfs/policy.conf
	if [ -n "${AWFS_BIN:-}" ]; then
		AWFS_EXE=$AWFS_BIN
	else
		awfs_install_deps
		awfs_build "$top"
		AWFS_EXE=$top/awfs
	fi
else
	# installed by the package (/usr/share/awfs/demo.sh): the installed
	# awfs and policy
	POLICY_SRC=/etc/awfs/policy.conf
	AWFS_EXE=${AWFS_BIN:-$(command -v awfs || true)}
	if [ -z "$AWFS_EXE" ] || [ ! -r "$POLICY_SRC" ]; then
		echo "demo: no installed awfs or no $POLICY_SRC (install the awfs package, or run contrib/demo.sh from the source tree)" >&2
		exit 1
	fi
fi

AGENT=${AWFS_DEMO_UID:-1000}
case $AGENT in
'' | 0 | *[!0-9]*) echo "demo: AWFS_DEMO_UID must be a non-zero numeric uid, not '$AGENT'" >&2; exit 2 ;;
esac
as_agent() { setpriv --reuid="$AGENT" --regid="$AGENT" --clear-groups "$@"; }

# root_only_dir D: D and every directory above it belong to root, and no one
# else may write D (above it, a world-writable directory must be sticky)
root_only_dir() {
	local d=$1 own mode first=1
	while :; do
		read -r own mode < <(stat -c '%u %a' -- "$d") || return 1
		[ "$own" = 0 ] || return 1
		if [ $((8#$mode & 8#022)) != 0 ]; then
			[ "$first" = 1 ] && return 1
			[ $((8#$mode & 8#1000)) != 0 ] || return 1
		fi
		first=0
		[ "$d" = / ] && return 0
		d=$(dirname -- "$d")
	done
}

BASE=""	# the private directory made here, removed at exit
PID=""
POLICY=""
cleanup() {
	if [ -n "$PID" ]; then
		kill -TERM "$PID" 2>/dev/null || true
		wait "$PID" 2>/dev/null || true
	fi
	[ -n "$POLICY" ] && rm -f "$POLICY"
	if [ -n "$BASE" ]; then
		if awk -v b="$BASE" '$5 == b || index($5, b "/") == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
			echo "demo: $BASE still holds a mount; not removing it" >&2
		else
			rm -rf --one-file-system -- "$BASE"
		fi
	fi
}
trap cleanup EXIT

if [ $# -gt 0 ]; then
	want=${1%/}
	name=${want##*/}
	case $name in
	'' | . | ..) echo "demo: $1: give a new directory to create, such as /root/gh-aw-demo" >&2; exit 2 ;;
	esac
	if [ -e "$want" ] || [ -L "$want" ]; then
		echo "demo: $1 already exists; give a path that does not exist yet (the demo creates it), or none for a fresh private directory" >&2
		exit 1
	fi
	case $want in */*) parent=${want%/*} ;; *) parent=. ;; esac
	parent=$(realpath -e -- "${parent:-/}") || { echo "demo: $1: its parent directory does not exist" >&2; exit 1; }
	if ! root_only_dir "$parent"; then
		echo "demo: $1: its parent $parent is not root's alone (another user could swap $name for a symlink); give a path in a directory only root can write, or none for a fresh private directory" >&2
		exit 1
	fi
	DIR=${parent%/}/$name
else
	BASE=$(mktemp -d /tmp/gh-aw-demo.XXXXXX)
	chmod 755 "$BASE"
	DIR=$BASE/gh-aw
fi
# plain mkdir: fails if anyone made DIR in the meantime
mkdir -m 700 -- "$DIR" || { echo "demo: cannot create $DIR (did someone else create it?)" >&2; exit 1; }
chown "$AGENT:$AGENT" "$DIR"
chmod 755 "$DIR"
POLICY=$(mktemp /tmp/awfs-demo-policy.XXXXXX)
cp "$POLICY_SRC" "$POLICY"
chmod 644 "$POLICY"

# the layout of /tmp/gh-aw as a workflow leaves it before the agent starts,
# made by the agent uid: root writes nothing inside DIR
as_agent sh -euc '
	cd "$1"
	mkdir -p mcp-logs mcp-payloads sandbox/firewall/logs cache-memory/.git
	echo "{\"tool\":\"github.get_secret\",\"args\":{\"token\":\"ghp_example\"}}" >mcp-logs/gateway.log
	echo "CONNECT internal.example:443 DENIED" >sandbox/firewall/logs/access.log
	echo "{\"items\":[1,2,3]}" >mcp-payloads/payload-1.json
	echo "[core]" >cache-memory/.git/config
	: >agent-step-summary.md' _ "$DIR"

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
agent() { say "$*   # as uid $AGENT"; as_agent sh -c "$*" 2>&1 || true; }

echo "demo: mounting awfs over $DIR with the default policy (log lines start with 'awfs:')"
"$AWFS_EXE" "$DIR" --policy "$POLICY" -f &
PID=$!
mounted=no
for _ in $(seq 600); do
	grep -q " $DIR .* fuse.awfs " /proc/self/mountinfo && { mounted=yes; break; }
	kill -0 "$PID" 2>/dev/null || break
	sleep 0.05
done
if [ "$mounted" != yes ]; then
	# never show the raw directory as if awfs served it
	echo "demo: awfs did not mount over $DIR; stopping" >&2
	exit 1
fi
sleep 0.2

agent "ls -l $DIR"
agent "ls -la $DIR/mcp-logs; cat $DIR/mcp-logs/gateway.log"
agent "cat $DIR/mcp-payloads/payload-1.json"
agent "echo 'a note for later' > $DIR/cache-memory/notes.md && cat $DIR/cache-memory/notes.md"
say "cat $DIR/cache-memory/notes.md   # on the host, through awfs: the write passed through"
# read as the agent: root follows no link the agent may have planted there
as_agent cat "$DIR/cache-memory/notes.md" || true
agent "echo '{}' > $DIR/mcp-payloads/forged.json"
sleep 0.2
agent "echo '[hooks]' >> $DIR/cache-memory/.git/config"
sleep 0.2

if [ -t 0 ]; then
	printf '\nawfs is mounted at %s. Try it (as uid %s: setpriv --reuid=%s --regid=%s --clear-groups bash).\nPress Enter to unmount. ' "$DIR" "$AGENT" "$AGENT" "$AGENT"
	read -r _
fi
kill -TERM "$PID" 2>/dev/null || true
wait "$PID" || true
PID=""
if [ -n "$BASE" ]; then
	echo "demo: unmounted; removing $BASE"
else
	echo "demo: unmounted; $DIR is the plain directory again"
fi
