#!/usr/bin/env bash
# fdbudget.sh - awfs's own inodes do not spend the open file limit. A
# daemon held to 512 fds refers to the inodes the kernel keeps by their
# file handles and keeps at most fd_cache (5/8 of the limit) of their fds
# open (inode.c): it takes 5,000 rounds of create, rename, stat, link,
# unlink and directories made, renamed and removed, then eight processes
# doing the same at once, and still creates and looks up afterwards; its fd
# count stays at the cache plus its own few, whatever the load, and no
# trimmer is ever needed. Files callers hold open may spend the limit, and
# when that reaches a caller as EMFILE, awfs says so once in its log.
# Without CAP_DAC_READ_SEARCH awfs cannot open handles, and on a FUSE
# source (virtiofs in a guest) it does not trust them: it says so at mount
# and keeps an fd per inode, as before (the trimmer asks the kernel to drop
# files; a walk can outrun it, so only what does not depend on timing is
# checked there).
. "$(dirname "$0")/lib.sh"
require_mount_env
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
LIMIT=512
CACHE=$((LIMIT / 8 * 5))
OWN=32	# /dev/fuse, the log, the source, the mount table's, inotify, stdio...
make_tmp
write_policy 'version = 1;
allow_write = ( { path = "rw"; reason = "the churn"; },
                { path = "rw2"; reason = "a second tree"; } );'
mkdir -p "$SRC/rw" "$SRC/rw2" "$SRC/ro/sub" "$SRC/ro/many"
chown "$AGENT_UID:$AGENT_UID" "$SRC/rw" "$SRC/rw2"
echo x >"$SRC/ro/sub/file"
chown "$AGENT_UID:$AGENT_UID" "$SRC/ro/sub/file"
(cd "$SRC/ro/many" && seq 600 | sed 's/^/f/' | xargs touch)
# limited AWFS_PATH CAPS: a wrapper that starts awfs with LIMIT fds and
# without the capabilities CAPS (a comma list for setpriv --bounding-set)
limited() {
	printf '#!/bin/sh\nulimit -n %s && exec setpriv --bounding-set %s "%s" "$@"\n' \
		"$LIMIT" "$2" "$AWFS" >"$1"
	chmod 755 "$1"
}
limited "$T/awfs-limited" -sys_resource
limited "$T/awfs-nohandles" -sys_resource,-dac_read_search
REAL_AWFS=$AWFS
AWFS=$T/awfs-limited
mount_awfs
AWFS=$REAL_AWFS
check "the daemon's open file limit is $LIMIT" "$LIMIT" \
	"$(awk '/^Max open files/ { print $4 }' "/proc/$AWFS_PID/limits")"
check "file handles are used (nothing said against them)" "" "$(grep 'no file handles' "$LOG")"
nfds() { ls "/proc/$AWFS_PID/fd" | wc -l; }
trimmers() { grep -lx awfs-trim /proc/"$AWFS_PID"/task/*/comm 2>/dev/null | wc -l; }
# the largest fd count seen while sampling (sample & ... kill)
sample() { local m=0 n; while :; do n=$(nfds); [ "$n" -gt "$m" ] && m=$n && echo "$m" >"$T/maxfds"; sleep 0.05; done; }
start_sampling() { echo 0 >"$T/maxfds"; sample & SAMPLER=$!; }
stop_sampling() { kill "$SAMPLER"; wait "$SAMPLER" 2>/dev/null; cat "$T/maxfds"; }
bounded() { [ "$1" -le $((CACHE + OWN)) ] && echo yes || echo "no: $1 (cache $CACHE + $OWN)"; }

# one process, 5,000 rounds: before handles, past the mark every create
# failed once the trimmer fell behind (and, before its names followed
# renames, from round ~500 on, then every lookup)
as_agent mkdir "$MNT/rw/one"
start_sampling
check "5,000 create-and-rename rounds at $LIMIT fds" "OK:5000" "$(aprobe churn "$MNT/rw/one" 5000)"
expect "then a create in the writable tree" "OK" create "$MNT/rw/after"
expect "and in another" "OK" create "$MNT/rw2/after"
check_match "and a lookup" "^OK:type=file" "$(aprobe stat "$MNT/rw/one/file.4999")"
check "the fds stayed at the cache and a few of awfs's own" "yes" "$(bounded "$(stop_sampling)")"

# eight processes at once, the way fsstress churns: the same bound, no
# error, however the scheduler orders them
start_sampling
pids=""
for p in $(seq 8); do
	as_agent mkdir "$MNT/rw2/p$p"
	aprobe churn "$MNT/rw2/p$p" 1000 >"$T/churn.$p" 2>&1 &
	pids="$pids $!"
done
wait $pids
res=""
for p in $(seq 8); do res="$res$(cat "$T/churn.$p") "; done
check "eight processes churning at once: 1,000 rounds each, no error" \
	"OK:1000 OK:1000 OK:1000 OK:1000 OK:1000 OK:1000 OK:1000 OK:1000 " "$res"
check "the fds stayed at the cache and a few of awfs's own" "yes" "$(bounded "$(stop_sampling)")"
check "no trimmer was needed (nothing is dropped for fds)" "0" "$(trimmers)"

expect "after it, a create" "OK" create "$MNT/rw2/after-churn"
n=$(find "$MNT/rw" "$MNT/rw2" 2>"$T/find.err" | wc -l)
check "a walk of everything made: no error" "" "$(head -3 "$T/find.err")"
check "  ... and it sees what the host has" "$(find "$SRC/rw" "$SRC/rw2" | wc -l)" "$n"
check "with nothing held open: the cache ($CACHE) and a few of awfs's own" "yes" "$(bounded "$(nfds)")"

# files held open do spend fds (one each for the open, and the inode's,
# kept open with it): past the limit the caller gets EMFILE, and awfs says
# once what it means. Lookups do not fail meanwhile: the cache gives way,
# and an open that would take the fds lookups need is refused instead
as_agent bash -c 'fail=0; for i in $(seq 400); do exec {fd}>>"$1/held.$i" || fail=$((fail + 1)); done 2>/dev/null
	echo "failed: $fail"
	echo "walk: $(find "$1" "$2" -printf "%s\n" 2>&1 | grep -c "Too many")"
	echo "stat: $(for i in $(seq 0 99); do stat -c %s "$1/one/file.$((i * 50))" 2>&1; done | grep -c "Too many")"' \
	_ "$MNT/rw" "$MNT/rw2" >"$T/held" 2>&1
check "400 files held open for writing: some opens fail (EMFILE)" "yes" \
	"$(awk '/^failed:/ { print ($2 > 0) ? "yes" : "no" }' "$T/held")"
check "while they are held, a walk of everything: no EMFILE" "walk: 0" "$(grep '^walk:' "$T/held")"
check "  ... and 100 stats: no EMFILE" "stat: 0" "$(grep '^stat:' "$T/held")"
check "awfs logs it once, with its limit, its counts and what to raise" "1" \
	"$(grep -c "EMFILE (too many open files) reached a caller: awfs's open file limit ($LIMIT) is spent: [0-9]* fds for the files callers hold open (each has one of its own and its inode's, a plain read-only open only its inode's), [0-9]* for the inodes awfs keeps; raise the limit awfs starts with" "$LOG")"
expect "once they are closed, a create works again" "OK" create "$MNT/rw/after-held"
check "and the fds are back at the cache and a few" "yes" "$(bounded "$(nfds)")"

# a refusal names the path even when the file's fd was opened again from
# its handle with the kernel's dentry gone (/proc shows such an fd as "/"):
# the agent holds an O_PATH fd (the kernel keeps the inode), the cache
# closes awfs's fd, the host's dentries are dropped, then a chmod through it
rm -f "$T/go"
as_agent "$AWFS_PROBE" held-chmod "$MNT/ro/sub/file" 600 "$T/go" >"$T/held-chmod" 2>"$T/held-chmod.err" &
HELD=$!
poll_check 300 0.1 "an O_PATH fd held on a read-only file" "held" cat "$T/held-chmod.err"
find "$MNT/ro/many" -type f -printf '%s\n' >/dev/null
echo 2 >/proc/sys/vm/drop_caches
touch "$T/go"
wait "$HELD"
check "then a chmod through it is refused" "EROFS" "$(cat "$T/held-chmod")"
check_match "and the denial names its path, not \"/\"" "denied chmod .*EROFS: \"$MNT/ro/sub/file\"" \
	"$(grep 'denied chmod' "$LOG")"
unmount_awfs
check "a clean stop" "0" "$AWFS_RC"

# no CAP_DAC_READ_SEARCH: no handles; said at mount, with what it means
AWFS=$T/awfs-nohandles
mount_awfs
AWFS=$REAL_AWFS
check_match "without CAP_DAC_READ_SEARCH awfs says it cannot use file handles, and what that costs" \
	"the source gives no file handles awfs can open \(no CAP_DAC_READ_SEARCH to open file handles\): awfs keeps an fd for each file and directory the kernel caches" \
	"$(cat "$LOG")"
expect "a create works" "OK" create "$MNT/rw/nohandles"
check_match "and a lookup" "^OK:type=file" "$(aprobe stat "$MNT/rw/one/file.4999")"
# awfs over this (FUSE) mount: handles of a FUSE file system are not used
mkdir "$T/outer"
"$AWFS" "$T/outer" --source "$MNT" --policy "$POLICY" -f --log "$T/outer.log" 2>"$T/outer.err" &
OUTER=$!
poll_check 300 0.1 "awfs over a FUSE source mounts" "yes" \
	bash -c "grep -q ' $T/outer fuse' /proc/mounts && echo yes"
check_match "and says it does not use its file handles, and why" \
	"no file handles awfs can open \(a FUSE file system, virtiofs say, need not open a handle once it has dropped the inode\)" \
	"$(cat "$T/outer.log")"
check_match "it serves" "^OK:type=file" "$(aprobe stat "$T/outer/rw/one/file.4999")"
kill -TERM "$OUTER"
wait "$OUTER"
check "it stops cleanly" "0" "$?"
echo 2 >/proc/sys/vm/drop_caches	# the kernel forgets: awfs lets go of the fds too
poll_check 100 0.1 "when the kernel forgets its inodes, their fds are closed" "yes" \
	bash -c "[ \$(ls /proc/$AWFS_PID/fd | wc -l) -le $OWN ] && echo yes"
unmount_awfs
check "a clean stop" "0" "$AWFS_RC"
finish
