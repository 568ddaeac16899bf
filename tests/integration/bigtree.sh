#!/usr/bin/env bash
# bigtree.sh - a tree of 200,000 entries walked three times by a daemon
# whose open file limit is 4,096: every entry is seen (and stat'ed) each
# time, no lookup fails, the daemon's fds stay below the limit and its RSS
# does not grow from walk to walk. awfs holds an fd for each host inode the
# kernel keeps; past 5/8 of its limit it asks the kernel to drop the least
# recently looked-up files (loop.c), and frees what the kernel forgets.
. "$(dirname "$0")/lib.sh"
require_mount_env
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
# in a sanitizer build, ASan's quarantine would hold freed memory and make RSS
# grow by design; without it RSS means what it does in a normal build
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
N_DIRS=${AWFS_BIGTREE_DIRS:-200}
N_FILES=${AWFS_BIGTREE_FILES:-1000}
LIMIT=${AWFS_BIGTREE_NOFILE:-4096}
total=$((N_DIRS * N_FILES))
make_tmp
write_policy 'version = 1;
allow_write = ( { path = "rw"; reason = "the tree"; } );'
mkdir -p "$SRC/rw"
for d in $(seq "$N_DIRS"); do
	mkdir "$SRC/rw/d$d"
	(cd "$SRC/rw/d$d" && seq "$N_FILES" | sed 's/^/f/' | xargs touch)
done
# the daemon gets LIMIT fds and cannot raise them (no CAP_SYS_RESOURCE)
printf '#!/bin/sh\nulimit -n %s && exec setpriv --bounding-set -sys_resource "%s" "$@"\n' \
	"$LIMIT" "$AWFS" >"$T/awfs-limited"
chmod 755 "$T/awfs-limited"
REAL_AWFS=$AWFS
mount_limited() { AWFS=$T/awfs-limited; mount_awfs; AWFS=$REAL_AWFS; }
mount_limited
check "the daemon's open file limit is $LIMIT" "$LIMIT" \
	"$(awk '/^Max open files/ { print $4 }' "/proc/$AWFS_PID/limits")"
check_match "awfs says what the limit means" "open file limit is $LIMIT; awfs keeps the fds of at most $((LIMIT / 8 * 5)) files and directories" \
	"$(cat "$T/awfs.stderr")"
nfds() { ls "/proc/$AWFS_PID/fd" | wc -l; }
trimmers() { grep -lx awfs-trim /proc/"$AWFS_PID"/task/*/comm 2>/dev/null | wc -l; }
check "no trimmer thread before the mark is passed" "0" "$(trimmers)"
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$AWFS_PID/status"; }
# the largest fd count seen while walking
sample() { local m=0 n; while :; do n=$(nfds); [ "$n" -gt "$m" ] && m=$n && echo "$m" >"$T/maxfds"; sleep 0.1; done; }
# walks LABEL DIR FILES TIMES: find over DIR TIMES times, sampling the fds:
# each walk sees (and stats) FILES files with no error, and the fds stay
# below the limit; sets maxfds and rss1..rssTIMES
walks() {
	local label=$1 dir=$2 want=$3 times=$4 walk n
	echo 0 >"$T/maxfds"
	sample & SAMPLER=$!
	for walk in $(seq "$times"); do
		n=$(find "$dir" -type f -printf '%s\n' 2>"$T/find.err" | wc -l)
		check "${label}walk $walk: all $want files seen and stat'ed" "$want" "$n"
		check "${label}walk $walk: no error" "" "$(head -3 "$T/find.err")"
		eval "rss$walk=$(rss)"
	done
	kill "$SAMPLER"; wait "$SAMPLER" 2>/dev/null
	maxfds=$(cat "$T/maxfds")
	check "${label}the fds stayed below the limit ($maxfds of $LIMIT at most)" "yes" \
		"$([ "$maxfds" -lt "$LIMIT" ] && echo yes)"
}
walks "" "$MNT/rw" "$total" 3
check "the trimmer started when the mark was passed (one thread)" "1" "$(trimmers)"
echo "# $total files walked 3 times with $LIMIT fds: at most $maxfds fds open; RSS after walks 1..3: $rss1 $rss2 $rss3 kB"
check "RSS does not grow from walk 1 to walk 3 (within 10%)" "yes" "$([ "$rss3" -le $((rss1 + rss1 / 10)) ] && echo yes)"
echo 2 >/proc/sys/vm/drop_caches	# the kernel forgets; awfs must let go too
sleep 1
echo "# after the kernel dropped its entries: $(nfds) fds, $(rss) kB"
check "the fds go when the kernel forgets the inodes" "yes" "$([ "$(nfds)" -lt 1000 ] && echo yes)"
check_match "a file is still served" "^OK:type=file" "$(aprobe stat "$MNT/rw/d1/f1")"
unmount_awfs
check "a clean stop" "0" "$AWFS_RC"

# directories hold fds too, and are never dropped (that would drop their
# whole subtree): they count in the same budget, so files go sooner. 3,000
# directories of 2 files each with 4,096 fds: with only files counted, the
# walk failed with EMFILE
rm -rf "$SRC/rw"
mkdir -p "$SRC/rw/many"
(cd "$SRC/rw/many" && seq 3000 | sed 's/^/d/' | xargs mkdir && for d in d*; do : >"$d/a"; : >"$d/b"; done)
mount_limited
walks "many directories: " "$MNT/rw/many" 6000 2
echo "# 3000 directories and 6000 files walked twice with $LIMIT fds: at most $maxfds fds open"
check_match "many directories: awfs says the directories alone pass its budget" \
	"directories.*more than" "$(cat "$LOG")"
unmount_awfs
check "many directories: a clean stop" "0" "$AWFS_RC"
finish
