#!/usr/bin/env bash
# hostile.sh - the escape matrix: every other way an unprivileged agent could
# reach masked content or change read-only content fails. What mask.sh,
# readonly.sh and escape.sh already prove is not repeated here: this adds
# symlink chains and `..`, hard links through symlinks and /proc/self/fd,
# renames and exchanges across classes, O_TMPFILE, existence oracles, open
# by handle, mmap and /proc/self/fd reopen, security.*/trusted.*/POSIX ACL/
# file capability xattrs (xattrs off and -o xattr), device nodes and sockets,
# '/'-lookalike names, 255-byte names, PATH_MAX paths and trees deeper than
# PATH_MAX, user namespaces, and a concurrent hammer (awfs-hammer) racing
# symlink swaps and renames against reads of the masks.
. "$(dirname "$0")/lib.sh"
require_mount_env
AWFS_HAMMER=${AWFS_HAMMER:?AWFS_HAMMER must name the awfs-hammer binary}
HAMMER_SECONDS=${AWFS_HAMMER_SECONDS:-3}
setup_fixture
u=$AGENT_UID

# What the host holds, before a mount covers it: a copy for the hammer's
# self-test, and file handles of the host file system (taken by root).
cp -a "$SRC" "$T/raw"
host_h_data=$(probe name-to-handle "$SRC/secret/data")
host_h_secret=$(probe name-to-handle "$SRC/secret")

# host_state: what must never change under the masks and read-only rules
host_state() {
	cat "$SRC/secret/data" "$SRC/secret/sub/deep" "$SRC/top.key" "$SRC/server.pem" \
		"$SRC/ro/hidden/x" "$SRC/rw/masked/m" "$SRC/ro/file" "$SRC/rw/.git/config" \
		"$SRC/rw/proj/hooks/pre-commit" "$SRC/rootfile" | tr '\n' ' '
	for d in secret secret/sub ro ro/hidden ro/dir rw/masked rw/.git rw/proj/hooks; do
		printf '%s: %s; ' "$d" "$(ls -A "$SRC/$d" | tr '\n' ' ')"
	done
	stat -c '%a %u:%g %s' "$SRC/ro/file" "$SRC/top.key" "$SRC/secret" | tr '\n' ' '
	getfattr -d -m - --absolute-names "$SRC/ro/file" "$SRC/ro/dir" "$SRC/secret" "$SRC/top.key" 2>/dev/null |
		grep -v '^#' | tr '\n' ' '
}
state0=$(host_state)

# ------------------------------------------------------------ the hammer's self-test
# Against the raw tree (no awfs) the hammer must find the secrets: a hammer
# that cannot see a leak proves nothing.
out=$(as_agent "$AWFS_HAMMER" "$T/raw" 1 2>&1); rc=$?
check "hammer self-test: without awfs it finds the secrets (exit 1)" "1" "$rc"
check_match "  ... and reports hits" "[1-9][0-9]* hits" "$out"
rm -rf "$T/raw"

mount_awfs
W="$MNT/rw"

# ------------------------------------------------------------ deeper than PATH_MAX
# reached by relative paths (25 levels of 200 bytes); first, so that the
# denial is logged within the rate limit's burst
up=$(printf '../%.0s' $(seq 26))
expect "a tree deeper than PATH_MAX: create at the bottom" "OK" deep "$W" 25 write f x
expect "  ... up from the bottom into a mask" "ENOENT" deep "$W" 25 read "${up}secret/data"
expect "  ... up to a masked file: empty" "OK" deep "$W" 25 read "${up}top.key"
expect "  ... up to the nested mask" "ENOENT" deep "$W" 25 read "${up:3}masked/m"
expect "  ... rename from the bottom into a read-only dir" "EROFS" deep "$W" 25 rename f "${up}ro/planted"
expect "  ... a symlink at the bottom into the mask" "OK" deep "$W" 25 symlink "${up}secret" l
expect "  ... lists nothing" "OK" deep "$W" 25 readdir l
check_match "  ... the denial down there is logged" "denied rename for pid [0-9]+ \(\"awfs-probe\"\) .*; EROFS: \".*/f\" to \"$MNT/ro/planted\": " "$(cat "$LOG")"

# ------------------------------------------------------------ symlinks: chains, .., loops
as_agent ln -s c2 "$W/c1"
as_agent ln -s c3 "$W/c2"
as_agent ln -s ../secret/data "$W/c3"
expect "chain of relative symlinks into a mask" "ENOENT" read "$W/c1"
as_agent ln -s k2 "$W/k1"
as_agent ln -s "$MNT/top.key" "$W/k2"
expect "chain ending at a masked file reads empty" "OK" read "$W/k1"
expect "  ... by mmap too" "OK" mmap-read "$W/k1"
expect "  ... write through it" "EROFS" write "$W/k1" x
expect "  ... O_RDONLY|O_TRUNC through it" "EROFS" open "$W/k1" rt
expect "  ... truncate through it" "EROFS" truncate "$W/k1" 0
expect "  ... utime-now through it" "EROFS" utime-now "$W/k1"
check "  ... chmod through it by root" "EROFS" "$(probe chmod "$W/k1" 600)"
check "  ... chown through it by root" "EROFS" "$(probe chown "$W/k1" "$u" "$u")"
as_agent ln -s d2 "$W/d1"
as_agent ln -s ../secret "$W/d2"
expect "chain to a masked dir lists nothing" "OK" readdir "$W/d1/"
expect "  ... its content is unreachable" "ENOENT" read "$W/d1/sub/deep"
expect "  ... create through it" "EROFS" create "$W/d1/x"
as_agent ln -s ../ro/link-to-secret "$W/via-ro"
expect "chain through a host symlink in a read-only dir" "ENOENT" read "$W/via-ro"
as_agent ln -s ../ro/hidden "$W/to-hidden"
expect "symlink to a nested mask lists nothing" "OK" readdir "$W/to-hidden/"
expect "  ... content unreachable" "ENOENT" read "$W/to-hidden/x"
as_agent ln -s ../ro/file "$W/to-ro"
expect "symlink to a read-only file: O_CREAT|O_TRUNC through it" "EROFS" open "$W/to-ro" wct
expect "  ... append through it" "EROFS" append "$W/to-ro" x
as_agent ln -s loop2 "$W/loop1"
as_agent ln -s loop1 "$W/loop2"
expect "a symlink loop" "ELOOP" read "$W/loop1"
as_agent ln -s .. "$W/up"
expect "symlink to the read-only root: write a read-only file through it" "EROFS" write "$W/up/ro/file" x
expect "  ... read a mask through it" "ENOENT" read "$W/up/secret/data"
expect "  ... create at the root through it" "EROFS" create "$W/up/newtop"
expect "  ... the writable tree through it stays writable" "OK" write "$W/up/rw/via-up" x

# ------------------------------------------------------------ .. from writable paths
expect ".. from rw to a read-only file" "EROFS" write "$MNT/rw/../ro/file" x
expect ".. from rw to create at the root" "EROFS" create "$MNT/rw/../newtop"
expect ".. from a glob allow_write dir into a mask" "ENOENT" read "$MNT/mem-a/../secret/sub/deep"
expect ".. from a created allow_write dir to a masked file" "OK" read "$MNT/made/../top.key"
expect ".. from rw/sub into the nested mask" "ENOENT" read "$MNT/rw/sub/../masked/m"
expect ".. from rw/sub into rw/.git" "EROFS" write "$MNT/rw/sub/../.git/config" x
expect ".. into a nested read-only rule" "EROFS" create "$MNT/rw/sub/../proj/hooks/post-commit"
expect "rename through .. on both ends" "EROFS" rename "$MNT/rw/sub/../file" "$MNT/rw/../ro/moved"

# ------------------------------------------------------------ hard links
expect "link through a symlink to a masked file (AT_SYMLINK_FOLLOW)" "EROFS" link-follow "$W/k2" "$W/stolen"
expect "link through a symlink to a read-only file" "EROFS" link-follow "$W/to-ro" "$W/stolen"
expect "link of an O_PATH fd of a read-only file (/proc/self/fd)" "EROFS" fd-link "$MNT/ro/file" "$W/stolen"
expect "link of an O_PATH fd of a masked file" "EROFS" fd-link "$MNT/top.key" "$W/stolen"
expect "link of an O_PATH fd of rw/.git/config" "EROFS" fd-link "$MNT/rw/.git/config" "$W/stolen"
expect "link of an O_PATH fd of a writable file into a read-only dir" "EROFS" fd-link "$W/file" "$MNT/ro/planted"
expect "link of an O_PATH fd within rw: allowed" "OK" fd-link "$W/file" "$W/file-link"
expect "hard link of a symlink into the mask (the link itself)" "OK" link "$W/c3" "$W/c3-link"
expect "  ... still leads nowhere" "ENOENT" read "$W/c3-link"

# ------------------------------------------------------------ renames and exchanges across classes
expect "exchange a writable file with a masked file at the root" "EROFS" rename-exchange "$W/file" "$MNT/top.key"
expect "exchange two allow_write roots (rw <-> mem-a)" "EROFS" rename-exchange "$MNT/rw" "$MNT/mem-a"
expect "exchange a writable dir with a read-only dir" "EROFS" rename-exchange "$W/sub" "$MNT/ro/dir"
expect "exchange a writable dir with a nested mask" "EROFS" rename-exchange "$W/sub" "$MNT/ro/hidden"
expect "exchange a symlink to the mask with the mask in rw" "EROFS" rename-exchange "$W/d2" "$W/masked"
check_match "rename a symlink over the mask in rw" '^(EROFS|EISDIR)$' "$(aprobe rename "$W/d2" "$W/masked")"
expect "  ... the mask is still served empty" "OK" readdir "$W/masked"
expect "rename a file over a masked file" "EROFS" rename "$W/file" "$MNT/top.key"
expect "rename a file over a read-only file (noreplace)" "EROFS" rename-noreplace "$W/file" "$MNT/ro/newname"
expect "exchange a symlink with rw/.git" "EROFS" rename-exchange "$W/up" "$W/.git"
expect "exchange a symlink with rw/proj (a read-only rule below)" "EROFS" rename-exchange "$W/up" "$W/proj"
check "whiteout-rename of a read-only file by root" "EROFS" "$(probe rename-whiteout "$MNT/ro/file" "$MNT/ro/f2")"
check "whiteout-rename of a masked file by root" "EROFS" "$(probe rename-whiteout "$MNT/top.key" "$W/k")"
check "whiteout-rename out of rw/.git by root" "EROFS" "$(probe rename-whiteout "$W/.git/config" "$W/config")"
expect "rename between two allow_write trees: allowed" "OK" rename "$W/c3-link" "$MNT/mem-a/moved"

# ------------------------------------------------------------ root is refused too
# root passes every permission check: only the policy stands in its way
for f in ro/file rw/.git/config rw/proj/hooks/pre-commit rootfile; do
	check "root: write $f" "EROFS" "$(probe write "$MNT/$f" x)"
	check "root: truncate $f" "EROFS" "$(probe truncate "$MNT/$f" 0)"
	check "root: chown $f" "EROFS" "$(probe chown "$MNT/$f" 0 0)"
	check "root: utimens $f" "EROFS" "$(probe utimens "$MNT/$f" 1000)"
	check "root: unlink $f" "EROFS" "$(probe unlink "$MNT/$f")"
done
check "root: create in a mask absent on the host" "EROFS" "$(probe create "$MNT/ghost/x")"
check "root: mkdir a new glob allow_write name at the read-only root" "EROFS" "$(probe mkdir "$MNT/mem-new")"
expect "symlink named like a glob allow_write at the root" "EROFS" symlink rw "$MNT/mem-sym"

# ------------------------------------------------------------ O_TRUNC, O_CREAT|O_EXCL, O_TMPFILE
expect "O_CREAT|O_EXCL of an existing read-only file" "EEXIST" create "$MNT/ro/file"
expect "O_CREAT|O_EXCL of an existing masked file" "EEXIST" create "$MNT/top.key"
expect "O_CREAT for writing of an existing masked file" "EROFS" open "$MNT/top.key" wc
expect "O_RDONLY|O_CREAT|O_TRUNC of a read-only file" "EROFS" open "$MNT/ro/file" rct
expect "O_RDONLY|O_CREAT|O_TRUNC of a masked file" "EROFS" open "$MNT/top.key" rct
for d in ro secret ro/hidden rw/.git rw/masked; do
	check_match "O_TMPFILE in $d: refused" '^(EROFS|EOPNOTSUPP)$' "$(aprobe tmpfile "$MNT/$d")"
done
got=$(aprobe tmpfile "$W")
check_match "O_TMPFILE in rw: made, or not supported" '^(OK|EOPNOTSUPP)$' "$got"
check_match "  ... never linked into a read-only dir" '^(EROFS|EOPNOTSUPP)$' "$(aprobe tmpfile "$W" "$MNT/ro/tmp")"

# no oracle: under a mask, a name the host holds and one it does not answer alike
for op in create mkdir mkfifo; do
	check "$op under a mask: host name and absent name alike" "EROFS EROFS" \
		"$(aprobe $op "$MNT/secret/data") $(aprobe $op "$MNT/secret/absent")"
done
check "symlink under a mask: alike" "EROFS EROFS" \
	"$(aprobe symlink x "$MNT/secret/sub") $(aprobe symlink x "$MNT/secret/nosub")"
check "rename-noreplace into a mask: alike" "EROFS EROFS" \
	"$(aprobe rename-noreplace "$W/file" "$MNT/secret/data") $(aprobe rename-noreplace "$W/file" "$MNT/secret/absent")"
check "stat under a nested mask: alike" "ENOENT ENOENT" \
	"$(aprobe stat "$MNT/rw/masked/m") $(aprobe stat "$MNT/rw/masked/absent")"
check "mkdir under a nested mask: alike" "EROFS EROFS" \
	"$(aprobe mkdir "$MNT/ro/hidden/x") $(aprobe mkdir "$MNT/ro/hidden/absent")"

# ------------------------------------------------------------ mmap, /proc/self/fd, copies
expect "mprotect(PROT_WRITE) of a shared read-only mapping" "EACCES" mprotect-write "$MNT/ro/file"
expect "  ... of a masked file" "EACCES" mprotect-write "$MNT/top.key"
expect "mmap of a read-only file reads the host's bytes" "OK:RODATA\x0a" mmap-read "$MNT/ro/file"
expect "mmap of a masked file reads nothing" "OK" mmap-read "$MNT/server.pem"
expect "reopen a read-only file for writing via /proc/self/fd" "EROFS" reopen "$MNT/ro/file" w
expect "reopen it with O_TRUNC" "EROFS" reopen "$MNT/ro/file" rt
expect "reopen a masked file for writing" "EROFS" reopen "$MNT/top.key" rw
expect "reopen a masked file for reading: empty" "OK" reopen "$MNT/top.key" r
expect "reopen a masked dir (O_PATH first)" "OK:dir" reopen "$MNT/secret" r
expect "copy_file_range from a masked file copies nothing" "OK:0" copy "$MNT/top.key" "$W/copied"
check_match "FICLONE from a masked file: refused" '^(EOPNOTSUPP|EXDEV|EINVAL)$' "$(aprobe clone "$MNT/top.key" "$W/cloned")"
check_match "FICLONE from a read-only file: refused" '^(EOPNOTSUPP|EXDEV|EINVAL)$' "$(aprobe clone "$MNT/ro/file" "$W/cloned2")"
# inode flags: a casefold directory would let a name in another case reach
# what a rule names (rw/repo-x/HOOKS for rw/repo-*/hooks); awfs passes no ioctl
as_agent mkdir "$W/empty"
check_match "FS_IOC_SETFLAGS casefold on an empty writable dir: refused" '^(ENOTTY|EOPNOTSUPP)$' \
	"$(aprobe setflags "$W/empty" 40000000)"
check_match "FS_IOC_SETFLAGS immutable on a read-only file by root: refused" '^(ENOTTY|EOPNOTSUPP|EROFS)$' \
	"$(probe setflags "$MNT/ro/file" 10)"
check "the daemon's fds, cwd and root are not the agent's to follow" "EACCES EACCES EACCES" \
	"$(aprobe readdir "/proc/$AWFS_PID/fd") $(aprobe read "/proc/$AWFS_PID/cwd/secret/data") $(aprobe readdir "/proc/$AWFS_PID/root/")"

# ------------------------------------------------------------ open by handle
# open_by_handle_at needs CAP_DAC_READ_SEARCH: the agent has none; root can
# decode a handle of the host file system only through a mount of it.
if [ "${host_h_data#OK:}" != "$host_h_data" ]; then
	hd=${host_h_data#OK:}
	check "root: a host handle of a masked file, through the host fs" "OK:TOPSECRET\x0a" "$(probe open-by-handle "$T" "$hd")"
	check "root: the same handle through the awfs mount" "ESTALE" "$(probe open-by-handle "$MNT" "$hd")"
	expect "agent: the host handle through the host fs" "EPERM" open-by-handle "$T" "$hd"
	expect "agent: the host handle through the awfs mount" "EPERM" open-by-handle "$MNT" "$hd"
else
	echo "ok - # SKIP the host fs gives no handles ($host_h_data)"
fi
ah=$(aprobe name-to-handle "$MNT/top.key")
if [ "$ah" = EOPNOTSUPP ]; then
	check "awfs exports no file handles" "EOPNOTSUPP" "$ah"
else
	# the kernel encodes a FUSE node id without asking awfs; decoding one
	# without export support only finds an inode the kernel holds, and what
	# it opens is served by awfs, with its class
	check_match "a handle on awfs is a FUSE node id, not a host handle" '^OK:(129|130):[0-9a-f]{24,}$' "$ah"
	ah=${ah#OK:}
	# hold the inodes: a handle decodes only while the kernel keeps its inode
	exec 7<"$MNT/top.key" 8<"$MNT/ro/file" 9<"$MNT/secret"
	rh=$(aprobe name-to-handle "$MNT/ro/file"); rh=${rh#OK:}
	sh=$(aprobe name-to-handle "$MNT/secret"); sh=${sh#OK:}
	expect "agent: open by an awfs handle" "EPERM" open-by-handle "$MNT" "$ah"
	check "root: an awfs handle of a masked file reads empty" "OK" "$(probe open-by-handle "$MNT" "$ah")"
	check "root: ... of a masked file, for writing" "EROFS" "$(probe open-by-handle "$MNT" "$ah" w)"
	check "root: ... of a masked dir opens the synthetic dir" "OK:dir" "$(probe open-by-handle "$MNT" "$sh" d)"
	check "root: ... of a read-only file, for writing" "EROFS" "$(probe open-by-handle "$MNT" "$rh" w)"
	check "root: ... of a read-only file, with O_TRUNC" "EROFS" "$(probe open-by-handle "$MNT" "$rh" rt)"
	check "root: an awfs handle through the host fs" "ESTALE" "$(probe open-by-handle "$T" "$ah")"
	check "root: a forged awfs handle (unknown node id)" "ESTALE" \
		"$(probe open-by-handle "$MNT" 129:0000adde0000efbe00000000)"
	exec 7<&- 8<&- 9<&-
fi

# ------------------------------------------------------------ device nodes, fifos, sockets
for d in ro ro/hidden secret rw/.git rw/proj/hooks rw/masked; do
	check "mknod (char device) in $d by root" "EROFS" "$(probe mknod "$MNT/$d/dev" c 1 3)"
	expect "mknod (fifo) in $d" "EROFS" mknod "$MNT/$d/fifo" p
	expect "bind a unix socket in $d" "EROFS" bind "$MNT/$d/sock"
done
expect "mknod (char device) by the agent: ordinary EPERM" "EPERM" mknod "$MNT/ro/dev" c 1 3
expect "bind a unix socket in rw" "OK" bind "$W/sock"
check "mknod (char device) in rw by root" "OK" "$(probe mknod "$W/null" c 1 3)"
check "  ... but the mount is nodev: it cannot be opened" "EACCES" "$(probe open "$W/null" r)"

# ------------------------------------------------------------ xattrs, xattrs off (the default)
F="$MNT/ro/file"
expect "security.* on a read-only file: the kernel says EPERM first" "EPERM" setxattr "$F" security.evil x
check "security.* on a read-only file by root" "EROFS" "$(probe setxattr "$F" security.evil x)"
check "security.* on a masked file by root" "EROFS" "$(probe setxattr "$MNT/top.key" security.evil x)"
check "trusted.* on a read-only file by root" "EROFS" "$(probe setxattr "$F" trusted.evil x)"
expect "security.capability on a read-only file" "EPERM" setcap "$F"
check "security.capability on a read-only file by root" "EROFS" "$(probe setcap "$F")"
check "security.capability on a masked file by root" "EROFS" "$(probe setcap "$MNT/top.key")"
expect "system.posix_acl_access on a read-only file (its owner)" "EROFS" setacl "$F" system.posix_acl_access
expect "system.posix_acl_default on a read-only dir (its owner)" "EROFS" setacl "$MNT/ro/dir" system.posix_acl_default
expect "system.posix_acl_access on a masked file: not the owner" "EPERM" setacl "$MNT/top.key" system.posix_acl_access
check "system.posix_acl_access on a masked file by root" "EROFS" "$(probe setacl "$MNT/top.key" system.posix_acl_access)"
check "system.posix_acl_default on a masked dir by root" "EROFS" "$(probe setacl "$MNT/secret" system.posix_acl_default)"
expect "user.* on a masked file" "EROFS" setxattr "$MNT/top.key" user.x y
expect "user.* on a masked sticky dir: not the owner" "EPERM" setxattr "$MNT/secret" user.x y
check "user.* on a mask through a symlink by root" "EROFS" "$(probe setxattr "$W/k1" user.x y)"
check "trusted.* on a symlink in a read-only dir by root" "EROFS" "$(probe lsetxattr "$MNT/ro/link-out" trusted.x y)"
expect "system.posix_acl_access on one's own writable file: set (ACLs are served whatever -o xattr says)" "OK" setacl "$W/file" system.posix_acl_access
check "a root-owned file in rw" "OK" "$(probe write "$W/rootfile" ROOT)"
expect "  ... the agent cannot set an ACL on it" "EPERM" setacl "$W/rootfile" system.posix_acl_access
expect "getxattr with xattrs off" "EOPNOTSUPP" getxattr "$MNT/secret" user.tag

# ------------------------------------------------------------ '/'-lookalike names
# U+2215 DIVISION SLASH, U+2044 FRACTION SLASH, U+FF0F FULLWIDTH SOLIDUS,
# U+29F8 BIG SOLIDUS, and a backslash: one name each, never a separator
i=0
for c in $'\u2215' $'\u2044' $'\uff0f' $'\u29f8' '\'; do
	i=$((i + 1))
	expect "lookalike $i: a name in rw" "OK" write "$W/secret${c}data" LOOK
	expect "lookalike $i: '..' and a mask in one name" "OK" write "$W/..${c}secret" LOOK
	expect "lookalike $i: a nested mask's name in one name" "OK" write "$W/masked${c}m" LOOK
	expect "lookalike $i: reads what was written" "OK:LOOK" read "$W/..${c}secret"
	expect "lookalike $i: at the root, no mask behind it" "ENOENT" read "$MNT/secret${c}data"
	expect "lookalike $i: at the root, not a read-only path" "EROFS" write "$MNT/ro${c}file" x
	expect "lookalike $i: a symlink whose target uses it" "OK" symlink "..${c}secret" "$W/lk$i"
	expect "lookalike $i:   ... reads the file of that name" "OK:LOOK" read "$W/lk$i"
done
n85=$(printf '\u2215%.0s' $(seq 85))
expect "a 255-byte name of 85 three-byte lookalikes" "OK" write "$W/$n85" x
expect "  ... 86 of them (258 bytes)" "ENAMETOOLONG" write "$W/${n85}"$'\u2215' x

# ------------------------------------------------------------ 255-byte names
n255=$(printf 'n%.0s' $(seq 255))
expect "a 255-byte name in a read-only dir" "EROFS" create "$MNT/ro/$n255"
expect "a 256-byte name in a read-only dir" "ENAMETOOLONG" create "$MNT/ro/${n255}n"
expect "a 255-byte name under a mask" "ENOENT" read "$MNT/secret/$n255"
expect "  ... create it" "EROFS" create "$MNT/secret/$n255"
expect "a 255-byte symlink name in rw pointing into a mask" "OK" symlink ../secret/data "$W/$n255"
expect "  ... leads nowhere" "ENOENT" read "$W/$n255"

# ------------------------------------------------------------ PATH_MAX
# pad PREFIX SUFFIX LEN: PREFIX, then slashes, then SUFFIX: LEN bytes
pad() {
	local k=$(($3 - ${#1} - ${#2}))
	printf '%s%s%s' "$1" "$(printf '/%.0s' $(seq "$k"))" "$2"
}
p=$(pad "$W" pm-file 4095)
check "a 4095-byte path" "4095" "${#p}"
expect "write by a 4095-byte path in rw" "OK" write "$p" x
expect "a 4096-byte path" "ENAMETOOLONG" write "$(pad "$W" pm-file 4096)" x
# a real deep tree: 15 levels of 250-byte names
d250=$(printf 'd%.0s' $(seq 250))
deep="$W/pm"
for _ in $(seq 15); do deep="$deep/$d250"; done
as_agent mkdir -p "$deep"
up=$(printf '../%.0s' $(seq 17))
expect "a 4095-byte path down the deep tree" "OK" write "$(pad "$deep" f 4095)" x
expect "  ... 4096 bytes" "ENAMETOOLONG" write "$(pad "$deep" f 4096)" x
expect "4095 bytes down and up again to a masked file: empty" "OK" read "$(pad "$deep" "${up}top.key" 4095)"
check_match "  ... stat shows the synthetic file" '^OK:type=file mode=0666 uid=0 gid=0 size=0 nlink=1 ' \
	"$(aprobe stat "$(pad "$deep" "${up}top.key" 4095)")"
expect "4095 bytes down and up into a masked dir: unreachable" "ENOENT" read "$(pad "$deep" "${up}secret/data" 4095)"
expect "4095 bytes down and up to the nested mask: empty" "OK" readdir "$(pad "$deep" "${up}rw/masked" 4095)"
expect "4095 bytes down and up to a read-only dir: create" "EROFS" create "$(pad "$deep" "${up}ro/new" 4095)"
expect "4096 bytes ending in a masked name" "ENAMETOOLONG" read "$(pad "$deep" "${up}top.key" 4096)"
t=$(pad "$W" ../top.key 4095)
expect "a symlink with a 4095-byte target into a mask" "OK" symlink "$t" "$W/longlink"
expect "  ... readlink gives it back whole" "OK:$t" readlink "$W/longlink"
expect "  ... reads empty" "OK" read "$W/longlink"
expect "  ... writes refused" "EROFS" write "$W/longlink" x
expect "a 4096-byte symlink target" "ENAMETOOLONG" symlink "$t/" "$W/longlink2"
# ------------------------------------------------------------ user namespaces
if as_agent unshare -Urm true 2>/dev/null; then
	check_match "in a user namespace the agent cannot unmount awfs (locked)" '^(EINVAL|EPERM)$' \
		"$(as_agent unshare -Urm "$AWFS_PROBE" umount "$MNT")"
	check "  ... the mask holds there" "ENOENT" \
		"$(as_agent unshare -Urm sh -c "'$AWFS_PROBE' umount '$MNT' >/dev/null; '$AWFS_PROBE' read '$MNT/secret/data'")"
	if [ "${host_h_secret#OK:}" != "$host_h_secret" ]; then
		check "  ... nor decode a host dir handle through a mount with a locked child" "EPERM" \
			"$(as_agent unshare -Urm "$AWFS_PROBE" open-by-handle "$T" "${host_h_secret#OK:}" d)"
	fi
else
	echo "ok - # SKIP no unprivileged user namespaces here"
fi

expect "awfs still serves after all of it" "OK:RODATA\x0a" read "$MNT/ro/file"
unmount_awfs
check "host: masks and read-only content unchanged (xattrs off)" "$state0" "$(host_state)"
check "host: the lookalike names are single entries of rw" "5 5 5" \
	"$(ls -A "$SRC/rw" | grep -c '^secret.*data$') $(ls -A "$SRC/rw" | grep -c '^\.\..*secret$') $(ls -A "$SRC/rw" | grep -c '^masked.*m$')"
check "host: the file deeper than PATH_MAX is there" "1" "$(find "$SRC/rw" -mindepth 26 -name f | grep -c .)"
check "host: nothing made for the absent mask or the glob name" "no no no" \
	"$([ -e "$SRC/ghost" ] && echo yes || echo no) $([ -e "$SRC/mem-new" ] && echo yes || echo no) $([ -e "$SRC/mem-sym" ] && echo yes || echo no)"
check "host: nothing copied out of a mask" "0 0" "$(stat -c %s "$SRC/rw/copied") $(stat -c %s "$SRC/rw/cloned" 2>/dev/null || echo 0)"

# ------------------------------------------------------------ -o xattr
mount_awfs -o xattr
expect "xattr: getxattr of a masked dir (the host has user.tag)" "ENODATA" getxattr "$MNT/secret" user.tag
check "xattr: ... as root" "ENODATA" "$(probe getxattr "$MNT/secret" user.tag)"
expect "xattr: ... through a symlink" "ENODATA" getxattr "$MNT/rw/d1" user.tag
check "xattr: listxattr of a masked dir as root" "OK" "$(probe listxattr "$MNT/secret")"
expect "xattr: ACL of a masked file" "ENODATA" getxattr "$MNT/top.key" system.posix_acl_access
expect "xattr: user.* on a read-only file" "EROFS" setxattr "$F" user.new v
expect "xattr: security.* on a read-only file: EPERM first" "EPERM" setxattr "$F" security.evil x
check "xattr: security.* on a read-only file by root" "EROFS" "$(probe setxattr "$F" security.evil x)"
check "xattr: trusted.* on a read-only file by root" "EROFS" "$(probe setxattr "$F" trusted.evil x)"
check "xattr: security.capability on a read-only file by root" "EROFS" "$(probe setcap "$F")"
check "xattr: security.capability on rw/.git/config by root" "EROFS" "$(probe setcap "$MNT/rw/.git/config")"
check "xattr: security.* on a masked dir by root" "EROFS" "$(probe setxattr "$MNT/secret" security.evil x)"
check "xattr: removexattr of the host's user.tag on a read-only file by root" "EROFS" "$(probe removexattr "$F" user.tag)"
expect "xattr: system.posix_acl_access on a read-only file" "EROFS" setacl "$F" system.posix_acl_access
expect "xattr: system.posix_acl_default on a read-only dir" "EROFS" setacl "$MNT/ro/dir" system.posix_acl_default
check "xattr: system.posix_acl_access on a masked file by root" "EROFS" "$(probe setacl "$MNT/top.key" system.posix_acl_access)"
check "xattr: system.posix_acl_default on a masked dir by root" "EROFS" "$(probe setacl "$MNT/secret" system.posix_acl_default)"
expect "xattr: user.* on a masked file" "EROFS" setxattr "$MNT/top.key" user.x y
expect "xattr: an ACL on a root-owned file in rw: ordinary EPERM" "EPERM" setacl "$W/rootfile" system.posix_acl_access
expect "xattr: an ACL on one's own file in rw" "OK" setacl "$W/file" system.posix_acl_access
expect "xattr: security.capability on one's own file in rw" "EPERM" setcap "$W/file"

# ------------------------------------------------------------ the hammer
out=$(as_agent "$AWFS_HAMMER" "$MNT" "$HAMMER_SECONDS" 8 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
check "hammer (-o xattr, default cache): no masked byte read, no refused write done" "0" "$rc"
check_match "  ... and it did work" " [1-9][0-9]* swaps, [1-9][0-9]* exchanges, [1-9][0-9]* reads .* 0 hits, 0 violations" "$out"
expect "awfs still serves after the hammer" "OK:RODATA\x0a" read "$MNT/ro/file"
unmount_awfs
check "host: masks and read-only content unchanged (-o xattr, hammer)" "$state0" "$(host_state)"

# the same with no kernel caching: every lookup reaches awfs
mount_awfs -o cache=never
out=$(as_agent "$AWFS_HAMMER" "$MNT" "$(( (HAMMER_SECONDS + 1) / 2 ))" 8 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
check "hammer (cache=never): no masked byte read, no refused write done" "0" "$rc"
check_match "  ... and it did work" " [1-9][0-9]* swaps, [1-9][0-9]* exchanges, [1-9][0-9]* reads .* 0 hits, 0 violations" "$out"
unmount_awfs
check "host: masks and read-only content unchanged (cache=never, hammer)" "$state0" "$(host_state)"
finish
