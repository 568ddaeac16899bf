#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# acl.sh - the host's POSIX ACLs, wherever the source has them or not:
#  - a source that keeps no ACLs (ramfs has no xattrs at all, as a virtiofs
#    share exported without them in a guest): every access by a uid that
#    is not the owner works as its modes say, and the mount line says that
#    modes alone decide (the kernel used to fail each such check with the
#    source's EOPNOTSUPP: `ls: Operation not supported`);
#  - a source that keeps them: an ACL that grants a single file to the
#    agent grants it (as gh-aw's host-user runtime grants claude-debug.log
#    with setfacl), one that denies it denies, and getfacl shows it;
#  - mounts below the source: one without ACLs under a source with them
#    answers "no ACL" (not a failed check); one with ACLs under a source
#    without them, made before awfs mounts or while it serves, has its
#    ACLs enforced (the answer is asked per object);
#  - a file system with permission checks of its own (procfs), as the
#    source or below it: no "no ACL" for it, accesses by others than the
#    owner fail closed, and the mount line and a warning say so; a FUSE
#    source other than virtiofs gets a warning of what is not repeated.
. "$(dirname "$0")/lib.sh"
require_mount_env
command -v setfacl >/dev/null || skip "no setfacl (apt-get install acl)"
grep -qw ramfs /proc/filesystems || skip "no ramfs in this kernel"

make_tmp
SUBMOUNTS=""
# each path until nothing is mounted there (awfs may still be on top of it)
AT_EXIT='for m in $SUBMOUNTS; do while mountpoint -q "$m" && umount -l "$m" 2>/dev/null; do :; done; done'
POLICY_TEXT='version = 1;
allow_write = ( { path = "rw"; reason = "agent scratch"; },
                { path = "granted.log"; reason = "a single file the engine writes"; } );
read_only = ( { path = "ro"; reason = "exemption"; } );'
write_policy "$POLICY_TEXT"

# lay_tree DIR: root-owned read-only and writable trees, a file granted to
# the agent by ACL where the file system keeps ACLs
lay_tree() {
	mkdir -p "$1/ro/dir" "$1/rw"
	echo RODATA >"$1/ro/file"
	echo INNER >"$1/ro/dir/f"
	echo LOG >"$1/granted.log"
	chmod 755 "$1" "$1/ro" "$1/ro/dir"
	chmod 644 "$1/ro/file" "$1/ro/dir/f"
	chmod 600 "$1/granted.log"
	echo MINE >"$1/ro/mine"
	chown "$AGENT_UID:$AGENT_UID" "$1/rw" "$1/ro/mine"
}

# mount_ramfs DIR: ramfs (no xattrs) at DIR, unmounted at exit
mount_ramfs() {
	mkdir -p "$1"
	mount -t ramfs -o mode=755 ramfs "$1" || skip "cannot mount ramfs"
	SUBMOUNTS="$1 $SUBMOUNTS"
}

line() { grep ' mounted ' "$LOG" | tail -1; }

# ---- 1. a source with no ACLs: modes alone, and they work
mount_ramfs "$SRC"
lay_tree "$SRC"
check "ramfs keeps no ACLs (the host's own answer)" "EOPNOTSUPP" "$(probe getxattr "$SRC/ro/file" system.posix_acl_access)"
mount_awfs
check_match "the mount line says modes alone decide" "\(source $SRC, no POSIX ACLs there: modes alone decide access; data path: [^)]*\): masked" "$(line)"
expect "a root-owned directory is listed by the agent" "OK:dir,file,mine" readdir "$MNT/ro"
expect "a root-owned file is read by the agent" "OK:RODATA\x0a" read "$MNT/ro/file"
expect "a root-owned directory below is looked up" "OK:INNER\x0a" read "$MNT/ro/dir/f"
expect "the agent writes its own tree" "OK" write "$MNT/rw/new" x
expect "a root-owned 0600 file is still refused by its modes" "EACCES" read "$MNT/granted.log"
expect "setting an ACL where the source keeps none: not supported" "EOPNOTSUPP" setacl "$MNT/rw/new" u::rw-,g::r--,o::r--
expect "a write to the agent's own file in a read-only path is still EROFS" "EROFS" write "$MNT/ro/mine" x
unmount_awfs

# ---- 2. a source with ACLs (this directory's file system): enforced
SRC2="$T/src2"
mkdir -p "$SRC2"
lay_tree "$SRC2"
setfacl -m "u:$AGENT_UID:rw" "$SRC2/granted.log" || skip "the file system under $T keeps no ACLs"
echo DENIED >"$SRC2/ro/denied"
chmod 644 "$SRC2/ro/denied"
setfacl -m "u:$AGENT_UID:---" "$SRC2/ro/denied"
# (3.'s mount is made now: the source's modes are read before awfs covers it)
mount_ramfs "$SRC2/ro/sub"
mkdir "$SRC2/ro/sub/d"
echo SUB >"$SRC2/ro/sub/d/f"
chmod 755 "$SRC2/ro/sub/d"
chmod 644 "$SRC2/ro/sub/d/f"
MNT="$SRC2"
mount_awfs
check_match "the mount line says the source's ACLs are enforced" "\(source $SRC2, its POSIX ACLs enforced; data path: [^)]*\): masked" "$(line)"
expect "a file granted to the agent by ACL is read" "OK:LOG\x0a" read "$MNT/granted.log"
expect "a file granted to the agent by ACL is appended to" "OK" append "$MNT/granted.log" "agent line"
check "the append reached the host" "LOG
agent line" "$(cat "$SRC2/granted.log")"
expect "an ACL that denies the agent denies (the modes would let it read)" "EACCES" read "$MNT/ro/denied"
check_match "getfacl through the mount shows the grant" "user:$AGENT_UID:rw-" "$(getfacl -n "$MNT/granted.log" 2>&1)"

# ---- 3. a mount with no ACLs below a source with them: "no ACL", not an error
expect "a root-owned directory on a mount without ACLs below is listed" "OK:f" readdir "$MNT/ro/sub/d"
expect "and its file is read" "OK:SUB\x0a" read "$MNT/ro/sub/d/f"
check "reading its ACL through the mount: no ACL" "ENODATA" "$(probe getxattr "$MNT/ro/sub/d/f" system.posix_acl_access)"
unmount_awfs

# ---- 4. mounts with ACLs below a source without them, made before awfs
# mounts and while it serves: their ACLs are enforced (asked per object)
SRC3="$T/src3"
mount_ramfs "$SRC3"
lay_tree "$SRC3"
mkdir -p "$SRC3/ro/acl" "$SRC3/ro/late"
mount -t tmpfs -o mode=755 tmpfs "$SRC3/ro/acl" || skip "cannot mount tmpfs"
SUBMOUNTS="$SRC3/ro/acl $SUBMOUNTS"
echo DENIED >"$SRC3/ro/acl/denied"
chmod 644 "$SRC3/ro/acl/denied"
setfacl -m "u:$AGENT_UID:---" "$SRC3/ro/acl/denied" || skip "tmpfs keeps no ACLs here"
SRC=$SRC3
mount_beside
check_match "the mount line speaks of the source's root" "\(source $SRC3, no POSIX ACLs there: modes alone decide access; data path: [^)]*\): masked" "$(line)"
expect "the ACL below denies the agent" "EACCES" read "$MNT/ro/acl/denied"
expect "and the ramfs part above is still served by its modes" "OK:RODATA\x0a" read "$MNT/ro/file"
mount -t tmpfs -o mode=755 tmpfs "$SRC3/ro/late" || skip "cannot mount tmpfs"
SUBMOUNTS="$SRC3/ro/late $SUBMOUNTS"
echo LATE >"$SRC3/ro/late/denied"
mkdir "$SRC3/ro/late/dir"
echo INSIDE >"$SRC3/ro/late/dir/f"
chmod 644 "$SRC3/ro/late/denied" "$SRC3/ro/late/dir/f"
setfacl -m "u:$AGENT_UID:---" "$SRC3/ro/late/denied" "$SRC3/ro/late/dir"
check "the host refuses the agent the late mount's file" "EACCES" "$(aprobe read "$SRC3/ro/late/denied")"
expect "a mount made below while awfs serves: its ACL denies the agent" "EACCES" read "$MNT/ro/late/denied"
expect "and its denied directory is not listed" "EACCES" readdir "$MNT/ro/late/dir"
unmount_awfs

# ---- 5. below the source, a file system with checks of its own (procfs:
# a process's maps are its own and its tracer's, whatever the modes say):
# no ACL to serve, and not "no ACL" either, so such accesses fail closed
SRC4="$T/src4"
mkdir -p "$SRC4/ro/proc"
lay_tree "$SRC4"
mount -t proc proc "$SRC4/ro/proc" || skip "cannot mount proc"
SUBMOUNTS="$SRC4/ro/proc $SUBMOUNTS"
SRC=$SRC4
mount_beside
check "the host refuses the agent awfs's maps (not its process)" "EACCES" "$(aprobe read "$SRC4/ro/proc/$AWFS_PID/maps")"
check_match "through awfs, not read either" "^(EACCES|EOPNOTSUPP)$" "$(aprobe read "$MNT/ro/proc/$AWFS_PID/maps")"
unmount_awfs

# ---- 6. a source with checks of its own: said at mount, and refused
printf 'version = 1;\nread_only = ( { path = "kernel"; reason = "procfs, read-only"; } );\n' >"$T/proc.conf"
chmod 644 "$T/proc.conf"
POLICY=$T/proc.conf LOG=$T/proc.log SRC=/proc/sys
mount_beside
check "procfs as the source: awfs mounts" "yes" "$(is_mounted "$MNT" && echo yes)"
check_match "procfs as the source: the mount line says it is refused" "\(source /proc/sys, no POSIX ACLs there, and checks of its own: others than an object's owner are refused; data path: [^)]*\)" "$(line)"
check_match "and a warning says why" "keeps no POSIX ACLs and is procfs, whose permission checks go beyond its modes" "$(cat "$LOG")"
expect "the agent reading a world-readable file there: closed" "EOPNOTSUPP" read "$MNT/kernel/hostname"
unmount_awfs

# ---- 7. a FUSE source other than virtiofs (here awfs itself): its daemon
# may refuse callers on its own, which awfs does not repeat: said at mount
SRC=$T/src2 MNT=$T/src2 POLICY=$T/policy.conf LOG=$T/awfs.log
mount_awfs
INNER_PID=$AWFS_PID
AT_EXIT="kill $INNER_PID 2>/dev/null; wait $INNER_PID 2>/dev/null; $AT_EXIT"
SRC=$T/src2 LOG=$T/outer.log
mount_beside
check_match "a FUSE source other than virtiofs: a warning says what is not repeated" \
	"the source $T/src2 is a FUSE file system other than virtiofs: awfs reads its files as itself" "$(cat "$T/outer.log")"
expect "through both, the grant still holds" "OK:LOG\x0aagent line" read "$MNT/granted.log"
unmount_awfs
kill "$INNER_PID"; wait "$INNER_PID"
finish
