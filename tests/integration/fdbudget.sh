#!/usr/bin/env bash
# fdbudget.sh - awfs's own inodes do not spend the open file limit: a daemon
# held to 512 fds takes 5,000 rounds of create, rename, stat, link, unlink
# and directories made, renamed and removed, and still creates and looks up
# afterwards; its fd count stays under the limit throughout. Files callers
# hold open may spend it, and when that reaches a caller as EMFILE, awfs
# says so once in its log.
# Past its mark (5/8 of the limit) the trimmer asks the kernel to drop the
# oldest entries under the names the kernel has them by now (before, the
# first name seen: after a rename it dropped nothing, and from round ~500 on
# every create failed). One process at a time: the trimmer is a thread of
# its own, and eight processes churning at once can still outrun it on a
# loaded machine (issue 16: inodes by file handle, fds reopened on demand).
. "$(dirname "$0")/lib.sh"
require_mount_env
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
LIMIT=512
make_tmp
write_policy 'version = 1;
allow_write = ( { path = "rw"; reason = "the churn"; },
                { path = "rw2"; reason = "a second tree"; } );'
mkdir -p "$SRC/rw" "$SRC/rw2"
chown "$AGENT_UID:$AGENT_UID" "$SRC/rw" "$SRC/rw2"
printf '#!/bin/sh\nulimit -n %s && exec setpriv --bounding-set -sys_resource "%s" "$@"\n' \
	"$LIMIT" "$AWFS" >"$T/awfs-limited"
chmod 755 "$T/awfs-limited"
REAL_AWFS=$AWFS
AWFS=$T/awfs-limited
mount_awfs
AWFS=$REAL_AWFS
check "the daemon's open file limit is $LIMIT" "$LIMIT" \
	"$(awk '/^Max open files/ { print $4 }' "/proc/$AWFS_PID/limits")"
nfds() { ls "/proc/$AWFS_PID/fd" | wc -l; }

# one process, 5,000 rounds: before, the names the trimmer gave the kernel
# were the ones first seen, so after renames it dropped nothing, and from
# round ~500 on every create failed with EMFILE, then every lookup
as_agent mkdir "$MNT/rw/one"
check "5,000 create-and-rename rounds at $LIMIT fds" "OK:5000" "$(aprobe churn "$MNT/rw/one" 5000)"
expect "then a create in the writable tree" "OK" create "$MNT/rw/after"
expect "and in another" "OK" create "$MNT/rw2/after"
check_match "and a lookup" "^OK:type=file" "$(aprobe stat "$MNT/rw/one/file.4999")"

expect "after it, a create" "OK" create "$MNT/rw2/after-churn"
n=$(find "$MNT/rw" "$MNT/rw2" 2>"$T/find.err" | wc -l)
check "a walk of everything made: no error" "" "$(head -3 "$T/find.err")"
check "  ... and it sees what the host has" "$(find "$SRC/rw" "$SRC/rw2" | wc -l)" "$n"
mark=$((LIMIT / 8 * 5))
# held now: the inodes the kernel keeps (the trimmer brings them under the
# mark) and awfs's own few (/dev/fuse, the log, the source, inotify...)
within() { [ "$(nfds)" -le $((mark + 24)) ] && echo yes || echo "no: $(nfds)"; }
poll_check 100 0.1 "with nothing held open, at most the mark ($mark) and a few of its own" "yes" within

# files held open do spend fds (one each for the open, and the inode's):
# past the limit the caller gets EMFILE, and awfs says once what it means
as_agent bash -c 'fail=0; for i in $(seq 400); do exec {fd}>>"$1/held.$i" || fail=$((fail + 1)); done 2>/dev/null
	echo "failed: $fail"' _ "$MNT/rw" >"$T/held" 2>&1
check "400 files held open for writing: some opens fail (EMFILE)" "yes" \
	"$(awk '/^failed:/ { print ($2 > 0) ? "yes" : "no" }' "$T/held")"
check "awfs logs it once, with its limit and what to raise" "1" \
	"$(grep -c "EMFILE (too many open files) reached a caller: awfs's open file limit ($LIMIT) is spent: .* raise the limit awfs starts with" "$LOG")"
expect "once they are closed, a create works again" "OK" create "$MNT/rw/after-held"
unmount_awfs
check "a clean stop" "0" "$AWFS_RC"
finish
