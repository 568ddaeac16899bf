#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh - POSIX conformance of allow_write subtrees, as a differential test:
# the same fixed sequence of operations (tests/conform/conform.c: link counts,
# times, ownership, setgid and sticky directories, NAME_MAX and PATH_MAX,
# rename over open files, unlinked-but-open files, O_APPEND, sparse files past
# 4 GiB with SEEK_DATA/SEEK_HOLE, fsync, ftruncate, fallocate) runs in a plain
# directory and in an allow_write subtree of an awfs mount over the same file
# system, as root and as an unprivileged uid (which awfs-conform gives the
# supplementary group of one of the two setgid directories). It passes only
# when the two transcripts of each uid are identical, and when the trees the
# runs leave behind are the same on the host (owners, modes, link counts,
# sizes). A difference is a place where awfs is not the file system
# underneath; the unified diff shows it. AWFS_CONFORM_KEEP=1 keeps the
# transcripts (plain-*.txt, awfs-*.txt) in the temporary directory.
# Exit 77 (skipped) when it cannot run here.
. "$(dirname "$0")/../integration/lib.sh"

CONFORM=${AWFS_CONFORM:?AWFS_CONFORM must name the awfs-conform binary}
# FUSE has no tmpfile request before libfuse 3.17: O_TMPFILE is refused through
# awfs (hostile.sh checks it is EOPNOTSUPP), so it is left out of the comparison
export AWFS_CONFORM_NO_TMPFILE=1
OTHER_UID=2000		# owns the entries of the sticky directory
SGID_GROUP=4242		# the group of sgid/; neither uid is in it
MEMBER_GROUP=4243	# the group of sgid-member/; awfs-conform gives the agent uid this supplementary group
KEEP_T=${AWFS_CONFORM_KEEP:-}

require_mount_env

# The plain directory and the awfs source must be on the same file system, so
# that what the file system decides (allocation, SEEK_DATA granularity,
# NAME_MAX, timestamp range) is the same on both sides.
make_tmp
PLAIN="$T/plain"
mkdir -p "$PLAIN" "$SRC/w"
chmod 755 "$PLAIN" "$SRC" "$SRC/w"
write_policy 'version = 1;
allow_write = (
  { path = "w"; reason = "the conformance runs write here"; }
);'

# setup_dir DIR UID: an empty directory for one run, owned by UID, with the
# sticky and setgid directories awfs-conform expects
setup_dir() {
	local d=$1 u=$2
	mkdir "$d"
	chown "$u:$u" "$d"
	chmod 755 "$d"
	mkdir "$d/sticky" "$d/sticky/theirdir" "$d/sgid" "$d/sgid-member"
	: >"$d/sticky/theirs"
	echo theirs >"$d/sticky/theirs-rw"
	chown root:root "$d/sticky"
	chmod 1777 "$d/sticky"
	chown "$OTHER_UID:$OTHER_UID" "$d/sticky/theirs" "$d/sticky/theirs-rw" "$d/sticky/theirdir"
	chmod 644 "$d/sticky/theirs"
	chmod 666 "$d/sticky/theirs-rw"
	chmod 777 "$d/sticky/theirdir"
	chown "root:$SGID_GROUP" "$d/sgid"
	chmod 2777 "$d/sgid"
	chown "root:$MEMBER_GROUP" "$d/sgid-member"
	chmod 2777 "$d/sgid-member"
}

RUNS="root:0 user:$AGENT_UID"
for r in $RUNS; do
	setup_dir "$PLAIN/${r%%:*}" "${r#*:}"
	setup_dir "$SRC/w/${r%%:*}" "${r#*:}"
done

# ---- the mount, beside the source (so the host side stays visible)
mount_beside

# tree DIR: what the host holds below DIR, without times or inode numbers
# (a directory's size is left out: it is the file system's bookkeeping)
tree() {
	(cd "$1" && find . -printf '%p %y %m %U:%G %n %s\n') |
		awk '$2 == "d" { $6 = "-" } { print }' | LC_ALL=C sort
}

# ---- the runs: the plain directory and the awfs view, for each uid
for r in $RUNS; do
	name=${r%%:*}
	uid=${r#*:}
	start=$(date +%s%N)
	timeout 600 "$CONFORM" "$PLAIN/$name" "$uid" >"$T/plain-$name.txt" 2>"$T/plain-$name.err"
	prc=$?
	timeout 600 "$CONFORM" "$MNT/w/$name" "$uid" >"$T/awfs-$name.txt" 2>"$T/awfs-$name.err"
	arc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	check "uid $uid: awfs-conform ran in both (exit status plain/awfs)" "0/0" "$prc/$arc"
	for side in plain awfs; do
		[ -s "$T/$side-$name.err" ] && sed "s/^/#   $side stderr: /" "$T/$side-$name.err" | head -5
	done
	lines=$(wc -l <"$T/plain-$name.txt")
	if [ "$lines" -gt 0 ] && cmp -s "$T/plain-$name.txt" "$T/awfs-$name.txt"; then
		check "uid $uid: the awfs transcript equals the plain directory's ($lines lines, both runs ${ms} ms)" same same
	else
		check "uid $uid: the awfs transcript equals the plain directory's ($lines lines)" same different
		diff -u --label "plain (uid $uid)" --label "awfs (uid $uid)" \
			"$T/plain-$name.txt" "$T/awfs-$name.txt" | sed 's/^/#   /'
	fi
	tree "$PLAIN/$name" >"$T/plain-$name.tree"
	tree "$SRC/w/$name" >"$T/awfs-$name.tree"
	if cmp -s "$T/plain-$name.tree" "$T/awfs-$name.tree"; then
		check "uid $uid: the host tree awfs left equals the plain directory's ($(wc -l <"$T/plain-$name.tree") entries)" same same
	else
		check "uid $uid: the host tree awfs left equals the plain directory's" same different
		diff -u --label "plain (uid $uid)" --label "awfs source (uid $uid)" \
			"$T/plain-$name.tree" "$T/awfs-$name.tree" | sed 's/^/#   /' | head -60
	fi
done

# every operation was inside the allow_write subtree: nothing may have been refused
check "awfs refused nothing" "0" "$(grep -c 'denied' "$LOG" 2>/dev/null || true)"
check "awfs is still mounted" "yes" "$(is_mounted "$MNT" && echo yes || echo no)"

finish
