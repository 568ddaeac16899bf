#!/usr/bin/env bash
# contrib.sh - the runtime glue in contrib/ works: the Docker entrypoint (in a
# fresh mount + pid namespace), awfs-virtiofsd failing closed, the systemd
# unit's command lines, and /etc/fstab through mount.fuse3.
. "$(dirname "$0")/lib.sh"
require_mount_env
AWFSCTL=${AWFSCTL:?AWFSCTL must name the awfsctl binary}
command -v unshare >/dev/null || skip "no unshare"
command -v mount.fuse3 >/dev/null || skip "no mount.fuse3 (fuse3)"
CONTRIB="$AWFS_TESTS/../contrib"
setup_fixture

# ---- docker: the entrypoint, in what a container is to the kernel
mkdir -p "$T/alias"
out=$(AWFS_DIR="$SRC" AWFS_POLICY="$POLICY" AWFS_AGENT_USER="$AGENT_UID:$AGENT_UID" \
	AWFS_ALSO_AT="$T/alias" AWFS_LOG="$LOG" AWFS_BIN="$AWFS" AWFSCTL_BIN="$AWFSCTL" AWFS_OPTS=xattr \
	unshare --mount --pid --fork --mount-proc --propagation private \
	sh "$CONTRIB/docker/awfs-entrypoint.sh" sh -c '
		echo "uid $(id -u) gid $(id -g)"
		grep -E "^Cap(Eff|Prm|Bnd):" /proc/self/status | tr "\t" " "
		grep NoNewPrivs /proc/self/status | tr "\t" " "
		"$1" read "$2/secret/data"; "$1" write "$2/ro/file" x; "$1" write "$2/rw/from-agent" y
		"$1" read "$3/secret/data"; "$1" stat "$3/ro/file" | cut -c1-8
		umount "$2" 2>&1 | sed "s/.*/umount: refused/"
		"$1" getxattr "$2/rw/file" user.none
		p=$(pgrep -x awfs | head -1)
		[ -n "$p" ] && echo "awfs pid found" || echo "no awfs pid"
		if kill -TERM "$p" 2>/dev/null; then
			echo "kill: sent"
			i=0; while [ -d "/proc/$p" ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
		else
			echo "kill: refused"
		fi
		"$1" read "$2/secret/data"' _ "$AWFS_PROBE" "$SRC" "$T/alias" 2>"$T/entry.err")
rc=$?
check "docker: the entrypoint ran the agent" "0" "$rc"
check "docker: the agent runs as its uid" "uid $AGENT_UID gid $AGENT_UID" "$(printf '%s\n' "$out" | sed -n 1p)"
check "docker: no capabilities left, bounding set empty" \
	"CapPrm: 0000000000000000 CapEff: 0000000000000000 CapBnd: 0000000000000000" \
	"$(printf '%s\n' "$out" | grep '^Cap' | sort -k1,1 | sed -n '3p;2p;1p' | sort -r | tr '\n' ' ' | sed 's/ $//')"
check "docker: no_new_privs" "NoNewPrivs: 1" "$(printf '%s\n' "$out" | grep NoNewPrivs)"
check "docker: mask, denial and pass-through as the agent" "ENOENT EROFS OK" \
	"$(printf '%s\n' "$out" | sed -n '6,8p' | tr '\n' ' ' | sed 's/ $//')"
check "docker: the alias holds the mask too" "ENOENT OK:type=" "$(printf '%s\n' "$out" | sed -n '9,10p' | tr '\n' ' ' | sed 's/ $//')"
check "docker: the agent cannot unmount awfs" "umount: refused" "$(printf '%s\n' "$out" | sed -n 11p)"
check "docker: AWFS_OPTS reaches awfs (xattrs on: ENODATA, not EOPNOTSUPP)" "ENODATA" "$(printf '%s\n' "$out" | sed -n 12p)"
check "docker: the agent cannot signal awfs (kill -TERM refused), the mask still holds" \
	"awfs pid found kill: refused ENOENT" "$(printf '%s\n' "$out" | sed -n '13,15p' | tr '\n' ' ' | sed 's/ $//')"
check "docker: verify ran before the agent" "yes" "$(grep -q 'checks held' "$T/entry.err" && echo yes)"
check "docker: the write reached the host" "y" "$(cat "$SRC/rw/from-agent")"
check "docker: the mount went with the namespace" "0" "$(grep -c " $SRC " /proc/self/mountinfo)"
# the entrypoint stays the agent's parent: when the agent is done it stops
# awfs cleanly (in a container, init's exit would SIGKILL it before its
# unmount summary), and its exit status is the agent's
check "docker: awfs's unmount summary is in the log once the agent is done" "1" \
	"$(grep -c "unmounting $SRC: [0-9]* writes\? denied" "$LOG")"
: >"$LOG"
echo from-stdin >"$T/stdin"
out=$(AWFS_DIR="$SRC" AWFS_POLICY="$POLICY" AWFS_AGENT_USER="$AGENT_UID:$AGENT_UID" AWFS_LOG="$LOG" \
	AWFS_BIN="$AWFS" AWFSCTL_BIN="$AWFSCTL" unshare --mount --pid --fork --mount-proc --propagation private \
	sh "$CONTRIB/docker/awfs-entrypoint.sh" sh -c 'read -r l; echo "agent read: $l"; exit 7' <"$T/stdin" 2>"$T/entry.err")
rc=$?
check "docker: the agent's exit status is the entrypoint's" "7" "$rc"
check "docker: the agent reads the entrypoint's standard input" "agent read: from-stdin" "$out"
check "docker: awfs stopped cleanly after a failing agent too" "1" "$(grep -c "unmounting $SRC: " "$LOG")"
out=$(AWFS_DIR="$SRC" AWFS_POLICY="$POLICY" AWFS_BIN=/bin/true AWFSCTL_BIN="$AWFSCTL" \
	unshare --mount --pid --fork --propagation private sh "$CONTRIB/docker/awfs-entrypoint.sh" touch "$T/agent-ran" 2>&1)
rc=$?
check "docker: no awfs mount, no agent (exit 1)" "1 no" "$rc $([ -e "$T/agent-ran" ] && echo yes || echo no)"
check_match "docker: says why" "awfs did not mount" "$out"
: >"$LOG"
out=$(AWFS_DIR="$SRC" AWFS_POLICY="$POLICY" AWFS_LOG="$LOG" AWFS_BIN="$AWFS" AWFSCTL_BIN=/bin/false \
	unshare --mount --pid --fork --mount-proc --propagation private \
	sh "$CONTRIB/docker/awfs-entrypoint.sh" touch "$T/agent-ran" 2>&1)
rc=$?
check "docker: verify fails: no agent (exit 1), awfs stopped cleanly" "1 no 1" \
	"$rc $([ -e "$T/agent-ran" ] && echo yes || echo no) $(grep -c "unmounting $SRC: " "$LOG")"
check_match "docker: says why" "awfsctl verify failed; not starting the agent" "$out"
# an image whose setpriv cannot drop to the agent (busybox's has no --reuid)
# is refused before anything is mounted, not after
mkdir -p "$T/bb"
printf '#!/bin/sh\necho "setpriv: unrecognized option --reuid" >&2\nexit 1\n' >"$T/bb/setpriv"
chmod +x "$T/bb/setpriv"
rm -f "$T/fake-awfs-ran"
printf '#!/bin/sh\ntouch "%s/fake-awfs-ran"\n' "$T" >"$T/fake-awfs"
chmod +x "$T/fake-awfs"
out=$(PATH="$T/bb:$PATH" AWFS_DIR="$SRC" AWFS_POLICY="$POLICY" AWFS_BIN="$T/fake-awfs" AWFSCTL_BIN=/bin/true \
	unshare --mount --pid --fork --propagation private sh "$CONTRIB/docker/awfs-entrypoint.sh" touch "$T/agent-ran" 2>&1)
rc=$?
check "docker: a setpriv that cannot drop: exit 2 before mounting, agent never ran" "2 no no" \
	"$rc $([ -e "$T/fake-awfs-ran" ] && echo yes || echo no) $([ -e "$T/agent-ran" ] && echo yes || echo no)"
check_match "docker: says what the image needs" "needs util-linux's setpriv" "$out"
# outside a container (the host's pid namespace) it refuses: there it could
# not end the agent's leftover processes without reaching others of its uid
out=$(AWFS_DIR="$SRC" AWFS_POLICY="$POLICY" AWFS_BIN="$T/fake-awfs" AWFSCTL_BIN=/bin/true \
	unshare --mount --propagation private sh "$CONTRIB/docker/awfs-entrypoint.sh" true 2>&1)
check "docker: in the host's pid namespace: exit 2 before awfs ran" "2 no" \
	"$? $([ -e "$T/fake-awfs-ran" ] && echo yes || echo no)"
check_match "docker: says why" "not in a container" "$out"
# what the agent leaves running is ended before awfs unmounts: a survivor
# reading the mask in a loop would see the directory beneath an unmounted
# awfs (before this, it got the window between the unmount and the end of
# the container)
: >"$LOG"
: >"$T/leak"
chmod 666 "$T/leak"
AWFS_DIR="$SRC" AWFS_POLICY="$POLICY" AWFS_AGENT_USER="$AGENT_UID:$AGENT_UID" AWFS_LOG="$LOG" \
	AWFS_BIN="$AWFS" AWFSCTL_BIN="$AWFSCTL" unshare --mount --pid --fork --mount-proc --propagation private \
	sh "$CONTRIB/docker/awfs-entrypoint.sh" sh -c '(while :; do cat "$1/secret/data" 2>/dev/null; done >>"$2") &
		echo survivor started; exit 0' _ "$SRC" "$T/leak" >"$T/survivor.out" 2>&1
check "docker: the agent's survivor was ended before awfs unmounted: it never read the masked file" \
	"exit 0, started 1, read 0" \
	"exit $?, started $(grep -c 'survivor started' "$T/survivor.out"), read $(grep -c TOPSECRET "$T/leak")"
check "docker: and awfs still wrote its summary" "1" "$(grep -c "unmounting $SRC: " "$LOG")"

# AWFS_AGENT_USER: only UID:GID, both decimal and non-zero. Each bad value is
# refused (exit 2) before awfs runs (a stand-in that records it ran) and the
# agent command (which records its ids) never starts. Before this check,
# root, 0, -1 and +0 all ran the agent as uid 0: it could kill awfs and read
# what the mask hides.
# the stand-in records that it ran, then mounts for real (the entrypoint
# waits for awfs's "ready")
printf '#!/bin/sh\ntouch "%s/fake-awfs-ran"\nexec "%s" "$@"\n' "$T" "$AWFS" >"$T/fake-awfs"
chmod +x "$T/fake-awfs"
user_try() {
	rm -f "$T/fake-awfs-ran"
	out=$(AWFS_DIR="$SRC" AWFS_POLICY="$POLICY" AWFS_AGENT_USER="$1" AWFS_BIN="$T/fake-awfs" AWFSCTL_BIN=/bin/true AWFS_LOG="$T/user.log" \
		unshare --mount --pid --fork --propagation private sh "$CONTRIB/docker/awfs-entrypoint.sh" \
		sh -c 'echo "agent-ran-as:$(id -u):$(id -g)"' 2>&1)
	echo "$? awfs:$([ -e "$T/fake-awfs-ran" ] && echo ran || echo no)" \
		"agent:$(printf '%s\n' "$out" | sed -n 's/^agent-ran-as://p' | grep . || echo no)" \
		"$(printf '%s' "$out" | grep -q 'AWFS_AGENT_USER must be UID:GID' && echo says-why)"
}
for v in -1:-1 4294967295:1000 1000:4294967295 +0:+0 +1000:1000 root:root 0:0 0 1000:0 0:1000 00:1000 \
	01000:1000 1000 abc:1 1000:1000:1 "" : 1000: :1000 " 1000:1000" 12345678901:1000 "1000:1000
"; do
	check "docker: AWFS_AGENT_USER='$v' refused before mounting, agent never ran" \
		"2 awfs:no agent:no says-why" "$(user_try "$v")"
done
check "docker: AWFS_AGENT_USER=1001:1002 runs the agent as 1001:1002" "0 awfs:ran agent:1001:1002 " "$(user_try 1001:1002)"
check "docker: AWFS_AGENT_USER=4294967294:4294967294 is the largest accepted" \
	"0 awfs:ran agent:4294967294:4294967294 " "$(user_try 4294967294:4294967294)"
check "docker: nothing is mounted at the source" "0" "$(grep -c " $SRC " /proc/self/mountinfo)"

# AWFS_OPTS in both wrappers: mount and cache options only. A setting with a
# variable of its own there would make awfs enforce one thing while the
# wrapper's verify checks another (policy=lax.conf passed verify before).
printf 'version = 1;\nallow_write = ( { path = "rw"; reason = "all"; } );\n' >"$T/lax.conf"; chmod 644 "$T/lax.conf"
printf '#!/bin/sh\ntouch "%s/vfsd-ran"\n' "$T" >"$T/fake-vfsd"; chmod +x "$T/fake-vfsd"
for v in "sour\\ce=$T" "xattr,\\141lso_at=$T/alias" "noinfo\\_dir" "subtype=a
,source=$T" "policy=$T/lax.conf" "xattr,policy=$T/lax.conf" "source=$T" "runtime=nvx" "log=$T/x.log" \
	"audit=$T/a.jsonl" "also_at=$T/alias" auto_unmount "xattr,auto_unmount" "--source=$T"; do
	rm -f "$T/fake-awfs-ran" "$T/vfsd-ran"
	out=$(AWFS_DIR="$SRC" AWFS_POLICY="$POLICY" AWFS_OPTS="$v" AWFS_BIN="$T/fake-awfs" AWFSCTL_BIN=/bin/true \
		unshare --mount --pid --fork --propagation private sh "$CONTRIB/docker/awfs-entrypoint.sh" touch "$T/agent-ran" 2>&1); rc=$?
	check "docker: AWFS_OPTS=$v refused: exit 2, awfs and the agent never ran" "2 no no" \
		"$rc $([ -e "$T/fake-awfs-ran" ] && echo yes || echo no) $([ -e "$T/agent-ran" ] && echo yes || echo no)"
	out2=$(AWFS_POLICY="$POLICY" AWFS_OPTS="$v" AWFS_BIN="$T/fake-awfs" AWFSCTL_BIN=/bin/true VIRTIOFSD_BIN="$T/fake-vfsd" \
		"$CONTRIB/virtiofsd/awfs-virtiofsd" --socket-path="$T/sock" -o source="$SRC" 2>&1); rc=$?
	check "awfs-virtiofsd: AWFS_OPTS=$v refused: exit 1, awfs and virtiofsd never ran" "1 no no" \
		"$rc $([ -e "$T/fake-awfs-ran" ] && echo yes || echo no) $([ -e "$T/vfsd-ran" ] && echo yes || echo no)"
done
check_match "docker: says which and what to use" 'AWFS_OPTS may not set "--source": use AWFS_POLICY' "$out"
check_match "awfs-virtiofsd: says which and what to use" 'AWFS_OPTS may not set "--source": set AWFS_POLICY' "$out2"

# ---- awfs-virtiofsd fails closed: a boundary that does not hold never gets virtiofsd
printf '#!/bin/sh\ntouch "%s/virtiofsd-ran"\n' "$T" >"$T/fake-virtiofsd"; chmod +x "$T/fake-virtiofsd"
out=$(AWFS_POLICY="$POLICY" AWFS_BIN=/bin/true AWFSCTL_BIN="$AWFSCTL" VIRTIOFSD_BIN="$T/fake-virtiofsd" \
	"$CONTRIB/virtiofsd/awfs-virtiofsd" --socket-path="$T/sock" -o source="$SRC" -o cache=auto 2>&1)
rc=$?
check "awfs-virtiofsd: verify fails, exit 1, virtiofsd never runs" "1 no" \
	"$rc $([ -e "$T/virtiofsd-ran" ] && echo yes || echo no)"
check_match "awfs-virtiofsd: says why" "awfsctl verify failed on $SRC: not starting virtiofsd" "$out"
out=$(AWFS_POLICY="$POLICY" AWFS_BIN="$AWFS" AWFSCTL_BIN="$AWFSCTL" AWFS_LOG="$T/vfsd-awfs.log" \
	VIRTIOFSD_BIN="$T/fake-virtiofsd" \
	"$CONTRIB/virtiofsd/awfs-virtiofsd" --socket-path="$T/sock" -o source="$SRC",cache=auto 2>&1)
rc=$?
check "awfs-virtiofsd: a good mount starts virtiofsd (-o source=DIR,cache=...)" "0 yes" \
	"$rc $([ -e "$T/virtiofsd-ran" ] && echo yes || echo no)"
check "awfs-virtiofsd: leaves nothing mounted on the host" "0" "$(grep -c " $SRC " /proc/self/mountinfo)"
# AWFS_OPTS reaches awfs: with xattr on, a missing attribute is ENODATA (off: EOPNOTSUPP);
# the fake virtiofsd looks, from inside the wrapper's namespace, at the share it is given
printf '#!/bin/sh\n"%s" getxattr "%s/rw/file" user.none >"%s/vfsd-xattr"\n' "$AWFS_PROBE" "$SRC" "$T" \
	>"$T/fake-virtiofsd-x"
chmod +x "$T/fake-virtiofsd-x"
AWFS_POLICY="$POLICY" AWFS_BIN="$AWFS" AWFSCTL_BIN="$AWFSCTL" AWFS_LOG="$T/vfsd-awfs.log" AWFS_OPTS=xattr \
	VIRTIOFSD_BIN="$T/fake-virtiofsd-x" \
	"$CONTRIB/virtiofsd/awfs-virtiofsd" --socket-path="$T/sock" -o source="$SRC" >/dev/null 2>&1
check "awfs-virtiofsd: AWFS_OPTS reaches awfs (xattrs on: ENODATA, not EOPNOTSUPP)" "ENODATA" \
	"$(cat "$T/vfsd-xattr" 2>/dev/null)"
out=$(AWFS_POLICY="$POLICY" "$CONTRIB/virtiofsd/awfs-virtiofsd" --socket-path="$T/sock" 2>&1)
check "awfs-virtiofsd: no shared directory: exit 1" "1" "$?"

# ---- systemd: the unit's own command lines, as systemd runs them
unit="$CONTRIB/systemd/awfs@.service"
line() { sed -n "s/^$1=//p" "$unit" | sed "s|%f|$SRC|g; s|/usr/bin/awfsctl|$AWFSCTL|; s|/usr/bin/awfs |$AWFS |; s|/etc/awfs/policy.conf|$POLICY|"; }
check "systemd: Type=forking (awfs returns once mounted)" "forking" "$(sed -n 's/^Type=//p' "$unit")"
# hardening, none of which may give the service a mount namespace of its own
# (the host would never see the mount)
for want in NoNewPrivileges=yes SystemCallArchitectures=native LockPersonality=yes \
	MemoryDenyWriteExecute=yes RestrictRealtime=yes ProtectHostname=yes \
	RestrictNamespaces=mnt SystemCallErrorNumber=EPERM \
	'CapabilityBoundingSet=CAP_SYS_ADMIN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER CAP_CHOWN CAP_FSETID CAP_SETUID CAP_SETGID CAP_MKNOD CAP_SETPCAP CAP_SYS_RESOURCE'; do
	check "systemd: hardening: $want" "1" "$(grep -cxF "$want" "$unit")"
done
check_match "systemd: hardening: SystemCallFilter= keeps @system-service, @mount and what awfs calls" \
	"^SystemCallFilter=@system-service @mount( [a-z0-9_]+)*$" "$(grep '^SystemCallFilter=' "$unit")"
for w in capset setfsuid setfsgid setgroups unshare umount2 mount splice; do
	check "systemd: hardening: SystemCallFilter= names $w" "yes" \
		"$(grep '^SystemCallFilter=' "$unit" | tr ' =' '\n\n' | grep -qx "$w" && echo yes)"
done
check "systemd: no directive that gives the service a private mount namespace" "" \
	"$(grep -E '^[[:space:]]*(PrivateTmp|PrivateDevices|PrivateMounts|PrivateNetwork|PrivateIPC|PrivateUsers|ProtectSystem|ProtectHome|ProtectProc|ProcSubset|ProtectKernelTunables|ProtectKernelModules|ProtectKernelLogs|ProtectControlGroups|ReadOnlyPaths|ReadWritePaths|InaccessiblePaths|ExecPaths|NoExecPaths|BindPaths|BindReadOnlyPaths|TemporaryFileSystem|RootDirectory|RootImage|MountImages|ExtensionImages|ExtensionDirectories|MountFlags|LogNamespace|NetworkNamespacePath|IPCNamespacePath|DynamicUser|JoinsNamespaceOf)[[:space:]]*=' "$unit")"
if command -v systemd-analyze >/dev/null; then
	# the unit with the programs under test (systemd-analyze wants them executable)
	mkdir -p "$T/unit"
	sed "s|/usr/bin/awfsctl|$AWFSCTL|; s|/usr/bin/awfs |$AWFS |" "$unit" >"$T/unit/awfs@.service"
	out=$(cd "$T/unit" && systemd-analyze verify --man=no "$T/unit/awfs@.service" 2>&1)
	check "systemd: systemd-analyze verify accepts the unit, with no warning" "0 " "$? $out"
else
	echo "ok - # SKIP systemd-analyze verify: no systemd-analyze"
fi
# ExecStart and ExecStartPost as the unit runs them: within its capability
# bounding set, with no_new_privs (the system call filter is not applied here)
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
sandbox="setpriv --bounding-set=-all,$caps --inh-caps=-all --no-new-privs"
eval "$sandbox $(line ExecStart) --log '$LOG'"
check "systemd: ExecStart mounts" "yes" "$(is_mounted "$SRC" && echo yes)"
eval "$sandbox $(line ExecStartPost)" >/dev/null
check "systemd: ExecStartPost (verify) passes" "0" "$?"
expect "systemd: the mask holds" "ENOENT" read "$SRC/secret/data"
pid=$(pgrep -f "^$AWFS $SRC --policy" | head -1)
kill -TERM "$pid"
for _ in $(seq 100); do is_mounted "$SRC" || break; sleep 0.05; done
check "systemd: stop (SIGTERM) unmounts" "no" "$(is_mounted "$SRC" && echo yes || echo no)"

# ---- /etc/fstab through mount.fuse3: fuse.awfs and awfs# forms
MNT2="$T/fstab-mnt"
mkdir -p "$MNT2"
# mount(8) runs mount.fuse3 with a safe PATH, so awfs must be installed: a
# link in /usr/local/bin for the test (removed at exit), unless one is there
if [ ! -e /usr/local/bin/awfs ]; then
	ln -s "$AWFS" /usr/local/bin/awfs
	EXTRA_CLEAN=/usr/local/bin/awfs
elif [ "$(readlink -f /usr/local/bin/awfs)" != "$(readlink -f "$AWFS")" ]; then
	echo "# /usr/local/bin/awfs is another awfs: the fstab checks use it"
fi
mount -t fuse.awfs -o "policy=$POLICY,log=$LOG" "$SRC" "$MNT2"
check "fstab: mount -t fuse.awfs -o policy=..." "yes" "$(is_mounted "$MNT2" && echo yes)"
expect "fstab: the mask holds" "ENOENT" read "$MNT2/secret/data"
expect "fstab: writes pass through" "OK" write "$MNT2/rw/via-fstab" f
check_match "fstab: default_permissions and allow_other, nosuid and nodev" \
	" [^ ]*nosuid,nodev[^ ]* .* fuse.awfs .*default_permissions,allow_other" \
	"$(awk -v p="$MNT2" '$5 == p' /proc/self/mountinfo)"
umount "$MNT2"
check "fstab: umount unmounts" "no" "$(is_mounted "$MNT2" && echo yes || echo no)"
printf '%s %s fuse.awfs policy=%s,log=%s,noauto 0 0\n' "$SRC" "$MNT2" "$POLICY" "$LOG" >"$T/fstab"
mount --fstab "$T/fstab" "$MNT2"
check "fstab: an fstab line (mount --fstab FILE MOUNTPOINT)" "yes" "$(is_mounted "$MNT2" && echo yes)"
expect "fstab: the mask holds there too" "ENOENT" read "$MNT2/secret/data"
umount "$MNT2"
mount -t fuse -o "policy=$POLICY,log=$LOG" "awfs#$SRC" "$MNT2"
check "fstab: the awfs#SOURCE form" "yes" "$(is_mounted "$MNT2" && echo yes)"
umount "$MNT2"
printf 'version = 2;\n' >"$T/bad.conf"; chmod 644 "$T/bad.conf"
out=$(mount -t fuse.awfs -o "policy=$T/bad.conf" "$SRC" "$MNT2" 2>&1)
check "fstab: a bad policy does not mount" "no" "$(is_mounted "$MNT2" && echo yes || echo no)"
check_match "fstab: and says why" "bad.conf:1: unsupported policy version" "$out"
finish
