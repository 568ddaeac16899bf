#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uring.sh - FUSE over io_uring (src/uring.h): where the kernel has it (Linux
# 6.14 and later, CONFIG_FUSE_IO_URING) and the fuse module's enable_uring
# is 1, awfs takes its requests through one io_uring queue per CPU, and
# nothing it promises changes:
#  - the mount line and the audit's mount record say what the requests come
#    through; -o io_uring=off, and enable_uring=0, serve through /dev/fuse;
#    a bad value mounts nothing;
#  - every request but FORGET and INTERRUPT comes through the queues (the
#    unmount line's counts against libfuse's -d trace), a thread per
#    possible CPU serves its queue, on that CPU;
#  - the policy through the queues: the agent's writes in a writable tree,
#    EROFS and a logged denial elsewhere, masked files empty, a temporary
#    renamed over a single-file rule;
#  - replies sent by workers (READ with -o passthrough=off, spliced from
#    the host file; O_DIRECT reads in parallel; fsync) carry the host's
#    bytes;
#  - a slow source (a bindfs below the source, stopped): the agent's
#    fsyncs held by workers and waiting in its lane hold the queue's
#    entries, up to all but 4 of its 256, past which the agent's next slow
#    requests fail with EAGAIN at once; root, with nothing waiting, is
#    still served (a read, a lookup), and everything ends once the source
#    is back.
# The test sets enable_uring to 1 and puts back the value it found.
. "$(dirname "$0")/lib.sh"
require_mount_env
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3"
command -v jq >/dev/null || skip "no jq"
PARAM=/sys/module/fuse/parameters/enable_uring
[ -w "$PARAM" ] || skip "this kernel has no FUSE over io_uring ($PARAM: Linux 6.14 or later, CONFIG_FUSE_IO_URING)"
OLD=$(cat "$PARAM")
AT_EXIT="echo $OLD >$PARAM 2>/dev/null; ${AT_EXIT}"
u=$AGENT_UID
export LC_ALL=C

make_tmp
mkdir -p "$SRC/rw" "$SRC/ro" "$SRC/secret" "$SRC/doc" "$SRC/slow"
echo SECRET >"$SRC/secret/key"
echo RODATA >"$SRC/ro/file"
echo TOKEN >"$SRC/ro/token"
head -c 8388608 /dev/urandom >"$SRC/ro/big"
echo '# summary' >"$SRC/doc/summary.md"
chown -R "$u:$u" "$SRC/rw" "$SRC/doc" "$SRC/ro/file"	# the agent's own: only the policy refuses
write_policy 'version = 1;
mask = ( { path = "secret"; reason = "tokens"; }, { path = "ro/token"; reason = "a token"; } );
allow_write = ( { path = "rw"; reason = "the agent'"'"'s scratch"; },
	{ path = "doc/summary.md"; reason = "one file, written by temporary and rename"; },
	{ path = "slow"; reason = "a slow source"; } );
read_only = ( { path = "ro"; reason = "inputs"; } );'
A="$T/audit.jsonl"

# --- a bad value mounts nothing
mkdir -p "$T/mnt"
"$AWFS" "$T/mnt" --source "$SRC" --policy "$POLICY" -o io_uring=maybe >"$T/bad.out" 2>&1
check "io_uring=maybe: exit 2" 2 "$?"
check_match "... and says what it expects" "io_uring=maybe: expected io_uring=on or off" "$(cat "$T/bad.out")"

# --- not offered: /dev/fuse, and the mount line says why
echo 0 >"$PARAM"
mount_beside
check_match "enable_uring=0: requests through /dev/fuse, and why" \
	"requests: through /dev/fuse, this kernel offers no FUSE over io_uring: .*enable_uring set to 1" \
	"$(grep ' mounted ' "$LOG")"
check "... no queue thread" 0 "$(cat /proc/"$AWFS_PID"/task/*/comm | grep -c awfs-ring)"
unmount_awfs
: >"$LOG"

echo 1 >"$PARAM"
mount_beside -o io_uring=off
check_match "io_uring=off: through /dev/fuse, as asked" "requests: through /dev/fuse, as -o io_uring=off asks" \
	"$(grep ' mounted ' "$LOG")"
unmount_awfs
: >"$LOG"

# --- on: the queues, one per possible CPU, each on its CPU
ncpu=$(awk -F'[-,]' '{ n = 0; for (i = 1; i <= NF; i += 2) n += (i + 1 <= NF ? $(i + 1) - $i + 1 : 1) } END { print n }' \
	/sys/devices/system/cpu/possible)
mount_beside --audit "$A" -d
check_match "the mount line names the queues" "requests: FUSE over io_uring, $ncpu queues, one per CPU" \
	"$(grep ' mounted ' "$LOG")"
check "the audit's mount record says io_uring" io_uring "$(jq -r 'select(.event == "mount") | .requests' "$A")"
check "a queue thread per possible CPU" "$ncpu" "$(cat /proc/"$AWFS_PID"/task/*/comm | grep -c '^awfs-ring')"
pinned=yes
for t in /proc/"$AWFS_PID"/task/*; do
	name=$(cat "$t/comm")
	case "$name" in awfs-ring*) ;; *) continue ;; esac
	cpus=$(awk '/^Cpus_allowed_list:/ { print $2 }' "$t/status")
	[ "$cpus" = "${name#awfs-ring}" ] || pinned="no: $name on $cpus"
done
check "... each on its CPU" yes "$pinned"
check "... each with its ring: one io_uring fd a queue" "$ncpu" \
	"$(ls -l /proc/"$AWFS_PID"/fd | grep -c 'io_uring')"

# the policy, through the queues
as_agent sh -c 'echo one >"$1"/a && mkdir "$1"/d && mv "$1"/a "$1"/d/b' _ "$MNT/rw"
check "the agent writes, makes and renames in rw" one "$(cat "$SRC/rw/d/b" 2>&1)"
check "a write to a read-only path: EROFS" "EROFS" "$(aprobe write "$MNT/ro/file" x)"
check_match "... logged with its rule" "denied .*ro/file.*read-only" "$(cat "$LOG")"
check "a masked file reads empty" "" "$(as_agent cat "$MNT/ro/token" 2>&1)"
check "a masked directory lists empty" "" "$(as_agent ls -A "$MNT/secret" 2>&1)"
as_agent "$PY" -c '
import os, sys
d = sys.argv[1]
with open(d + "/.summary.md.tmp", "w") as f: f.write("new\n")
os.rename(d + "/.summary.md.tmp", d + "/summary.md")' "$MNT/doc" 2>"$T/rename.err"
check "a temporary renamed over a single-file rule (an editor's Write)" new "$(cat "$SRC/doc/summary.md")"
check "the agent reads 8 MiB as on the host" "$(md5sum <"$SRC/ro/big" | cut -d' ' -f1)" \
	"$(as_agent md5sum "$MNT/ro/big" | cut -d' ' -f1)"
# Linux 6.18 copies with COPY_FILE_RANGE_64 first, which libfuse 3.14 does
# not know: awfs serves it as COPY_FILE_RANGE (loop.c's normalize())
head -c $((6 << 20)) /dev/urandom >"$SRC/rw/c.src" && chown "$u:$u" "$SRC/rw/c.src"
check "copy_file_range: 4 MiB a call at most, as awfs bounds it" 4194304 \
	"$(as_agent "$PY" -c 'import os, sys
i = os.open(sys.argv[1], os.O_RDONLY); o = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT, 0o644)
print(os.copy_file_range(i, o, 6 << 20))' "$MNT/rw/c.src" "$MNT/rw/c.dst" 2>&1)"
check "... no copy request refused as unknown (ENOSYS: the kernel then falls back, racing)" 0 \
	"$(grep -c 'opcode: [^ ]* (53)' "$T/awfs.stderr")"
unmount_awfs
check "a clean stop" 0 "$AWFS_RC"
traced=$(grep -c 'opcode: ' "$T/awfs.stderr")
dev=$(grep -cE 'opcode: (FORGET|BATCH_FORGET|INTERRUPT|INIT) ' "$T/awfs.stderr")
line=$(grep 'FUSE over io_uring: ' "$LOG")
queued=$(printf '%s' "$line" | sed -n 's/.*: \([0-9]*\) requests came through the queues.*/\1/p')
devcount=$(printf '%s' "$line" | sed -n 's/.*; \([0-9]*\) through \/dev\/fuse.*/\1/p')
check_match "the unmount line counts both paths" "[0-9]+ requests came through the queues, at most [0-9]+ of a queue's 256 entries held at once; [0-9]+ through /dev/fuse" "$line"
check "every traced request came through one or the other" "$traced" "$((queued + devcount + 1))"
check "... and through /dev/fuse only FORGET, INTERRUPT (and INIT)" "$dev" "$((devcount + 1))"
check "... most through the queues" yes "$([ "$queued" -gt $((devcount * 4)) ] && echo yes)"
mv "$T/awfs.stderr" "$T/awfs.stderr.1"

# --- replies sent by workers: READ served by awfs (passthrough off), spliced
: >"$LOG"
mount_beside -o passthrough=off
check "passthrough=off: 8 MiB read through awfs's READ, as on the host" \
	"$(md5sum <"$SRC/ro/big" | cut -d' ' -f1)" "$(as_agent md5sum "$MNT/ro/big" | cut -d' ' -f1)"
sums=$(for i in 0 1 2 3 4 5 6 7; do
	as_agent dd if="$MNT/ro/big" bs=1M skip=$i count=1 iflag=direct status=none | md5sum | cut -d' ' -f1 &
done | sort | tr '\n' ' ')
want=$(for i in 0 1 2 3 4 5 6 7; do dd if="$SRC/ro/big" bs=1M skip=$i count=1 status=none | md5sum | cut -d' ' -f1; done |
	sort | tr '\n' ' ')
check "eight O_DIRECT readers at once: the host's bytes" "$want" "$sums"
as_agent dd if=/dev/urandom of="$MNT/rw/w" bs=1M count=4 conv=fsync status=none
check "a 4 MiB write and its fsync: on the host" "$(md5sum <"$MNT/rw/w" | cut -d' ' -f1)" "$(md5sum <"$SRC/rw/w" | cut -d' ' -f1)"
# the workers were started by queue threads, each pinned to its CPU: they run anywhere
all=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/"$AWFS_PID"/status)
pinned=none
for t in /proc/"$AWFS_PID"/task/*; do
	[ "$(cat "$t/comm")" = awfs-worker ] || continue
	cpus=$(awk '/^Cpus_allowed_list:/ { print $2 }' "$t/status")
	[ "$cpus" = "$all" ] || pinned="a worker on $cpus"
done
check "the workers run on every CPU awfs may use ($all), not their starter's" none "$pinned"
unmount_awfs
check "a clean stop" 0 "$AWFS_RC"

# --- a slow source: the queue grows to its bound, then refuses the agent's
# next slow requests; root, with nothing waiting, is served throughout.
# FSYNC is one the kernel sends at once for each caller (reads, even
# O_DIRECT ones, go out as background requests, max_background at a time),
# and each on its own file (the kernel holds the inode's lock through one)
if command -v bindfs >/dev/null; then
	mkdir -p "$T/slowsrc"
	for i in $(seq 0 299); do echo "$i" >"$T/slowsrc/f$i"; done
	chmod 644 "$T/slowsrc"/f*
	bindfs "$T/slowsrc" "$SRC/slow"
	BINDFS=$(pgrep -n -f "bindfs $T/slowsrc")
	AT_EXIT="kill -CONT $BINDFS 2>/dev/null; umount -l $SRC/slow 2>/dev/null; ${AT_EXIT}"
	echo hello >"$SRC/rw/plain"
	: >"$LOG"
	mount_beside -o passthrough=off
	# 300 threads on CPU 0 (one queue), each with an fsync of its own file,
	# 150 as the agent and 150 as uid 65534 (a caller holds 128 entries at
	# most: two are needed to reach the queue's bound); the source stops
	# once all are open; the outcome of each is written to a file: ok, or
	# the errno's name
	cat >"$T/fsyncers.py" <<'EOF'
import errno, os, sys, threading, time
d, out, first, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fds = [os.open("%s/f%d" % (d, first + i), os.O_RDONLY) for i in range(n)]
open(out + ".opened", "w").close()
while not os.path.exists(out + ".go"):
    time.sleep(0.05)
def one(i):
    try:
        os.fsync(fds[i])
        r = "ok"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    with open(out, "a") as f:
        f.write(r + "\n")
ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
for t in ts: t.start()
for t in ts: t.join()
EOF
	chmod 644 "$T/fsyncers.py"
	mkdir -p "$T/r" && chmod 1777 "$T/r"
	as_agent taskset -c 0 "$PY" "$T/fsyncers.py" "$MNT/slow" "$T/r/a" 0 150 &
	RPID=$!
	setpriv --reuid=65534 --regid=65534 --clear-groups taskset -c 0 "$PY" "$T/fsyncers.py" "$MNT/slow" "$T/r/b" 150 150 &
	RPID2=$!
	for _ in $(seq 600); do [ -e "$T/r/a.opened" ] && [ -e "$T/r/b.opened" ] && break; sleep 0.1; done
	kill -STOP "$BINDFS"
	touch "$T/r/a.go" "$T/r/b.go"
	# a bound for a hang, never reached otherwise: 48 of 300 refused at once
	# (the queue lets 252 of its 256 entries be held: 4 always come back)
	for _ in $(seq 1200); do [ "$(cat "$T/r/a" "$T/r/b" 2>/dev/null | grep -c .)" -ge 48 ] && break; sleep 0.1; done
	check_match "past the queue's bound, the next slow requests of callers holding some fail at once" "^EAGAIN$" \
		"$(cat "$T/r/a" "$T/r/b" 2>/dev/null | sort -u | tr '\n' ' ' | sed 's/ $//')"
	check "... all but the 252 the queue lets be held" 48 "$(cat "$T/r/a" "$T/r/b" | grep -c EAGAIN)"
	check "root (nothing waiting) still reads through a worker" hello \
		"$(taskset -c 0 timeout -k 1 30 cat "$MNT/rw/plain" 2>&1)"
	check "... and looks up a new name" ENOENT \
		"$(taskset -c 0 timeout -k 1 30 stat "$MNT/rw/never-$$" >/dev/null 2>&1; [ $? = 1 ] && echo ENOENT)"
	kill -CONT "$BINDFS"
	wait "$RPID" "$RPID2"
	check "once the source is back, every held fsync ends well" 252 "$(cat "$T/r/a" "$T/r/b" | grep -c '^ok$')"
	# one caller alone holds 128 entries at most, whatever the queue has free
	as_agent taskset -c 0 "$PY" "$T/fsyncers.py" "$MNT/slow" "$T/r/c" 0 150 &
	RPID=$!
	for _ in $(seq 600); do [ -e "$T/r/c.opened" ] && break; sleep 0.1; done
	kill -STOP "$BINDFS"
	touch "$T/r/c.go"
	for _ in $(seq 1200); do [ "$(cat "$T/r/c" 2>/dev/null | grep -c .)" -ge 22 ] && break; sleep 0.1; done
	check "one caller alone: 128 held, its other 22 refused at once" "22 EAGAIN" \
		"$(sort "$T/r/c" 2>/dev/null | uniq -c | awk '{ print $1, $2 }' | tr '\n' ' ' | sed 's/ $//')"
	kill -CONT "$BINDFS"
	wait "$RPID"
	check "... and its held ones end well" 128 "$(grep -c '^ok$' "$T/r/c")"
	unmount_awfs
	check "a clean stop" 0 "$AWFS_RC"
	check_match "the unmount line: 252 held, and root's read beside them" "at most 253 of a queue's 256 entries held at once" \
		"$(grep 'FUSE over io_uring: ' "$LOG")"
	umount "$SRC/slow"
else
	echo "# no bindfs (apt-get install bindfs): the slow-source case is not run"
fi
finish
