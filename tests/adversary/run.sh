#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh - the agent-side invariant fuzzer (awfs-adversary, adversary.c) on a
# real mount. A fixture with secrets under masks, root-owned files (0600,
# 0644, and 0644 with a POSIX ACL denying uid 1000) in the writable trees,
# and read-only content is mounted with two different allow_write rules (rw
# and mem-*), so renames cross rule boundaries. The fuzzer runs as root, its
# workers as uids 1000 and 65534, for $AWFS_ADVERSARY_SECONDS (45) seconds
# with seed $AWFS_ADVERSARY_SEED (1); it checks what the agent sees. Then
# this script checks the rest: the daemon alive, its fds and memory bounded,
# and, after unmounting, the host: the read-only and masked trees and the
# root-owned files unchanged, nothing in the writable trees owned by a uid
# the agent does not run as, no root-owned object (a whiteout, say) that the
# fixture did not have. Every wait is bounded: a run that hangs the mount
# still ends, kills what it started, and unmounts. First, a self-test on a
# copy of the fixture without awfs: the fuzzer must see the masked secrets
# there, and nothing the host itself refuses (no false alarms).
#
# AWFS_ADVERSARY_SOURCE=ramfs serves the fixture from a ramfs, which keeps
# no xattrs and so no ACLs, as a virtiofs share exported without xattrs
# does in a guest: awfs lets the modes alone decide there (noacl.sh).
#
# AWFS_ADVERSARY names the fuzzer binary (else it is compiled here with
# $CC, default gcc); AWFS_ADVERSARY_PROCS (4) workers; AWFS_ADVERSARY_ARGS
# adds options (-x KIND to leave a kind of operation out, -a, -t: see
# awfs-adversary -h); AWFS_ADVERSARY_SELFTEST_SECONDS (3);
# AWFS_ADVERSARY_CANARY_UID (65534, a worker's uid too) runs the
# unprivileged canary; AWFS_ADVERSARY_RSS_MB (64) bounds how much awfs's VmRSS may grow;
# AWFS_ADVERSARY_SATURATE=1 adds what -S needs to the fixture (saturate.sh);
# AWFS_ADVERSARY_URING=1 mounts with the fuse module's enable_uring at 1
# (put back after), so that every request comes through FUSE over io_uring
# (tests/adversary/uring.sh; skipped where the kernel has none);
# AWFS_ADVERSARY_KEEP=1 keeps the temporary directory (the tree the run
# left, awfs's log, the fuzzer's output); AWFS_ADVERSARY_DROP_CACHES=1 has
# the kernel drop its dentry cache (system-wide) before awfs's fds are
# counted, for the tight bound. Exit 77 (skipped) when it cannot run here.
AWFS_PROBE=${AWFS_PROBE:-unused}	# lib.sh wants one; nothing here probes
. "$(dirname "$0")/../integration/lib.sh"

# in a sanitizer build, ASan's quarantine would hold freed memory and make RSS
# grow by design (to ~400 MB in 45 s here); without it RSS means what it does
# in a normal build (as in load.sh)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
SECS=${AWFS_ADVERSARY_SECONDS:-45}
SEED=${AWFS_ADVERSARY_SEED:-1}
PROCS=${AWFS_ADVERSARY_PROCS:-4}
SELF_SECS=${AWFS_ADVERSARY_SELFTEST_SECONDS:-3}
RSS_MB=${AWFS_ADVERSARY_RSS_MB:-64}
KEEP_T=${AWFS_ADVERSARY_KEEP:-}
OTHER_UID=65534
HERE=$(cd "$(dirname "$0")" && pwd)

require_mount_env
command -v getfattr >/dev/null || skip "no getfattr (apt-get install attr)"
URING_PARAM=/sys/module/fuse/parameters/enable_uring
if [ "${AWFS_ADVERSARY_URING:-0}" = 1 ]; then
	[ -w "$URING_PARAM" ] || skip "this kernel has no FUSE over io_uring ($URING_PARAM)"
	AT_EXIT="echo $(cat "$URING_PARAM") >$URING_PARAM 2>/dev/null; ${AT_EXIT}"
	echo 1 >"$URING_PARAM"
fi
command -v setsid >/dev/null || skip "no setsid (util-linux)"
make_tmp
SOURCE_KIND=${AWFS_ADVERSARY_SOURCE:-dir}
KEEP=$T/keep
case "$SOURCE_KIND" in
dir) ;;
ramfs)
	# the source and the links that keep root's files, on one ramfs
	grep -qw ramfs /proc/filesystems || skip "no ramfs in this kernel"
	mkdir "$T/ramfs"
	mount -t ramfs -o mode=755 ramfs "$T/ramfs" || skip "cannot mount ramfs"
	AT_EXIT='umount -l "$T/ramfs"'
	SRC=$T/ramfs/src MNT=$T/ramfs/src KEEP=$T/ramfs/keep
	mkdir "$SRC" ;;
*) echo "AWFS_ADVERSARY_SOURCE=$SOURCE_KIND: expected dir or ramfs"; exit 99 ;;
esac

ADV=${AWFS_ADVERSARY:-}
if [ -z "$ADV" ]; then
	ADV="$T/awfs-adversary"
	${CC:-gcc} -Wall -Wextra -O2 -pthread -o "$ADV" "$HERE/adversary.c" ||
		skip "cannot compile $HERE/adversary.c (set AWFS_ADVERSARY)"
fi
[ -x "$ADV" ] || skip "no fuzzer binary at $ADV"

# ------------------------------------------------------------ the fixture
WRITABLE="rw mem-a mem-b"
READONLY="ro secret top.key server.pem rootfile rw/.git rw/masked"
write_policy 'version = 1;
mask = (
  { path = "secret"; reason = "holds tokens"; },
  { path = "top.key"; reason = "a key file"; },
  { path = "*.pem"; reason = "certificates"; },
  { path = "ro/hidden"; reason = "nested mask"; },
  { path = "rw/masked"; reason = "mask inside a writable tree"; }
);
allow_write = (
  { path = "rw"; reason = "agent scratch"; },
  { path = "mem-a"; reason = "a memory the host uploads: no link, FIFO or socket"; links = "none"; },
  { path = "mem-b"; reason = "a memory the host uploads: links to read-only ground only"; links = "read-only"; },
  { path = "summary.md"; reason = "a single file the agent replaces through a temporary beside it"; }
);
read_only = (
  { path = "rw/.git"; reason = "the host runs git here"; },
  { path = "ro"; reason = "must stay readable"; }
);'

# root_file PATH MODE TEXT: a root-owned file in a writable dir, kept
# hard-linked in $KEEP (on the source's file system) so that its state can
# be read after the run even if the agent renamed or removed its name
root_file() {
	printf '%s\n' "$3" >"$SRC/$1"
	chown root:root "$SRC/$1"
	chmod "$2" "$SRC/$1"
	ln "$SRC/$1" "$KEEP/$(echo "$1" | tr / _)"
}

build_fixture() {
	cd "$SRC" || exit 1
	mkdir -p secret/sub ro/dir ro/hidden rw/sub rw/.git rw/masked mem-a mem-b "$KEEP"
	# what the masks hide: names and bytes the agent must never see
	echo AWFS_SECRET_1 >secret/AWFS_SECRET_NAME_1
	echo AWFS_SECRET_2 >secret/sub/AWFS_SECRET_NAME_2
	echo AWFS_SECRET_3 >top.key
	echo AWFS_SECRET_4 >server.pem
	echo AWFS_SECRET_5 >ro/hidden/AWFS_SECRET_NAME_5
	echo AWFS_SECRET_6 >rw/masked/AWFS_SECRET_NAME_6
	# read-only content, a host symlink out of it, the canaries' file
	echo RODATA >ro/file
	echo x >ro/dir/x
	echo 'awfs canary' >ro/canary
	ln -s ../rw/file ro/link
	echo ROOTFILE >rootfile
	echo GITCFG >rw/.git/config
	echo RWDATA >rw/file
	echo MEM >mem-a/m
	echo SUMMARY >summary.md
	if [ -n "${AWFS_ADVERSARY_SATURATE:-}" ]; then
		# saturate.sh: what -S weighs on the daemon with (adversary.c)
		mkdir -p ro/flood rw/big
		truncate -s 128M ro/sparse
		(cd rw/big && seq 100000 | sed 's/^/an-entry-/' | xargs touch)
	fi
	chown -R "$AGENT_UID:$AGENT_UID" .
	# both uids may rename root's files there; neither may chmod the roots
	# shut (a "mem-a/e/.." in the fuzzer's hands)
	chown root:root rw rw/sub mem-a mem-b
	chmod 777 rw rw/sub mem-a mem-b
	[ -z "${AWFS_ADVERSARY_SATURATE:-}" ] || chmod 777 ro/flood rw/big
	# the canaries' path: root's, so nobody can chmod it shut (in the
	# self-test, where no policy protects it), yet writable-looking, so
	# what refuses writes in ro/ through awfs is the policy
	chown root:root . ro ro/dir ro/canary
	chmod 777 . ro ro/dir
	# (a ramfs keeps no xattrs: then the fixture has none)
	{
		setfattr -n user.tag -v AWFS_SECRET_X1 secret
		setfattr -n user.tag -v AWFS_SECRET_X2 top.key
		setfattr -n user.tag -v AWFS_SECRET_X3 rw/masked
		setfattr -n user.tag -v rovalue ro/file
	} 2>/dev/null || [ "$SOURCE_KIND" = ramfs ] || echo "# setfattr failed on $SRC"
	cd - >/dev/null || exit 1
	# what the host's permissions keep from the agent, where it may write
	root_file rw/secret600 600 AWFS_ROOTONLY_1
	root_file rw/sub/secret600 600 AWFS_ROOTONLY_2
	root_file mem-a/secret600 600 AWFS_ROOTONLY_3
	root_file mem-b/secret600 600 AWFS_ROOTONLY_4
	root_file rw/rootro644 644 ROOTREAD_1
	root_file mem-b/rootro644 644 ROOTREAD_2
	setfattr -n user.tag -v AWFS_ROOTONLY_X4 "$SRC/mem-a/secret600" 2>/dev/null || [ "$SOURCE_KIND" = ramfs ]
	echo "uid=$AGENT_UID AWFS_ACLDENY_$AGENT_UID" >"$T/forbidden"
	# mode 0644, and an ACL entry denying the agent's uid (not the other)
	for d in rw mem-a mem-b; do
		command -v setfacl >/dev/null || break
		root_file "$d/acl644" 644 "AWFS_ACLDENY_$AGENT_UID"
		setfacl -m "u:$AGENT_UID:---" "$SRC/$d/acl644" 2>/dev/null || rm -f "$SRC/$d/acl644" "$KEEP/${d}_acl644"
	done
	[ -f "$SRC/mem-a/acl644" ] || echo "# no POSIX ACLs here: the ACL-denied files are left out"
}

# ------------------------------------------------------------ host state
# ro_state: the read-only and masked trees, and the root directory's names,
# as one hash: every entry's type, mode, owner, size, link count, target,
# every file's bytes, every xattr
ro_state() {
	(
		cd "$SRC" || exit 1
		find . -mindepth 1 -maxdepth 1 -printf '%p %y\n' | LC_ALL=C sort
		# shellcheck disable=SC2086
		find $READONLY -printf '%p %y %m %U:%G %s %n %l\n' | LC_ALL=C sort
		# shellcheck disable=SC2086
		find $READONLY -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum
		# shellcheck disable=SC2086
		getfattr -h -R -d -m - $READONLY 2>/dev/null
	) | sha256sum | cut -d' ' -f1
}

# root_state: the root-owned files of the writable trees, through the links
# kept outside the mount, a line each: mode, owner, size, bytes, xattrs
# (ACLs too)
root_state() {
	(
		cd "$KEEP" || exit 1
		for f in *; do
			printf '%s %s %s %s\n' "$f" "$(stat -c '%a %u:%g %s' "$f")" "$(sha256sum <"$f" | cut -c1-16)" \
				"$(getfattr -d -m - "$f" 2>/dev/null | grep -v '^#' | tr '\n' ' ')"
		done
	)
}

# writable_objects FIND-ARGS...: what find lists in the writable trees
writable_objects() {
	# shellcheck disable=SC2086
	(cd "$SRC" && find $WRITABLE "$@")
}

build_fixture

# ------------------------------------------------------------ self-test
# Against the raw tree (no awfs) the fuzzer must read the masked secrets
# (its eyes work) and see nothing else: the host keeps its own permissions
# and ACLs, and a whiteout is its maker's. What it reports against awfs is
# then not a false alarm of its own.
cp -a "$SRC" "$T/raw"
self=$(timeout -k 5 $((SELF_SECS + 60)) setsid "$ADV" -k -u "$AGENT_UID,$OTHER_UID" -U "$OTHER_UID" -f "$T/forbidden" \
	"$T/raw" "$SELF_SECS" "$SEED" "$PROCS" 2>&1)
check_match "self-test: without awfs it reads the masked secrets" \
	"VIOLATION: (read|readdir|mmap|getxattr|listxattr) of .*AWFS_SECRET_" "$self"
wrong=$(printf '%s\n' "$self" | grep '^VIOLATION' | grep -v 'AWFS_SECRET_\|read-only or masked\|masked directory')
check "self-test: ... and nothing the host refuses, nothing another uid's" "" "$(printf '%s' "$wrong" | head -3)"
[ -z "$wrong" ] || printf '%s\n' "$self" | sed 's/^/# self-test: /'
rm -rf "$T/raw"

ro0=$(ro_state)
root0=$(root_state)
names0=$(cd "$SRC" && ls -A | LC_ALL=C sort)
writable_objects -uid 0 -printf '%i\n' | sort >"$T/root-inodes"

# ------------------------------------------------------------ teardown
ADV_PID=""
# teardown: bounded at every step, so a hung mount cannot hang the test:
# the fuzzer's process group, then awfs (TERM, then KILL: a dead daemon
# aborts the connection, which frees every caller stuck in a request),
# then the mount point
teardown() {
	if [ -n "$ADV_PID" ]; then
		kill -KILL -- "-$ADV_PID" 2>/dev/null
	fi
	if [ -n "$AWFS_PID" ]; then
		kill -TERM "$AWFS_PID" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$AWFS_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$AWFS_PID" 2>/dev/null
		wait "$AWFS_PID" 2>/dev/null
		AWFS_PID=""
	fi
	is_mounted "$MNT" && { timeout 10 fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; }
}
AT_EXIT="teardown; $AT_EXIT"

# awfs_fds, awfs_rss_kb: what the daemon holds
awfs_fds() { find "/proc/$AWFS_PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
awfs_rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$AWFS_PID/status" 2>/dev/null; }

# group_alive: a process of the fuzzer's group is left
group_alive() { [ -n "$(ps -e -o pgid= | awk -v g="$ADV_PID" '$1 == g')" ]; }

# the change record on (changes.h): what the workers change, checked against the host after
# (the tree before, as the host has it: the mount covers it, masks and all)
/usr/bin/python3 "$HERE/../integration/treediff.py" manifest "$SRC" $WRITABLE summary.md >"$T/before.json"
# keepers on (off by default): they must hold nothing through the attack and the unmount
mount_awfs -o xattr,keepers=on --audit "$T/audit.jsonl" --record-changes
# the workers' handles are on the kernel's passthrough where it is offered
# (src/passthrough.h): they attack that data path, and say which one it was
echo "# $(grep -o 'data path: [^)]*' "$LOG" | head -1)"
if [ "${AWFS_ADVERSARY_URING:-0}" = 1 ]; then
	check_match "the requests come through FUSE over io_uring" "requests: FUSE over io_uring, [0-9]+ queues" \
		"$(grep ' mounted ' "$LOG")"
fi
if [ "$SOURCE_KIND" = ramfs ]; then
	check_match "a ramfs source: awfs lets the modes decide" "no POSIX ACLs there: modes alone decide access" \
		"$(grep ' mounted ' "$LOG")"
fi
fds0=$(awfs_fds)
rss0=$(awfs_rss_kb)

# ------------------------------------------------------------ the run
# its own process group (setsid), so that whatever it leaves is found by id
echo "# awfs-adversary $MNT $SECS s, seed $SEED, $PROCS workers (uids $AGENT_UID,$OTHER_UID)"
# shellcheck disable=SC2086
setsid "$ADV" -k -u "$AGENT_UID,$OTHER_UID" -U "${AWFS_ADVERSARY_CANARY_UID:-$OTHER_UID}" -f "$T/forbidden" -s summary.md ${AWFS_ADVERSARY_ARGS:-} \
	"$MNT" "$SECS" "$SEED" "$PROCS" >"$T/adversary.out" 2>&1 &
ADV_PID=$!
for _ in $(seq $(((SECS + 30) * 10))); do kill -0 "$ADV_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$ADV_PID" 2>/dev/null; then
	echo "# the fuzzer did not end $((SECS + 30)) s after it started: killed"
	kill -KILL -- "-$ADV_PID"
fi
wait "$ADV_PID"
adv_rc=$?
cat "$T/adversary.out"
check "the fuzzer saw no violation (exit 0)" 0 "$adv_rc"
if [ "$adv_rc" != 0 ]; then
	extra=""
	[ -n "${AWFS_ADVERSARY_ARGS:-}" ] && extra=" AWFS_ADVERSARY_ARGS='$AWFS_ADVERSARY_ARGS'"
	echo "# reproduce: AWFS=$AWFS AWFS_ADVERSARY_SEED=$SEED AWFS_ADVERSARY_SECONDS=$SECS AWFS_ADVERSARY_PROCS=$PROCS$extra bash $HERE/run.sh"
fi

# ------------------------------------------------------------ the daemon
alive=no
kill -0 "$AWFS_PID" 2>/dev/null && alive=yes
check "awfs is still running" yes "$alive"
# a name never looked up and an open: both reach the daemon (a stat of a
# known name may be answered from the kernel's cache)
check "the mount still answers (a fresh lookup and a read, within 5 s each)" "ENOENT awfs canary" \
	"$(timeout -k 1 5 stat "$MNT/ro/dir/.alive-$$" >/dev/null 2>&1; [ $? = 1 ] && echo ENOENT) $(timeout -k 1 5 cat "$MNT/ro/canary" 2>&1)"
fds1=""
if [ "$alive" = yes ]; then
	if [ "${AWFS_ADVERSARY_DROP_CACHES:-0}" = 1 ]; then
		# the kernel forgets what it does not use, and awfs closes those fds
		echo 2 >/proc/sys/vm/drop_caches
		sleep 1
	fi
	fds1=$(awfs_fds)
	rss1=$(awfs_rss_kb)
	ls -l "/proc/$AWFS_PID/fd" >"$T/awfs-fds.txt" 2>&1
	echo "# awfs: $fds0 -> $fds1 fds, VmRSS $rss0 -> $rss1 kB"
	check "awfs's VmRSS grew by at most $RSS_MB MiB" yes \
		"$([ "$rss1" -le $((rss0 + RSS_MB * 1024)) ] && echo yes || echo "no: $rss0 -> $rss1 kB")"
fi

# ------------------------------------------------------------ clean-up
teardown
for _ in $(seq 50); do group_alive || break; sleep 0.1; done
check "no process of the fuzzer is left once the mount is gone" no "$(group_alive && echo yes || echo no)"
check "the read-only root has the fixture's names: no temporary, no hidden name of awfs's left" "$names0" \
	"$(cd "$SRC" && ls -A | LC_ALL=C sort)"
check "summary.md, whatever replaced it, is a regular file" "regular" \
	"$( [ -f "$SRC/summary.md" ] && [ ! -L "$SRC/summary.md" ] && echo regular || stat -c %F "$SRC/summary.md" 2>&1)"
ADV_PID=""
check "the mount is gone" 0 "$(awfs_mounts "$MNT")"
if [ "${AWFS_ADVERSARY_URING:-0}" = 1 ]; then
	echo "# $(grep -o 'FUSE over io_uring: .*' "$LOG" | tail -1)"
	check_match "... its requests came through the queues" "FUSE over io_uring: [1-9][0-9]* requests came through the queues" \
		"$(grep 'FUSE over io_uring: ' "$LOG")"
fi

# ------------------------------------------------------------ the change record
# every path of the writable trees that differs on the host is in the
# record, and what else it names is unchanged (treediff.py). A record
# awfsctl calls incomplete says why: only files recorded without a hash
# (the recorder was behind: ASan builds under saturation) still name every
# path, and are compared the same (so are changes through a name the
# record cannot place); changes dropped (a full queue or byte budget) are
# then what is checked
/usr/bin/python3 "$HERE/../integration/treediff.py" manifest "$SRC" $WRITABLE summary.md >"$T/after.json"
"${AWFSCTL:-$HERE/../../awfsctl}" changes --json "$T/audit.jsonl" >"$T/changes.json" 2>"$T/changes.err"
crc=$?
check "awfsctl changes reads the record (0 complete, 1 incomplete)" yes "$([ "$crc" -le 1 ] && echo yes || echo "no: $crc $(cat "$T/changes.err")")"
check "the record ends with its summary" 1 "$(grep -c '"event":"changes"' "$T/audit.jsonl")"
why=$(/usr/bin/python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
print(" ".join(k for k in ("dropped", "unhashed", "unattributed") if c[k]) + ("" if c["closed"] else " unclosed"))
' "$T/changes.json" 2>&1)
echo "# change record: awfsctl exit $crc${why:+, incomplete for: $why}"
check "awfsctl's exit and the reasons it gives agree" yes \
	"$([ "$crc" = 0 ] && [ -z "$why" ] || { [ "$crc" = 1 ] && [ -n "$why" ]; } && echo yes || echo "no: exit $crc, reasons '$why'")"
check "the record is closed by its summary (awfs stopped cleanly)" yes "$(case " $why " in *" unclosed "*) echo no ;; *) echo yes ;; esac)"
case " $why " in
*" dropped "*)
	check_match "an incomplete record says how much it dropped" '"dropped":[1-9]' "$(grep '"event":"changes"' "$T/audit.jsonl")"
	;;
*)
	/usr/bin/python3 "$HERE/../integration/treediff.py" compare "$T/before.json" "$T/after.json" "$T/changes.json" >"$T/compare.out"
	echo "# change record: $(head -1 "$T/compare.out"), $(grep -c '"event":"change"' "$T/audit.jsonl") records"
	check "every path the workers changed is in the record" "missed []" "$(grep '^missed' "$T/compare.out")"
	check "  ... and nothing it names is unchanged but for a rewrite to the same bytes" "extra []" "$(grep '^extra' "$T/compare.out")"
	check "  ... its hashes are the files'" "wronghash []" "$(grep '^wronghash' "$T/compare.out")"
	;;
esac

# ------------------------------------------------------------ the host
# awfs keeps one fd per object the kernel holds, and with entries cached
# for an hour the kernel may hold every object the run made: so the bound
# is 200 over one fd per object left in the tree, or 200 alone once the
# kernel has dropped its cache (AWFS_ADVERSARY_DROP_CACHES=1; system-wide)
if [ -n "$fds1" ]; then
	objects=$(find "$SRC" | wc -l)
	[ "${AWFS_ADVERSARY_DROP_CACHES:-0}" = 1 ] && objects=0
	check "awfs's fds grew by at most 200 + $objects objects in the tree" yes \
		"$([ "$fds1" -le $((fds0 + 200 + objects)) ] && echo yes || echo "no: $fds0 -> $fds1")"
fi
check "the read-only and masked trees are unchanged" "$ro0" "$(ro_state)"
check "the root-owned files in the writable trees are unchanged" "" \
	"$(diff <(printf '%s\n' "$root0") <(root_state) | grep '^[<>]')"
check "everything in the writable trees is owned by root or the agent's uids" "" \
	"$(writable_objects \( ! -uid 0 ! -uid "$AGENT_UID" ! -uid "$OTHER_UID" \) -printf '%u:%g %y %p\n' | head -5)"
# links = "none" in mem-a, "read-only" in mem-b: whatever sequence the
# workers tried, nothing there leads the host out of the tree or blocks it
check "mem-a (links = \"none\") holds no link, FIFO, socket or device node" "" \
	"$(find "$SRC/mem-a" \( -type l -o -type p -o -type s -o -type b -o -type c \) -printf '%y %p\n' | head -5)"
check "mem-b (links = \"read-only\") holds no FIFO, socket or device node" "" \
	"$(find "$SRC/mem-b" \( -type p -o -type s -o -type b -o -type c \) -printf '%y %p\n' | head -5)"
bad=""
while IFS= read -r -d '' l; do
	t=$(readlink "$l")
	case $t in
	"$MNT"/ro/hidden | "$MNT"/ro/hidden/*) bad="$bad $l->$t" ;;
	"$MNT"/ro | "$MNT"/ro/*) [ "$(realpath -m "$t")" = "$t" ] && [ -e "$t" ] || bad="$bad $l->$t" ;;
	*) bad="$bad $l->$t" ;;
	esac
done < <(find "$SRC/mem-b" -type l -print0)
check "every link in mem-b names read-only ground by an absolute path through no link" "" "$bad"
echo "# links in mem-b at the end: $(find "$SRC/mem-b" -type l | wc -l)"
check "no device node owned by root in the writable trees" "" \
	"$(writable_objects \( -type c -o -type b \) -uid 0 -printf '%y %m %u:%g %p\n' | head -5)"
check "every root-owned object in the writable trees is the fixture's" "" \
	"$(writable_objects -uid 0 -printf '%i %y %m %p\n' | awk 'NR == FNR { had[$1] = 1; next } !had[$1]' \
		"$T/root-inodes" - | head -5)"
finish
