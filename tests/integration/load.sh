#!/usr/bin/env bash
# load.sh - 64 clients at once for a bounded time, reads, writes, creates,
# renames and unlinks in the writable tree beside refused writes and masked
# reads: no unexpected result, and the daemon's fds and RSS do not grow from
# one round to the next.
. "$(dirname "$0")/lib.sh"
require_mount_env
AWFS_LOAD=${AWFS_LOAD:?AWFS_LOAD must name the awfs-load binary}
setup_fixture
mount_awfs
fds() { ls "/proc/$AWFS_PID/fd" | wc -l; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$AWFS_PID/status"; }

out=$(as_agent "$AWFS_LOAD" "$MNT" 64 4 2>&1); rc=$?
check "round 1: 64 threads, no unexpected result" "0" "$rc"
[ "$rc" = 0 ] || printf '%s\n' "$out" | head -20 | sed 's/^/#   /'
fd1=$(fds); rss1=$(rss)
for round in 2 3; do
	out=$(as_agent "$AWFS_LOAD" "$MNT" 64 4 2>&1); rc=$?
	check "round $round: no unexpected result ($(printf '%s' "$out" | tail -1))" "0" "$rc"
done
fd3=$(fds); rss3=$(rss)
echo "# fds $fd1 -> $fd3, RSS $rss1 kB -> $rss3 kB"
check "fds do not grow from round 1 to round 3 (within 64)" "yes" "$([ "$fd3" -le $((fd1 + 64)) ] && echo yes)"
check "RSS does not grow from round 1 to round 3 (within 2 MiB)" "yes" "$([ "$rss3" -le $((rss1 + 2048)) ] && echo yes)"
echo 2 >/proc/sys/vm/drop_caches
sleep 1
fdd=$(fds)
echo "# fds after the kernel dropped its cached entries: $fdd"
check "fds are released when the kernel forgets the inodes" "yes" "$([ "$fdd" -lt "$fd3" ] || [ "$fd3" -lt 40 ] && echo yes)"
check "the daemon is still up after the load" "yes" "$(kill -0 "$AWFS_PID" && echo yes)"
unmount_awfs
check "clean unmount after the load" "0" "$AWFS_RC"
finish
