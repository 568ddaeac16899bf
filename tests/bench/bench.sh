#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench.sh - awfs side by side with the native directory and every FUSE peer
# (bindfs, fuse-overlayfs, libfuse 3.14's passthrough_ll), interleaved.
#
#   make bench                                   # as root; or tests/bench/bench.sh
#   BENCH_REPS=5 BENCH_SCALE=1                   # the defaults
#   BENCH_WORKLOADS=stat,lsR BENCH_TARGETS=awfs,passthrough_ll make bench
#   tests/bench/bench.sh --report DIR            # redo the table from DIR/results.tsv
#   tests/bench/bench.sh --list                  # workload and target names
#
# Environment:
#   BENCH_REPS       repetitions (>= 1; default 5)
#   BENCH_SCALE      multiplies every size (default 1 = the sizes of issue 5)
#   BENCH_WORKLOADS  comma-separated workload names (default: all)
#   BENCH_TARGETS    comma-separated target names (default: all; native is
#                    always measured, every ratio is to it)
#   BENCH_OUT        results directory (default: the build dir's bench-results/);
#                    each run writes BENCH_OUT/<date>-<commit>/ and points
#                    BENCH_OUT/latest at it
#   BENCH_WORK       work directory (default: awfs-bench under /var/tmp or /tmp,
#                    whichever is not tmpfs); the tarball is cached there
#   BENCH_TIMEOUT    seconds one timed run may take (default 900)
#   BENCH_NOFILE     open file limit given to every daemon (default 1048576)
#   BENCH_WARM_PAUSE seconds between the warm-up passes and the timed runs of a
#                    warm workload (default 2: longer than the 1 s default
#                    timeouts of the daemons; 0 measures right after warm-up)
#   BENCH_FS         where the targets' sources live: "auto" (default) makes
#                    an ext4 with a journal for the run (an image file in the
#                    work directory, on a loop device) when the work directory
#                    is an ext4 without one; "here" uses the work directory
#   BENCH_FS_SIZE    that image's size (allocated up front; default 24G)
#   BENCH_SETTLE     seconds between the last deletion and the creating workloads
#                    (default: 361 on an ext4 without a journal, else 0)
#   BENCH_PASSES     sweeps over the targets a data workload (seqread_warm,
#                    randread1, randread4, seqwrite) makes in a repetition; a
#                    target's time is its fastest (default 5; 1 = one run each)
#   (the policy-size rows' tree is under the run directory too; the million
#   files of walk1m stay in the work directory's cache, made once)
#   BENCH_NO_INSTALL set to skip apt-get for missing tools
#   BENCH_AWFS_RECORD set to run awfs with the change record on (--audit FILE
#                    --record-changes), to compare with a run without it
#   BENCH_UID        the uid the workloads run as (default 65534, nobody: an
#                    agent is not root, and awfs gives root's handles no
#                    passthrough; 0 runs them as root, as before issue 29)
#   PASSTHROUGH_HP   libfuse's passthrough_hp (3.17 or later, built by hand
#                    from libfuse's source) as the peer with passthrough; the
#                    target passthrough_hp is skipped when unset
#   AWFS, BENCH_BUILDDIR, BENCH_TOP_BUILDDIR, CC   set by `make bench`
#
# Each target gets its own fresh source directory, all on one file system (the
# work directory's, or one made for the run: BENCH_FS); each FUSE daemon runs in the foreground (-f, only so the
# benchmark knows its pid) with otherwise default options. Every timed run is
# measured with CLOCK_MONOTONIC (bench-helper; fio's own runtime for random
# reads). On exit, even when interrupted, everything it mounted is unmounted
# (fusermount3 -u, then umount -l) and every process it started is killed by
# pid. Two runs at once are refused (flock on /run/lock/awfs-bench.lock).

set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)

# in the order they run within a repetition: what deletes, what only reads, what creates
ALL_WORKLOADS="unlink rm mount stat json findcat lsR seqread_warm seqread_cold randread1 randread4 git_status append append_flood create untar seqwrite git_commit rules walk1m"
ALL_TARGETS="native awfs awfs-keep awfs-uring awfs-nopt awfs-ro bindfs fuse-overlayfs passthrough_ll passthrough_hp"
PEERS="bindfs fuse-overlayfs passthrough_ll passthrough_hp"

# ---------------------------------------------------------------- report
# report DIR: results.tsv (+ workloads.tsv, header.md, footer.md) -> results.md
# on stdout; the targets' columns in ALL_TARGETS's order, the best of PEERS
report() { python3 "$HERE/report.py" report "$1" "$ALL_TARGETS" "$PEERS"; }

case "${1:-}" in
--report)
	[ -f "${2:-}/results.tsv" ] || { echo "usage: $0 --report DIR (with DIR/results.tsv)" >&2; exit 2; }
	report "$2"
	exit 0 ;;
--list)
	echo "workloads: $ALL_WORKLOADS"
	echo "targets:   $ALL_TARGETS"
	exit 0 ;;
-h|--help)
	awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"
	exit 0 ;;
"") ;;
*)	echo "$0: unknown argument $1 (try --help)" >&2; exit 2 ;;
esac

# fd 8: the original stderr, so a message from a trap that fires while a
# function's stderr is redirected still reaches the user
exec 8>&2
die() { echo "bench: $*" >&8; exit 1; }
say() { printf '%s\n' "$*" >&8; }

[ "$(id -u)" = 0 ] || die "needs root (FUSE mounts, drop_caches)"
[ -c /dev/fuse ] || die "no /dev/fuse"

REPS=${BENCH_REPS:-5}
BUID=${BENCH_UID:-65534}
case $BUID in ''|*[!0-9]*) die "BENCH_UID must be a uid (a number)" ;; esac
SCALE=${BENCH_SCALE:-1}
TIMEOUT=${BENCH_TIMEOUT:-900}
NOFILE=${BENCH_NOFILE:-1048576}
WARM_PAUSE=${BENCH_WARM_PAUSE:-2}
PASSES=${BENCH_PASSES:-5}
case $PASSES in ''|*[!0-9]*) die "BENCH_PASSES must be a positive integer" ;; esac
[ "$((10#$PASSES))" -ge 1 ] || die "BENCH_PASSES must be a positive integer"
PASSES=$((10#$PASSES))
case $REPS in ''|*[!0-9]*|0) die "BENCH_REPS must be a positive integer" ;; esac
awk -v s="$SCALE" 'BEGIN { exit !(s + 0 > 0) }' || die "BENCH_SCALE must be a positive number"
BUILDDIR=${BENCH_BUILDDIR:-$TOP/tests/bench}
TOPBUILD=${BENCH_TOP_BUILDDIR:-$(cd "$BUILDDIR/../.." && pwd)}
AWFS=${AWFS:-$TOPBUILD/awfs}
OUTROOT=${BENCH_OUT:-$TOPBUILD/bench-results}
CC=${CC:-cc}

# ---------------------------------------------------------------- one at a time
LOCKDIR=/run/lock
[ -d "$LOCKDIR" ] || LOCKDIR=/tmp
exec 9>"$LOCKDIR/awfs-bench.lock"
flock -n 9 || die "another benchmark is running (lock $LOCKDIR/awfs-bench.lock held); run one at a time"

# ---------------------------------------------------------------- selection
WORKLOADS=$ALL_WORKLOADS
if [ -n "${BENCH_WORKLOADS:-}" ]; then
	WORKLOADS=""
	for w in ${BENCH_WORKLOADS//,/ }; do
		case " $ALL_WORKLOADS " in *" $w "*) WORKLOADS="$WORKLOADS $w" ;;
		*) die "unknown workload $w (known: $ALL_WORKLOADS)" ;; esac
	done
fi
TARGETS=$ALL_TARGETS
if [ -n "${BENCH_TARGETS:-}" ]; then
	TARGETS="native"
	for t in ${BENCH_TARGETS//,/ }; do
		case " $ALL_TARGETS " in *" $t "*) ;; *) die "unknown target $t (known: $ALL_TARGETS)" ;; esac
		[ "$t" = native ] || TARGETS="$TARGETS $t"
	done
fi
NOTES=()
note() { NOTES+=("$*"); say "note: $*"; }

# ---------------------------------------------------------------- work dir
pick_work() {
	local d
	for d in /var/tmp /tmp; do
		[ "$(stat -f -c %T "$d" 2>/dev/null)" != tmpfs ] && { echo "$d/awfs-bench"; return; }
	done
	echo /var/tmp/awfs-bench
}
WORKROOT=${BENCH_WORK:-$(pick_work)}
mkdir -p "$WORKROOT/cache" || die "cannot create $WORKROOT"
WORKROOT=$(cd "$WORKROOT" && pwd)

# fs_journal DIR: whether the ext4 DIR is on has a journal (its sysfs name
# found by device number: /dev/mapper/*, /dev/root and the like name it
# otherwise)
fs_journal() {
	local dev
	[ "$(df --output=fstype "$1" | tail -1)" = ext4 ] || { echo "not ext4"; return; }
	dev=$(basename "$(readlink -f "/sys/dev/block/$(mountpoint -d "$(stat -c %m "$1")")")")
	case $(cat "/sys/fs/ext4/$dev/journal_task" 2>/dev/null) in
	"<none>") echo "no journal" ;;
	"") echo "journal unknown" ;;
	*) echo "journal" ;;
	esac
}

# The file system the targets' sources live on (BENCH_FS). On an ext4
# without a journal (this machine's root) the inode allocator skips, one by
# one, every free inode deleted less than 60 s ago, or 360 s while its
# inode-table block is dirty, which every create beside it makes it
# (recently_deleted() in fs/ext4/ialloc.c): measured here, 10,000 creates
# 61 s after the benchmark's own unlinks took 3.7-4.3 s natively instead of
# 0.2 s, and the create row measured the allocator, not the targets. An
# ext4 with a journal never skips, and is what agents' runners have. So
# "auto" makes one: an image file in the work directory on a loop device
# with direct I/O (one page cache, the file system's), mounted for the run
# and removed after it.
FSMODE=${BENCH_FS:-auto}
case $FSMODE in auto|here) ;; *) die "BENCH_FS must be auto or here" ;; esac
TESTFS="" LOOPDEV="" TESTIMG="" TESTDIO=""
drop_testfs() {	# drop_testfs [IMAGE MOUNTPOINT]: this run's, or one a killed run left
	local img=${1:-$TESTIMG} mnt=${2:-$TESTFS} d
	[ -n "$img" ] || return 0
	mountpoint -q "$mnt" 2>/dev/null && { umount "$mnt" 2>/dev/null || umount -l "$mnt"; }
	for d in $(losetup -j "$img" -O NAME -n 2>/dev/null); do losetup -d "$d" 2>/dev/null; done
	rm -f "$img"
	rmdir "$mnt" 2>/dev/null
	[ -n "${1:-}" ] || TESTFS="" LOOPDEV="" TESTIMG=""
}
# what a run killed outright (SIGKILL) left: the lock says no other runs
for img in "$WORKROOT"/fs.*.img; do
	[ -e "$img" ] || continue
	p=${img##*/fs.}
	p=${p%.img}
	kill -0 "$p" 2>/dev/null && continue
	say "bench: removing what run $p left: ${img%.img} and its image"
	drop_testfs "$img" "${img%.img}"
done
if [ "$FSMODE" = auto ] && [ "$(fs_journal "$WORKROOT")" = "no journal" ]; then
	command -v mkfs.ext4 >/dev/null && command -v losetup >/dev/null && command -v fallocate >/dev/null ||
		die "BENCH_FS=auto needs mkfs.ext4, losetup and fallocate (or BENCH_FS=here)"
	trap drop_testfs EXIT	# until cleanup() takes over
	TESTIMG=$WORKROOT/fs.$$.img
	TESTFS=$WORKROOT/fs.$$
	# allocated up front: a sparse image's first write to each region would
	# make the work directory's file system allocate it inside timed runs
	fallocate -l "${BENCH_FS_SIZE:-24G}" "$TESTIMG" ||
		die "BENCH_FS=auto: no room for a ${BENCH_FS_SIZE:-24G} image in $WORKROOT (BENCH_FS_SIZE, BENCH_WORK, or BENCH_FS=here)"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$TESTIMG" >/dev/null &&
		LOOPDEV=$(losetup --direct-io=on -f --show "$TESTIMG") &&
		mkdir -p "$TESTFS" && mount "$LOOPDEV" "$TESTFS" ||
		die "BENCH_FS=auto: could not make an ext4 with a journal on a loop device in $WORKROOT (or BENCH_FS=here)"
	# the kernel may fall back to buffered I/O without saying so
	case $(cat "/sys/block/${LOOPDEV#/dev/}/loop/dio" 2>/dev/null) in
	1) TESTDIO="direct I/O" ;;
	*) TESTDIO="buffered I/O (direct I/O refused: two page caches)" ;;
	esac
	RUN=$TESTFS/run.$$
else
	RUN=$WORKROOT/run.$$
fi
rm -rf "$RUN"
mkdir -p "$RUN" || die "cannot create $RUN"
mkdir -p "$RUN/u" && chown "${BENCH_UID:-65534}" "$RUN/u" || die "cannot create $RUN/u"	# the workloads' outputs and HOME
chmod 755 "$WORKROOT" "$RUN"
ERRLOG=$RUN/errors.log
: >"$ERRLOG"
SETUPLOG=$WORKROOT/setup.log	# apt-get and compiler output, kept
: >"$SETUPLOG"

# ---------------------------------------------------------------- cleanup
declare -A PID=() SRC=() MNT=() WD=() BASE=() OPTS=() CMDLINE=() DEAD=()
MOUNTED=()	# mount points in mount order
CUR=""		# the workload process running now
FLOOD=""	# the append_flood workload's flooder while it runs
CYCLE_PIDFILE=$RUN/cycle.pid

is_mounted() { awk -v p="$1" '$5 == p { f = 1 } END { exit !f }' /proc/self/mountinfo; }

unmount_path() {
	local m=$1 i
	is_mounted "$m" || return 0
	fusermount3 -u "$m" 2>/dev/null || fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	for i in 1 2 3 4 5; do is_mounted "$m" || return 0; sleep 0.2; done
	umount -l "$m" 2>/dev/null
	! is_mounted "$m"
}

stop_pid() {	# stop_pid PID: a process this script started
	local p=$1 i
	[ -n "$p" ] || return 0
	kill -0 "$p" 2>/dev/null || { wait "$p" 2>/dev/null; return 0; }
	kill -TERM "$p" 2>/dev/null
	for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	return 0
}

CLEANED=""
cleanup() {
	local rc=$? m i t p left
	[ -n "$CLEANED" ] && return
	CLEANED=1
	trap '' INT TERM
	[ -n "${URING_PARAM:-}" ] && [ -n "${URING_OLD:-}" ] && echo "$URING_OLD" >"$URING_PARAM"
	[ -n "$CUR" ] && stop_pid "$CUR"
	[ -n "$FLOOD" ] && stop_pid "$FLOOD"
	if [ -f "$CYCLE_PIDFILE" ]; then	# a mount-latency daemon
		p=$(cat "$CYCLE_PIDFILE" 2>/dev/null)
		for t in $TARGETS; do unmount_path "$RUN/$t/lat/mnt"; done
		[ -n "$p" ] && kill -0 "$p" 2>/dev/null && { kill -TERM "$p"; sleep 0.5; kill -KILL "$p" 2>/dev/null; }
	fi
	for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
		unmount_path "${MOUNTED[$i]}" || say "bench: could not unmount ${MOUNTED[$i]}"
	done
	is_mounted "$RUN/rules/mnt" && unmount_path "$RUN/rules/mnt"	# the policy-size workload's
	is_mounted "$RUN/walk1m" && unmount_path "$RUN/walk1m"	# and the million entries'
	for t in "${!PID[@]}"; do stop_pid "${PID[$t]}"; done
	rm -rf "$WORKROOT/cache/tmp.$$"
	left=$(awk -v r="$RUN/" 'index($5, r) == 1 { print $5 }' /proc/self/mountinfo)
	if [ -n "$left" ]; then
		say "bench: still mounted, $RUN kept: $left"
		[ -n "$TESTFS" ] && say "bench: and so is $TESTFS ($LOOPDEV, $TESTIMG)"
	elif [ -n "$TESTFS" ]; then
		drop_testfs	# the file system goes whole
	else
		rm -rf "$RUN"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'say "bench: interrupted"; exit 130' INT
trap 'say "bench: terminated"; exit 143' TERM

# ---------------------------------------------------------------- tools
apt_install() {
	[ -n "${BENCH_NO_INSTALL:-}" ] && return 1
	command -v apt-get >/dev/null || return 1
	say "bench: apt-get install $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >>"$SETUPLOG" 2>&1 && return 0
	apt-get update -q >>"$SETUPLOG" 2>&1 &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >>"$SETUPLOG" 2>&1
}
need() {	# need COMMAND PACKAGE
	command -v "$1" >/dev/null 2>&1 || apt_install "$2" >/dev/null
	command -v "$1" >/dev/null 2>&1
}

need fusermount3 fuse3 || die "no fusermount3 (apt-get install fuse3)"
need flock util-linux || die "no flock"
need "$CC" gcc || die "no C compiler ($CC)"
need pkg-config pkg-config || die "no pkg-config"
need tar tar || die "no tar"

mkdir -p "$BUILDDIR"
HELPER=$BUILDDIR/bench-helper
if [ ! -x "$HELPER" ] || [ "$HERE/bench-helper.c" -nt "$HELPER" ]; then
	"$CC" -O2 -Wall -pthread -o "$HELPER" "$HERE/bench-helper.c" -lm ||
		die "cannot build $HELPER"
fi

if [ ! -x "$AWFS" ]; then
	if [ -f "$TOPBUILD/Makefile" ]; then make -s -C "$TOPBUILD" awfs >&2 || die "cannot build awfs"; fi
	[ -x "$AWFS" ] || die "no awfs binary at $AWFS (run make, or set AWFS)"
fi

# the workloads run as BENCH_UID (the fixtures are its, setup_target()); root does the rest
AS=()
[ "$BUID" != 0 ] && AS=(setpriv "--reuid=$BUID" "--regid=$BUID" --clear-groups env "HOME=$RUN/u")
mkd() {	# mkd DIR...: mkdir, owned by the workloads' uid
	mkdir "$@" && chown "$BUID:$BUID" "$@"
}

want_target() { case " $TARGETS " in *" $1 "*) return 0 ;; esac; return 1; }
drop_target() { TARGETS=$(echo " $TARGETS " | sed "s/ $1 / /; s/^ *//; s/ *$//"); note "$1 not measured: $2"; }

PLL=$BUILDDIR/passthrough_ll
if want_target passthrough_ll; then
	ex=/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c
	{ [ -f "$ex" ] || [ -f "$ex.gz" ]; } || apt_install libfuse3-dev >/dev/null
	if ! pkg-config --exists fuse3; then
		drop_target passthrough_ll "no fuse3 pkg-config (libfuse3-dev)"
	elif [ -f "$ex" ] || [ -f "$ex.gz" ]; then
		if [ ! -x "$PLL" ] || [ "$(dirname "$ex")" -nt "$PLL" ]; then
			# the example as Debian ships it, with its passthrough_helpers.h
			exdir=$RUN/libfuse-examples
			mkdir -p "$exdir"
			for f in "$(dirname "$ex")"/*; do
				case $f in *.gz) zcat "$f" >"$exdir/$(basename "$f" .gz)" ;; *) cp "$f" "$exdir/" ;; esac
			done
			# shellcheck disable=SC2046
			"$CC" -O2 -Wall $(pkg-config --cflags fuse3) -o "$PLL" "$exdir/passthrough_ll.c" \
				$(pkg-config --libs fuse3) >>"$SETUPLOG" 2>&1 ||
				drop_target passthrough_ll "passthrough_ll.c does not build (see $SETUPLOG)"
			rm -rf "$exdir"
		fi
	else
		drop_target passthrough_ll "no $ex (libfuse3-dev)"
	fi
fi
PHP=${PASSTHROUGH_HP:-}
if want_target passthrough_hp && { [ -z "$PHP" ] || [ ! -x "$PHP" ]; }; then
	drop_target passthrough_hp "PASSTHROUGH_HP ${PHP:+($PHP) }unset or not a program (libfuse 3.17 or later, built by hand: tests/bench/README.md)"
fi
URING_PARAM=/sys/module/fuse/parameters/enable_uring URING_OLD=""
if [ -w "$URING_PARAM" ]; then
	URING_OLD=$(cat "$URING_PARAM")
else
	URING_PARAM=""
	want_target awfs-uring && drop_target awfs-uring "this kernel has no FUSE over io_uring (Linux 6.14 or later, CONFIG_FUSE_IO_URING)"
fi
want_target bindfs && ! need bindfs bindfs && drop_target bindfs "bindfs not installed and apt-get failed"
want_target fuse-overlayfs && ! need fuse-overlayfs fuse-overlayfs && drop_target fuse-overlayfs "fuse-overlayfs not installed and apt-get failed"

want_workload() { case " $WORKLOADS " in *" $1 "*) return 0 ;; esac; return 1; }
if want_workload git_status || want_workload git_commit; then
	need git git || die "no git"
fi
FIO=""
if want_workload randread1 || want_workload randread4; then
	if need fio fio; then FIO=$(command -v fio); else note "no fio: random reads use bench-helper randread (pread loop, threads)"; fi
fi

# ---------------------------------------------------------------- sizes
sz() { awk -v b="$1" -v s="$SCALE" -v m="${2:-1}" 'BEGIN { v = int(b * s + 0.5); if (v < m) v = m; print v }'; }
N_APPEND=$(sz 20000)
N_META=$(sz 10000)
RULES_DIRS=$(sz 2000)
N_JSON=$(sz 1000)
TREE_FILES=$(sz 11400 12)	# ~120 MB: sizes log-uniform in 128 B .. 64 KiB (mean ~10.5 KB)
SEQ_MIB=$(sz 512 4)
RR_OPS=$(sz 262144 256)		# 4 KiB reads in total, split over the jobs (4 jobs: 0.2 s natively, not 45 ms)
GIT_FILES=$(sz 3000 20)		# sizes log-uniform in 128 B .. 16 KiB
num() { awk -v n="$1" 'BEGIN { s = sprintf("%d", n); r = ""; while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) } print s r }'; }
if [ "$SCALE" != 1 ]; then
	note "BENCH_SCALE=$SCALE: every size is scaled (the issue's sizes are BENCH_SCALE=1)"
fi

# workloads.tsv: id, label, kind (time = seconds and ratio to native; ms; mib), issue target
workload_table() {
	local tree_mb
	tree_mb=$(awk -v f="$TREE_FILES" 'BEGIN { printf "%.0f", f * 10.5 / 1000 }')
	cat <<EOF
append	$(num "$N_APPEND") × open(O_APPEND)/write 100 B/close	time	≤ 10×
append_flood	the same appends while another process has its writes refused (EROFS) nonstop	time	
stat	stat $(num "$N_META") files, warm	time	≤ 1.3×
create	create $(num "$N_META") empty files	time	≤ 2.5×
unlink	unlink $(num "$N_META") files	time	≤ 3×
json	read $(num "$N_JSON") small JSON files, warm	time	
untar	untar a ${tree_mb} MB source tree ($(num "$TREE_FILES") files)	time	≤ 3×
findcat	find + cat every file, warm	time	≤ 3×
lsR	ls -lR, warm	time	≤ 1.3×
rm	rm -rf of the untarred tree	time	
seqwrite	sequential write ${SEQ_MIB} MiB + fsync	time	≤ 1.2×
seqread_warm	sequential read ${SEQ_MIB} MiB, warm	time	≤ 1.3×
seqread_cold	sequential read ${SEQ_MIB} MiB, cold (drop_caches)	time	
randread1	random 4 KiB reads, 1 job ($(num "$RR_OPS") reads), warm	time	≤ 1.3×
randread4	random 4 KiB reads, 4 jobs ($(num "$RR_OPS") reads), warm	time	≤ 1.3×
git_status	git status ($(num "$GIT_FILES") files), warm	time	
git_commit	git add -A && git commit (20 changed, 5 new files)	time	
mount	mount latency (launch to first lookup)	ms	≤ 5 ms
unmount	unmount (fusermount3 -u until the daemon exits)	ms	
rules_mount_10k	mount latency with 10,000 rules (dN/*/xN)	ms	
rules_mount_100k	mount latency with 100,000 rules	ms	
rules_find_10k	find -type f over $(num "$((RULES_DIRS * 10))") files the 10,000 rules match, warm	time	
rules_find_100k	the same find under 100,000 rules, warm	time	
walk_1m	find -type f over $(num "$((WALK_DIRS * 1000))") files in $(num "$WALK_DIRS") directories, cold	time	
walk_1m_rss	the daemon's peak RSS (VmHWM) over that walk	mib	bounded
walk_1m_fds	the daemon's fds after it	count	
rss_idle	daemon RSS idle after mount	mib	≤ 4 MiB
rss_peak	daemon peak RSS (VmHWM) over the run	mib	bounded
EOF
}

# which targets a workload runs on
targets_for() {
	local w=$1 t out=""
	for t in $TARGETS; do
		case $w:$t in
		rules:native|rules:awfs|walk1m:native|walk1m:awfs) ;;
		rules:*|walk1m:*) continue ;;
		mount:native|mount:awfs-ro|mount:awfs-nopt|mount:awfs-uring|mount:awfs-keep) continue ;;
		append_flood:native|append_flood:awfs) ;;
		append_flood:*) continue ;;
		append:awfs-ro|create:awfs-ro|unlink:awfs-ro|untar:awfs-ro|rm:awfs-ro|seqwrite:awfs-ro|git_*:awfs-ro) continue ;;
		esac
		[ -n "${DEAD[$t]:-}" ] && [ "$w" = mount ] && continue
		out="$out $t"
	done
	echo $out
}
needs_fixture() {	# needs_fixture TARGET FIXTURE: some selected workload reads it there
	local w
	for w in $WORKLOADS; do
		case " $(targets_for "$w") " in *" $1 "*) ;; *) continue ;; esac
		case $2:$w in
		stat:stat|json:json|tree:findcat|tree:lsR|big:seqread_*|big:randread*|repo:git_*) return 0 ;;
		esac
	done
	return 1
}
active_targets() {	# targets some selected workload runs on
	local t w
	for t in $TARGETS; do
		for w in $WORKLOADS; do
			case " $(targets_for "$w") " in *" $t "*) echo "$t"; break ;; esac
		done
	done
}

# ---------------------------------------------------------------- fixtures (cached)
TARBALL=$WORKROOT/cache/tree-$TREE_FILES.tar
REPOTAR=$WORKROOT/cache/repo-$GIT_FILES.tar
make_cache() {
	local tmp=$WORKROOT/cache/tmp.$$
	if { want_workload untar || want_workload rm || want_workload findcat || want_workload lsR; } && [ ! -s "$TARBALL" ]; then
		say "bench: making $TARBALL (once)"
		rm -rf "$tmp"; mkdir -p "$tmp"
		"$HELPER" gentree "$tmp/tree" "$TREE_FILES" 128 65536 1 || die "gentree failed"
		tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@1577836800 \
			-cf "$TARBALL.tmp" -C "$tmp/tree" . || die "tar failed"
		mv "$TARBALL.tmp" "$TARBALL"
		rm -rf "$tmp"
	fi
	if { want_workload git_status || want_workload git_commit; } && [ ! -s "$REPOTAR" ]; then
		say "bench: making $REPOTAR (once)"
		rm -rf "$tmp"; mkdir -p "$tmp"
		"$HELPER" gentree "$tmp/repo" "$GIT_FILES" 128 16384 2 || die "gentree failed"
		(cd "$tmp/repo" && git init -q && git config user.name bench && git config user.email bench@localhost &&
			git config gc.auto 0 && git add -A && git commit -q -m fixture &&
			git ls-files | sed -n 1,20p >.git/bench-changed) >>"$SETUPLOG" 2>&1 || die "git fixture failed"
		tar -cf "$REPOTAR.tmp" -C "$tmp/repo" . || die "tar failed"
		mv "$REPOTAR.tmp" "$REPOTAR"
		rm -rf "$tmp"
	fi
}

POLICY=$RUN/policy.conf
write_policy() {
	cat >"$POLICY" <<'EOF'
# awfs benchmark policy: "rw" holds every write workload (and the read
# workloads of the awfs target), "ro" the read workloads of the awfs-ro target.
version = 1;
unclassified = "warn";
allow_write = (
  { path = "rw"; reason = "benchmark: the agent's writable subtree"; }
);
read_only = (
  { path = "ro"; reason = "benchmark: a read-only subtree (spilled payloads, a memory's .git)"; }
);
EOF
	chmod 644 "$POLICY"
}

sub_of() { [ "$1" = awfs-ro ] && echo ro || echo rw; }

# prepare_dir DIR: src/{rw,ro}, mnt, lower, work
prepare_dir() { mkdir -p "$1/src/rw" "$1/src/ro" "$1/mnt" "$1/lower" "$1/work"; }

# mount_cmd TARGET DIR: the daemon's command line in CMD
mount_cmd() {
	local t=$1 d=$2
	case $t in
	awfs-nopt) CMD=("$AWFS" "$d/mnt" --policy "$POLICY" --source "$d/src" -f -o passthrough=off) ;;
	awfs-uring) CMD=("$AWFS" "$d/mnt" --policy "$POLICY" --source "$d/src" -f -o io_uring=on) ;;
	awfs-keep) CMD=("$AWFS" "$d/mnt" --policy "$POLICY" --source "$d/src" -f -o keepers=on) ;;
	awfs|awfs-ro) CMD=("$AWFS" "$d/mnt" --policy "$POLICY" --source "$d/src" -f)
		# the change record (changes.h), for its cost: BENCH_AWFS_RECORD=1
		[ -n "${BENCH_AWFS_RECORD:-}" ] && CMD+=(--audit "$d/audit.jsonl" --record-changes) ;;
	bindfs) CMD=(bindfs -f "$d/src" "$d/mnt") ;;
	fuse-overlayfs) CMD=(fuse-overlayfs -f -o "lowerdir=$d/lower,upperdir=$d/src,workdir=$d/work" "$d/mnt") ;;
	passthrough_ll) CMD=("$PLL" -f -o "source=$d/src" "$d/mnt") ;;
	passthrough_hp) CMD=("$PHP" --foreground "$d/src" "$d/mnt") ;;
	esac
	# the peers' mounts let only root in unless told otherwise (awfs always
	# lets others in: allow_other, with the kernel's permission checks)
	case $t:$BUID in
	awfs*|*:0) ;;
	passthrough_hp:*) CMD+=(-o allow_other) ;;
	*) CMD+=(-o allow_other) ;;
	esac
}

setup_target() {
	local t=$1 b=$RUN/$1 s
	s=$(sub_of "$t")
	BASE[$t]=$b
	prepare_dir "$b"
	SRC[$t]=$b/src
	if [ "$t" = native ]; then MNT[$t]=$b/src; else MNT[$t]=$b/mnt; fi
	WD[$t]=${MNT[$t]}/$s
	local f=$b/src/$s
	if needs_fixture "$t" tree; then
		mkdir -p "$f/tree" && tar -xf "$TARBALL" -C "$f/tree" || die "fixture tree for $t"
	fi
	if needs_fixture "$t" stat; then
		mkdir -p "$f/stat" && "$HELPER" create "$f/stat" "$N_META" >/dev/null || die "fixture stat for $t"
	fi
	if needs_fixture "$t" json; then
		"$HELPER" genjson "$f/json" "$N_JSON" 3 || die "fixture json for $t"
	fi
	if needs_fixture "$t" big; then
		"$HELPER" seqwrite "$f/big" "$SEQ_MIB" >/dev/null || die "fixture big for $t"
	fi
	if needs_fixture "$t" repo; then
		mkdir -p "$f/repo" && tar -xf "$REPOTAR" -C "$f/repo" || die "fixture repo for $t"
	fi
	chown -R "$BUID:$BUID" "$b/src"	# the workloads' own, as an agent's tree is
}

mount_target() {
	local t=$1 b=$RUN/$1
	[ "$t" = native ] && { CMDLINE[$t]="(the source directory itself)"; return 0; }
	mount_cmd "$t" "$b"
	CMDLINE[$t]="${CMD[*]}"
	# the kernel reads enable_uring at each mount's INIT: awfs-uring mounts
	# with it on, every other target with it off (FUSE over io_uring is
	# off by default), whatever this machine had; put back once mounted
	[ -n "$URING_PARAM" ] && { [ "$t" = awfs-uring ] && echo 1 || echo 0; } >"$URING_PARAM"
	"${CMD[@]}" >"$RUN/$t.log" 2>&1 &
	PID[$t]=$!
	MOUNTED+=("${MNT[$t]}")
	if ! "$HELPER" waitmount "${MNT[$t]}" "$(sub_of "$t")" 30 >/dev/null 2>>"$ERRLOG"; then
		tail -5 "$RUN/$t.log" >&8
		die "$t did not mount"
	fi
	[ -n "$URING_PARAM" ] && echo "$URING_OLD" >"$URING_PARAM"
	OPTS[$t]=$(awk -v p="${MNT[$t]}" '$5 == p { for (i = 7; $i != "-"; i++); print $6 " | " $(i + 1) " " $(i + 3) }' /proc/self/mountinfo)
	sleep 0.2
	rec_rss "$t" 0 rss_idle
}

# ---------------------------------------------------------------- measuring
RAW=$RUN/raw.tsv
: >"$RAW"
rec() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-NA}" >>"$RAW"; }	# W T REP SECONDS KIB
rec_rss() {	# rec_rss TARGET REP WORKLOAD(rss_idle: VmRSS | rss_peak: VmHWM)
	local hwm rss
	read -r hwm rss < <("$HELPER" rss "${PID[$1]}" 2>/dev/null) || return 0
	if [ "$3" = rss_idle ]; then rec rss_idle "$1" "$2" NA "$rss"; else rec rss_peak "$1" "$2" NA "$hwm"; fi
}

# bg CMD...: run a command in the background and wait, so a signal is handled at once
bg() {
	"$@" &
	CUR=$!
	wait "$CUR"
	local rc=$?
	CUR=""
	return $rc
}
# tm CMD...: a self-timing bench-helper command; its stdout (seconds) -> SEC
tm() {
	bg timeout -k 5 "$TIMEOUT" "${AS[@]}" "$@" >"$RUN/out" 2>>"$ERRLOG" || return 1
	read -r SEC <"$RUN/out"
}
# tx CMD...: time an external command with bench-helper time (stdout discarded) -> SEC
tx() {
	bg timeout -k 5 "$TIMEOUT" "${AS[@]}" "$HELPER" time "$RUN/u/out" "$@" >/dev/null 2>>"$ERRLOG" || return 1
	cp "$RUN/u/out" "$RUN/out"
	read -r SEC <"$RUN/out"
}
untimed() { bg timeout -k 5 "$TIMEOUT" "${AS[@]}" "$@" >/dev/null 2>>"$ERRLOG"; }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

fio_rr() {	# fio_rr FILE JOBS -> SEC (fio's own read runtime, ms resolution)
	local out
	bg timeout -k 5 "$TIMEOUT" "${AS[@]}" "$FIO" --name=randread --filename="$1" --readonly --rw=randread \
		--bs=4k --ioengine=psync --numjobs="$2" --io_size=$((RR_OPS * 4096 / $2)) \
		--size="${SEQ_MIB}M" --invalidate=0 --randrepeat=1 --norandommap --group_reporting \
		--output-format=terse --terse-version=3 >"$RUN/out" 2>>"$ERRLOG" || return 1
	out=$(awk -F ';' 'NR == 1 { print $9 / 1000 }' "$RUN/out")
	[ -n "$out" ] && [ "$out" != 0 ] || return 1
	SEC=$out
}
randread() {	# randread TARGET JOBS
	if [ -n "$FIO" ]; then fio_rr "${WD[$1]}/big" "$2"
	else tm "$HELPER" randread "${WD[$1]}/big" "$2" "$RR_OPS" 11; fi
}

# Each workload: setup_W T REP (untimed), run_W T REP (-> SEC), teardown_W T REP (untimed).
# Warm workloads run run_W once untimed first.
WARM=" stat json findcat lsR seqread_warm randread1 randread4 git_status "
noop() { :; }
setup_append() { rm -f "${WD[$1]}/append.$2"; }
run_append() { tm "$HELPER" append "${WD[$1]}/append.$2" "$N_APPEND" 100; }
teardown_append() { rm -f "${WD[$1]}/append.$2"; }
# append_flood: natively the refused writes go to a read-only bind mount, on
# awfs to its read_only subtree (each refusal a round trip, counted and logged
# under the rate limit)
setup_append_flood() {
	local ro=$RUN/native/rofl
	setup_append "$@"
	if [ "$1" = native ] && ! is_mounted "$ro"; then
		mkdir -p "$ro" && mount --bind -o ro "${SRC[native]}/ro" "$ro" || return 1
		MOUNTED+=("$ro")
	fi
}
run_append_flood() {
	local f rc
	if [ "$1" = native ]; then f=$RUN/native/rofl/flood; else f=${MNT[$1]}/ro/flood; fi
	"${AS[@]}" "$HELPER" flood "$f" "$RUN/u/flood.out" 2>>"$ERRLOG" &
	FLOOD=$!
	sleep 0.2	# flooding before the first append
	run_append "$@"
	rc=$?
	kill -TERM "$FLOOD" 2>/dev/null
	wait "$FLOOD" || rc=1
	FLOOD=""
	[ "$rc" = 0 ] && printf 'append_flood\t%s\t%s\trefused writes during the run: %s\n' "$1" "$2" \
		"$(cat "$RUN/u/flood.out")" >>"$RUN/flood.log"
	return $rc
}
teardown_append_flood() { teardown_append "$@"; }
setup_create() { rm -rf "${WD[$1]}/create.$2" && mkd "${WD[$1]}/create.$2"; }
run_create() { tm "$HELPER" create "${WD[$1]}/create.$2" "$N_META"; }
teardown_create() { :; }	# unlink of the next repetition removes them
# unlink and rm remove what create and untar made in the previous repetition
# (made untimed here when there is none)
setup_unlink() {
	local d=${WD[$1]}/create.$(($2 - 1))
	[ -e "$d/f$(printf %06d $((N_META - 1)))" ] && return 0
	rm -rf "$d" && mkd "$d" && untimed "$HELPER" create "$d" "$N_META"
}
run_unlink() { tm "$HELPER" unlink "${WD[$1]}/create.$(($2 - 1))" "$N_META"; }
teardown_unlink() { rmdir "${WD[$1]}/create.$(($2 - 1))"; }
setup_stat() { :; }
run_stat() { tm "$HELPER" stat "${WD[$1]}/stat" "$N_META"; }
setup_json() { :; }
run_json() { tm "$HELPER" readfiles "${WD[$1]}/json" "$N_JSON"; }
setup_untar() { rm -rf "${WD[$1]}/untar.$2" && mkd "${WD[$1]}/untar.$2"; }
run_untar() { tx tar -x --no-same-owner -f "$TARBALL" -C "${WD[$1]}/untar.$2"; }
teardown_untar() { :; }	# rm of the next repetition removes it
setup_rm() {
	local d=${WD[$1]}/untar.$(($2 - 1))
	[ -d "$d" ] && return 0
	mkd "$d" && untimed tar -x --no-same-owner -f "$TARBALL" -C "$d"
}
run_rm() { tx rm -rf "${WD[$1]}/untar.$(($2 - 1))"; }
setup_findcat() { :; }
run_findcat() { tx find "${WD[$1]}/tree" -type f -exec cat {} +; }
setup_lsR() { :; }
run_lsR() { tx ls -lR "${WD[$1]}/tree"; }
setup_seqwrite() { rm -f "${WD[$1]}/seqwrite.$2" && prime_seqwrite; }
run_seqwrite() { tm "$HELPER" seqwrite "${WD[$1]}/seqwrite.$2" "$SEQ_MIB"; }
teardown_seqwrite() { rm -f "${WD[$1]}/seqwrite.$2"; }
# Untimed, before each target's run: one write of the same size, deleted.
# The first 512 MiB write + fsync after some 20 s without one took
# 0.76-0.80 s here, the next ones 0.24 s; primed once before the round,
# native still drew 0.71 s against 0.30 s in one repetition.
prime_seqwrite() { untimed "$HELPER" seqwrite "$RUN/u/prime" "$SEQ_MIB"; rm -f "$RUN/u/prime"; sync; }
setup_seqread_warm() { :; }
run_seqread_warm() { tm "$HELPER" seqread "${WD[$1]}/big"; }
setup_seqread_cold() { drop_caches; }
run_seqread_cold() { tm "$HELPER" seqread "${WD[$1]}/big"; }
setup_randread1() { :; }
run_randread1() { randread "$1" 1; }
setup_randread4() { :; }
run_randread4() { randread "$1" 4; }
setup_git_status() { :; }
run_git_status() { tx git -C "${WD[$1]}/repo" status; }
setup_git_commit() {
	local r=${WD[$1]}/repo f i
	untimed git -C "$r" status || return 1	# a fresh index, as after the agent's last git status
	while read -r f; do echo "changed in repetition $2" >>"$r/$f" || return 1; done <"$r/.git/bench-changed"
	for i in 1 2 3 4 5; do echo "new file $i of repetition $2" >"$r/new-$2-$i.txt" || return 1; done
	chown "$BUID:$BUID" "$r"/new-"$2"-*.txt
}
run_git_commit() { tx sh -c 'cd "$1" && git add -A && git commit -q -m "repetition $2"' sh "${WD[$1]}/repo" "$2"; }

# the mount workload: a second daemon of the target over its own small source
setup_lat() {
	local d=$RUN/$1/lat
	[ -d "$d" ] && return 0
	prepare_dir "$d"
	echo probe >"$d/src/probe"
}
run_mount() {	# -> records mount, unmount, rss_idle itself
	local t=$1 rep=$2 d=$RUN/$1/lat m rss hwm u
	setup_lat "$t"
	mount_cmd "$t" "$d"
	bg timeout -k 5 60 "$HELPER" mountcycle "$d/mnt" probe 30 "$CYCLE_PIDFILE" "${CMD[@]}" \
		>"$RUN/out" 2>>"$RUN/$t.lat.log" || { unmount_path "$d/mnt"; return 1; }
	read -r m rss hwm u <"$RUN/out" || return 1
	rec mount "$t" "$rep" "$m"
	rec unmount "$t" "$rep" "$u"
	[ "$rss" -ge 0 ] 2>/dev/null && rec rss_idle "$t" "$rep" NA "$rss"
	SEC=$m
}

alive() {	# alive TARGET: its daemon is still running and the mount answers
	[ "$1" = native ] && return 0
	[ -n "${DEAD[$1]:-}" ] && return 1
	if ! kill -0 "${PID[$1]}" 2>/dev/null || ! stat "${MNT[$1]}/$(sub_of "$1")" >/dev/null 2>&1; then
		DEAD[$1]=1
		note "$1: the daemon died or the mount stopped answering (see $1.log in the results)"
		return 1
	fi
}

START=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
elapsed() { local s=$(($(date +%s) - START)); printf '%d:%02d' $((s / 60)) $((s % 60)); }

drop_dentries() { sync; echo 2 >/proc/sys/vm/drop_caches; }

failed() {	# failed W T REP: record and say a failure
	rec "$1" "$2" "$3" FAIL
	[ "$1" = mount ] && rec unmount "$2" "$3" FAIL
	say "$(printf '[%s] rep %d/%d  %-13s %-15s FAILED: %s' "$(elapsed)" "$3" "$REPS" "$1" "$2" "$(grep -v '^==' "$ERRLOG" | tail -1)")"
	echo "FAILED: $1 on $2, repetition $3" >>"$ERRLOG"
	alive "$2" >/dev/null
}

# prepare W T REP: untimed setup (and the warm-up pass of a warm workload)
prepare() {
	local w=$1 t=$2 rep=$3
	alive "$t" || { failed "$w" "$t" "$rep"; return 1; }
	echo "== $w $t rep $rep" >>"$ERRLOG"
	[ "$w" = mount ] && return 0
	"setup_$w" "$t" "$rep" 2>>"$ERRLOG" || { failed "$w" "$t" "$rep"; return 1; }
	if [[ $WARM == *" $w "* ]]; then
		"run_$w" "$t" "$rep" || { failed "$w" "$t" "$rep"; return 1; }
	fi
}

# measure W T REP: the timed run, recorded; then the untimed teardown and a sync
# timed W T REP: the timed run (-> SEC), then the untimed teardown and a sync
timed() {
	local w=$1 t=$2 rep=$3
	SEC=""
	alive "$t" && "run_$w" "$t" "$rep" || { failed "$w" "$t" "$rep"; sync; return 1; }
	if declare -F "teardown_$w" >/dev/null; then "teardown_$w" "$t" "$rep" 2>>"$ERRLOG"; fi
	sync	# no dirty data from this run is written back during the next
}
measure() {
	local w=$1 t=$2 rep=$3
	if [ "$w" = mount ]; then
		SEC=""
		alive "$t" && run_mount "$t" "$rep" || { failed "$w" "$t" "$rep"; return 1; }
	else
		timed "$w" "$t" "$rep" || return 1
		rec "$w" "$t" "$rep" "$SEC"
	fi
	say "$(printf '[%s] rep %d/%d  %-13s %-15s %s s' "$(elapsed)" "$rep" "$REPS" "$w" "$t" "$SEC")"
}

# measure_passes W REP TARGET...: the timed runs of a data workload (PASSED):
# PASSES sweeps over the targets in this order, one run of each a sweep
# (a workload that is not warm, seqwrite: each run after its own dropped
# dentries, setup and, after it, teardown); a target's time is its fastest
# run, every run in passes.log. One
# such run takes a tenth of a second here, within reach of the host's and
# the other core's hiccups, and the machine's speed drifts over seconds: one
# run a target gave ratios to native of 0.6-2.4x for the same build in one
# benchmark; sweeps give every target's runs the same stretch of time.
PASSED=" seqread_warm randread1 randread4 seqwrite "
# Before their warm-up passes: every cache dropped and memory compacted, so
# that the targets' files are read into the page cache from as alike a
# state as the benchmark can make (one after the other: not the same one).
# Without it, which file came out slow varied from one repetition to the
# next and stayed so for all its runs (warm 512 MiB: 0.061 s or 0.087-0.090 s,
# native included), as if it had been cached in small pages; with it, one
# run of seqread_warm alone drew 0.98-1.00x for awfs and passthrough_hp in
# every repetition. Sweeps do not undo a file's state (it holds for all of
# its runs): the repetitions vary it.
drop_compact() { drop_caches; echo 1 >/proc/sys/vm/compact_memory 2>/dev/null; }
measure_passes() {
	local w=$1 rep=$2 t i cold=""
	shift 2
	[[ $WARM == *" $w "* ]] || cold=1
	local -A best=() all=() bad=()
	for ((i = 1; i <= PASSES; i++)); do
		for t in "$@"; do
			[ -z "${bad[$t]:-}" ] || continue
			[ -z "$cold" ] || drop_dentries	# each run from its own setup
			if ! { [ -z "$cold" ] || prepare "$w" "$t" "$rep"; } || ! timed "$w" "$t" "$rep"; then
				printf '%s\t%s\t%s\t%s FAIL\n' "$w" "$t" "$rep" "${all[$t]:-}" >>"$RUN/passes.log"
				bad[$t]=1
				continue
			fi
			all[$t]="${all[$t]:-} $SEC"
			best[$t]=$(awk -v a="${best[$t]:-}" -v b="$SEC" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
		done
	done
	for t in "$@"; do
		[ -z "${bad[$t]:-}" ] || continue
		rec "$w" "$t" "$rep" "${best[$t]}"
		printf '%s\t%s\t%s\t%s\n' "$w" "$t" "$rep" "${all[$t]# }" >>"$RUN/passes.log"
		say "$(printf '[%s] rep %d/%d  %-13s %-15s %s s (fastest of:%s)' "$(elapsed)" "$rep" "$REPS" "$w" "$t" "${best[$t]}" "${all[$t]}")"
	done
}

# round W REP TARGET...: one repetition of W on the targets, in this order.
# Every run starts from the same kernel cache state whatever ran before (and
# the daemons that hold an fd per cached inode stay far below the open file
# limit): dentries and inodes dropped (untimed). A warm workload: dropped
# once (a warm data workload: every cache, and memory compacted), every
# target's warm-up pass, a pause longer than the daemons' default 1 s
# timeouts, then the timed runs in the same order (a warm data workload:
# PASSES sweeps, measure_passes(); the pause comes before the first only).
# seqwrite: PASSES sweeps too, each run prepared on its own.
round() {
	local w=$1 rep=$2 t
	shift 2
	local -A ready=()
	if [[ $WARM == *" $w "* ]]; then
		if [[ $PASSED == *" $w "* ]]; then drop_compact; else drop_dentries; fi
		for t in "$@"; do prepare "$w" "$t" "$rep" && ready[$t]=1; done
		sleep "$WARM_PAUSE"
		if [[ $PASSED == *" $w "* ]]; then
			local ok=()
			for t in "$@"; do [ -n "${ready[$t]:-}" ] && ok+=("$t"); done
			[ ${#ok[@]} -gt 0 ] && measure_passes "$w" "$rep" "${ok[@]}"
		else
			for t in "$@"; do [ -n "${ready[$t]:-}" ] && measure "$w" "$t" "$rep"; done
		fi
	elif [[ $PASSED == *" $w "* ]]; then
		measure_passes "$w" "$rep" "$@"
	else
		for t in "$@"; do
			drop_dentries
			prepare "$w" "$t" "$rep" && measure "$w" "$t" "$rep"
		done
	fi
	return 0
}

# ---------------------------------------------------------------- run
[ -n "$(active_targets)" ] || die "nothing to run"
ulimit -n "$NOFILE" 2>/dev/null || { NOFILE=$(ulimit -n); note "could not raise the open file limit; daemons run with $NOFILE"; }
make_cache
write_policy
ACTIVE=$(active_targets)
say "bench: workloads:$WORKLOADS"
say "bench: targets: $(echo $ACTIVE)"
say "bench: preparing sources under $RUN"
for t in $ACTIVE; do setup_target "$t"; done
sync
for t in $ACTIVE; do mount_target "$t"; done
say "bench: mounted; $REPS repetitions"

# A repetition runs in three phases: the workloads that delete (unlink, rm:
# what the previous repetition's create and untar made), those that only
# read, those that create. Where the sources are on an ext4 without a
# journal (BENCH_FS=here on this machine's root), its allocator's skip of
# recently deleted inodes (BENCH_FS above) would slow the creates of
# whichever target came first after the deletions: the creating phase then
# starts at least $SETTLE s after the last deletion, 361 s by default (61 s,
# this script's first choice, was seen too short: the creates themselves
# dirty the inode-table blocks, and a dirty block's window is 360 s).
DELETING=" unlink rm "
CREATING=" append append_flood create untar seqwrite git_commit "
case ${BENCH_SETTLE:-auto} in
auto) if [ "$(fs_journal "$RUN")" = "no journal" ]; then SETTLE=361; else SETTLE=0; fi ;;
*) SETTLE=$BENCH_SETTLE ;;
esac
phase_of() {
	if [[ $DELETING == *" $1 "* ]]; then echo 1
	elif [[ $CREATING == *" $1 "* ]]; then echo 3
	else echo 2; fi
}
LAST_DEL=$(date +%s)
for ((rep = 1; rep <= REPS; rep++)); do
	for phase in 1 2 3; do
		if [ $phase = 2 ]; then
			# what a filtered-out unlink or rm left of the previous repetition
			for t in $ACTIVE; do
				[ "$(sub_of "$t")" = rw ] && alive "$t" &&
					untimed rm -rf "${WD[$t]}/create.$((rep - 1))" "${WD[$t]}/untar.$((rep - 1))"
			done
			sync
			LAST_DEL=$(date +%s)
		fi
		if [ $phase = 3 ] && [ "$SETTLE" -gt 0 ]; then
			for w in $WORKLOADS; do
				[ "$(phase_of "$w")" = 3 ] || continue
				wait_s=$((LAST_DEL + SETTLE - $(date +%s)))
				if [ "$wait_s" -gt 0 ]; then
					say "bench: waiting ${wait_s} s before creating (ext4 without a journal: inodes deleted in the last 60-360 s slow every create; BENCH_FS=auto avoids it)"
					sleep "$wait_s"
				fi
				break
			done
		fi
		for w in $WORKLOADS; do
			[ "$(phase_of "$w")" = $phase ] && [ "$w" != rules ] && [ "$w" != walk1m ] || continue
			read -r -a tl <<<"$(targets_for "$w")"
			n=${#tl[@]}
			[ "$n" -gt 0 ] || continue
			order=()
			for ((i = 0; i < n; i++)); do order+=("${tl[$(((i + rep - 1) % n))]}"); done
			round "$w" "$rep" "${order[@]}"
		done
	done
	for t in $ACTIVE; do
		[ "$t" != native ] && alive "$t" && rec_rss "$t" "$rep" rss_peak
	done
done

# ---------------------------------------------------------------- policy size
# rules: awfs under a generated policy of 10,000 and 100,000 rules (dN/*/xN,
# as one rule per tool grant or per repository would make): its mount
# latency (launch until the command returns with the mount serving), and a
# warm find -type f (a lookup and a stat each) over RULES_DIRS directories
# dN/s of 10 files whose xN the rules match, as a ratio to the same find on
# the directory itself. Policy loading, its checks and classification were
# quadratic in the rules (issue 16): 80 s to load 100,000.
rules_tree() {
	local d=$1 i f
	[ -f "$d/.done" ] && return 0
	rm -rf "$d"
	for ((i = 0; i < RULES_DIRS; i++)); do
		mkdir -p "$d/d$i/s" || return 1
		for f in "x$i" y0 y1 y2 y3 y4 y5 y6 y7 y8; do : >"$d/d$i/s/$f"; done
	done
	: >"$d/.done"
}
rules_policy() {	# rules_policy N FILE
	[ -s "$2" ] && return 0
	awk -v n="$1" 'BEGIN { print "version = 1;\nallow_write = ("
		for (i = 0; i < n; i++) printf "  { path = \"d%d/*/x%d\"; reason = \"generated\"; }%s\n", i, i, i < n - 1 ? "," : ""
		print ");" }' >"$2.tmp" && chmod 644 "$2.tmp" && mv "$2.tmp" "$2"
}
bench_rules() {
	local d=$RUN/rules n k rep pol t0 t1 tries
	case " $(echo $ACTIVE) " in *" awfs "*) ;; *) return 0 ;; esac	# one per line
	mkdir -p "$d/mnt"
	chmod 755 "$d"
	rules_tree "$d/src" || { note "rules: could not make the tree"; return 0; }
	for n in 10000 100000; do
		k=$((n / 1000))k
		pol=$WORKROOT/cache/rules-$n.conf
		rules_policy "$n" "$pol" || { note "rules: could not write $pol"; continue; }
		for ((rep = 1; rep <= REPS; rep++)); do
			drop_dentries
			t0=$(date +%s%N)
			if ! "$AWFS" "$d/mnt" --policy "$pol" --source "$d/src" --log "$RUN/rules.log" 2>>"$ERRLOG"; then
				rec "rules_mount_$k" awfs "$rep" FAIL
				continue
			fi
			t1=$(date +%s%N)
			rec "rules_mount_$k" awfs "$rep" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')"
			untimed find "$d/src" -type f -printf '%s\n'
			untimed find "$d/mnt" -type f -printf '%s\n'
			if tx find "$d/src" -type f -printf '%s\n'; then rec "rules_find_$k" native "$rep" "$SEC"; else rec "rules_find_$k" native "$rep" FAIL; fi
			if tx find "$d/mnt" -type f -printf '%s\n'; then rec "rules_find_$k" awfs "$rep" "$SEC"; else rec "rules_find_$k" awfs "$rep" FAIL; fi
			say "$(printf '[%s] rep %d/%d  rules %-7s mount %s s, find %s s' "$(elapsed)" "$rep" "$REPS" "$k" \
				"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')" "$SEC")"
			fusermount3 -u "$d/mnt" 2>>"$ERRLOG" || umount -l "$d/mnt"
			for tries in $(seq 100); do	# the daemon gone before the next mount
				pgrep -f -- "--source $d/src" >/dev/null || break
				sleep 0.1
			done
		done
	done
}
want_workload rules && bench_rules

# ---------------------------------------------------------------- a million entries
# walk1m: a tree of WALK_DIRS directories of 1,000 empty files (a million by
# default), walked once cold (the kernel's dentries dropped) with find
# -type f (a lookup and a stat each), on the directory and through a fresh
# awfs mount of it; and what that left awfs holding: its peak RSS and its
# fds. awfs refers to the inodes by file handle (inode.c): its fds stay at
# its fd cache, and past 262,144 inodes it asks the kernel to drop files,
# which bounds its memory (issue 16).
WALK_DIRS=${BENCH_WALK_DIRS:-1000}
walk_tree() {
	local d=$1 i
	[ -f "$d/.done" ] && return 0
	rm -rf "$d"
	for ((i = 0; i < WALK_DIRS; i++)); do
		mkdir -p "$d/d$i" && (cd "$d/d$i" && seq 1000 | sed 's/^/f/' | xargs touch) || return 1
	done
	: >"$d/.done"
}
bench_walk1m() {
	local d=$WORKROOT/cache/walk1m m=$RUN/walk1m rep pid hwm rss
	case " $(echo $ACTIVE) " in *" awfs "*) ;; *) return 0 ;; esac
	say "walk1m: making the tree (once, kept in $d)"
	walk_tree "$d" || { note "walk1m: could not make the tree"; return 0; }
	mkdir -p "$m"
	printf 'version = 1;\nallow_write = ( { path = "d1"; reason = "bench"; } );\n' >"$RUN/walk1m.conf"
	chmod 644 "$RUN/walk1m.conf"
	for ((rep = 1; rep <= REPS; rep++)); do
		drop_dentries
		if tx find "$d" -type f -printf '%s\n'; then rec walk_1m native "$rep" "$SEC"; else rec walk_1m native "$rep" FAIL; fi
		if ! "$AWFS" "$m" --policy "$RUN/walk1m.conf" --source "$d" --log "$RUN/walk1m.log" 2>>"$ERRLOG"; then
			rec walk_1m awfs "$rep" FAIL
			continue
		fi
		pid=$(pgrep -f -- "--source $d --log" | head -1)
		drop_dentries
		if tx find "$m" -type f -printf '%s\n'; then rec walk_1m awfs "$rep" "$SEC"; else rec walk_1m awfs "$rep" FAIL; fi
		read -r hwm rss < <("$HELPER" rss "$pid" 2>/dev/null) && rec walk_1m_rss awfs "$rep" NA "$hwm"
		rec walk_1m_fds awfs "$rep" NA "$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)"
		say "$(printf '[%s] rep %d/%d  walk1m  awfs %s s, peak RSS %s kB, %s fds' "$(elapsed)" "$rep" "$REPS" \
			"$SEC" "$hwm" "$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)")"
		fusermount3 -u "$m" 2>>"$ERRLOG" || umount -l "$m"
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	done
}
want_workload walk1m && bench_walk1m
END=$(date +%s)

# ---------------------------------------------------------------- results
COMMIT=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=""
[ -n "$(git -C "$TOP" status --porcelain --untracked-files=no 2>/dev/null)" ] && DIRTY=" (with uncommitted changes)"
STAMP=$(date +%Y%m%d-%H%M%S)
OUT=$OUTROOT/$STAMP-$COMMIT
mkdir -p "$OUT" || die "cannot create $OUT"

workload_table >"$OUT/workloads.tsv"
# each row with its ratio to native in the same repetition
python3 "$HERE/report.py" results "$RAW" >"$OUT/results.tsv"

# unmount (awfs then logs its summary), then keep the daemons' logs
for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do unmount_path "${MOUNTED[$i]}"; done
for t in "${!PID[@]}"; do stop_pid "${PID[$t]}"; done
for t in $ACTIVE; do
	[ -f "$RUN/$t.log" ] && cp "$RUN/$t.log" "$OUT/$t.log"
	[ -f "$RUN/$t.lat.log" ] && cp "$RUN/$t.lat.log" "$OUT/$t.mount-latency.log"
done
cp "$ERRLOG" "$OUT/errors.log"
[ -f "$RUN/passes.log" ] && cp "$RUN/passes.log" "$OUT/passes.log"
cp "$POLICY" "$OUT/policy.conf"
for t in awfs awfs-ro; do
	[ -f "$RUN/$t.log" ] || continue
	d=$(sed -n 's/.*: \([0-9][0-9]*\) writes denied.*/\1/p' "$RUN/$t.log" | tail -1)
	[ -n "$d" ] || note "$t logged no unmount summary (see $t.log)"
	[ "${d:-0}" -gt 0 ] && note "$t denied $d writes during the run (see $t.log)"
done
if [ -f "$RUN/flood.log" ]; then
	cp "$RUN/flood.log" "$OUT/flood.log"
	for t in native awfs; do
		r=$(awk -F '\t' -v t="$t" '$2 == t { sub(/.*: /, "", $4); printf "%s%s", s, $4; s = ", " }' "$RUN/flood.log")
		[ -n "$r" ] && note "append_flood: refused writes made by the flooder during each run on $t: $r"
	done
	[ -f "$RUN/awfs.log" ] && note "append_flood: awfs's log after the whole run: $(wc -c <"$RUN/awfs.log") bytes, $(grep -c 'denial messages suppressed' "$RUN/awfs.log") rate-limit summaries"
fi
grep -q '^FAILED' "$ERRLOG" && note "some runs failed: see errors.log in the results"

dur=$((END - START))
{
	echo "# awfs benchmark: $(date -d "@$START" '+%Y-%m-%d %H:%M %Z')"
	echo
	echo "- commit: $COMMIT$DIRTY; kernel $(uname -r); $(nproc) CPUs; $(awk '/MemTotal/ { printf "%.0f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
	if [ -n "$TESTFS" ]; then
		echo "- sources: an ext4 with a journal made for the run (BENCH_FS=auto; the work directory $WORKROOT is an ext4 without one): a ${BENCH_FS_SIZE:-24G} image file there on $LOOPDEV, $TESTDIO; every target has its own source directory on it, and the policy-size rows their tree (walk1m's million files stay in $WORKROOT/cache)"
	else
		echo "- work directory: $WORKROOT ($(df --output=fstype "$WORKROOT" | tail -1) on $(df --output=source "$WORKROOT" | tail -1), $(fs_journal "$WORKROOT")); every target has its own source directory there"
	fi
	echo "- $REPS repetitions, targets interleaved and their order rotated each repetition; a cell is the median (min–max) over the repetitions of target time / native time of the same repetition; native is shown as its absolute time. Before every run (untimed): \`sync; echo 2 > /proc/sys/vm/drop_caches\` (dentries and inodes: the same kernel cache state whatever ran before, and the daemons that hold an fd per cached inode stay below the open file limit); \`sync\` after every run. Warm workloads (marked warm): dropped once, then one untimed warm-up pass on every target, a ${WARM_PAUSE} s pause (longer than the daemons' default 1 s timeouts: what is measured is what stays cached between an agent's accesses), then the timed runs in the same order; the warm data workloads (seqread_warm, randread1, randread4) start from every cache dropped and memory compacted (\`echo 3 > drop_caches; echo 1 > compact_memory\`), make ${PASSES} sweeps over the targets (the pause before the first only), and a target's time is its fastest run (every run in passes.log); the spread of those rows is over the repetitions' fastest runs. seqwrite makes such sweeps too, each run after its own setup (dentries dropped, the untimed write below). A repetition runs the deleting workloads first (unlink and rm remove what the previous repetition's create and untar made; made untimed for the first), then the reading ones, then the creating ones$( [ "$SETTLE" -gt 0 ] && echo ", at least ${SETTLE} s after the last deletion: on an ext4 without a journal (the sources': $(fs_journal "$RUN")) the inode allocator skips, one by one, every inode deleted in the last 60 s (360 s while its inode-table block is dirty) whose inode-table block is cached (fs/ext4/ialloc.c recently_deleted()), which made 10,000 creates after the benchmark's own deletions take 2–5 s instead of 0.2 s on whichever target came next"). seqwrite: each target's run follows an untimed write of the same size made natively and deleted (the first such write after a pause took twice as long)."
	echo "- timing: CLOCK_MONOTONIC around the workload's own loop (bench-helper) or around the command (tar, find, ls, rm, git);$( [ -n "$FIO" ] && echo " random reads: fio $($FIO --version | sed 's/^fio-//') psync, its own read runtime (ms resolution), --invalidate=0;") seqwrite: open, 1 MiB writes, fsync, close inside the timed region"
	echo "- sizes: BENCH_SCALE=$SCALE$( [ "$SCALE" = 1 ] && echo " (the sizes of issue 5; sequential files ${SEQ_MIB} MiB, the untarred tree is a generated source-like tree, deterministic)" || echo " (**scaled** from the issue's sizes)")"
	echo "- daemons: open file limit $(ulimit -n) (awfs and passthrough_ll hold an fd per inode the kernel caches); workloads run as uid $BUID$([ "$BUID" = 0 ] && echo " (root)") (BENCH_UID), on fixtures that uid owns"
	echo "- load average (1, 5, 15 min) at the start: $LOAD_START, at the end: $(cut -d' ' -f1-3 /proc/loadavg) (anything else running adds noise)"
	echo "- duration: $((dur / 60)) min $((dur % 60)) s; libfuse $(pkg-config --modversion fuse3 2>/dev/null)$(want_target bindfs && echo ", $(bindfs --version 2>/dev/null | head -1)")$(want_target fuse-overlayfs && echo ", $(fuse-overlayfs --version 2>/dev/null | grep -m1 '^fuse-overlayfs')"), $(git --version 2>/dev/null)"
	echo
	echo "Targets (mount options as in /proc/self/mountinfo: per-mount | fs type, super options):"
	echo
	for t in $ACTIVE; do
		if [ "$t" = native ]; then
			echo "- native: the directory itself: $(awk -v d="$(df --output=target "$RUN" | tail -1)" '$5 == d { for (i = 7; $i != "-"; i++); print $(i + 1) " " $6 "," $(i + 3) }' /proc/self/mountinfo)"
		else
			echo "- $t: \`${CMDLINE[$t]//$RUN/\$RUN}\` — ${OPTS[$t]//$RUN/\$RUN}"
		fi
	done
	echo "  (awfs, awfs-ro: awfs's defaults, no -o (see awfs --help); awfs-ro runs the read workloads in the policy's read_only subtree, awfs everything in its allow_write subtree; bindfs, fuse-overlayfs: their defaults, fuse-overlayfs with an empty lowerdir and the source as upperdir; passthrough_ll: its defaults, which are cache=auto (timeout=1.0 s, keep_cache off), no writeback, no xattr, no flock, the multithreaded loop without clone_fd; -f only keeps each daemon in the foreground.)"
	echo
	for n in "${NOTES[@]}"; do echo "- note: $n"; done
	[ ${#NOTES[@]} -gt 0 ] && echo
} >"$OUT/header.md"
{
	echo
	echo "Raw measurements: results.tsv (workload, target, rep, seconds, ratio to native in the same repetition, kib for RSS rows); daemon logs beside it. The policy: policy.conf."
} >"$OUT/footer.md"
report "$OUT" >"$OUT/results.md"
ln -sfn "$STAMP-$COMMIT" "$OUTROOT/latest"

echo
cat "$OUT/results.md"
echo
echo "results: $OUT"
