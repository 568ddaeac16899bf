#!/usr/bin/env bash
# load.sh - 64 clients at once for a bounded time, reads, writes, creates,
# renames and unlinks in the writable tree beside refused writes and masked
# reads: no unexpected result, and the daemon's fds and RSS do not grow from
# one round to the next.
. "$(dirname "$0")/lib.sh"
require_mount_env
# in a sanitizer build, ASan's quarantine would hold freed memory and make RSS
# grow by design; without it RSS means what it does in a normal build
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
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
# a denial flood: every one refused and counted, the log and audit kept small
: >"$LOG"
out=$(as_agent "$AWFS_LOAD" "$MNT" 8 5 flood 2>&1); rc=$?
flooded=$(printf '%s' "$out" | awk '/^ops/ { print $2 }')
echo "# flood: $flooded refused creates in 5 s"
check "a denial flood: every write refused with EROFS" "0" "$rc"
check "  ... while allowed work goes on" "OK" "$(aprobe write "$MNT/rw/during-flood" x)"
lines=$(grep -c 'denied create' "$LOG")
check "  ... the log holds at most the burst and 10 lines a second ($lines lines)" "yes" "$([ "$lines" -le 150 ] && echo yes)"
unmount_awfs
check "clean unmount after the load" "0" "$AWFS_RC"
check_match "  ... and the summary counts every refusal" "unmounting $MNT: [0-9]+ writes denied \(by operation: create [0-9]+" "$(tail -3 "$LOG")"
counted=$(sed -n 's/.*unmounting .*: \([0-9]*\) writes denied (by operation: create \([0-9]*\).*/\2/p' "$LOG")
check "  ... as many as were refused (flood and rounds)" "yes" "$([ "${counted:-0}" -ge "${flooded:-1}" ] && echo yes)"
check_match "  ... and says how many lines the rate limit kept out" "[0-9]+ denial messages suppressed by the rate limit" "$(cat "$LOG")"
finish
