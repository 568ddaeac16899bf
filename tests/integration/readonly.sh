#!/usr/bin/env bash
# readonly.sh - read-only paths read like the host and refuse every write
# with EROFS (logged); the host's own modes still refuse with EACCES.
. "$(dirname "$0")/lib.sh"
require_mount_env
setup_fixture
mount_awfs

F="$MNT/ro/file"
expect "read a read-only file" "OK:RODATA\x0a" read "$F"
expect "list a read-only dir" "OK:dir,file,hidden,link-out,link-to-secret" readdir "$MNT/ro"
check_match "stat shows the host's owner and mode" "^OK:type=file mode=0644 uid=$AGENT_UID gid=$AGENT_UID size=7 nlink=1 " "$(aprobe stat "$F")"
expect "readlink of a host symlink" "OK:secret/data" readlink "$MNT/ro/link-to-secret"
# xattrs are off by default (one round trip less per write); -o xattr turns them on
expect "getxattr: off by default" "EOPNOTSUPP" getxattr "$F" user.tag
expect "listxattr: off by default" "EOPNOTSUPP" listxattr "$F"
expect "setxattr in a writable path with xattrs off: EOPNOTSUPP" "EOPNOTSUPP" setxattr "$MNT/rw/file" user.k v
expect "fsync of a read-only open" "OK" fsync "$F"
expect "POSIX lock needs a writable open" "EROFS" lock "$F"
expect "flock on a read-only file" "OK" flock "$F"
expect "statfs" "OK" statfs "$F"
expect "seek-data" "OK:0" seek-data "$F" 0

for mode in w rw a rt wt; do
	expect "open($mode) of a read-only file" "EROFS" open "$F" "$mode"
done
expect "write (O_TRUNC) a read-only file" "EROFS" write "$F" x
expect "append to a read-only file" "EROFS" append "$F" x
expect "truncate" "EROFS" truncate "$F" 0
expect "chmod by the owner" "EROFS" chmod "$F" 600
expect "chown to oneself" "EROFS" chown "$F" "$AGENT_UID" "$AGENT_UID"
expect "utimens" "EROFS" utimens "$F" 1000
expect "utime-now" "EROFS" utime-now "$F"
expect "setxattr" "EROFS" setxattr "$F" user.new v
expect "removexattr" "EROFS" removexattr "$F" user.tag
expect "mmap(MAP_SHARED, PROT_WRITE) of a read-only open" "EACCES" mmap-write "$F"
expect "create in a read-only dir" "EROFS" create "$MNT/ro/new"
expect "O_CREAT of an existing read-only file for reading" "OK" open "$F" rc
expect "mkdir" "EROFS" mkdir "$MNT/ro/d"
expect "mkfifo" "EROFS" mkfifo "$MNT/ro/fifo"
expect "symlink" "EROFS" symlink target "$MNT/ro/s"
expect "link within the read-only dir" "EROFS" link "$F" "$MNT/ro/l"
expect "unlink" "EROFS" unlink "$F"
expect "rmdir" "EROFS" rmdir "$MNT/ro/dir"
expect "rename within the read-only dir" "EROFS" rename "$F" "$MNT/ro/f2"
expect "rename-noreplace" "EROFS" rename-noreplace "$F" "$MNT/ro/f3"
expect "rename-exchange" "EROFS" rename-exchange "$F" "$MNT/ro/dir"
check "chmod of the read-only dir by root" "EROFS" "$(probe chmod "$MNT/ro" 700)"

# the root and unclassified entries are read-only too
expect "create at the root" "EROFS" create "$MNT/newtop"
expect "write an unclassified file" "EROFS" write "$MNT/rootfile" x
expect "read an unclassified file" "OK:ROOTFILE\x0a" read "$MNT/rootfile"
# a nested read-only rule inside a writable dir
expect "write into rw/.git" "EROFS" write "$MNT/rw/.git/config" x
expect "create in rw/.git" "EROFS" create "$MNT/rw/.git/hooks"
expect "remove rw/.git" "EROFS" rmdir "$MNT/rw/.git"
# ordinary permissions are not the policy's business: EACCES, as without awfs
expect "write a root-owned 0644 file: EACCES" "EACCES" write "$MNT/restricted/r" x
expect "create in a root-owned 0755 dir: EACCES" "EACCES" create "$MNT/restricted/x"

L=$(cat "$LOG")
check_match "denial log: op, path, caller, rule, reason, hint" \
	"denied open\(O_WRONLY\) for pid [0-9]+ \(\"awfs-probe\"\) uid $AGENT_UID gid $AGENT_UID by read_only rule \"ro\" \([^)]*policy.conf:19\); EROFS: \"$F\": it is read-only by read_only rule \"ro\" \([^)]*policy.conf:19: exemption: must stay readable\)\. Writable paths: $MNT/rw, $MNT/made, $MNT/mem-\*" "$L"
check_match "denial at the root names the root default" \
	"denied create for pid [0-9]+ \(\"awfs-probe\"\) uid $AGENT_UID gid $AGENT_UID by the root default \(read-only\); EROFS: \"$MNT/newtop\": its directory \"$MNT\" is read-only: no rule makes it writable\." "$L"
check_match "denial of an unclassified entry says so" \
	"denied open\(O_WRONLY\|O_TRUNC\) for .* by unclassified = \"warn\"; EROFS: \"$MNT/rootfile\": it is read-only: unclassified \(its top-level entry is named by no rule; unclassified = \"warn\"\)" "$L"
check_match "denial inside a nested read-only rule" \
	"denied create for .*; EROFS: \"$MNT/rw/.git/hooks\": its directory \"$MNT/rw/.git\" is read-only by read_only rule \"rw/.git\"" "$L"
check "EACCES is not logged as a policy denial" "0" "$(grep -c 'restricted/' "$LOG" | grep -v unclassified || true)"
check "the unclassified entry was logged once" "1" "$(grep -c 'unclassified top-level entry .*/rootfile' "$LOG")"
check "a name below an unclassified dir is not logged as top-level" "0" "$(grep -c 'unclassified top-level entry .*/\(r\|x\):' "$LOG")"

unmount_awfs
check_match "the unmount summary names the mount root \".\" (the create of newtop)" \
	"unmounting $MNT: [0-9]+ writes denied \(by operation: .*; by path: (.*, )?\. [0-9]+" "$(cat "$LOG")"
check "host files unchanged" "RODATA GITCFG ROOTFILE RESTRICTED" \
	"$(cat "$SRC/ro/file" "$SRC/rw/.git/config" "$SRC/rootfile" "$SRC/restricted/r" | tr '\n' ' ' | sed 's/ $//')"
check "nothing created in read-only dirs" "dir file hidden link-out link-to-secret" "$(ls "$SRC/ro" | tr '\n' ' ' | sed 's/ $//')"
check "host xattr untouched" "hostvalue" "$(getfattr --only-values -n user.tag "$SRC/ro/file" 2>/dev/null)"
finish
