#!/usr/bin/env bash
# mask.sh - masked paths are empty, synthetic and unreachable by every means.
. "$(dirname "$0")/lib.sh"
require_mount_env
setup_fixture
host_ino=$(stat -c %i "$SRC/secret")
# a long listing: past its first page the kernel asks READDIR, not
# READDIRPLUS, and the d_ino there is what awfs puts in the entry itself;
# 20 masked files among 600 others, so that some are past the first page
mkdir "$SRC/rw/many" && (cd "$SRC/rw/many" && touch $(seq -f 'f%04g' 1 600) $(seq -f 'k%02g.pem' 1 20)) &&
	chown -R "$AGENT_UID" "$SRC/rw/many"
PEM_RULE='  { path = "rw/many/*.pem"; reason = "masked files in a long listing"; }'
write_policy "${FIXTURE_POLICY/\"mask inside a writable tree\"; \}/\"mask inside a writable tree\"; \},
$PEM_RULE}"
mount_awfs -o xattr

expect "root listing shows masks, absent ones too" \
	"OK:.awfs,ghost,made,mem-a,restricted,ro,rootfile,rw,secret,server.pem,top.key" readdir "$MNT"
expect "masked dir is empty" "OK" readdir "$MNT/secret"
got=$(aprobe stat "$MNT/secret")
check_match "masked dir: root, 01777, size 0, epoch" '^OK:type=dir mode=1777 uid=0 gid=0 size=0 nlink=2 ino=[0-9]+ mtime=0$' "$got"
ino=$(printf '%s' "$got" | sed -n 's/.* ino=\([0-9]*\).*/\1/p')
check "masked dir does not show the host inode number" "different" "$([ "$ino" != "$host_ino" ] && echo different)"
check "masked inode number is stable" "$got" "$(aprobe stat "$MNT/secret")"
# a listing's d_ino is the mask's number too, never the host's
check "a long listing gives its 20 masked files their synthetic inode numbers (those stat shows), not the host's" 20 \
	"$(as_agent /usr/bin/python3 -c 'import os, sys
d = sys.argv[1]
ls = [(e.name, e.inode()) for e in os.scandir(d)]	# whole first: a lookup makes the next page READDIRPLUS
print(sum(1 for n, i in ls if n.endswith(".pem") and i == os.lstat(os.path.join(d, n)).st_ino and i >= 1 << 40))' \
	"$MNT/rw/many" 2>&1)"
check "a listing gives the masked directory its synthetic inode number, not the host's" "$ino" \
	"$(as_agent /usr/bin/python3 -c 'import os, sys; print([e.inode() for e in os.scandir(sys.argv[1]) if e.name == "secret"][0])' "$MNT" 2>&1)"
expect "content below a mask: ENOENT" "ENOENT" read "$MNT/secret/data"
expect "subdirectory below a mask: ENOENT" "ENOENT" stat "$MNT/secret/sub"
expect "deep path below a mask: ENOENT" "ENOENT" read "$MNT/secret/sub/deep"
check_match "masked file: empty, root, 0666, epoch" '^OK:type=file mode=0666 uid=0 gid=0 size=0 nlink=1 ino=[0-9]+ mtime=0$' "$(aprobe stat "$MNT/top.key")"
expect "masked file reads empty" "OK" read "$MNT/top.key"
expect "glob mask on a file" "OK" read "$MNT/server.pem"
check_match "mask absent on the host appears as an empty dir" '^OK:type=dir mode=1777 uid=0 gid=0 size=0' "$(aprobe stat "$MNT/ghost")"
expect "glob mask shows only what exists" "ENOENT" stat "$MNT/absent.pem"
expect "nested mask in a read-only dir is empty" "OK" readdir "$MNT/ro/hidden"
expect "nested mask content unreachable" "ENOENT" read "$MNT/ro/hidden/x"
expect "mask inside a writable dir is empty" "OK" readdir "$MNT/rw/masked"
expect "mask inside a writable dir: content unreachable" "ENOENT" read "$MNT/rw/masked/m"
expect "masked dir has no xattrs" "ENODATA" getxattr "$MNT/secret" user.tag
expect "masked dir lists no xattrs" "OK" listxattr "$MNT/secret"
expect "symlink into the mask leads nowhere" "ENOENT" read "$MNT/ro/link-to-secret"
expect ".. from a writable dir into the mask" "ENOENT" read "$MNT/rw/../secret/data"
expect ".. chain into the mask" "ENOENT" read "$MNT/ro/dir/../../secret/sub/deep"
expect "agent symlink pointing into the mask (absolute)" "OK" symlink "$MNT/secret/data" "$MNT/rw/abs-link"
expect "  ... reads nothing" "ENOENT" read "$MNT/rw/abs-link"
expect "agent symlink pointing into the mask (relative)" "OK" symlink "../secret" "$MNT/rw/rel-link"
expect "  ... lists nothing" "OK" readdir "$MNT/rw/rel-link/"
expect "  ... reads nothing" "ENOENT" read "$MNT/rw/rel-link/data"

# every write to a mask is refused with EROFS
expect "create inside a mask" "EROFS" create "$MNT/secret/new"
expect "mkdir inside a mask" "EROFS" mkdir "$MNT/secret/d"
expect "mkfifo inside a mask" "EROFS" mkfifo "$MNT/secret/f"
expect "symlink inside a mask" "EROFS" symlink x "$MNT/secret/s"
expect "open a masked file for writing" "EROFS" open "$MNT/top.key" w
expect "open a masked file with O_TRUNC" "EROFS" open "$MNT/top.key" rt
expect "truncate a masked file" "EROFS" truncate "$MNT/top.key" 0
expect "utime-now on a masked file" "EROFS" utime-now "$MNT/top.key"
expect "unlink a mask" "EROFS" unlink "$MNT/top.key"
expect "rmdir a mask" "EROFS" rmdir "$MNT/secret"
expect "rename a mask away" "EROFS" rename "$MNT/secret" "$MNT/rw/stolen"
expect "hard link to a masked file" "EROFS" link "$MNT/top.key" "$MNT/rw/k"
expect "rename a writable file into a mask" "EROFS" rename "$MNT/rw/file" "$MNT/secret/file"
expect "create a mask inside a writable dir" "EROFS" mkdir "$MNT/rw/masked/x"
# owner-only operations on a root-owned mask: the kernel says EPERM first
expect "chmod of a mask by the agent: ordinary EPERM" "EPERM" chmod "$MNT/secret" 700
check "chmod of a mask by root" "EROFS" "$(probe chmod "$MNT/secret" 700)"
check "chown of a mask by root" "EROFS" "$(probe chown "$MNT/top.key" 0 0)"
check "setxattr on a mask by root" "EROFS" "$(probe setxattr "$MNT/secret" user.x y)"
check "removexattr on a mask by root" "EROFS" "$(probe removexattr "$MNT/secret" user.tag)"
check "utimens on a mask by root" "EROFS" "$(probe utimens "$MNT/top.key" 1000)"

check_match "a mask denial is logged with its rule" \
	'denied create for pid [0-9]+ \("awfs-probe"\) uid '"$AGENT_UID"' gid '"$AGENT_UID"' by mask rule "secret" \([^)]*policy.conf:3\); EROFS: "[^ ]*/secret/new": its directory "[^ ]*/secret" is masked by mask rule "secret" \([^)]*policy.conf:3: holds tokens\)\. Writable paths: ' \
	"$(cat "$LOG")"
unmount_awfs
check "host content under the mask is untouched" "TOPSECRET DEEP KEYDATA" \
	"$(cat "$SRC/secret/data" "$SRC/secret/sub/deep" "$SRC/top.key" | tr '\n' ' ' | sed 's/ $//')"
check "nothing was created under the masks" "data sub" "$(ls "$SRC/secret" | tr '\n' ' ' | sed 's/ $//')"
finish
