#!/usr/bin/env bash
# writable.sh - allow_write paths behave like the host directory: every
# operation passes through, bytes and ownership land on the host.
. "$(dirname "$0")/lib.sh"
require_mount_env
setup_fixture
mount_beside -o xattr
W="$MNT/rw"
H="$SRC/rw"
u=$AGENT_UID

expect "create and write" "OK" write "$W/new" hello
check "bytes on the host" "hello" "$(cat "$H/new")"
check "owned by the caller on the host" "$u:$u" "$(stat -c %u:%g "$H/new")"
expect "append" "OK" append "$W/new" " world"
check "appended on the host" "hello world" "$(cat "$H/new")"
expect "read back" "OK:hello world" read "$W/new"
expect "O_CREAT|O_EXCL on an existing file" "EEXIST" create "$W/new"
expect "mkdir" "OK" mkdir "$W/d"
check "directory owned by the caller" "$u:$u" "$(stat -c %u:%g "$H/d")"
expect "create in the new dir" "OK" write "$W/d/f" x
expect "rmdir a non-empty dir" "ENOTEMPTY" rmdir "$W/d"
expect "unlink" "OK" unlink "$W/d/f"
expect "rmdir" "OK" rmdir "$W/d"
check "gone on the host" "no" "$([ -e "$H/d" ] && echo yes || echo no)"
expect "mkfifo" "OK" mkfifo "$W/fifo"
check "fifo on the host" "fifo" "$(stat -c %F "$H/fifo")"
expect "symlink" "OK" symlink some/target "$W/sym"
expect "readlink" "OK:some/target" readlink "$W/sym"
check "symlink owned by the caller" "$u:$u" "$(stat -c %u:%g "$H/sym")"
expect "hard link" "OK" link "$W/new" "$W/hard"
check_match "link count right after link" "nlink=2 " "$(aprobe stat "$W/new")"
expect "unlink one name" "OK" unlink "$W/hard"
check_match "link count right after unlink" "nlink=1 " "$(aprobe stat "$W/new")"
expect "rename" "OK" rename "$W/new" "$W/renamed"
check "renamed on the host" "hello world" "$(cat "$H/renamed")"
expect "rename-noreplace over an existing file" "EEXIST" rename-noreplace "$W/renamed" "$W/file"
expect "rename-exchange" "OK" rename-exchange "$W/renamed" "$W/file"
check "exchanged on the host" "RWDATA|hello world" "$(cat "$H/renamed")|$(cat "$H/file")"
expect "rename over an existing file" "OK" rename "$W/renamed" "$W/file"
check "replaced on the host" "RWDATA" "$(cat "$H/file")"
expect "chmod" "OK" chmod "$W/file" 600
check "mode on the host" "600" "$(stat -c %a "$H/file")"
expect "truncate" "OK" truncate "$W/file" 3
check "size on the host" "3" "$(stat -c %s "$H/file")"
expect "utimens (UTIME_OMIT atime)" "OK" utimens "$W/file" 1000000
check "mtime on the host" "1000000" "$(stat -c %Y "$H/file")"
expect "utime-now" "OK" utime-now "$W/file"
check "mtime now" "recent" "$([ $(( $(date +%s) - $(stat -c %Y "$H/file") )) -lt 60 ] && echo recent)"
expect "chown to oneself" "OK" chown "$W/file" "$u" "$u"
expect "chown to another uid: EPERM (ordinary permissions)" "EPERM" chown "$W/file" 0 0
expect "setxattr" "OK" setxattr "$W/file" user.k v1
expect "getxattr" "OK:v1" getxattr "$W/file" user.k
expect "listxattr" "OK:user.k" listxattr "$W/file"
check "xattr on the host" "v1" "$(getfattr --only-values -n user.k "$H/file" 2>/dev/null)"
expect "removexattr" "OK" removexattr "$W/file" user.k
expect "getxattr after removal" "ENODATA" getxattr "$W/file" user.k
expect "fallocate" "OK" fallocate "$W/file" 8192
check "allocated on the host" "8192" "$(stat -c %s "$H/file")"
expect "copy_file_range" "OK:8192" copy "$W/file" "$W/copy"
check "copied bytes equal" "same" "$(cmp -s "$H/file" "$H/copy" && echo same)"
expect "fsync" "OK" fsync "$W/file"
expect "POSIX lock" "OK" lock "$W/file"
expect "flock" "OK" flock "$W/file"
truncate -s 1M "$H/sparse"; printf x >>"$H/sparse"
expect "SEEK_DATA skips the hole" "OK:1048576" seek-data "$W/sparse" 0
expect "SEEK_HOLE at the start" "OK:0" seek-hole "$W/sparse" 0
expect "mmap(MAP_SHARED, PROT_WRITE) of a read-only open" "EACCES" mmap-write "$W/file"
n255=$(printf 'n%.0s' $(seq 255))
expect "a 255-byte name" "OK" write "$W/$n255" x
expect "a 256-byte name" "ENAMETOOLONG" write "$W/${n255}n" x
p="$W"; for _ in $(seq 20); do p="$p/dddddddddddddddddddddddddddddddddddddddddddddddd"; done
as_agent mkdir -p "$p"
expect "a deep path (~1000 bytes)" "OK" write "$p/f" x
check "statfs" "OK" "$(aprobe statfs "$W")"
expect "glob allow_write (mem-*)" "OK" write "$MNT/mem-a/new" m
expect "create = true made the directory" "OK" write "$MNT/made/x" m
check "made is owned like the source root" "$u:$u" "$(stat -c %u:%g "$SRC/made")"
check "root's files are root's" "0:0" "$(probe write "$W/byroot" r >/dev/null; stat -c %u:%g "$H/byroot")"
# the writable path itself belongs to its read-only parent
expect "rmdir the allow_write dir itself" "EROFS" rmdir "$W"
expect "rename the allow_write dir itself" "EROFS" rename "$W" "$MNT/mem-b"
# the host may change read-only paths under the agent: seen within a second
R="$MNT/ro"
echo late >"$SRC/ro/late"
expect_soon "a file created on the host appears" "OK:late\x0a" read "$R/late"
echo changed >"$SRC/ro/late"
expect_soon "a host-side rewrite is visible" "OK:changed\x0a" read "$R/late"
rm "$SRC/ro/late"
expect_soon "a host-side unlink is visible" "ENOENT" stat "$R/late"
# OPEN goes by the name the file was found by when that name still holds it,
# else through the pinned fd: never to whatever holds the name now
as_agent sh -c "echo one >$W/swap; echo one >$W/swapf; echo one >$W/swaps; echo one >$W/moved"
for f in swap swapf swaps moved; do aprobe stat "$W/$f" >/dev/null; done
mv "$H/swap" "$H/swap.old"; echo two >"$H/swap"
mv "$H/swapf" "$H/swapf.old"; mkfifo "$H/swapf"
mv "$H/swaps" "$H/swaps.old"; ln -s swap "$H/swaps"
check "a file renamed on the host after lookup: the pinned one opens" "OK:one\x0a" "$(aprobe read "$W/swap")"
check "  ... a fifo put at its name is not waited on" "OK:one\x0a" "$(timeout 10 setpriv --reuid="$AGENT_UID" --regid="$AGENT_UID" --clear-groups "$AWFS_PROBE" read "$W/swapf")"
check "  ... a symlink put at its name is not followed" "OK:one\x0a" "$(aprobe read "$W/swaps")"
expect "rename through awfs" "OK" rename "$W/moved" "$W/moved2"
as_agent sh -c "echo new >$W/moved"
check "  ... the renamed file opens under its new name" "OK:one\x0a" "$(aprobe read "$W/moved2")"
check "  ... and a new file under the old name is itself" "OK:new\x0a" "$(aprobe read "$W/moved")"
# plain read-only opens share the inode's own fd: closing one keeps the others
as_agent sh -c "echo shared >$W/sh"
exec 7<"$W/sh" 8<"$W/sh"
exec 7<&-
exec 9>>"$W/other"	# a new handle in awfs, on the lowest free fd number
sync; echo 1 >/proc/sys/vm/drop_caches	# so that the next read reaches awfs
check "read through one of two read-only opens after the other closed" "shared" "$(cat <&8)"
exec 9>&-
expect "  ... a write open of that file" "OK" write "$W/sh" rewritten
echo 1 >/proc/sys/vm/drop_caches
check "  ... read-only opens see what it wrote" "OK:rewritten" "$(aprobe read "$W/sh")"
exec 7<"$W/sh"
rm "$H/sh"
echo 1 >/proc/sys/vm/drop_caches
check "  ... and a file removed on the host while open" "rewritten" "$(cat <&7)"
exec 7<&- 8<&-
# listings carry no handle (no OPENDIR): two at once never mix
as_agent mkdir "$W/many"
as_agent sh -c "cd $W/many && seq -f 'entry-with-a-longish-name-%04g' 1000 | xargs touch"
# (A, started before the change, may or may not show the name made during
# it, as readdir(3) allows; nothing is shown twice or missed)
check_match "two listings at once, the directory changed between" "^OK:A=100[23] twice=0 missed=0 B=1002 twice=0$" \
	"$(aprobe readdir-two "$W/many")"
check "  ... and a listing after them: 1000 names, the one made among them" "1000 1" \
	"$(aprobe readdir "$W/many" | tr ',' '\n' | awk '/zz-made/ { m++ } END { print NR, m }')"
# O_DIRECT: as on the host (aligned writes and reads pass; what the host's
# file system cannot take directly fails there too)
odirect() {	# odirect DIR: "aligned-write aligned-read unaligned-write" outcomes
	local a r u
	as_agent dd if=/dev/zero of="$1/direct-$2" bs=4096 count=8 oflag=direct status=none 2>/dev/null && a=ok || a=fail
	as_agent dd if="$1/direct-$2" of=/dev/null bs=4096 iflag=direct status=none 2>/dev/null && r=ok || r=fail
	as_agent dd if=/dev/zero of="$1/odd-$2" bs=100 count=1 oflag=direct status=none 2>/dev/null && u=ok || u=fail
	echo "$a $r $u"
}
native=$(odirect "$H" native)
check "O_DIRECT writes and reads behave as on the host ($native natively)" "$native" "$(odirect "$W" awfs)"
check "  ... and the data is there" "32768" "$(stat -c %s "$H/direct-awfs" 2>/dev/null)"
check "no denial was logged for allowed work" "0" "$(grep -c 'denied .* /.*/rw/\(new\|file\|d\|fifo\|sym\)' "$LOG")"
unmount_awfs
# writable paths are the agent's while mounted (kept an hour); cache=strict
# is for a host that writes there too: seen within a second
mount_beside -o cache=strict
echo hostwrite >"$H/late"
expect_soon "cache=strict: a host-side write in a writable path appears" "OK:hostwrite\x0a" read "$W/late"
echo again >"$H/late"
expect_soon "cache=strict: a host-side rewrite there is visible" "OK:again\x0a" read "$W/late"
finish
