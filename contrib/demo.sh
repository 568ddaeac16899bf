#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# demo.sh - install what is missing, build awfs, and mount it with the
# shipped default policy (etc/awfs/policy.conf) over a demo copy of the
# /tmp/gh-aw layout, in the foreground: you see a mask, a pass-through
# write and a denied write with its log line. Run as root on Debian 12.
#
#   contrib/demo.sh [DIR]        (default DIR: /tmp/gh-aw-demo)
#
# With a terminal, awfs stays mounted until you press Enter; without one
# (CI, a pipe) it unmounts right after the demonstration.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/contrib/deps.sh"
# AWFS_BIN: use an awfs already built (the test suite does); else build here
if [ -n "${AWFS_BIN:-}" ]; then
	AWFS_EXE=$AWFS_BIN
else
	awfs_install_deps
	awfs_build "$top"
	AWFS_EXE=$top/awfs
fi

DIR=${1:-/tmp/gh-aw-demo}
AGENT=${AWFS_DEMO_UID:-1000}
POLICY=$(mktemp /tmp/awfs-demo-policy.XXXXXX)
cp "$top/etc/awfs/policy.conf" "$POLICY"
chmod 644 "$POLICY"
PID=""
cleanup() {
	if [ -n "$PID" ]; then
		kill -TERM "$PID" 2>/dev/null || true
		wait "$PID" 2>/dev/null || true
	fi
	rm -f "$POLICY"
}
trap cleanup EXIT

if mountpoint -q "$DIR" 2>/dev/null; then
	echo "demo: $DIR is already a mount point; unmount it first (fusermount3 -u $DIR)" >&2
	exit 1
fi
# the layout of /tmp/gh-aw as a workflow leaves it before the agent starts
rm -rf "$DIR"
mkdir -p "$DIR"/mcp-logs "$DIR"/mcp-payloads "$DIR"/sandbox/firewall/logs "$DIR"/cache-memory/.git
echo '{"tool":"github.get_secret","args":{"token":"ghp_example"}}' >"$DIR/mcp-logs/gateway.log"
echo 'CONNECT internal.example:443 DENIED' >"$DIR/sandbox/firewall/logs/access.log"
echo '{"items":[1,2,3]}' >"$DIR/mcp-payloads/payload-1.json"
echo '[core]' >"$DIR/cache-memory/.git/config"
: >"$DIR/agent-step-summary.md"
chown -R "$AGENT:$AGENT" "$DIR"
chmod 755 "$DIR"

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
agent() { say "$*   # as uid $AGENT"; setpriv --reuid="$AGENT" --regid="$AGENT" --clear-groups sh -c "$*" 2>&1 || true; }

echo "demo: mounting awfs over $DIR with the default policy (log lines start with 'awfs:')"
"$AWFS_EXE" "$DIR" --policy "$POLICY" -f &
PID=$!
for _ in $(seq 100); do
	grep -q " $DIR .* fuse.awfs " /proc/self/mountinfo && break
	sleep 0.05
done
sleep 0.2

agent "ls -l $DIR"
agent "ls -la $DIR/mcp-logs; cat $DIR/mcp-logs/gateway.log"
agent "cat $DIR/mcp-payloads/payload-1.json"
agent "echo 'a note for later' > $DIR/cache-memory/notes.md && cat $DIR/cache-memory/notes.md"
say "cat $DIR/cache-memory/notes.md   # on the host, through awfs: the write passed through"
cat "$DIR/cache-memory/notes.md"
agent "echo '{}' > $DIR/mcp-payloads/forged.json"
sleep 0.2
agent "echo '[hooks]' >> $DIR/cache-memory/.git/config"
sleep 0.2

if [ -t 0 ]; then
	printf '\nawfs is mounted at %s. Try it (as uid %s: setpriv --reuid=%s --regid=%s --clear-groups bash).\nPress Enter to unmount. ' "$DIR" "$AGENT" "$AGENT" "$AGENT"
	read -r _
fi
kill -TERM "$PID"
wait "$PID"
PID=""
echo "demo: unmounted; $DIR is the plain directory again"
