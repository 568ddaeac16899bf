#!/usr/bin/env bash
# bigtree.sh - a tree of 200,000 entries walked three times: every entry is
# seen each time and the daemon's RSS does not grow from walk to walk (the
# inode table frees what the kernel forgets). awfs holds an fd for each inode
# the kernel keeps, so this needs an open file limit above the tree's size;
# where the hard limit cannot be raised that far it reports itself skipped.
. "$(dirname "$0")/lib.sh"
require_mount_env
# in a sanitizer build, ASan's quarantine would hold freed memory and make RSS
# grow by design; without it RSS means what it does in a normal build
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
N_DIRS=${AWFS_BIGTREE_DIRS:-200}
N_FILES=${AWFS_BIGTREE_FILES:-1000}
total=$((N_DIRS * N_FILES))
need=$((total + total / 4))
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt "$need" ]; then
	ulimit -Hn "$need" 2>/dev/null || skip "the open file limit is $hard and cannot be raised to $need here (a $total-entry walk keeps that many inodes cached, each an fd in awfs)"
fi
ulimit -Sn "$(ulimit -Hn)"
make_tmp
write_policy 'version = 1;
allow_write = ( { path = "rw"; reason = "the tree"; } );'
mkdir -p "$SRC/rw"
for d in $(seq "$N_DIRS"); do
	mkdir "$SRC/rw/d$d"
	(cd "$SRC/rw/d$d" && seq "$N_FILES" | sed 's/^/f/' | xargs touch)
done
mount_awfs
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$AWFS_PID/status"; }
for walk in 1 2 3; do
	n=$(find "$MNT/rw" -type f | wc -l)
	check "walk $walk: all $total files seen" "$total" "$n"
	eval "rss$walk=$(rss)"
	echo 2 >/proc/sys/vm/drop_caches	# the kernel forgets; awfs must let go too
	sleep 1
done
echo "# RSS after walks 1..3: $rss1 $rss2 $rss3 kB; after the last drop: $(rss) kB, $(ls /proc/$AWFS_PID/fd | wc -l) fds"
check "RSS does not grow from walk 1 to walk 3 (within 10%)" "yes" "$([ "$rss3" -le $((rss1 + rss1 / 10)) ] && echo yes)"
check "the fds go when the kernel forgets the inodes" "yes" "$([ "$(ls /proc/$AWFS_PID/fd | wc -l)" -lt 1000 ] && echo yes)"
unmount_awfs
finish
