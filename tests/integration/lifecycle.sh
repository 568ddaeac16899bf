#!/usr/bin/env bash
# lifecycle.sh - clean unmount on SIGTERM, fail closed on SIGKILL, remount,
# --also-at aliases, the rate limit and log escaping.
. "$(dirname "$0")/lib.sh"
require_mount_env
setup_fixture
ALIASES="$T/alias"
mkdir "$T/alias"
mount_awfs --also-at "$T/alias"

for _ in $(seq 50); do is_mounted "$T/alias" && break; sleep 0.05; done
check "the alias is an awfs mount" "yes" "$(is_mounted "$T/alias" && echo yes)"
expect "the mask holds at the alias" "OK" readdir "$T/alias/secret"
expect "masked content unreachable at the alias" "ENOENT" read "$T/alias/secret/data"
expect "writes refused at the alias" "EROFS" write "$T/alias/ro/file" x
expect "writes allowed at the alias" "OK" write "$T/alias/rw/via-alias" a

# a flood of denials is rate-limited, with a count of what was suppressed
as_agent bash -c 'for i in $(seq 300); do : >"$1/ro/flood$i"; done' _ "$MNT" 2>/dev/null
expect "allowed work still goes through during a flood" "OK" write "$MNT/rw/after-flood" ok
# log injection: a name with a newline, an escape and invalid UTF-8
sleep 6	# let the bucket refill so the next lines are written
bad=$(printf 'evil\nawfs: fake line \033[31m\xff')
expect "a hostile name is refused" "EROFS" create "$MNT/ro/$bad"

unmount_awfs
check "SIGTERM: the daemon exits 0" "0" "$AWFS_RC"
check "SIGTERM: the mount is gone" "no" "$(is_mounted "$MNT" && echo yes || echo no)"
check "SIGTERM: the alias is gone" "no" "$(is_mounted "$T/alias" && echo yes || echo no)"
flood=$(grep -c 'denied create .*/ro/flood' "$LOG")
check "the flood was cut to the burst" "yes" "$([ "$flood" -ge 40 ] && [ "$flood" -le 80 ] && echo yes)"
check_match "the suppressed count is reported" "[0-9]+ denial messages suppressed by the rate limit" "$(cat "$LOG")"
check_match "the hostile name is escaped" 'denied create for pid .*; EROFS: "[^ ]*/ro/evil\\nawfs: fake line \\x1b\[31m\\xff": ' "$(cat "$LOG")"
check "no forged line in the log" "0" "$(grep -c '^awfs: fake line' "$LOG")"
check "the summary counts the denials" "yes" "$(grep -Eq 'unmounting .*: 30[0-9] writes denied' "$LOG" && echo yes)"
check "the write through the alias reached the host" "a" "$(cat "$SRC/rw/via-alias")"

# SIGKILL: the mount must stay, dead, never showing the raw directory
mount_awfs
expect "mounted again at once" "OK" readdir "$MNT/secret"
served=$(aprobe readdir "$MNT")
kill -KILL "$AWFS_PID"
wait "$AWFS_PID" 2>/dev/null
AWFS_PID=""
check "SIGKILL: the mount stays" "yes" "$(is_mounted "$MNT" && echo yes)"
expect "SIGKILL: stat fails closed" "ENOTCONN" stat "$MNT/secret/data"
expect "SIGKILL: listing a directory not listed before fails closed" "ENOTCONN" readdir "$MNT/ro"
# what the kernel cached of awfs's answers it may give again, nothing else
r=$(aprobe readdir "$MNT")
check "SIGKILL: a listing made before: ENOTCONN or what awfs served" "yes" \
	"$([ "$r" = ENOTCONN ] || [ "$r" = "$served" ] && echo yes)"
r=$(aprobe readdir "$MNT/secret")
check "SIGKILL: the masked directory: ENOTCONN or empty" "yes" \
	"$([ "$r" = ENOTCONN ] || [ "$r" = OK ] && echo yes)"
expect "SIGKILL: reads fail closed" "ENOTCONN" read "$MNT/ro/file"
expect "SIGKILL: writes fail closed" "ENOTCONN" write "$MNT/rw/x" x
fusermount3 -u "$MNT"
check "fusermount3 -u clears the dead mount" "no" "$(is_mounted "$MNT" && echo yes || echo no)"
mount_awfs
expect "a new awfs mounts" "ENOENT" read "$MNT/secret/data"
kill -KILL "$AWFS_PID"; wait "$AWFS_PID" 2>/dev/null; AWFS_PID=""
expect "killed again: fails closed" "ENOTCONN" read "$MNT/ro/file"
mount_awfs
expect "a new awfs replaces the dead mount by itself" "OK:RODATA\x0a" read "$MNT/ro/file"
expect "  ... and the mask holds" "ENOENT" read "$MNT/secret/data"
check_match "  ... and says so" "replacing the dead awfs mount at $MNT" "$(cat "$T/awfs.stderr")"
check "  ... stacked on the dead one, never uncovering the directory" "2" \
	"$(awk -v p="$MNT" '$5 == p' /proc/self/mountinfo | grep -c fuse.awfs)"
out=$("$AWFS" "$MNT" --policy "$POLICY" -f 2>&1); rc=$?
check "a second awfs over a live one: exit 1" "1" "$rc"
check_match "  ... says why" "an awfs is already mounted at $MNT \(unmount it first: fusermount3 -u $MNT\)" "$out"
unmount_awfs
check "  ... its unmount takes the dead one away too" "0" \
	"$(awk -v p="$MNT" '$5 == p' /proc/self/mountinfo | grep -c fuse.awfs)"
check "  ... and exits 0" "0" "$AWFS_RC"
check "host data intact after the crash" "TOPSECRET RODATA" "$(cat "$SRC/secret/data" "$SRC/ro/file" | tr '\n' ' ' | sed 's/ $//')"

# in the background (the default, and how mount.fuse3 runs it): the alias is
# there when awfs returns, and every operation works in the forked daemon
: >"$LOG"
"$AWFS" "$MNT" --policy "$POLICY" --log "$LOG" --also-at "$T/alias" 2>>"$T/awfs.stderr"
check "background: awfs returns 0 once mounted" "0" "$?"
check "background: mounted on return" "yes" "$(is_mounted "$MNT" && echo yes)"
check "background: the alias is there on return" "yes" "$(is_mounted "$T/alias" && echo yes)"
expect "background: read" "OK:RODATA\x0a" read "$MNT/ro/file"
expect "background: create" "OK" write "$MNT/rw/bg" bg
expect "background: the mask holds" "ENOENT" read "$T/alias/secret/data"
expect "background: denial" "EROFS" write "$MNT/ro/file" x
check_match "background: the denial names the path" "denied open\(O_WRONLY\|O_TRUNC\) for pid .*; EROFS: \"$MNT/ro/file\":" "$(cat "$LOG")"
# the alias is the same file system: it stays served until it is unmounted too
fusermount3 -u "$MNT"
expect "background: the alias outlives an unmount of the main path" "ENOENT" read "$T/alias/secret/data"
fusermount3 -u "$T/alias"
check "background: fusermount3 -u of both unmounts" "no no" \
	"$(is_mounted "$MNT" && echo yes || echo no) $(is_mounted "$T/alias" && echo yes || echo no)"
for _ in $(seq 100); do grep -q "unmounting $MNT" "$LOG" && break; sleep 0.05; done
check_match "background: the daemon then exits and says so" "unmounting $MNT: 1 write denied" "$(cat "$LOG")"
check "background: the write is on the host" "bg" "$(cat "$SRC/rw/bg")"

# a stop signal that comes after the listener last looked for one and
# before it sleeps in poll(): gdb holds the listener at poll()'s door, the
# signal is sent, gdb lets go. It must wake and unmount at once (a handler
# that only marked the session exited left it asleep until a request came,
# on an idle mount for ever: loop.c, on_stop_signal())
if command -v gdb >/dev/null; then
	: >"$LOG"
	mount_awfs -o cache=never
	(sleep 1; stat "$MNT/rw" >/dev/null 2>&1) &
	timeout 120 gdb -p "$AWFS_PID" -batch -nx -ex 'set confirm off' -ex 'break poll thread 1' -ex continue \
		-ex 'handle SIGTERM nostop noprint pass' -ex "shell kill -TERM $AWFS_PID" -ex detach >"$T/gdb.out" 2>&1
	wait $!
	check_match "a SIGTERM at poll()'s door: gdb held the listener there" "Breakpoint 1(\.[0-9]+)?, .*poll" "$(cat "$T/gdb.out")"
	for _ in $(seq 100); do kill -0 "$AWFS_PID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$AWFS_PID" 2>/dev/null; then
		check "  ... the listener wakes and awfs exits" "exited" "still running 10 s after the signal"
		kill -KILL "$AWFS_PID"; wait "$AWFS_PID" 2>/dev/null
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"
		AWFS_PID=""
	else
		unmount_awfs 2>/dev/null	# reaps it (the kill finds it gone)
		check "  ... the listener wakes and awfs exits 0" "0" "$AWFS_RC"
		check "  ... the mount is gone" "no" "$(is_mounted "$MNT" && echo yes || echo no)"
		check_match "  ... and says so" "unmounting $MNT" "$(cat "$LOG")"
	fi
else
	echo "ok - # SKIP a SIGTERM at poll()'s door: no gdb"
fi
finish
