#!/usr/bin/env bash
# mount.sh - the command line and the mount sequence: a bad policy never
# mounts, failures say why in one line, a good mount says what it enforces.
. "$(dirname "$0")/lib.sh"
require_mount_env
setup_fixture

out=$("$AWFS" --help); rc=$?
check "--help exits 0" "0" "$rc"
check_match "--help shows the synopsis" "usage: awfs MOUNTPOINT --policy FILE" "$out"
check_match "--version" "^awfs [0-9]+\.[0-9]+\.[0-9]+ \(libfuse 3\.[0-9]+" "$("$AWFS" --version)"

# bounded: an awfs that mounts by mistake is ended (SIGTERM unmounts) and fails the check
run() { out=$(timeout 60 "$AWFS" "$@" -f 2>&1); rc=$?; }
run "$MNT"
check "no policy: exit 2" "2" "$rc"
check_match "no policy: says so" "awfs: no policy given" "$out"
run "$MNT" --policy "$POLICY" --runtime podman
check "unknown runtime: exit 2" "2" "$rc"
check_match "unknown runtime: lists the known ones" "unknown runtime .podman.: expected one of docker, cloud-hypervisor, nvx, qemu, guest, host-user" "$out"

# ---- one way to say each setting; no option that weakens a guarantee
printf 'version = 1;\nallow_write = ( { path = "rw"; reason = "everything"; } );\nunclassified = "warn";\n' >"$T/lax.conf"
chmod 644 "$T/lax.conf"
for args in "--policy $POLICY -o policy=$T/lax.conf" "-o policy=$T/lax.conf --policy=$POLICY" \
	"--policy $POLICY --policy $POLICY" "--policy $POLICY -o source=$T --source $SRC" \
	"--policy $POLICY --log $LOG -o log=$T/x.log" "--policy $POLICY --audit $T/a -o audit=$T/b" \
	"--policy $POLICY --runtime docker -o runtime=nvx" "--policy $POLICY -o cache=auto,cache=never" \
	"--policy $POLICY -o xattr,noxattr"; do
	run "$MNT" $args
	check "a setting said twice ($args): exit 2, not mounted" "2 no" "$rc $(is_mounted "$MNT" && echo yes || echo no)"
done
check_match "  ... says which and both values" "awfs: --policy / -o policy given twice \(.$POLICY. and .$T/lax.conf.\)" \
	"$("$AWFS" "$MNT" --policy "$POLICY" -o policy="$T/lax.conf" -f 2>&1)"
run "$SRC" "$MNT" --policy "$POLICY" --source "$T"
check "the source given before the mount point and with --source: exit 2" "2" "$rc"
for o in auto_unmount "xattr,auto_unmount" ; do
	run "$MNT" --policy "$POLICY" -o "$o"
	check "-o $o refused: exit 2, not mounted" "2 no" "$rc $(is_mounted "$MNT" && echo yes || echo no)"
done
check_match "  ... says why" "auto_unmount refused: a daemon that dies would take the mount with it and show the raw directory" "$out"

# ---- --ready-fd: "ready" once the mount serves, end of file if it never will
mkfifo "$T/ready"
"$AWFS" "$MNT" --policy "$POLICY" -f --log "$LOG" --ready-fd 7 7>"$T/ready" 2>/dev/null &
rpid=$!
# cat ends at end of file: awfs closed the descriptor after saying it
said=$(timeout 60 cat "$T/ready"); rc=$?
check "--ready-fd: \"ready\" comes when the mount is there, then end of file" "0 ready yes" \
	"$rc $said $(is_mounted "$MNT" && echo yes || echo no)"
kill -TERM "$rpid"; wait "$rpid"
"$AWFS" "$MNT" --policy "$T/absent.conf" -f --ready-fd 7 7>"$T/ready" 2>/dev/null &
rpid=$!
said=none
read -r said <"$T/ready"
wait "$rpid"
check "--ready-fd: a mount that fails gives end of file, not \"ready\"" "" "$said"
"$AWFS" "$MNT" --policy "$POLICY" --ready-fd 7 7>"$T/ready.bg" 2>/dev/null
check "--ready-fd in the background: \"ready\" written before the command returns" "ready yes" \
	"$(cat "$T/ready.bg") $(is_mounted "$MNT" && echo yes || echo no)"
fusermount3 -u "$MNT"
for v in 0 1 2 -3 +3 3x 99 ""; do
	run "$MNT" --policy "$POLICY" --ready-fd "$v"
	check "--ready-fd '$v' refused: exit 2, not mounted" "2 no" "$rc $(is_mounted "$MNT" && echo yes || echo no)"
done
run "$MNT" --policy "$POLICY" --ready-fd 7 7<"$POLICY"
check "--ready-fd on a descriptor open for reading only: exit 2" "2 no" "$rc $(is_mounted "$MNT" && echo yes || echo no)"
check_match "  ... says why" "ready_fd=7: not open for writing" "$out"
rm -rf "$SRC/made"	# made by the mounts above (create = true); the checks below want it absent

# ---- the log and the audit file: awfs's own regular file, or nothing
mkfifo "$T/fifo"
touch "$T/theirs.log" && chown "$AGENT_UID" "$T/theirs.log"
touch "$T/open.log" && chmod 666 "$T/open.log"
for target in "$T/fifo" "$T/theirs.log" "$T/open.log" /dev/null "$T"; do
	for opt in --log --audit; do
		out=$(timeout 20 "$AWFS" "$MNT" --policy "$POLICY" $opt "$target" -f 2>&1); rc=$?
		check "$opt $target refused: exit 1 (not a hang), not mounted" "1 no" "$rc $(is_mounted "$MNT" && echo yes || echo no)"
	done
done
check "  ... nothing written to another user's file" "0" "$(stat -c %s "$T/theirs.log")"
check_match "  ... a FIFO: says why" "cannot open audit file .$T/fifo.: not a regular file \(a FIFO\)" \
	"$(timeout 20 "$AWFS" "$MNT" --policy "$POLICY" --audit "$T/fifo" -f 2>&1)"
check_match "  ... another user's file: says why" "cannot open log .$T/theirs.log.: owned by uid $AGENT_UID, neither root nor the user running awfs" \
	"$(timeout 20 "$AWFS" "$MNT" --policy "$POLICY" --log "$T/theirs.log" -f 2>&1)"
check_match "  ... a file others may write: says why" "cannot open log .$T/open.log.: writable by group or others \(mode 0666\)" \
	"$(timeout 20 "$AWFS" "$MNT" --policy "$POLICY" --log "$T/open.log" -f 2>&1)"
ln -s "$T/mine.log" "$T/link.log"
run "$MNT" --policy "$POLICY" --log "$T/link.log"
check "--log through a symlink: exit 1, nothing created" "1 no" "$rc $([ -e "$T/mine.log" ] && echo yes || echo no)"

# ---- ... reached through directories only root (or awfs's user) can change:
# a symlink planted on the way would make awfs append to a file of root's
mounted() { is_mounted "$MNT" && echo yes || echo no; }
exists() { [ -e "$1" ] && echo yes || echo no; }
# refuse OPT FILE: awfs with OPT FILE; sets out and rc
refuse() { out=$(timeout 20 "$AWFS" "$MNT" --policy "$POLICY" "$1" "$2" -f 2>&1); rc=$?; }
# accepts OPT FILE: "ready yes written" when awfs mounts with OPT FILE and
# writes to FILE (then it is stopped)
accepts() {
	local pid said="" up
	rm -f "$T/ready"; mkfifo "$T/ready"
	"$AWFS" "$MNT" --policy "$POLICY" -f "$1" "$2" --ready-fd 7 7>"$T/ready" 2>>"$T/awfs.stderr" &
	pid=$!
	read -r -t 60 said <"$T/ready"
	up=$(mounted)
	kill -TERM "$pid" 2>/dev/null; wait "$pid"
	echo "${said:-none} $up $([ -s "$2" ] && echo written || echo empty)"
}
mkdir -p "$T/agent/sub" "$T/rootdir" "$T/open" "$T/grp" "$T/sticky" "$T/viadir"
chown "$AGENT_UID" "$T/agent"; chmod 755 "$T/agent"
chmod 777 "$T/open"; chmod 775 "$T/grp"; chmod 1777 "$T/sticky"
for f in target other; do printf 'root only\n' >"$T/rootdir/$f.log"; chmod 644 "$T/rootdir/$f.log"; done
as_agent ln -s "$T/rootdir" "$T/agent/logs"		# the attack: the agent's link to a root dir
as_agent ln -s "$T/rootdir" "$T/sticky/planted"	# the same in a sticky directory
ln "$T/rootdir/other.log" "$T/sticky/linked.log"	# a second name, as protected_hardlinks=0 allows anyone
ln -s "$T/rootdir" "$T/viadir/abs"; ln -s ../rootdir "$T/viadir/rel"	# root's links, in root's directory
for opt in --log --audit; do
	refuse $opt "$T/agent/sub/awfs.log"
	check "$opt under a directory of uid $AGENT_UID: exit 1, not mounted, nothing created" "1 no no" \
		"$rc $(mounted) $(exists "$T/agent/sub/awfs.log")"
	check_match "  ... names the directory and its owner" \
		"cannot open (log|audit file) .$T/agent/sub/awfs.log.: directory .$T/agent. on the way is owned by uid $AGENT_UID, neither root nor the user running awfs \(uid 0\), who could replace what is below it with a symlink to any file" "$out"
	refuse $opt "$T/agent/logs/target.log"
	check "$opt through the agent's symlink to a root file: exit 1, not mounted" "1 no" "$rc $(mounted)"
	check_match "  ... says why" "directory .$T/agent. on the way is owned by uid $AGENT_UID" "$out"
	for d in open grp; do
		refuse $opt "$T/$d/awfs.log"
		check "$opt under a directory of mode $(stat -c %a "$T/$d"): exit 1, not mounted, nothing created" "1 no no" \
			"$rc $(mounted) $(exists "$T/$d/awfs.log")"
	done
	check_match "  ... says why" "directory .$T/grp. on the way is writable by group or others and not sticky \(mode 0775\)" "$out"
	refuse $opt "$T/sticky/planted/target.log"
	check "$opt through the agent's symlink in a sticky directory: exit 1, not mounted" "1 no" "$rc $(mounted)"
	check_match "  ... says why" ".$T/sticky/planted. on the way is a symlink owned by uid $AGENT_UID, neither root nor the user running awfs" "$out"
	refuse $opt "$T/sticky/linked.log"
	check "$opt at a second name of a root file: exit 1, not mounted" "1 no" "$rc $(mounted)"
	check_match "  ... says why" "cannot open (log|audit file) .$T/sticky/linked.log.: has 2 hard links" "$out"
	out=$(cd "$T/agent/sub" && timeout 20 "$AWFS" "$MNT" --policy "$POLICY" $opt rel.log -f 2>&1); rc=$?
	check "$opt relative, from under a directory of uid $AGENT_UID: exit 1, nothing created" "1 no" \
		"$rc $(exists "$T/agent/sub/rel.log")"
	check_match "  ... says why" "directory .$T/agent. on the way is owned by uid $AGENT_UID" "$out"
	check "$opt created in a sticky directory of root's: mounts and writes" "ready yes written" \
		"$(accepts $opt "$T/sticky/new$opt")"
	check "$opt through root's symlink in root's directory: mounts and writes" "ready yes written" \
		"$(accepts $opt "$T/viadir/abs/via$opt")"
	check "$opt through root's relative symlink: mounts and writes" "ready yes written" \
		"$(accepts $opt "$T/viadir/rel/rel$opt")"
done
check "  ... the root files behind the refused paths are unchanged (10 bytes each)" "10 10 root only" \
	"$(stat -c %s "$T/rootdir/target.log" "$T/rootdir/other.log" | xargs) $(cat "$T/rootdir/target.log")"
rm -rf "$SRC/made"	# made by the mounts above (create = true)
run "$MNT" --policy "$POLICY" --info-dir .x --no-info-dir
check "--info-dir with --no-info-dir: exit 2" "2" "$rc"

printf 'version = 1;\nmask = ( { path = "../etc"; reason = "x"; } );\nallow_write = ( { path = "rw"; } );\nbogus = 3;\n' >"$T/bad.conf"
chmod 644 "$T/bad.conf"
run "$MNT" --policy "$T/bad.conf"
check "bad policy: exit 2" "2" "$rc"
check_match "bad policy: the .. path, with file and line" "bad.conf:2: path \"../etc\" contains \"..\"\. Expected" "$out"
check_match "bad policy: the missing reason" "bad.conf:3: allow_write rule \"rw\" has no reason\. Expected" "$out"
check_match "bad policy: the unknown setting" "bad.conf:4: unknown setting \"bogus\"\. Expected" "$out"
check_match "bad policy: every error, then nothing mounted" "awfs: 3 errors in the policy; nothing mounted" "$out"
check "bad policy: not mounted" "no" "$(is_mounted "$MNT" && echo yes || echo no)"

printf 'version = 1\nmask = (\n' >"$T/syntax.conf"; chmod 644 "$T/syntax.conf"
run "$MNT" --policy "$T/syntax.conf"
check "syntax error: exit 2" "2" "$rc"
check_match "syntax error: file and line" "syntax.conf:[0-9]+: syntax error" "$out"

cp "$POLICY" "$T/gw.conf"; chmod 664 "$T/gw.conf"
run "$MNT" --policy "$T/gw.conf"
check "group-writable policy: exit 2" "2" "$rc"
check_match "group-writable policy: says why and how to fix" "gw.conf: the policy is writable by group or others \(mode 0664\)\. Expected mode 0644 or stricter: chmod go-w" "$out"
cp "$POLICY" "$T/other.conf"; chown 4242 "$T/other.conf"
run "$MNT" --policy "$T/other.conf"
check "policy owned by another user: exit 2" "2" "$rc"
check_match "policy owned by another user: says so" "owned by uid 4242, neither root nor the user running awfs" "$out"

run "$MNT" --policy "$POLICY" -o frobnicate
check "unknown -o option: exit 2" "2" "$rc"
check_match "unknown -o option: named" "frobnicate" "$out"
check "unknown -o option: nothing created" "no" "$([ -e "$SRC/made" ] && echo yes || echo no)"
run "$MNT" --policy "$POLICY" --bogus
check "unknown option: exit 2" "2" "$rc"
for bad in abc -1 10001 12x ""; do
	run "$MNT" --policy "$POLICY" -o "spin=$bad"
	check "spin=$bad: exit 2" "2" "$rc"
	check_match "spin=$bad: says what is expected" "^awfs: spin=$bad: expected microseconds, 0 to 10000$" "$out"
done
check "bad spin=: not mounted" "no" "$(is_mounted "$MNT" && echo yes || echo no)"
for bad in yes 1 ""; do
	run "$MNT" --policy "$POLICY" -o "keepers=$bad"
	check "keepers=$bad: exit 2" "2" "$rc"
	check_match "keepers=$bad: says what is expected" "^awfs: keepers=$bad: expected keepers=on or off$" "$out"
done
check "bad keepers=: not mounted" "no" "$(is_mounted "$MNT" && echo yes || echo no)"

run "$T/nowhere" --policy "$POLICY"
check "missing mount point: exit 1" "1" "$rc"
check_match "missing mount point: one clear line" "^awfs: bad mount point .*nowhere': No such file or directory$" "$out"
run "$MNT" --policy "$POLICY" --source "$T/nosource"
check "missing source: exit 1" "1" "$rc"
check_match "missing source: one clear line" "^awfs: bad source .*nosource': No such file or directory$" "$out"

write_policy 'version = 1;
allow_write = ( { path = "made-first"; reason = "would be created"; create = true; },
                { path = "cache-memory"; reason = "memory"; } );'
run "$MNT" --policy "$POLICY"
check "missing allow_write target: exit 1" "1" "$rc"
check_match "missing allow_write target: names it and the fix" "allow_write path \"cache-memory\" \(.*policy.conf:3\) does not exist in .* and has no create: awfs refuses to mount. Create it before mounting, or set create = true; \(or create = \"file\";\) in the rule" "$out"
check "missing allow_write target: no other target was created" "no" "$([ -e "$SRC/made-first" ] && echo yes || echo no)"
check "missing allow_write target: not mounted" "no" "$(is_mounted "$MNT" && echo yes || echo no)"
check "missing allow_write target: nothing created" "no" "$([ -e "$SRC/cache-memory" ] && echo yes || echo no)"

write_policy 'version = 1;
mask = ( { path = "work"; reason = "compose file holds tokens"; runtimes = ["docker"]; } );
allow_write = ( { path = "deep/a/b"; reason = "created at mount"; create = true; },
                { path = "deep/summary.md"; reason = "a single file"; create = "file"; } );'
mkdir -p "$SRC/work"; echo TOKEN >"$SRC/work/compose.yml"
mount_awfs --runtime docker -o suid,dev
mi=$(awk -v p="$MNT" '$5 == p' /proc/self/mountinfo)
check_match "mounted with default_permissions and allow_other" "default_permissions.*allow_other|allow_other.*default_permissions" "$mi"
check_match "nosuid,nodev are forced, even over -o suid,dev" " [^ ]*nosuid,nodev[^ ]* " "$mi"
check "create = \"file\" made an empty file" "regular empty file $AGENT_UID:$AGENT_UID 644" \
	"$(stat -c '%F %u:%g %a' "$SRC/deep/summary.md")"
expect "  ... and it is writable" "OK" write "$MNT/deep/summary.md" "# summary"
expect "a docker-only mask applies with --runtime docker" "ENOENT" read "$MNT/work/compose.yml"
check "create = true made every level" "dir" "$(stat -c %F "$MNT/deep/a/b" | sed 's/directory/dir/')"
check_match "the mount line summarises the boundary" "mounted $MNT \(source $SRC, runtime docker, its POSIX ACLs enforced; data path: [^)]*\): masked: work; writable: deep/a/b, deep/summary.md; read-only: none \(everything else is read-only\); unclassified: " "$(cat "$LOG")"
check_match "unclassified entries are listed at mount" "unclassified: .*rootfile" "$(cat "$LOG")"
unmount_awfs
check "clean unmount exits 0" "0" "$AWFS_RC"
: >"$LOG"
mount_awfs
expect "without --runtime the docker-only mask does not apply" "OK:TOKEN\x0a" read "$MNT/work/compose.yml"
check_match "the mount line has no runtime" "mounted $MNT \(source $SRC, its POSIX ACLs enforced; data path: [^)]*\): masked: none" "$(cat "$LOG")"
unmount_awfs

# the request loop: the listener serves most requests and polls for spin
# microseconds before it sleeps; READ, FSYNC, FALLOCATE, LSEEK and
# COPY_FILE_RANGE go to workers. Both ends of spin=, and concurrent callers.
write_policy "$FIXTURE_POLICY"
head -c 3145728 /dev/urandom >"$SRC/rw/big"; chown "$AGENT_UID:$AGENT_UID" "$SRC/rw/big"
# the keeper threads awfs runs now, and how many it should: one a CPU it
# may use, 8 at most, none on one CPU, none where awfs says a CPU quota applies
keepers() { cat /proc/"$AWFS_PID"/task/*/comm | grep -c '^awfs-keep'; }
# CPU ticks (user + system) of the daemon's thread TID, or of all its threads
ticks() { cat /proc/"$AWFS_PID"/task/${1:-*}/stat | awk '{ sub(/^.*\) /, ""); t += $12 + $13 } END { print t + 0 }'; }
keepers_due() {
	if [ "$1" -lt 2 ] || grep -q "no keeper threads: a CPU quota applies" "$LOG"; then echo 0
	else echo $(($1 < 8 ? $1 : 8)); fi
}
# keepers only when asked for (-o keepers=on), and then not with spin=0
for opts in spin=0,keepers=on spin=10000 spin=10000,keepers=on; do
	tag=$(printf %s "$opts" | tr -c a-z0-9 _)
	mount_awfs -o "$opts"
	expect "$opts: a read (worker)" "OK:RWDATA\x0a" read "$MNT/rw/file"
	expect "$opts: a denied write" "EROFS" write "$MNT/ro/file" x
	expect "$opts: a create" "OK" write "$MNT/rw/spin$tag" data
	expect "$opts: fallocate (worker)" "OK" fallocate "$MNT/rw/spin$tag" 8192
	expect "$opts: fsync (worker)" "OK" fsync "$MNT/rw/spin$tag"
	expect "$opts: seek-data (worker)" "OK:0" seek-data "$MNT/rw/spin$tag" 0
	expect "$opts: copy_file_range (worker)" "OK:8192" copy "$MNT/rw/spin$tag" "$MNT/rw/spin$tag.copy"
	expect "$opts: the mask holds" "ENOENT" read "$MNT/secret/data"
	# 6 readers of a 3 MiB file and 6 writers at once: every one gets its bytes
	pids=""
	for i in 1 2 3 4 5 6; do
		as_agent cmp -s "$SRC/rw/big" "$MNT/rw/big" & pids="$pids $!"
		as_agent sh -c "head -c 1048576 '$SRC/rw/big' >'$MNT/rw/w$tag.$i' && cmp -s '$MNT/rw/w$tag.$i' '$SRC/rw/w$tag.$i'" & pids="$pids $!"
	done
	bad=0
	for p in $pids; do wait "$p" || bad=$((bad + 1)); done
	check "$opts: 6 concurrent readers and 6 writers all complete intact" "0" "$bad"
	check "$opts: the writes are on the host" "6" "$(cmp -s -n 1048576 "$SRC/rw/big" "$SRC/rw/w$tag.1" && ls "$SRC/rw" | grep -c "^w$tag\.")"
	# keepers (loop.c): with keepers=on and spin, one on each CPU awfs may
	# use (8 at most, none on one CPU), each pinned to its CPU, started the first time the
	# listener sleeps (a pause, then a request); all asleep once the mount
	# is idle, which then costs no CPU time
	sleep 0.5
	expect "$opts: a read after a pause" "OK:RWDATA\x0a" read "$MNT/rw/file"
	ncpu=$(taskset -pc "$AWFS_PID" | awk -F': ' '{ n = 0; m = split($2, r, ","); for (i = 1; i <= m; i++) { k = split(r[i], e, "-"); n += (k == 2 ? e[2] - e[1] + 1 : 1) } print n }')
	case $opts in spin=10000,keepers=on) want=$(keepers_due "$ncpu") ;; *) want=0 ;; esac
	check "$opts: keepers on $ncpu CPUs" "$want" "$(keepers)"
	pinned=yes
	for t in /proc/"$AWFS_PID"/task/*; do
		name=$(cat "$t/comm")
		case "$name" in awfs-keep*) ;; *) continue ;; esac
		[ "$(awk '/^Cpus_allowed_list:/ { print $2 }' "$t/status")" = "${name#awfs-keep}" ] || pinned="no: $name"
	done
	check "$opts: each keeper on its CPU" yes "$pinned"
	if [ "$want" -gt 0 ]; then
		# never beside the listener: the listener's thread held on one
		# CPU (taskset), a caller keeps it awake, and the keeper
		# of that CPU stays asleep on its futex: its CPU time meanwhile
		# is at most a fifth of the listener's (yielding beside it,
		# it takes about as much as the listener; sampling the keepers'
		# states instead depended on how often the scheduler moved the
		# listener, which depends on the machine's load)
		allowed=$(taskset -pc "$AWFS_PID" | sed 's/^.*: //')
		lcpu=$(printf %s "$allowed" | sed 's/[-,].*//')
		taskset -pc "$lcpu" "$AWFS_PID" >/dev/null
		# (setpriv execs sh: $! is the loop itself, for the kill below)
		setpriv --reuid="$AGENT_UID" --regid="$AGENT_UID" --clear-groups \
			sh -c "while :; do cat '$MNT/rw/file'; done" >/dev/null 2>&1 & busy=$!
		sleep 0.5
		keeper=""
		for t in /proc/"$AWFS_PID"/task/*; do
			[ "$(cat "$t/comm" 2>/dev/null)" = "awfs-keep$lcpu" ] && keeper=${t##*/}
		done
		# (until the listener has run 20 ticks, 30 s at most: under load
		# the caller's loop is slow, and the listener sleeps between)
		l0=$(ticks "$AWFS_PID") k0=$(ticks "$keeper") lt=0 kt=0 waited=0
		while [ "$lt" -lt 20 ] && [ "$waited" -lt 30 ]; do
			sleep 1; waited=$((waited + 1))
			lt=$(($(ticks "$AWFS_PID") - l0)) kt=$(($(ticks "$keeper") - k0))
		done
		kill "$busy"; wait "$busy" 2>/dev/null
		taskset -pc "$allowed" "$AWFS_PID" >/dev/null
		check "$opts: the keeper of the listener's CPU ($lcpu) sleeps while the listener serves there (ticks over $waited s: keeper $kt, listener $lt)" yes \
			"$([ -n "$keeper" ] && [ "$lt" -ge 20 ] && [ $((kt * 5)) -le "$lt" ] && echo yes)"
	fi
	sleep 0.5; t0=$(ticks); sleep 2; t1=$(ticks)
	check "$opts: idle for 2 s, the daemon's threads use no CPU time (ticks: $t0 -> $t1)" yes \
		"$([ $((t1 - t0)) -le 2 ] && echo yes)"
	unmount_awfs
	check "$opts: a clean stop" "0" "$AWFS_RC"
done

# keepers under a CPU quota (docker run --cpus, CPUQuota=): none, since the
# time they yield away is charged to the group; awfs in a cgroup of its
# own with one (v2's cpu.max, or v1's cpu hierarchy as on this project's CI)
cg=""
if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	cg=/sys/fs/cgroup/awfs-test.$$
	{ mkdir "$cg" && echo "200000 100000" >"$cg/cpu.max"; } 2>/dev/null || { rmdir "$cg" 2>/dev/null; cg=""; }
elif [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
	cg=/sys/fs/cgroup/cpu/awfs-test.$$
	{ mkdir "$cg" && echo 200000 >"$cg/cpu.cfs_quota_us"; } 2>/dev/null || { rmdir "$cg" 2>/dev/null; cg=""; }
fi
if [ -n "$cg" ] && [ "$ncpu" -ge 2 ]; then
	# on the way out, whatever is left in it goes to its parent first
	AT_EXIT="${AT_EXIT:+$AT_EXIT; }for p in \$(cat '$cg/cgroup.procs' 2>/dev/null); do echo \$p >'${cg%/*}/cgroup.procs'; done; rmdir '$cg' 2>/dev/null"
	printf '#!/bin/sh\necho $$ >%s/cgroup.procs || exit 1\nexec %s "$@"\n' "$cg" "$AWFS" >"$T/in-cgroup"
	chmod 755 "$T/in-cgroup"
	: >"$LOG"
	AWFS="$T/in-cgroup" mount_awfs -o keepers=on
	expect "under a CPU quota: a read" "OK:RWDATA\x0a" read "$MNT/rw/file"
	sleep 0.5	# the listener has slept: keepers would have started
	expect "under a CPU quota: a read after a pause" "OK:RWDATA\x0a" read "$MNT/rw/file"
	check "under a CPU quota ($cg): no keepers" 0 "$(keepers)"
	check_match "... and the log says why" "no keeper threads: a CPU quota applies \($cg/cpu[.a-z_]*: 200000" "$(cat "$LOG")"
	unmount_awfs
	check "under a CPU quota: a clean stop" "0" "$AWFS_RC"
	for i in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done	# awfs's closer leaves last
	: >"$LOG"
	mount_awfs -o keepers=on
	expect "outside the quota: a read" "OK:RWDATA\x0a" read "$MNT/rw/file"
	sleep 0.5
	expect "outside the quota: a read after a pause" "OK:RWDATA\x0a" read "$MNT/rw/file"
	check "the same mount outside the quota has its keepers" "$(keepers_due "$ncpu")" "$(keepers)"
	unmount_awfs
else
	echo "ok - # SKIP keepers under a CPU quota: no cgroup cpu controller to make one with, or one CPU"
fi

# unclassified = "mask" serves unnamed top-level entries empty
write_policy 'version = 1;
unclassified = "mask";
read_only = ( { path = "ro"; reason = "exemption"; } );'
: >"$LOG"
mount_awfs
expect "unclassified = mask: an unnamed file is empty" "OK" read "$MNT/rootfile"
expect "unclassified = mask: an unnamed dir is empty" "OK" readdir "$MNT/rw"
expect "unclassified = mask: a named dir is served" "OK:RODATA\x0a" read "$MNT/ro/file"
expect "unclassified = mask: a name below an unclassified dir" "ENOENT" read "$MNT/rw/file"
expect "unclassified = mask: a name that does not exist" "ENOENT" stat "$MNT/nothing-here"
unmount_awfs
check_match "unclassified = mask: logged once" "unclassified top-level entry $MNT/rootfile: named by no rule, served empty \(unclassified = \"mask\"\)" "$(cat "$LOG")"
check "the warning is given once per name" "1" "$(grep -c 'unclassified top-level entry .*/rootfile' "$LOG")"
check "names below an unclassified entry are not top-level entries" "0" "$(grep -c 'unclassified top-level entry .*/file' "$LOG")"
check "names that do not exist are not logged" "0" "$(grep -c 'unclassified top-level entry .*/nothing-here' "$LOG")"

# with no rule in force at all, every top-level entry is still unclassified
write_policy 'version = 1;
unclassified = "mask";
mask = ( { path = "work"; reason = "docker only"; runtimes = ["docker"]; } );'
: >"$LOG"
mount_awfs
expect "no rule in force, unclassified = mask: a file is empty" "OK" read "$MNT/rootfile"
expect "no rule in force, unclassified = mask: a dir is empty" "OK" readdir "$MNT/ro"
unmount_awfs
check_match "no rule in force: the entry is logged" "unclassified top-level entry $MNT/rootfile" "$(cat "$LOG")"
# ---- create = true: the owner and mode go to what awfs made, never to what
# a writer of the parent put at the name in between (race-shim.so opens that
# window every time: right after awfs's create it swaps the name)
if [ -r "${AWFS_RACE_SHIM:-}" ]; then
	: >"$LOG"
	mkdir -p "$SRC/shared" && chown "$AGENT_UID:$AGENT_UID" "$SRC/shared"
	echo THEIRS >"$SRC/theirs" && chown 4242:4242 "$SRC/theirs" && chmod 0666 "$SRC/theirs"
	write_policy 'version = 1;
allow_write = ( { path = "shared/summary.md"; reason = "a single file"; create = "file"; } );'
	AWFS_RACE_NAME=summary.md AWFS_RACE_LINK="$SRC/theirs" LD_PRELOAD="$AWFS_RACE_SHIM" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" mount_awfs
	unmount_awfs
	check "create = \"file\", name swapped for a hard link: the linked file keeps its owner and mode" \
		"4242:4242 666" "$(stat -c '%u:%g %a' "$SRC/theirs")"
	check "  ... what awfs made got the root's owner" "$AGENT_UID:$AGENT_UID 644" "$(stat -c '%u:%g %a' "$SRC/shared/summary.md.made-by-awfs")"
	write_policy 'version = 1;
allow_write = ( { path = "shared/made/sub"; reason = "created at mount"; create = true; } );'
	out=$(AWFS_RACE_NAME=made AWFS_RACE_UID="$AGENT_UID" LD_PRELOAD="$AWFS_RACE_SHIM" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		timeout 60 "$AWFS" "$MNT" --policy "$POLICY" -f 2>&1); rc=$?
	check "create = true, directory swapped for the writer's own: exit 1, not mounted" "1 no" \
		"$rc $(is_mounted "$MNT" && echo yes || echo no)"
	check_match "  ... says what happened" "the directory awfs made was replaced before it could be given its owner and mode" "$out"
	check "  ... the writer's directory is left as it was" "$AGENT_UID:$AGENT_UID 700" "$(stat -c '%u:%g %a' "$SRC/shared/made")"
	check "  ... nothing made inside it" "0" "$(ls -A "$SRC/shared/made" | wc -l)"
	# no race: a set-group-ID parent makes the new directory 02700, still awfs's own
	mkdir -p "$SRC/sgid" && chmod 2755 "$SRC/sgid"
	write_policy 'version = 1;
allow_write = ( { path = "sgid/made"; reason = "created at mount"; create = true; } );'
	mount_awfs
	unmount_awfs
	check "create = true under a set-group-ID parent mounts and makes the directory" "directory" \
		"$(stat -c %F "$SRC/sgid/made")"
else
	check "race-shim.so is built (make check builds it; AWFS_RACE_SHIM names it)" "yes" "no"
fi
finish
