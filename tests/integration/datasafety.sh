#!/usr/bin/env bash
# datasafety.sh - what the agent wrote survives: SIGTERM and SIGKILL of the
# daemon under load, a host-side writer, and the source vanishing under a
# live mount. Nothing leaks, nothing hangs, nothing written and closed is lost.
. "$(dirname "$0")/lib.sh"
require_mount_env
setup_fixture
mkdir "$T/prog" && chown "$AGENT_UID" "$T/prog"
P="$T/prog/progress"	# outside the mount: which records' close() returned

# writer: append numbered records, each open/write/close; after close
# returned, note the number outside the mount
start_writers() {
	as_agent bash -c '
		i=0
		while :; do
			i=$((i + 1))
			printf "record %06d abcdefghijklmnopqrstuvwxyz0123456789\n" "$i" >>"$1/rw/history.jsonl" 2>/dev/null || exit 0
			echo "$i" >"$2.tmp" && mv "$2.tmp" "$2"
		done' _ "$MNT" "$P" &
	W1=$!
	# rewriter: replace a file whole, the way editors and git do (write, rename)
	as_agent bash -c '
		i=0
		while :; do
			i=$((i + 1))
			printf "version %06d\n%0500d\n" "$i" 0 >"$1/rw/state.tmp" 2>/dev/null || exit 0
			mv "$1/rw/state.tmp" "$1/rw/state" 2>/dev/null || exit 0
		done' _ "$MNT" &
	W2=$!
}
stop_writers() {
	kill "$W1" "$W2" 2>/dev/null
	wait "$W1" "$W2" 2>/dev/null
}
# every line whole and in order; at least the records whose close returned
check_records() {
	local last=$1 file="$SRC/rw/history.jsonl" n bad
	n=$(wc -l <"$file")
	bad=$(grep -cvE '^record [0-9]{6} abcdefghijklmnopqrstuvwxyz0123456789$' "$file")
	check "$2: every record on the host is whole" "0" "$bad"
	[ "$bad" = 0 ] || grep -nvE '^record [0-9]{6} abcdefghijklmnopqrstuvwxyz0123456789$' "$file" | head -3 | od -c | head -8 | sed 's/^/#   /' 
	check "$2: every record whose close() returned is there ($last)" "yes" "$([ "$n" -ge "$last" ] && echo yes)"
	check "$2: the records are in order" "yes" \
		"$(awk '{ if ($2 + 0 != NR) bad = 1 } END { print bad ? "no" : "yes" }' "$file")"
	check_match "$2: the replaced file holds one whole version" '^version [0-9]{6}$' "$(head -1 "$SRC/rw/state")"
	check "$2: ... and all of it" "516" "$(wc -c <"$SRC/rw/state")"
}

# ---- SIGTERM under load: clean unmount, nothing lost
MNT="$T/mnt"; mkdir -p "$MNT"
mount_awfs --source "$SRC"
start_writers
sleep 2
kill -TERM "$AWFS_PID"; wait "$AWFS_PID"; AWFS_RC=$?; AWFS_PID=""
stop_writers
check "SIGTERM under load: exit 0" "0" "$AWFS_RC"
check "SIGTERM under load: the mount is gone" "no" "$(is_mounted "$MNT" && echo yes || echo no)"
check_records "$(cat "$P")" "SIGTERM"
check "SIGTERM: no stray files beside what the writers made" "file history.jsonl masked proj state sub" \
	"$(ls "$SRC/rw" | grep -v '^state.tmp$' | tr '\n' ' ' | sed 's/ $//')"

# ---- SIGKILL under load: the mount fails closed, the host files are whole
rm -f "$SRC/rw/history.jsonl" "$P"
mount_awfs --source "$SRC"
start_writers
sleep 2
kill -KILL "$AWFS_PID"; wait "$AWFS_PID" 2>/dev/null; AWFS_PID=""
stop_writers
check "SIGKILL under load: the mount stays, dead" "yes ENOTCONN" \
	"$(is_mounted "$MNT" && echo yes) $(aprobe read "$MNT/rw/history.jsonl")"
expect "SIGKILL: nothing under the mount is reachable" "ENOTCONN" readdir "$MNT/rw"
check_records "$(cat "$P")" "SIGKILL"
mount_awfs --source "$SRC"
expect "SIGKILL: awfs mounts again at once" "ENOENT" read "$MNT/secret/data"
check "  ... and the records read back whole" "$(wc -l <"$SRC/rw/history.jsonl")" \
	"$(as_agent wc -l <"$MNT/rw/history.jsonl")"

# ---- a host-side writer while the agent reads: no crash, no masked byte
( for i in $(seq 300); do
	echo "host $i" >"$SRC/ro/host-$((i % 20))"
	echo "SECRET-$i TOPSECRET" >"$SRC/secret/new-$((i % 20))"
	rm -f "$SRC/ro/host-$(((i + 10) % 20))"
done ) &
HW=$!
leaks=0
for _ in $(seq 60); do
	out=$(as_agent sh -c 'cat "$1"/ro/host-* "$1"/secret/* 2>/dev/null; ls "$1/secret" "$1/ro" 2>/dev/null' _ "$MNT")
	case "$out" in *TOPSECRET*|*SECRET-*) leaks=$((leaks + 1)) ;; esac
done
wait "$HW"
check "a host-side writer: no masked byte was ever read" "0" "$leaks"
check "a host-side writer: awfs is still up" "yes" "$(kill -0 "$AWFS_PID" 2>/dev/null && echo yes)"
expect "  ... and serving" "OK:RODATA\x0a" read "$MNT/ro/file"
unmount_awfs

# ---- the source removed or renamed under a live mount: clean errors, no crash
cp -a "$SRC" "$T/src2"
SRC_SAVED=$SRC; SRC="$T/src2"
mount_awfs --source "$SRC"
expect "source renamed: before" "OK:RODATA\x0a" read "$MNT/ro/file"
mv "$T/src2" "$T/src2-moved"
expect "source renamed: the pinned tree still serves" "OK:RODATA\x0a" read "$MNT/ro/file"
expect "source renamed: writes still land in it" "OK" write "$MNT/rw/after-move" x
check "  ... in the moved directory" "x" "$(cat "$T/src2-moved/rw/after-move")"
rm -rf "$T/src2-moved"
r=$(aprobe read "$MNT/ro/file")
check_match "source removed: a clean error, not a crash" "^(ENOENT|ESTALE|OK:RODATA.*)$" "$r"
r=$(aprobe create "$MNT/rw/after-rm")
check_match "source removed: creating fails cleanly" "^(ENOENT|ESTALE)$" "$r"
check "source removed: awfs is still up" "yes" "$(kill -0 "$AWFS_PID" 2>/dev/null && echo yes)"
unmount_awfs
check "source removed: it unmounts cleanly (exit 0)" "0" "$AWFS_RC"
SRC=$SRC_SAVED
finish
