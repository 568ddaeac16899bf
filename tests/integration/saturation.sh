#!/usr/bin/env bash
# saturation.sh - an agent at full weight stalls no other caller, grows the
# daemon by nothing it opens, and hides no refusal (docs/security.md, "No
# caller can stall another"). Each attack runs as the agent uid on its own
# mount while a canary, as root and as another uid, makes three calls every
# 10 ms that each reach awfs: a GETATTR (statx with AT_STATX_FORCE_SYNC), a
# READ through the workers' queue (O_DIRECT) and a LOOKUP in ro/ (a name
# never asked before); a sampler reads awfs's RSS; then all at once.
#
#  1. copy_file_range of 128 MiB by 12 threads, more than the 8 workers,
#     and fsync() of ro/ again and again (the kernel holds ro's lock while an
#     FSYNCDIR waits): the requests queue, each copy is 4 MiB at most (the
#     caller loops), none is served on the listener, an FSYNCDIR waits behind
#     nothing (before: up to 1 s for root's stat);
#  2. a directory of 300,000 entries, its first page listed again and again
#     after a create drops the kernel's copy: a page read, never the whole
#     (before: 140 MB of RSS, 150 ms for root's stat);
#  3. 1,500 opens of .awfs/denials tried and held while refusals with
#     250-byte names keep changing it: 32 succeed (a caller's budget), the
#     text is shared, root still reads the newest (before: a private copy
#     per open, over 100 MB);
#  4. a flood of refused creates in one place, and inside it a file planted
#     in a read-only .git and a refusal of root's: both are in the log, the
#     audit and .awfs/denials (before: lost in "N suppressed").
#
# The bounds asserted are far from what the code before this did and far
# from what it does now (figures printed), so two busy loops on the cores
# move neither across: LAT_MAX ms for the canary, RSS_MAX kB for awfs.
. "$(dirname "$0")/lib.sh"
require_mount_env
AWFS_SATURATE=${AWFS_SATURATE:?AWFS_SATURATE must name the awfs-saturate binary}
[ -x "$AWFS_SATURATE" ] || skip "no $AWFS_SATURATE (make check TESTS= builds it)"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
OTHER_UID=$((AGENT_UID + 1))
LAT_MAX=500
RSS_MAX=32768
make_tmp
write_policy 'version = 1;
allow_write = ( { path = "rw"; reason = "the agent'"'"'s tree"; } );
read_only = ( { path = "rw/repo/.git"; reason = "the history the agent must not rewrite"; } );'
mkdir -p "$SRC/rw/big" "$SRC/rw/mid" "$SRC/rw/repo/.git/hooks" "$SRC/ro/flood"
(cd "$SRC/rw/mid" && seq 20000 | sed 's/^/m-/' | xargs touch)
echo hi >"$SRC/ro/canary"
truncate -s 128M "$SRC/ro/sparse"
(cd "$SRC/rw/big" && seq 300000 | sed 's/^/an-entry-with-a-longish-name-/' | xargs touch)
chown -R "$AGENT_UID:$AGENT_UID" "$SRC/rw"
LONG=$(printf 'd%.0s' $(seq 250))
mkdir "$SRC/ro/flood/$LONG"
chmod 777 "$SRC/ro/flood" "$SRC/ro/flood/$LONG"	# the host would allow it: the policy refuses
AUDIT="$T/audit.jsonl"
as_other() { setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups "$@"; }

# canaries SECS: root's and the other uid's, in the background
canaries() {
	"$AWFS_SATURATE" canary "$MNT/ro/canary" "$MNT/ro" "$1" >"$T/canary.root" &
	CAN1=$!
	as_other "$AWFS_SATURATE" canary "$MNT/ro/canary" "$MNT/ro" "$1" >"$T/canary.other" &
	CAN2=$!
	"$AWFS_SATURATE" rss "$AWFS_PID" "$1" >"$T/rss" &
	RSSP=$!
}
max_ms() { awk '{ print int($2 + 0.5) }' "$1"; }
# report NAME: wait for the canaries, print and check their figures
report() {
	wait "$CAN1" "$CAN2" "$RSSP"
	local r o m
	r=$(max_ms "$T/canary.root"); o=$(max_ms "$T/canary.other"); m=$(awk '{ print $2 }' "$T/rss")
	echo "# $1: root's stat $(cat "$T/canary.root"); uid $OTHER_UID's $(cat "$T/canary.other"); awfs's RSS at most $m kB (idle $RSS_IDLE kB)"
	check "$1: root waits less than $LAT_MAX ms (at most $r ms)" "yes" "$([ "$r" -lt "$LAT_MAX" ] && echo yes)"
	check "$1: uid $OTHER_UID waits less than $LAT_MAX ms (at most $o ms)" "yes" "$([ "$o" -lt "$LAT_MAX" ] && echo yes)"
	check "$1: awfs's RSS grows by less than $RSS_MAX kB ($RSS_IDLE -> $m kB)" "yes" \
		"$([ "$((m - RSS_IDLE))" -lt "$RSS_MAX" ] && echo yes)"
}
start_mount() {
	: >"$LOG"; : >"$AUDIT"
	mount_awfs --audit "$AUDIT"
	RSS_IDLE=$(awk '/^VmRSS:/ { print $2 }' "/proc/$AWFS_PID/status")
}
attack_copy() {
	as_agent "$AWFS_SATURATE" copy "$MNT/ro/sparse" "$MNT/rw" 12 "$1" $((128 << 20))
}
attack_list() { as_agent "$AWFS_SATURATE" list "$MNT/rw/big" "$1"; }
# fill the denials file with long lines (the burst of 50 and 10 a second:
# 100 lines in 5 s), then hold the opens while it goes on changing
attack_hold() {
	as_agent "$AWFS_SATURATE" refuse "$MNT/ro/flood/$LONG" $(($1 + 6)) 250 >/dev/null &
	local f=$!
	sleep 6
	as_agent "$AWFS_SATURATE" hold "$MNT/.awfs/denials" 1500 "$1"
	wait "$f"
}

# ---- 1. slow requests: more than the workers, never on the listener
start_mount
canaries 6
as_agent "$AWFS_SATURATE" fsyncdir "$MNT/ro" 6 >/dev/null &
FS=$!
out=$(attack_copy 6)
wait "$FS"
echo "# copies: $out"
check "copy_file_range: the copies go on, 4 MiB a call at most (the caller loops)" "yes" \
	"$(printf '%s' "$out" | awk '$2 > 12 && $6 == 0 && $4 / $2 <= 4194304 { print "yes" }')"
report "12 threads in copy_file_range"
unmount_awfs

# ---- 2. a huge directory listed a page at a time
start_mount
canaries 6
out=$(attack_list 6)
echo "# listings: $out"
check "the first page of a 300,000-entry directory, listed again and again" "yes" \
	"$(printf '%s' "$out" | awk '$2 > 10 { print "yes" }')"
report "300,000 entries listed"
check "a whole listing still shows every entry" "300000" "$(ls -f "$MNT/rw/big" | grep -c '^an-entry')"
# more listings at once than awfs keeps streams (16): each goes on from a
# checkpoint when its stream went, and still gives every entry once
out=$(as_agent "$AWFS_SATURATE" interleave "$MNT/rw/mid" 40)
check "40 listings at once, a page of each in turn: every entry, each once" "listings 40 min 20002 max 20002" "$out"
out=$(as_agent "$AWFS_SATURATE" seekfar "$MNT/rw/big")
echo "# a listing continued at a made-up offset: $out"
check "  ... an offset awfs never gave is refused, not read up to" "yes" \
	"$(printf '%s' "$out" | awk '$2 == "Invalid" && $(NF) < 100 { print "yes" }')"
unmount_awfs

# ---- 3. the denials file held open 1,500 times while it changes
start_mount
canaries 14
out=$(attack_hold 8)
echo "# .awfs/denials: $out"
check ".awfs/denials: a caller holds 32 opens, no more" "opened 32 failed 1468 first Too many open files" "$out"
report "1,500 opens of .awfs/denials tried"
unmount_awfs
# root's refusal is in the text root reads while the agent holds its opens
start_mount
as_agent "$AWFS_SATURATE" refuse "$MNT/ro/flood/$LONG" 10 250 >/dev/null &
F=$!
as_agent "$AWFS_SATURATE" hold "$MNT/.awfs/denials" 40 8 >"$T/hold" &
H=$!
sleep 4
sh -c "echo x >'$MNT/ro/marker-$$'" 2>/dev/null
check ".awfs/denials: root reads the newest refusal while the agent holds its opens" "1" \
	"$(grep -c "ro/marker-$$" "$MNT/.awfs/denials")"
wait "$F" "$H"
check "  ... the agent held 32 and was refused the rest" "opened 32 failed 8 first Too many open files" "$(cat "$T/hold")"
unmount_awfs

# ---- 4. a flood hides no other refusal
start_mount
as_agent "$AWFS_SATURATE" refuse "$MNT/ro/flood" 16 8 >"$T/flood" &
FLOOD=$!
sleep 3
plant=$(as_agent sh -c "echo evil >'$MNT/rw/repo/.git/hooks/pre-commit'" 2>&1)
check "the planted hook is refused" "yes" "$(printf '%s' "$plant" | grep -q 'Read-only file system' && echo yes)"
mine=$(sh -c "echo root >'$MNT/ro/roots-own'" 2>&1)
check "root's write in a read-only place is refused" "yes" "$(printf '%s' "$mine" | grep -q 'Read-only file system' && echo yes)"
wait "$FLOOD"
echo "# flood: $(cat "$T/flood"), log lines $(grep -c 'denied create' "$LOG")"
check "the flood went on past the plant (13 s, over 100 lines a kind would fill)" "yes" \
	"$(awk '$2 > 2000 { print "yes" }' "$T/flood")"
check "the log names the planted hook" "1" "$(grep -c 'denied create.*rw/repo/.git/hooks/pre-commit' "$LOG")"
check "the log names root's refusal" "1" "$(grep -c 'denied create.*uid 0 .*ro/roots-own' "$LOG")"
check "the audit names the planted hook" "1" "$(grep -c '"path":"[^"]*rw/repo/.git/hooks/pre-commit"' "$AUDIT")"
check "the audit names root's refusal" "1" "$(grep -c '"path":"[^"]*ro/roots-own"' "$AUDIT")"
check ".awfs/denials names the planted hook" "1" "$(grep -c 'rw/repo/.git/hooks/pre-commit' "$MNT/.awfs/denials")"
check ".awfs/denials names root's refusal" "1" "$(grep -c 'ro/roots-own' "$MNT/.awfs/denials")"
check "the flood is rate-limited: its suppressed lines are counted, per uid" "yes" \
	"$(grep -Eq "[0-9]+ denial messages suppressed by the rate limit for uid $AGENT_UID" "$LOG" && echo yes)"
unmount_awfs
check "the summary counts every refusal of the flood" "yes" \
	"$(awk '{ print $2 + 2 }' "$T/flood" | { read -r n; grep -q "unmounting .*: $n writes denied" "$LOG" && echo yes; })"

# ---- all at once (but the fsyncs of ro/: an ext4 journal commit they force
# writes the copies' data first, and what awfs writes on the listener, a
# create or a log line, waits for it; docs/security.md, "Not covered")
start_mount
canaries 10
attack_copy 10 >/dev/null &
A1=$!
attack_list 10 >/dev/null &
A2=$!
attack_hold 4 >/dev/null &
A3=$!
as_agent "$AWFS_SATURATE" refuse "$MNT/ro/flood" 10 8 >/dev/null &
A4=$!
wait "$A1" "$A2" "$A3" "$A4"
report "every attack at once"
unmount_awfs
check "awfs stopped cleanly after it all" "0" "$AWFS_RC"
finish
