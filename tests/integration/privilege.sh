#!/usr/bin/env bash
# privilege.sh - awfs never lends its power and no caller stalls another.
# An unprivileged agent tries to borrow the daemon's root: O_CREAT through a
# directory view held across a rename between two allow_write rules, onto a
# root-only file (read it, append to it) and onto a FIFO (hang the mount);
# hard links to root-only files (protected_hardlinks); a whiteout (whose
# owner?); host POSIX ACLs that deny and that grant, on files and
# directories; supplementary groups (the host must see them). Then agents
# sit in blocking operations (FIFO opens and reads, flock waits) for
# $AWFS_STALL_SECONDS (60) while another uid and root keep asking: every
# answer within a second. Last, what a denial line says when its path is
# longer than any line: who, by which rule, first; the path shortened.
. "$(dirname "$0")/lib.sh"
require_mount_env
command -v setfacl >/dev/null || skip "no setfacl (apt-get install acl)"
STALL=${AWFS_STALL_SECONDS:-60}
OTHER=65534
setup_fixture
u=$AGENT_UID
W="$SRC/rw" M="$SRC/mem-a"
echo ROOTONLY >"$W/root600" && chmod 600 "$W/root600"
echo ROOTONLY >"$W/victim600" && chmod 600 "$W/victim600"
echo MINE >"$W/mine" && chown "$u:$u" "$W/mine"
echo ROOT644 >"$M/root644" && chmod 644 "$M/root644"
echo ROOTLINK >"$W/rootlink" && chmod 600 "$W/rootlink"
# ACLs on the host: a file its ACL denies one user, one its ACL grants
echo DENIED >"$W/acl-deny" && chmod 644 "$W/acl-deny" && setfacl -m "u:$OTHER:---" "$W/acl-deny"
echo GRANTED >"$W/acl-grant" && chmod 600 "$W/acl-grant" && setfacl -m "u:$u:r" "$W/acl-grant"
mkdir "$W/acl-ddir" && echo X >"$W/acl-ddir/x" && setfacl -m "u:$OTHER:---" "$W/acl-ddir"
mkdir "$W/acl-gdir" && chmod 700 "$W/acl-gdir" && setfacl -m "u:$u:rwx" "$W/acl-gdir"
# a setgid directory writable through a supplementary group only
mkdir "$W/grp" && chown 0:4242 "$W/grp" && chmod 2775 "$W/grp"
chown 0:0 "$W/root600" "$W/victim600" "$M/root644" "$W/rootlink" "$W/acl-deny" "$W/acl-grant" "$W/acl-ddir" \
	"$W/acl-gdir"
mount_beside	# $MNT, with the host's tree at $SRC to look at and change
W="$MNT/rw" M="$MNT/mem-a"
with_group() { setpriv --reuid="$u" --regid="$u" --groups=4242 "$AWFS_PROBE" "$@"; }

# ------------------------------------------------------------ what the daemon keeps
st=$(grep -E '^(CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' "/proc/$AWFS_PID/status" | tr -s '\t ' ' ')
# CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID SETGID SETUID MKNOD; SYS_ADMIN permitted only
check "the daemon serves with 8 capabilities (CapEff 080000df)" "CapEff: 00000000080000df" "$(printf '%s\n' "$st" | grep CapEff)"
check "  ... and CAP_SYS_ADMIN permitted only, to unmount (CapPrm 082000df)" "CapPrm: 00000000082000df" "$(printf '%s\n' "$st" | grep CapPrm)"
check "  ... the bounding set the same" "CapBnd: 00000000082000df" "$(printf '%s\n' "$st" | grep CapBnd)"
check "  ... no ambient capabilities" "CapAmb: 0000000000000000" "$(printf '%s\n' "$st" | grep CapAmb)"
check "  ... no-new-privileges" "NoNewPrivs: 1" "$(printf '%s\n' "$st" | grep NoNewPrivs)"
check "  ... a seccomp filter" "Seccomp: 2" "$(printf '%s\n' "$st" | grep 'Seccomp:')"
check "  ... every thread permitted the same" "1" \
	"$(cat /proc/$AWFS_PID/task/*/status | grep -E '^CapPrm' | sort -u | wc -l)"
# the kernel's passthrough: its ioctls make CAP_SYS_ADMIN effective on the
# thread serving an open or a release, for the ioctl alone
as_agent sh -c 'dd if=/dev/zero of="$1" bs=64k count=8 status=none && cat "$1" >/dev/null' _ "$W/pt-probe"
check "after the agent's files were opened and released (passthrough where offered): every thread's CapEff is 080000df" \
	"CapEff: 00000000080000df" "$(cat /proc/$AWFS_PID/task/*/status | grep -E '^CapEff' | sort -u | tr -s '\t ' ' ')"

# ------------------------------------------------------------ stale views
expect "O_RDWR|O_CREAT through a view held across a rename, onto a root-only file: EACCES" \
	"EACCES" stale-view "$W/v1" "$M/v1" s "$W/victim600" rw
expect "O_WRONLY|O_APPEND|O_CREAT the same way onto a root 0644 file: EACCES" \
	"EACCES" stale-view "$M/v2" "$W/v2" s "$M/root644" wa
check "  ... the root-only file is unchanged" "ROOTONLY" "$(cat "$SRC/mem-a/v1/s")"
check "  ... so is the 0644 one" "ROOT644" "$(cat "$SRC/rw/v2/s")"
# the kernel's belief made stale by the host: a name it knows to be absent
# (cached for an hour in a writable path) that the host then creates
expect "a name looked up and absent" "ENOENT" stat "$W/hostmade"
echo HOSTROOT >"$SRC/rw/hostmade" && chmod 600 "$SRC/rw/hostmade"
expect "  ... made root-only on the host, then O_RDWR|O_CREAT through the mount: EACCES" \
	"EACCES" open "$W/hostmade" rwc
check "  ... untouched" "HOSTROOT 600 0" "$(cat "$SRC/rw/hostmade") $(stat -c '%a %u' "$SRC/rw/hostmade")"
expect "O_WRONLY|O_CREAT the same way onto the agent's own file opens it" \
	"OK" stale-view "$W/v3" "$M/v3" n "$W/mine" w
check "  ... the old view and the new name are one directory" "OK:MINE\x0a" "$(aprobe read "$M/v3/n")"
check "O_CREAT|O_EXCL onto an existing name through the old view: EEXIST" "EEXIST" \
	"$(as_agent sh -c "mkdir '$W/v4' && exec 3<'$W/v4' && mv '$W/v4' '$M/v4' && ls '$MNT/mem-a' >/dev/null &&
		test ! -e /proc/self/fd/3/x && touch '$M/v4/x' && exec '$AWFS_PROBE' open /proc/self/fd/3/x cx")"

# a FIFO put where the old view believes nothing is: the open waits in the
# agent's own process, as on the host, and nobody else waits with it
t0=$(date +%s%N)
got=$(timeout 20 setpriv --reuid="$u" --regid="$u" --clear-groups "$AWFS_PROBE" \
	stale-view "$W/v5" "$M/v5" ff fifo w 2)
check "O_WRONLY|O_CREAT onto a FIFO through the old view waits for a reader, in the agent (EINTR after 2 s)" \
	"EINTR" "$got"
check "  ... and the mount answered meanwhile and after" "OK" "$(timeout 5 "$AWFS_PROBE" readdir "$M/v5" | cut -c1-2)"

# ------------------------------------------------------------ caller's credentials
if [ "$(cat /proc/sys/fs/protected_hardlinks 2>/dev/null)" = 1 ]; then
	expect "a hard link to a root-only file (protected_hardlinks): EPERM" "EPERM" link "$W/rootlink" "$W/mylink"
else
	echo "# protected_hardlinks is off here: the hard-link check is the host's choice"
fi
expect "rename with RENAME_WHITEOUT" "OK" rename-whiteout "$W/file" "$W/file-moved"
check "  ... the whiteout on the host is the agent's" "c $u:$u" \
	"$(stat -c '%F %u:%g' "$SRC/rw/file" 2>/dev/null | sed 's/character special file/c/')"
expect "chmod of a root-only file: EPERM" "EPERM" chmod "$W/root600" 666
expect "truncate of a root-only file: EACCES" "EACCES" truncate "$W/root600" 0
expect "utime-now of a root-only file: EACCES" "EACCES" utime-now "$W/root600"
check "  ... it is unchanged" "ROOTONLY 600 0" "$(cat "$SRC/rw/root600") $(stat -c '%a %u' "$SRC/rw/root600")"
check "a file made in a setgid directory writable through a supplementary group" "OK" \
	"$(with_group create "$W/grp/new")"
check "  ... is the caller's, in the directory's group" "$u:4242" "$(stat -c '%u:%g' "$SRC/rw/grp/new")"
expect "  ... without the group: EACCES" "EACCES" create "$W/grp/new2"
check "chown of one's own file to a supplementary group" "OK" "$(with_group chown "$W/grp/new" -1 4242)"
expect "  ... to a group one is not in: EPERM" "EPERM" chown "$W/grp/new" -1 4243

as_agent sh -c "echo a >'$W/setid' && chmod 6775 '$W/setid'"
expect "a write to one's own set-user-ID file" "OK" append "$W/setid" b
check "  ... clears set-user-ID and set-group-ID, on the host and as seen" "775 775" \
	"$(stat -c %a "$SRC/rw/setid") $(aprobe stat "$W/setid" | sed 's/.*mode=0*\([0-7]*\).*/\1/')"
as_agent chmod 6775 "$W/setid"
expect "  ... so does a truncate" "OK" truncate "$W/setid" 0
check "  ... on the host and as seen" "775 775" \
	"$(stat -c %a "$SRC/rw/setid") $(aprobe stat "$W/setid" | sed 's/.*mode=0*\([0-7]*\).*/\1/')"
as_agent chmod 6775 "$W/setid"
expect "  ... so does copy_file_range into it (no O_TRUNC)" "OK:5" copy-over "$M/v3/n" "$W/setid"
check "  ... on the host" "775" "$(stat -c %a "$SRC/rw/setid")"

# ------------------------------------------------------------ ACLs are the host's
check "an ACL that denies a user a 0644 file: EACCES" "EACCES" \
	"$(setpriv --reuid=$OTHER --regid=$OTHER --clear-groups "$AWFS_PROBE" read "$W/acl-deny")"
expect "  ... another user reads it" "OK:DENIED\x0a" read "$W/acl-deny"
expect "an ACL that grants a user a 0600 root file: read" "OK:GRANTED\x0a" read "$W/acl-grant"
expect "  ... not written (the ACL grants r)" "EACCES" open "$W/acl-grant" w
check "an ACL that denies a user a directory: EACCES" "EACCES EACCES" \
	"$(setpriv --reuid=$OTHER --regid=$OTHER --clear-groups "$AWFS_PROBE" readdir "$W/acl-ddir") $(setpriv --reuid=$OTHER --regid=$OTHER --clear-groups "$AWFS_PROBE" read "$W/acl-ddir/x")"
expect "an ACL that grants a user a 0700 root directory: create in it" "OK" write "$W/acl-gdir/mine" hi
check "  ... the file is the agent's" "$u" "$(stat -c %u "$SRC/rw/acl-gdir/mine")"
expect "setting an ACL on a read-only file: EROFS" "EROFS" setacl "$MNT/ro/file" system.posix_acl_access
expect "setting an ACL on one's own writable file" "OK" setacl "$W/acl-gdir/mine" system.posix_acl_access

# ------------------------------------------------------------ nobody stalls the mount
# agents blocked in what waits for another process, each bounded by timeout
mkfifo "$SRC/rw/fifo-r" "$SRC/rw/fifo-w" && chown "$u:$u" "$SRC/rw/fifo-r" "$SRC/rw/fifo-w"
touch "$SRC/rw/lockf" && chown "$u:$u" "$SRC/rw/lockf"
pids=""
hold=$((STALL + 30))	# longer than the asking below: ended by kill
as_agent timeout "$hold" "$AWFS_PROBE" stale-view "$W/b1" "$M/b1" ff fifo w "$hold" >/dev/null & pids="$pids $!"
as_agent timeout "$hold" cat "$W/fifo-r" >/dev/null 2>&1 & pids="$pids $!"
as_agent timeout "$hold" sh -c "echo x >'$W/fifo-w'" 2>/dev/null & pids="$pids $!"
as_agent timeout "$hold" flock "$W/lockf" sleep "$hold" & pids="$pids $!"
sleep 0.3
as_agent timeout "$hold" flock "$W/lockf" true & pids="$pids $!"
AT_EXIT="kill $pids 2>/dev/null; wait 2>/dev/null"
sleep 1
# meanwhile another uid and root ask, each answer timed
slowest=0 failed=0 asked=0
end=$(($(date +%s) + STALL))
while [ "$(date +%s)" -lt "$end" ]; do
	for who in other root; do
		for op in "stat $MNT/ro/file" "readdir $W" "read $MNT/ro/file" "stat $M/b1"; do
			t0=$(date +%s%N)
			if [ $who = root ]; then
				r=$(timeout 10 "$AWFS_PROBE" $op)
			else
				r=$(timeout 10 setpriv --reuid=$OTHER --regid=$OTHER --clear-groups "$AWFS_PROBE" $op)
			fi
			ms=$((($(date +%s%N) - t0) / 1000000))
			asked=$((asked + 1))
			[ "$ms" -gt "$slowest" ] && slowest=$ms
			case $r in OK*) ;; *) failed=$((failed + 1)); echo "# $who $op: $r" ;; esac
		done
	done
	sleep 0.2
done
echo "# $asked answers while agents were blocked for ${STALL}s; the slowest took ${slowest} ms"
check "every answer came" "0" "$failed"
check "every answer within a second" "yes" "$([ "$slowest" -lt 1000 ] && echo yes)"
check "the agents were still blocked all along" "5" "$(for p in $pids; do kill -0 "$p" 2>/dev/null && echo x; done | wc -l)"
kill $pids 2>/dev/null
wait $pids 2>/dev/null
AT_EXIT=""

# ------------------------------------------------------------ who, always
# a rename from a path of 4,000 bytes of \xff names (16,000 escaped) into ro
deep=$(printf '\xff%.0s' $(seq 100))
d="$W"; for _ in $(seq 38); do d="$d/$deep"; done
as_agent mkdir -p "$d" && as_agent touch "$d/f"
expect "a rename from 3,800 bytes of \\xff names into ro: EROFS" "EROFS" rename "$d/f" "$MNT/ro/planted"
line=$(grep 'denied rename for pid' "$LOG" | tail -1)
check_match "  ... the line starts with who, the rule and the errno" \
	"^[-0-9T:Z]+ awfs: denied rename for pid [0-9]+ \(\"awfs-probe\"\) uid $u gid $u by read_only rule \"ro\" \([^)]*policy.conf:[0-9]+\); EROFS: " "$line"
check_match "  ... the path is shortened with a mark, outside the quotes" '\\xff"\[\.\.\.[0-9]+ bytes\.\.\.\]"\\xff' "$line"
check_match "  ... and the line is whole" "Writable paths: $MNT/rw, $MNT/made, $MNT/mem-\*\$" "$line"
check "  ... and shorter than a log line may be" "yes" "$([ ${#line} -lt 8000 ] && echo yes)"
check "  ... its audit of the same in .awfs/denials" "1" "$(as_agent cat "$MNT/.awfs/denials" | grep -c 'denied rename for pid .*bytes\.\.\.\]')"
unmount_awfs
check "awfs exits 0" "0" "$AWFS_RC"
check "the root-only file on the host, after all" "ROOTONLY" "$(cat "$SRC/mem-a/v1/s")"
finish
