#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fixture.sh DIR UID - lay out the parity fixture tree in DIR (made fresh),
# owned by UID with modes that let UID write, so that what refuses a write is
# the policy (EROFS), except under restricted/ (root's, 0755: EACCES) and
# the root-owned files granted to UID by ACL, or not (below).
set -eu
dir=$1 uid=$2
rm -rf "$dir"
mkdir -p "$dir"/secret/sub "$dir"/a/b/masked "$dir"/ro/dir "$dir"/rw/.git "$dir"/rw/masked \
	"$dir"/rw/sub "$dir"/mem-a "$dir"/restricted
echo TOPSECRET >"$dir/secret/data"
echo DEEP >"$dir/secret/sub/deep"
echo HIDDEN >"$dir/a/b/masked/x"
echo PLAIN >"$dir/a/b/plain"
echo KEYDATA >"$dir/top.key"
echo RODATA >"$dir/ro/file"
echo F >"$dir/ro/dir/f"
echo SPACES >"$dir/ro/name with spaces"
echo ACCENT >"$dir/ro/café"
# a large file with a fixed pattern: 4 MiB of a repeating line
yes 'awfs parity large file line' | head -c 4194304 >"$dir/ro/big"
ln -s ../secret/data "$dir/ro/link-to-secret"
ln -s ../rw/file "$dir/ro/link-to-rw"
ln -s /nonexistent/outside "$dir/ro/link-out"
echo RWDATA >"$dir/rw/file"
echo GITCFG >"$dir/rw/.git/config"
echo MASKEDRW >"$dir/rw/masked/m"
echo MEM >"$dir/mem-a/m"
echo ROOTFILE >"$dir/rootfile"
echo SUMMARY >"$dir/summary.md"	# the agent's own single file (replaced through a temporary)
echo RESTRICTED >"$dir/restricted/r"
chown -R "$uid:$uid" "$dir"
chown root:root "$dir/restricted" "$dir/restricted/r"
chmod 755 "$dir" "$dir/restricted"
chmod 644 "$dir/restricted/r"
setfattr -n user.tag -v hostvalue "$dir/ro/file"
# single files the agent may write only because the host grants them to its
# uid by ACL, as gh-aw's host-user runtime grants claude-debug.log (the
# host made them, 0600, as `umask 177 && touch` does); one in a read-only
# path, where the policy still refuses the write; and a root-only file in
# a writable tree, which the modes refuse
echo LOG >"$dir/granted.log"
echo ROGRANT >"$dir/ro/granted"
echo ROOTONLY >"$dir/rw/root-only"
chown root:root "$dir/granted.log" "$dir/ro/granted" "$dir/rw/root-only"
chmod 600 "$dir/granted.log" "$dir/ro/granted" "$dir/rw/root-only"
setfacl -m "u:$uid:rw" "$dir/granted.log" "$dir/ro/granted"
