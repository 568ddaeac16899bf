#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# creds.sh - every host call awfs makes for a request that changes or opens
# something runs as the caller, each shown by a case that the daemon's
# credentials would let through: `make check-mutants` (tests/mutate-daemon.sh)
# runs each case against awfs built with that one call made as the daemon,
# and the case must then fail.
#
# The recipe is the stale attribute: the kernel checks permissions on the
# FUSE side with the attributes it cached (an hour in writable paths with
# cache=auto, a day everywhere with cache=always), so when the host changes
# an object after the agent looked it up, the kernel lets the request
# through and only the host's second check, made as the caller, refuses it.
# Each case: the agent looks (stat), root changes the host object, the agent
# acts; the answer must be the host's refusal, and the host unchanged.
#
# Mounts: "auto" (the default cache, -o xattr for the xattr calls) for the
# calls in the writable tree; "always" (-o cache=always) for the temporaries
# beside a single-file rule, whose directory is read-only ground that awfs
# watches under cache=auto (it would tell the kernel of root's change at
# once, and the kernel would refuse by itself); "fixup" (the default cache,
# awfs started with SECBIT_NO_SETUID_FIXUP) for the writable cases again:
# there the kernel leaves the file-system capabilities in place when the
# fsuid changes, and only awfs's own emptying of the effective set keeps
# the daemon's CAP_FOWNER, CAP_CHOWN and CAP_DAC_OVERRIDE from the call.
#
# Calls not reached here, and why:
# - temp_hidden() and host_unlink() of a hidden temporary (a source without
#   O_TMPFILE: bindfs, virtiofs): the same AS_CALLER as host_create() and
#   host_unlink() above them, on a name awfs makes; atomic.sh runs them as
#   uid 1000 on bindfs, whose own daemon makes every call as root, so a
#   daemon's call cannot be told from the caller's there.
# - the removal of awfs's hidden name after a failed temporary's rename or
#   set-up: it removes, as the caller, a name made a moment before as the
#   same caller in a directory the caller could write; only root changing
#   the unnamed file between the two could make the host refuse it.
# - host_fsync(), host_lseek() and reads: on a handle, nothing a writer's
#   identity changes.
#
# The data calls on a handle (write, fallocate, copy_file_range, and the
# kernel's writeback of a mapping, which reaches awfs as uid 0) check no
# permission, but a file system may grant by the writer's identity: ext4
# keeps blocks for its resuid (root by default). They run with the fsuid of
# the caller (for writeback, of whoever opened the handle): on a loop ext4
# filled to its reserve by the agent, the agent's writes through awfs get
# ENOSPC as on the host, and root's still land.
#
# CREDS_ONLY="case ..." runs only those cases (the mutants' runner).
. "$(dirname "$0")/lib.sh"
require_mount_env
command -v setfattr >/dev/null || skip "no setfattr (apt-get install attr)"
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
export LC_ALL=C	# dd's messages are matched
[ "$(sysctl -n fs.protected_hardlinks 2>/dev/null)" = 1 ] || skip "fs.protected_hardlinks is not 1"
u=$AGENT_UID
GRP=4242
ONLY=" ${CREDS_ONLY:-} "
make_tmp
H=$SRC
write_policy 'version = 1;
allow_write = (
  { path = "rw"; reason = "the agent'"'"'s scratch"; },
  { path = "lr"; reason = "links to read-only ground only"; links = "read-only"; },
  { path = "st/summary.md"; reason = "one file in a read-only directory"; create = "file"; }
);'

# wanted CASE: the case is to run (all, or CREDS_ONLY names it)
wanted() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
look() { aprobe stat "$1" >/dev/null; }
owner() { stat -c %u "$1" 2>&1; }
with_group() { setpriv --reuid="$u" --regid="$u" --groups="$GRP" "$AWFS_PROBE" "$@"; }

# ---------------------------------------------------------------- the cases
# each CASE_NAME tag: sets up under $H/rw/$tag (or st/, lr/), acts through $M

c_create() {	# host_create
	local d=$1/create && mkdir -m 777 "$H/$d"
	look "$M/$d"; look "$M/$d/f"
	chmod 755 "$H/$d"
	expect "$2: create in a directory root made unwritable after the look: EACCES" EACCES create "$M/$d/f"
	check "  ... nothing made on the host" absent "$([ -e "$H/$d/f" ] && echo present || echo absent)"
}
c_mkdir() {	# host_mkdir
	local d=$1/mkdir && mkdir -m 777 "$H/$d"
	look "$M/$d"; look "$M/$d/x"
	chmod 755 "$H/$d"
	expect "$2: mkdir there: EACCES" EACCES mkdir "$M/$d/x"
	check "  ... nothing made on the host" absent "$([ -e "$H/$d/x" ] && echo present || echo absent)"
}
c_mknod() {	# host_mknod
	local d=$1/mknod && mkdir -m 777 "$H/$d"
	look "$M/$d"; look "$M/$d/p"
	chmod 755 "$H/$d"
	expect "$2: mkfifo there: EACCES" EACCES mkfifo "$M/$d/p"
	check "  ... nothing made on the host" absent "$([ -e "$H/$d/p" ] && echo present || echo absent)"
}
c_symlink() {	# host_symlink
	local d=$1/symlink && mkdir -m 777 "$H/$d"
	look "$M/$d"; look "$M/$d/l"
	chmod 755 "$H/$d"
	expect "$2: symlink there: EACCES" EACCES symlink target "$M/$d/l"
	check "  ... nothing made on the host" absent "$([ -L "$H/$d/l" ] && echo present || echo absent)"
}
c_link() {	# host_link
	local d=$1/link && mkdir -m 777 "$H/$d" "$H/$d-src"
	echo L >"$H/$d-src/f" && chown "$u:$u" "$H/$d-src/f"
	look "$M/$d"; look "$M/$d/l"; look "$M/$d-src/f"
	chmod 755 "$H/$d"
	expect "$2: hard link there: EACCES" EACCES link "$M/$d-src/f" "$M/$d/l"
	check "  ... nothing made on the host" absent "$([ -e "$H/$d/l" ] && echo present || echo absent)"
}
c_unlink() {	# host_unlink
	local d=$1/unlink && mkdir -m 1777 "$H/$d"
	echo MINE >"$H/$d/f" && chown "$u:$u" "$H/$d/f"
	look "$M/$d"; look "$M/$d/f"
	chown 0:0 "$H/$d/f"
	expect "$2: unlink, in a sticky directory, of a file root took after the look: EPERM" EPERM unlink "$M/$d/f"
	check "  ... the file is still there" MINE "$(cat "$H/$d/f" 2>&1)"
}
c_rmdir() {	# host_rmdir
	local d=$1/rmdir && mkdir -m 1777 "$H/$d" && mkdir "$H/$d/x" && chown "$u:$u" "$H/$d/x"
	look "$M/$d"; look "$M/$d/x"
	chown 0:0 "$H/$d/x"
	expect "$2: rmdir, in a sticky directory, of a directory root took: EPERM" EPERM rmdir "$M/$d/x"
	check "  ... the directory is still there" present "$([ -d "$H/$d/x" ] && echo present || echo absent)"
}
c_rename() {	# host_rename (a plain rename and an exchange: one call)
	local d=$1/rename && mkdir -m 1777 "$H/$d"
	echo F >"$H/$d/f" && echo G >"$H/$d/g" && chown "$u:$u" "$H/$d/f" "$H/$d/g"
	look "$M/$d"; look "$M/$d/f"; look "$M/$d/g"; look "$M/$d/h"
	chown 0:0 "$H/$d/f"
	expect "$2: rename, in a sticky directory, of a file root took: EPERM" EPERM rename "$M/$d/f" "$M/$d/h"
	expect "  ... an exchange with it: EPERM" EPERM rename-exchange "$M/$d/g" "$M/$d/f"
	check "  ... both are where they were" "F G" "$(cat "$H/$d/f" "$H/$d/g" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
}
c_chmod() {	# host_chmod
	local d=$1/chmod && mkdir -m 777 "$H/$d"
	echo C >"$H/$d/f" && chmod 644 "$H/$d/f" && chown "$u:$u" "$H/$d/f"
	look "$M/$d/f"
	chown 0:0 "$H/$d/f"
	expect "$2: chmod of a file root took after the look: EPERM" EPERM chmod "$M/$d/f" 666
	check "  ... its mode is unchanged" 644 "$(stat -c %a "$H/$d/f")"
}
c_chown() {	# host_chown
	local d=$1/chown && mkdir -m 777 "$H/$d"
	echo C >"$H/$d/f" && chown "$u:$u" "$H/$d/f"
	look "$M/$d/f"
	chown 0:0 "$H/$d/f"
	expect "$2: chown (to itself) of a file root took: EPERM" EPERM chown "$M/$d/f" "$u" "$u"
	check "  ... its owner is unchanged" "0:0" "$(stat -c %u:%g "$H/$d/f")"
}
c_truncate() {	# host_truncate (no handle: opened for writing as the caller)
	local d=$1/truncate && mkdir -m 777 "$H/$d"
	echo KEEP >"$H/$d/f" && chmod 666 "$H/$d/f"
	look "$M/$d/f"
	chmod 644 "$H/$d/f"
	expect "$2: truncate of a file root made read-only after the look: EACCES" EACCES truncate "$M/$d/f" 0
	check "  ... its bytes are unchanged" KEEP "$(cat "$H/$d/f")"
}
c_utimens() {	# host_utimens
	local d=$1/utimens && mkdir -m 777 "$H/$d"
	echo U >"$H/$d/f" && chown "$u:$u" "$H/$d/f" && touch -d @1000000 "$H/$d/f"
	look "$M/$d/f"
	chown 0:0 "$H/$d/f"
	expect "$2: setting the times of a file root took: EPERM" EPERM utimens "$M/$d/f" 5
	check "  ... its times are unchanged" 1000000 "$(stat -c %Y "$H/$d/f")"
}
c_open() {	# host_open_pinned (an open for writing)
	local d=$1/open && mkdir -m 777 "$H/$d"
	echo KEEP >"$H/$d/f" && chmod 666 "$H/$d/f"
	look "$M/$d/f"
	chmod 644 "$H/$d/f"
	expect "$2: open for writing of a file root made read-only: EACCES" EACCES open "$M/$d/f" w
	expect "  ... for appending: EACCES" EACCES append "$M/$d/f" X
	check "  ... its bytes are unchanged" KEEP "$(cat "$H/$d/f")"
}
c_setxattr() {	# host_setxattr
	local d=$1/setxattr && mkdir -m 777 "$H/$d"
	echo X >"$H/$d/f" && chmod 666 "$H/$d/f"
	look "$M/$d/f"
	chmod 644 "$H/$d/f"
	expect "$2: setxattr user.* on a file root made read-only: EACCES" EACCES setxattr "$M/$d/f" user.t v
	check "  ... no attribute on the host" "" "$(getfattr --absolute-names -n user.t --only-values "$H/$d/f" 2>/dev/null)"
}
c_removexattr() {	# host_removexattr
	local d=$1/removexattr && mkdir -m 777 "$H/$d"
	echo X >"$H/$d/f" && chmod 666 "$H/$d/f" && setfattr -n user.t -v kept "$H/$d/f"
	look "$M/$d/f"
	chmod 644 "$H/$d/f"
	expect "$2: removexattr user.* on it: EACCES" EACCES removexattr "$M/$d/f" user.t
	check "  ... the attribute stays" kept "$(getfattr --absolute-names -n user.t --only-values "$H/$d/f" 2>&1)"
}
c_groups() {	# host_as_caller()'s groups: they restrict as well as grant
	local d=$1/groups && mkdir -m 777 "$H/$d" "$H/$d-grant" && chown "0:$GRP" "$H/$d" "$H/$d-grant"
	chmod 770 "$H/$d-grant"
	check "$2: create through a supplementary group's grant (0770, the group's)" OK \
		"$(with_group create "$M/$d-grant/f")"
	with_group stat "$M/$d" >/dev/null; with_group stat "$M/$d/f" >/dev/null
	chmod 707 "$H/$d"
	check "$2: create where the caller's group is refused (0707) after the look: EACCES" EACCES \
		"$(with_group create "$M/$d/f")"
}
c_beneath() {	# host_beneath: a read-only link's target is looked at as the caller
	mkdir -p "$H/ro/priv" "$H/ro/pub" && echo T >"$H/ro/priv/t" && echo T >"$H/ro/pub/t"
	chmod 700 "$H/ro/priv"
	expect "$2: links = read-only: a link to read-only ground the agent can reach" OK symlink "$M/ro/pub/t" "$M/lr/pub"
	expect "$2: ... to read-only ground below a directory it cannot search: EROFS" EROFS symlink "$M/ro/priv/t" "$M/lr/priv"
	check "  ... nothing made on the host" absent "$([ -L "$H/lr/priv" ] && echo present || echo absent)"
}
c_writer() {	# a thread keeps a writer's fsuid between writes (host_as_writer()): never for other requests
	# (appended: a handle opened O_APPEND is served by awfs, passthrough or not)
	local d=$1/writer && mkdir -m 777 "$H/$d" && mkdir -m 700 "$H/$d/priv" && echo ROOT >"$H/$d/priv/f"
	check "$2: 300 small writes by the agent" 300 \
		"$(as_agent /usr/bin/python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
print(sum(os.write(fd, b"w") for _ in range(300))); os.close(fd)' "$M/$d/w" 2>&1)"
	check "$2: ... then root reads a file in a directory only root may search (a lookup as the daemon)" ROOT \
		"$(cat "$M/$d/priv/f" 2>&1)"
}
# the temporaries beside a single-file rule (st/summary.md)
c_tmpfile() {	# host_tmpfile: O_TMPFILE as the caller
	local t="$M/st/summary.md.tmp.1.a"
	chown "$u:$u" "$H/st" && chmod 755 "$H/st"
	look "$M/st"; look "$t"
	chown 0:0 "$H/st"
	expect "$2: a temporary beside a single-file rule, in a directory root took after the look: EACCES" EACCES create "$t"
	chown "$u:$u" "$H/st"
}
# take_unnamed MODE: root takes the unnamed temporary in st/ through awfs's
# own fd of it (it has no name to be taken by), and gives it MODE
take_unnamed() {
	local fd
	for fd in /proc/"$AWFS_PID"/fd/*; do
		case $(readlink "$fd") in "$H/st/#"*) chown 0:0 "$fd" && chmod "$1" "$fd" && return 0 ;; esac
	done
	echo "# no unnamed temporary among awfs's fds"
}
c_templink() {	# temp_hidden() linking the unnamed temporary in, before its rename
	local t="$M/st/summary.md.tmp.2.b"
	chown "$u:$u" "$H/st" && chmod 755 "$H/st"
	expect "$2: a temporary made beside the rule" OK create "$t"
	take_unnamed 600
	expect "$2: ... renamed onto the rule once root owns it (protected_hardlinks): EPERM" EPERM rename "$t" "$M/st/summary.md"
	check "  ... the rule's file is unchanged" OLD "$(cat "$H/st/summary.md")"
	aprobe unlink "$t" >/dev/null
}
c_temprename() {	# host_rename of the temporary onto the rule
	# (a rename target is always looked up again by the kernel, so the
	# stale object is the source: the temporary, taken by root, 0666 so
	# that the caller may still link it in; the sticky directory then
	# refuses the caller its rename)
	local t="$M/st/summary.md.tmp.3.c"
	chown 0:0 "$H/st" && chmod 1777 "$H/st" && chown "$u:$u" "$H/st/summary.md"
	expect "$2: a temporary made in the sticky directory" OK create "$t"
	take_unnamed 666
	expect "$2: ... renamed onto the rule once root owns it: EPERM" EPERM rename "$t" "$M/st/summary.md"
	check "  ... the rule's file is unchanged" OLD "$(cat "$H/st/summary.md")"
	# the hidden name awfs linked in as the caller stays: the host refuses
	# the caller its removal too (only root's change to the file did this)
	check "  ... no other name but awfs's hidden one is in its directory" summary.md \
		"$(ls -A "$H/st" | grep -v '^\.awfs-staged-')"
	aprobe unlink "$t" >/dev/null
}

# the reserve: $SRC is a loop ext4 the agent filled, served at $RM
c_write() {	# WRITE
	check "$2: a 1 MiB write by the agent into root's reserve: ENOSPC" "ENOSPC" \
		"$(as_agent dd if=/dev/zero of="$RM/rw/w" bs=1M count=1 conv=fsync 2>&1 | grep -o 'No space left on device' | head -1 | sed 's/No space left on device/ENOSPC/')"
}
c_fallocate() {	# FALLOCATE
	expect "$2: fallocate of 1 MiB: ENOSPC" ENOSPC fallocate "$RM/rw/fa" 1048576
}
c_copyrange() {	# COPY_FILE_RANGE
	expect "$2: copy_file_range of 1 MiB: ENOSPC" ENOSPC copy "$RM/rw/src1m" "$RM/rw/cp"
}
c_mapped() {	# a shared mapping's writeback: WRITE (uid 0) through awfs, or the passthrough file's own
	# through awfs the writeback fails (msync: OSError); on a passthrough
	# file the fault itself fails, as on the host (SIGBUS); either way no
	# page lands in the reserve
	local got
	got=$(as_agent /usr/bin/python3 -c 'import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 1 << 20)
m[:] = b"x" * (1 << 20)
try:
    m.flush()
    print("synced")
except OSError:
    print("OSError")' "$RM/rw/sparse" 2>&1 | tail -1)
	case $got in *OSError* | *"Bus error"*) got=refused ;; esac
	check "$2: a shared mapping written and synced: refused (msync's OSError, or the fault's SIGBUS)" refused "$got"
	check "$2: ... none of its pages reached the file" 0 "$(tr -cd x <"$SRC/rw/sparse" | wc -c)"
}
c_rootheld() {	# the backing file's credentials, with root's handle of the file open first
	# (with passthrough, the kernel gives every handle of a file the
	# credentials of the one that registered its backing file: root's
	# must never be those)
	exec 8<>"$RM/rw/held"
	check "$2: root holds the file open; the agent's 1 MiB write: ENOSPC" "ENOSPC" \
		"$(as_agent dd if=/dev/zero of="$RM/rw/held" bs=1M count=1 conv=fsync,notrunc 2>&1 | grep -o 'No space left on device' | head -1 | sed 's/No space left on device/ENOSPC/')"
	exec 8>&-
}
RESERVE="write fallocate copyrange mapped rootheld"

WRITABLE="create mkdir mknod symlink link unlink rmdir rename chmod chown truncate utimens open setxattr removexattr groups beneath writer"
TEMPS="tmpfile templink temprename"

# run_cases LABEL CASES...: each wanted case under $H/rw/LABEL
run_cases() {
	local label=$1 c
	shift
	mkdir -m 755 "$H/rw/$label"
	for c in "$@"; do
		wanted "$c" && "c_$c" "rw/$label" "$label: $c"
	done
}

mkdir -p "$H/rw" "$H/lr" "$H/st" "$H/ro"
chmod 755 "$H/rw" "$H/lr" "$H/st" "$H/ro"
chown "$u:$u" "$H/lr"
echo OLD >"$H/st/summary.md"
mount_beside -o xattr
M=$MNT
run_cases auto $WRITABLE
unmount_awfs
check "awfs stopped cleanly (auto)" 0 "$AWFS_RC"

need_temps=""
for c in $TEMPS; do wanted "$c" && need_temps=1; done
if [ -n "$need_temps" ]; then
	mount_beside -o cache=always
	for c in $TEMPS; do
		wanted "$c" && "c_$c" st "always: $c"
	done
	unmount_awfs
	check "awfs stopped cleanly (always)" 0 "$AWFS_RC"
fi

# the same writable cases with the kernel's fsuid fix-up off
if setpriv --securebits +no_setuid_fixup true 2>/dev/null; then
	rm -rf "$H/lr"/*
	AWFS_REAL=$AWFS
	AWFS="$T/awfs-fixup"
	printf '#!/bin/sh\nexec setpriv --securebits +no_setuid_fixup %s "$@"\n' "$AWFS_REAL" >"$AWFS"
	chmod 755 "$AWFS"
	mount_beside -o xattr
	run_cases fixup $WRITABLE
	unmount_awfs
	check "awfs stopped cleanly (fixup)" 0 "$AWFS_RC"
	AWFS=$AWFS_REAL
else
	echo "# setpriv cannot set SECBIT_NO_SETUID_FIXUP here: the fix-up cases not run"
fi
# the reserve
need_reserve=""
for c in $RESERVE; do wanted "$c" && need_reserve=1; done
if [ -n "$need_reserve" ] && command -v mkfs.ext4 >/dev/null && command -v losetup >/dev/null && losetup -f >/dev/null 2>&1; then
	SRC_MAIN=$SRC
	SRC="$T/rsv/src" MNT="$T/rsv/mnt"
	mkdir -p "$SRC" "$MNT"
	truncate -s 64M "$T/rsv.img"
	mkfs.ext4 -q -F -m 25 "$T/rsv.img" || { echo "not ok - reserve: mkfs.ext4 failed"; exit 1; }
	mount -o loop "$T/rsv.img" "$SRC" || { echo "not ok - reserve: the loop mount failed"; exit 1; }
	AT_EXIT="umount -l '$SRC' 2>/dev/null; $AT_EXIT"
	mountpoint -q "$SRC" || { echo "not ok - reserve: $SRC is not a mount point"; exit 1; }
	chmod 755 "$SRC" && mkdir -m 755 "$SRC/rw" && chown "$u:$u" "$SRC/rw"
	as_agent dd if=/dev/zero of="$SRC/rw/src1m" bs=1M count=1 status=none
	as_agent truncate -s 1M "$SRC/rw/sparse"
	as_agent touch "$SRC/rw/fa" "$SRC/rw/held"
	as_agent dd if=/dev/zero of="$SRC/rw/fill" bs=1M count=64 status=none 2>/dev/null
	sync
	as_agent dd if=/dev/zero of="$SRC/rw/fill2" bs=4k count=16384 status=none 2>/dev/null
	check "reserve: the agent filled the file system to root's reserve (its own write: ENOSPC)" ENOSPC \
		"$(as_agent dd if=/dev/zero of="$SRC/rw/probe" bs=1M count=1 conv=fsync 2>&1 | grep -q 'No space left' && echo ENOSPC || echo room)"
	POLICY="$T/rsv.conf"
	write_policy 'version = 1;
allow_write = ( { path = "rw"; reason = "the agent'"'"'s scratch"; } );'
	# twice: the agent's handles on the kernel's passthrough (the backing
	# file's credentials), then through awfs (its data calls)
	for pt in on off; do
		mount_awfs --source "$SRC" -o passthrough=$pt
		RM=$MNT
		[ $pt = on ] && ! grep -q "data path: the kernel's passthrough" "$LOG" &&
			echo "# this kernel offers no passthrough: the first round is served through awfs too"
		for c in $RESERVE; do
			wanted "$c" && "c_$c" reserve "reserve (passthrough=$pt): $c"
		done
		check "reserve (passthrough=$pt): ... root's own write through awfs still lands there" OK \
			"$(dd if=/dev/zero of="$RM/rw/root" bs=1M count=1 conv=fsync status=none 2>&1 && echo OK)"
		unmount_awfs
		check "awfs stopped cleanly (reserve, passthrough=$pt)" 0 "$AWFS_RC"
	done
	umount "$SRC" && MNT="" && SRC=$SRC_MAIN
elif [ -n "$need_reserve" ]; then
	echo "# no loop device or mkfs.ext4 here: the reserve cases (write, fallocate, copy_file_range, writeback) not run"
fi
finish
