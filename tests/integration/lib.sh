# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh - shared set-up for the integration tests: a real awfs mount over a
# temporary source tree, probed by an unprivileged uid.
#
# A test sources this file, calls setup_tree / write_policy / mount_awfs, runs
# checks, then `finish`. The EXIT trap unmounts and removes everything even
# when a check or the shell itself fails. Exit 77 means "skipped" to automake.

set -u
# The fixtures' modes are the ones the tests mean, whatever umask make check
# runs under (0002 where users have a group of their own): a directory a test
# makes is 0755, so the checks of modes, and awfs's refusal of logs and
# policies that others may write, see what the test set up.
umask 022

# The programs and files under test. `make check` names each one
# (AM_TESTS_ENVIRONMENT in Makefile.am); a test run by hand from a built tree
# (sudo bash tests/integration/mount.sh) finds them in the tree this file is
# in, which is the build tree unless the build is out of tree (then set them).
AWFS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${AWFS:=$AWFS_TOP/awfs}" "${AWFSCTL:=$AWFS_TOP/awfsctl}"
: "${AWFS_PROBE:=$AWFS_TOP/tests/awfs-probe}" "${AWFS_PARITY:=$AWFS_TOP/tests/awfs-parity}"
: "${AWFS_CONFORM:=$AWFS_TOP/tests/awfs-conform}" "${AWFS_LOAD:=$AWFS_TOP/tests/awfs-load}"
: "${AWFS_HAMMER:=$AWFS_TOP/tests/awfs-hammer}" "${AWFS_ADVERSARY:=$AWFS_TOP/tests/awfs-adversary}"
: "${AWFS_SATURATE:=$AWFS_TOP/tests/awfs-saturate}"
: "${AWFS_RACE_SHIM:=$AWFS_TOP/tests/race-shim.so}" "${AWFS_TESTS:=$AWFS_TOP/tests}"
: "${AWFS_DEFAULT_POLICY:=$AWFS_TOP/etc/awfs/policy.conf}"
export AWFS AWFSCTL AWFS_PROBE AWFS_PARITY AWFS_CONFORM AWFS_LOAD AWFS_HAMMER AWFS_ADVERSARY \
	AWFS_RACE_SHIM AWFS_TESTS AWFS_DEFAULT_POLICY AWFS_SATURATE
[ -x "$AWFS" ] || { echo "$AWFS: no such program (make check TESTS= builds it and the test programs; or set AWFS)"; exit 99; }
AGENT_UID=${AWFS_TEST_UID:-1000}

PASS=0
FAIL=0
T=""
MNT=""
AWFS_PID=""

skip() { echo "SKIP: $*"; exit 77; }

require_mount_env() {
	[ "$(id -u)" = 0 ] || skip "needs root (mounts with allow_other, probes as uid $AGENT_UID)"
	[ -c /dev/fuse ] || skip "no /dev/fuse"
	command -v fusermount3 >/dev/null || skip "no fusermount3 (apt-get install fuse3)"
	command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
	# a FUSE mount must be possible here (containers may forbid it)
	[ -r /proc/self/mountinfo ] || skip "no /proc/self/mountinfo"
}

# AT_EXIT: shell commands a test adds to the cleanup (eval'ed first; their
# status never replaces the test's own)
AT_EXIT=""
cleanup() {
	local rc=$?
	[ -n "$AT_EXIT" ] && eval "$AT_EXIT"
	if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "$T" ]; then
		# explain a failure: what awfs said
		for f in "$T/awfs.stderr" "${LOG:-}"; do
			[ -s "$f" ] && { echo "---- $f (last 30 lines)"; tail -30 "$f"; }
		done
	fi
	if [ -n "$MNT" ] && is_mounted "$MNT"; then
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	for a in ${ALIASES:-}; do umount -l "$a" 2>/dev/null; done
	if [ -n "$AWFS_PID" ] && kill -0 "$AWFS_PID" 2>/dev/null; then
		kill "$AWFS_PID" 2>/dev/null
		wait "$AWFS_PID" 2>/dev/null
	fi
	if [ -n "$T" ]; then
		# KEEP_T (set by a test from its own switch) keeps the directory to look at
		if [ -n "${KEEP_T:-}" ]; then echo "# kept $T"; else rm -rf "$T"; fi
	fi
	[ -n "${EXTRA_CLEAN:-}" ] && rm -f $EXTRA_CLEAN
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# is_mounted PATH: a FUSE mount of type fuse.awfs is at PATH
is_mounted() {
	awk -v p="$1" '$5 == p { for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "fuse.awfs") f = 1; break } } END { exit !f }' /proc/self/mountinfo
}

# make a private temporary directory the agent uid can traverse
make_tmp() {
	T=$(mktemp -d /tmp/awfs-test.XXXXXX)
	chmod 755 "$T"
	SRC="$T/src"
	MNT="$SRC"
	mkdir -p "$SRC"
	POLICY="$T/policy.conf"
	LOG="$T/awfs.log"
}

# write_policy TEXT: the policy file, root-owned and 0644 as awfs requires
write_policy() {
	printf '%s\n' "$1" >"$POLICY"
	chmod 644 "$POLICY"
}

# awfs_mounts PATH: how many awfs mounts are stacked at PATH
awfs_mounts() {
	awk -v p="$1" '$5 == p { for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "fuse.awfs") n++; break } } END { print n + 0 }' /proc/self/mountinfo
}

# mount_awfs [extra awfs args]: start awfs in the foreground, wait for the mount
# (awfs says "ready" on a FIFO once the mount serves: no polling, no time
# limit, whatever the load; end of file means it exited without mounting)
mount_awfs() {
	local ready=""
	rm -f "$T/ready"
	mkfifo "$T/ready"
	"$AWFS" "$MNT" --policy "$POLICY" -f --log "$LOG" --ready-fd 9 "$@" 9>"$T/ready" 2>>"$T/awfs.stderr" &
	AWFS_PID=$!
	read -r -t 300 ready <"$T/ready"	# a bound for a hang, never reached otherwise
	rm -f "$T/ready"
	[ "$ready" = ready ] && return 0
	echo "awfs did not mount; stderr:"; cat "$T/awfs.stderr"; cat "$LOG" 2>/dev/null
	exit 1
}

# mount_beside: serve SRC at a separate mount point $T/mnt (--source), so a
# test can look at the host side while the mount is up
mount_beside() {
	MNT="$T/mnt"
	mkdir -p "$MNT"
	mount_awfs --source "$SRC" "$@"
}

# unmount_awfs: SIGTERM, then wait for the daemon; sets AWFS_RC
unmount_awfs() {
	kill -TERM "$AWFS_PID"
	wait "$AWFS_PID"
	AWFS_RC=$?
	AWFS_PID=""
}

as_agent() { setpriv --reuid="$AGENT_UID" --regid="$AGENT_UID" --clear-groups "$@"; }
probe() { "$AWFS_PROBE" "$@"; }
aprobe() { as_agent "$AWFS_PROBE" "$@"; }

# check NAME EXPECTED ACTUAL
check() {
	if [ "$2" = "$3" ]; then
		PASS=$((PASS + 1))
		echo "ok - $1"
	else
		FAIL=$((FAIL + 1))
		echo "not ok - $1"
		echo "#   expected: $2"
		echo "#   got:      $3"
	fi
}

# check_match NAME ERE ACTUAL
check_match() {
	if printf '%s' "$3" | grep -Eq -- "$2"; then
		PASS=$((PASS + 1))
		echo "ok - $1"
	else
		FAIL=$((FAIL + 1))
		echo "not ok - $1"
		echo "#   expected to match: $2"
		echo "#   got: $(printf '%s' "$3" | tail -c 600)"
	fi
}

# expect NAME EXPECTED PROBE-ARGS...: run the probe as the agent uid
expect() {
	local name=$1 want=$2
	shift 2
	check "$name" "$want" "$(aprobe "$@")"
}

# poll_check TRIES PAUSE NAME EXPECTED CMD...: CMD prints EXPECTED, tried up
# to TRIES times PAUSE seconds apart (a change made on the host, which the
# mount shows once the kernel's copy is dropped)
poll_check() {
	local tries=$1 pause=$2 name=$3 want=$4
	shift 4
	for _ in $(seq "$tries"); do [ "$("$@")" = "$want" ] && break; sleep "$pause"; done
	check "$name" "$want" "$("$@")"
}

# expect_soon NAME EXPECTED PROBE-ARGS...: expect, for a change made on the
# host that the mount must show within its cache timeout: polls up to 4 s
expect_soon() {
	local name=$1 want=$2
	shift 2
	poll_check 40 0.1 "$name" "$want" aprobe "$@"
}

finish() {
	echo "# $PASS passed, $FAIL failed"
	[ "$FAIL" = 0 ]
	exit $?
}

# The fixture tree used by most tests. Writable-looking modes everywhere, so
# that what refuses a write is the policy (EROFS), not the host's modes.
FIXTURE_POLICY='version = 1;
mask = (
  { path = "secret"; reason = "holds tokens"; },
  { path = "top.key"; reason = "a key file"; },
  { path = "*.pem"; reason = "certificates"; },
  { path = "ghost"; reason = "masked even when absent"; },
  { path = "ro/hidden"; reason = "nested mask"; },
  { path = "rw/masked"; reason = "mask inside a writable tree"; }
);
allow_write = (
  { path = "rw"; reason = "agent scratch"; },
  { path = "made"; reason = "created at mount"; create = true; },
  { path = "mem-*"; reason = "named memories"; }
);
read_only = (
  { path = "rw/.git"; reason = "the host runs git here"; },
  { path = "rw/proj/hooks"; reason = "hooks the host runs"; },
  { path = "rw/repo-*/hooks"; reason = "hooks of the repositories the host pushes"; },
  { path = "ro"; reason = "exemption: must stay readable"; }
);'

setup_fixture() {
	make_tmp
	local u=$AGENT_UID
	mkdir -p "$SRC"/secret/sub "$SRC"/ro/hidden "$SRC"/ro/dir "$SRC"/rw/.git "$SRC"/rw/masked \
		"$SRC"/rw/proj/hooks "$SRC"/rw/sub "$SRC"/mem-a "$SRC"/restricted
	echo TOPSECRET >"$SRC"/secret/data
	echo DEEP >"$SRC"/secret/sub/deep
	echo KEYDATA >"$SRC"/top.key
	echo CERT >"$SRC"/server.pem
	echo RODATA >"$SRC"/ro/file
	echo HIDDEN >"$SRC"/ro/hidden/x
	echo RWDATA >"$SRC"/rw/file
	echo GITCFG >"$SRC"/rw/.git/config
	echo MASKEDRW >"$SRC"/rw/masked/m
	echo HOOK >"$SRC"/rw/proj/hooks/pre-commit
	echo ROOTFILE >"$SRC"/rootfile
	echo MEM >"$SRC"/mem-a/m
	echo RESTRICTED >"$SRC"/restricted/r
	ln -s secret/data "$SRC"/ro/link-to-secret
	ln -s /etc/hostname "$SRC"/ro/link-out
	chown -R "$u:$u" "$SRC"
	chown root:root "$SRC"/restricted "$SRC"/restricted/r
	chmod 755 "$SRC"/restricted
	chmod 644 "$SRC"/restricted/r
	setfattr -n user.tag -v hostvalue "$SRC"/ro/file 2>/dev/null || true
	setfattr -n user.tag -v secretvalue "$SRC"/secret 2>/dev/null || true
	write_policy "$FIXTURE_POLICY"
}
