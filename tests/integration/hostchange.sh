#!/usr/bin/env bash
# hostchange.sh - what the host changes in read-only paths while the agent
# runs reaches the agent at once (awfs watches those directories and tells
# the kernel), and what it leaves alone is kept without asking awfs again.
. "$(dirname "$0")/lib.sh"
require_mount_env
setup_fixture
mkdir -p "$SRC/ro/dir/deep"
echo DEEP1 >"$SRC/ro/dir/deep/f"
chown -R "$AGENT_UID:$AGENT_UID" "$SRC/ro/dir"
# -d: libfuse prints each request on stderr, so the test can count them
mount_beside -d
H=$SRC
M=$MNT
ERR=$T/awfs.stderr

# within NAME EXPECTED CMD...: CMD prints EXPECTED within 0.6 s of the host's
# change, well inside the second a read-only path was cached for without a
# watch (the first access just cached the old state)
within() { poll_check 30 0.02 "$@"; }
# soon NAME EXPECTED PROBE-ARGS...: the same for the probe, as the agent
soon() {
	local name=$1 want=$2
	shift 2
	within "$name" "$want" aprobe "$@"
}
mode_of() { aprobe stat "$1" | sed -n 's/.* mode=\([0-7]*\) .*/\1/p'; }

expect "read a read-only file (now cached)" "OK:RODATA\x0a" read "$M/ro/file"
echo NEWDATA-LONGER >"$H/ro/file"
soon "host rewrites it: the new content at once" "OK:NEWDATA-LONGER\x0a" read "$M/ro/file"
check "mode before the host's chmod" "0644" "$(mode_of "$M/ro/file")"
chmod 600 "$H/ro/file"
within "host chmods it: the new mode at once" "0600" mode_of "$M/ro/file"
chmod 644 "$H/ro/file"
within "  ... and back" "0644" mode_of "$M/ro/file"
expect "a name that does not exist (the kernel keeps the absence)" "ENOENT" read "$M/ro/later"
echo LATER >"$H/ro/later"
chown "$AGENT_UID:$AGENT_UID" "$H/ro/later"
soon "host creates it: there at once" "OK:LATER\x0a" read "$M/ro/later"
soon "  ... and in the directory's listing" "OK:dir,file,hidden,later,link-out,link-to-secret" readdir "$M/ro"
mv "$H/ro/later" "$H/ro/renamed"
soon "host renames it: the old name is gone at once" "ENOENT" read "$M/ro/later"
soon "  ... and the new one is there" "OK:LATER\x0a" read "$M/ro/renamed"
rm "$H/ro/renamed"
soon "host removes it: gone at once" "ENOENT" read "$M/ro/renamed"
soon "  ... and from the listing" "OK:dir,file,hidden,link-out,link-to-secret" readdir "$M/ro"
expect "a file two directories down" "OK:DEEP1\x0a" read "$M/ro/dir/deep/f"
echo DEEP2 >>"$H/ro/dir/deep/f"
soon "host appends to it: seen at once" "OK:DEEP1\x0aDEEP2\x0a" read "$M/ro/dir/deep/f"
mkdir "$H/ro/dir/deep/sub"
soon "host makes a directory there: seen at once" "OK:f,sub" readdir "$M/ro/dir/deep"
# a name a glob mask hides, made by the host later: masked at once (empty)
expect "no x.pem yet" "ENOENT" read "$M/x.pem"
echo CERT2 >"$H/x.pem"
soon "host makes x.pem: it appears masked, empty" "OK" read "$M/x.pem"
expect "masked stays masked after the change" "OK" read "$M/x.pem"

# unchanged, what the kernel learnt is kept past the second it was kept for
# without a watch: no LOOKUP when the agent comes back after 1.5 s
aprobe read "$M/ro/dir/deep/f" >/dev/null
aprobe stat "$M/ro/file" >/dev/null
sleep 1.5
before=$(grep -c 'opcode: LOOKUP' "$ERR")
aprobe read "$M/ro/dir/deep/f" >/dev/null
aprobe stat "$M/ro/file" >/dev/null
aprobe readdir "$M/ro" >/dev/null
check "unchanged read-only paths: no lookup 1.5 s later" "$before" "$(grep -c 'opcode: LOOKUP' "$ERR")"

# a source on a FUSE file system (here a second awfs over this mount; in a
# guest, virtiofs): inotify would report only what this kernel did, not the
# host's changes, so nothing is watched there and a second is kept
watches() { grep -c '^inotify wd:' /proc/"$1"/fdinfo/"$(find /proc/"$1"/fd -lname 'anon_inode:inotify' -printf '%f\n' | head -1)"; }
M2=$T/mnt2
mkdir -p "$M2"
"$AWFS" "$M2" --policy "$POLICY" --source "$M" -f --log "$T/awfs2.log" 2>>"$T/awfs2.stderr" &
P2=$!
AT_EXIT='fusermount3 -u "$M2" 2>/dev/null'
for _ in $(seq 200); do [ "$(awfs_mounts "$M2")" -gt 0 ] && break; sleep 0.05; done
expect "over a FUSE source: read a read-only file" "OK:NEWDATA-LONGER\x0a" read "$M2/ro/file"
expect "  ... and a directory below it" "OK:f,sub" readdir "$M2/ro/dir/deep"
check "  ... its read-only directories are not watched" "0" "$(watches "$P2")"
check "  ... where those of the local source beneath are" "yes" "$([ "$(watches "$AWFS_PID")" -gt 0 ] && echo yes)"
echo OVER-FUSE >"$H/ro/file"
expect_soon "  ... a host change still appears (within the second)" "OK:OVER-FUSE\x0a" read "$M2/ro/file"
fusermount3 -u "$M2"
wait "$P2"
check "  ... the second awfs exits cleanly" "0" "$?"
AT_EXIT=""

unmount_awfs

# cache=strict does not watch: a second, as before
mount_beside -o cache=strict
echo STRICT >"$H/ro/file"
expect_soon "cache=strict: a host-side write in a read-only path appears" "OK:STRICT\x0a" read "$M/ro/file"
check "cache=strict: no watch (no inotify instance)" "0" \
	"$(find /proc/"$AWFS_PID"/fd -lname 'anon_inode:inotify' | wc -l)"
unmount_awfs

# the host churns a read-only directory (appends, renames back and forth,
# chmods) while a reader lists, stats and reads it through the mount without
# pause: a moment after the host stops, the mount shows exactly the host's
# names, sizes, modes and bytes (no reply made before a change outlives it)
mount_beside
C=$H/ro/churn
mkdir "$C"
for i in $(seq 90); do echo "$i" >"$C/f$i"; done
churn_host() {
	local end=$((SECONDS + 2))
	while [ $SECONDS -lt $end ]; do
		for i in $(seq 30); do
			echo "$RANDOM" >>"$C/f$i"
			mv "$C/f$((i + 30))" "$C/g$i"
			chmod "6$((RANDOM % 8))$((RANDOM % 8))" "$C/f$((i + 60))"
			mv "$C/g$i" "$C/f$((i + 30))"
		done
	done
}
churn_read() {
	local end=$((SECONDS + 2))
	while [ $SECONDS -lt $end ]; do
		ls -l "$M/ro/churn" >/dev/null 2>&1
		cat "$M/ro/churn"/* >/dev/null 2>&1
	done
}
view() { (cd "$1" && stat -c '%n %s %a' -- * && cat -- *) | md5sum; }
churn_host & ch=$!
churn_read & cr=$!
wait "$ch" "$cr"
within "after a churn read concurrently: the mount shows the host's state" "$(view "$C")" view "$M/ro/churn"
unmount_awfs
rm -rf "$C"

# events lost (the kernel's queue overflowed while awfs could not read it):
# everything read-only the kernel holds is dropped, so the change made among
# the lost events is seen anyway
Q=/proc/sys/fs/inotify/max_queued_events
q0=$(cat "$Q")
AT_EXIT='echo "$q0" >"$Q"'	# a system-wide setting: put back whatever happens
echo 8 >"$Q"	# read when the instance is made: this mount's queue holds 8
mount_beside
echo "$q0" >"$Q"
check "overflow: the system's queue size is put back" "$q0" "$(cat "$Q")"
expect "overflow: read a read-only file (cached)" "OK:STRICT\x0a" read "$M/ro/file"
expect "overflow: read a file below it (cached)" "OK:DEEP1\x0aDEEP2\x0a" read "$M/ro/dir/deep/f"
kill -STOP "$AWFS_PID"
for i in $(seq 20); do touch "$H/ro/dir/t$i"; done
echo LOST >"$H/ro/file"
echo LOST2 >"$H/ro/dir/deep/f"
kill -CONT "$AWFS_PID"
soon "overflow: the rewrite among the lost events is seen" "OK:LOST\x0a" read "$M/ro/file"
soon "overflow: ... and the one below it" "OK:LOST2\x0a" read "$M/ro/dir/deep/f"
check_match "overflow: logged" "the inotify queue overflowed" "$(cat "$LOG")"
unmount_awfs
check "host files as the host left them" "LOST" "$(cat "$H/ro/file")"

# at exit the instance's last close (which waits for the kernel to free the
# watches) is made by a short-lived child holding nothing else: a source on
# its own file system can be unmounted as soon as awfs has exited, and the
# child is gone within a second
TS=$T/tmpfs-src
mkdir -p "$TS"
mount -t tmpfs -o size=4m awfs-test "$TS"
AT_EXIT='umount -l "$TS" 2>/dev/null'
cp -a "$H"/. "$TS"/	# the fixture: the policy's writable targets
mkdir -p "$TS/ro/a/b"
echo TMPFS >"$TS/ro/a/b/f"
SRC=$TS mount_beside
expect "a source on its own tmpfs: read two levels down (watched)" "OK:TMPFS\x0a" read "$M/ro/a/b/f"
check "  ... its directories are watched" "yes" "$([ "$(watches "$AWFS_PID")" -ge 3 ] && echo yes)"
pid=$AWFS_PID
unmount_awfs
check "  ... the source unmounts at once after awfs exits (nothing of it held)" "ok" \
	"$(umount "$TS" 2>&1 && echo ok)"
left() { pgrep -f "$AWFS $M " | wc -l; }
within "  ... and no awfs process is left for this mount" "0" left
check "  ... awfs exited cleanly" "0" "$AWFS_RC"
finish
