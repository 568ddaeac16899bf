#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# docker.sh - the parity transcript in two real Docker runtimes:
#   docker-entrypoint  a container that mounts awfs inside itself through
#                      contrib/docker/awfs-entrypoint.sh, started by
#                      docker-compose with contrib/docker/docker-compose.awfs.yml
#                      merged in (/dev/fuse, SYS_ADMIN, the agent dropped to
#                      uid 1000), probed as the agent;
#   docker-bind        a container (uid 1000, no capabilities) that
#                      bind-mounts an awfs mount made on the host.
# Each transcript must equal expected.txt, as run.sh's runtimes do: six
# runtimes, one transcript. It also checks what only a real container shows:
# the agent's capabilities, awfs's unmount summary after the agent ends (the
# container's init exits then, and the kernel kills what is left), the exit
# status, and docker stop / docker kill -s INT reaching the agent.
#
# dockerd is started here, in a private mount namespace with its own data
# root, socket and containerd (no bridge, no iptables; containers run with
# --network none), and stopped at the end; the image is made with docker
# import from a root file system of this machine's programs. Exit 77
# (skipped) when docker.io, docker-compose or a working dockerd is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
CONTRIB=$here/../../contrib/docker
for c in unshare setfattr setfacl dockerd containerd runc docker-compose setpriv; do
	command -v "$c" >/dev/null || skip "no $c (apt-get install docker.io docker-compose attr acl util-linux)"
done
# docker.io's own client, which speaks dockerd's API version
DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || DOCKER=$(command -v docker) || skip "no docker client"

# everything dockerd mounts (layers, network namespaces) and the host awfs
# mount of docker-bind go with this namespace when the script ends
if [ -z "${AWFS_DOCKER_NS:-}" ]; then
	exec unshare --mount --propagation private env AWFS_DOCKER_NS=1 bash "$0" "$@"
fi

T=$(mktemp -d /tmp/awfs-docker.XXXXXX)
chmod 755 "$T"
export DOCKER_HOST="unix://$T/docker.sock"
CGROUP=awfs-test-docker.${T##*.}	# the containers' cgroups, removed at the end
dockerd_pid=
cleanup() {
	rc=$?
	if [ -n "$dockerd_pid" ]; then
		# containers first (--rm ones are gone), then the daemon and its containerd
		"$DOCKER" ps -aq 2>/dev/null | xargs -r "$DOCKER" rm -f >/dev/null 2>&1
		kill -TERM "$dockerd_pid" 2>/dev/null
		wait "$dockerd_pid" 2>/dev/null
	fi
	umount "$T/e" 2>/dev/null
	rmdir /sys/fs/cgroup/*/"$CGROUP" /sys/fs/cgroup/"$CGROUP" 2>/dev/null
	if [ -n "${AWFS_PARITY_KEEP:-}" ]; then echo "# kept $T"; else rm -rf "$T"; fi
	exit $rc
}
trap cleanup EXIT

# ---- dockerd, private to this test
mkdir -p "$T/docker" "$T/exec"
dockerd --data-root "$T/docker" --exec-root "$T/exec" --pidfile "$T/dockerd.pid" \
	-H "$DOCKER_HOST" --containerd-namespace awfs-test --containerd-plugins-namespace awfs-test-plugins \
	--bridge=none --iptables=false --ip6tables=false --ip-masq=false --storage-driver=vfs \
	--cgroup-parent="$CGROUP" \
	>"$T/dockerd.log" 2>&1 &
dockerd_pid=$!
up=no
for _ in $(seq 600); do
	if "$DOCKER" version >/dev/null 2>&1; then up=yes; break; fi
	kill -0 "$dockerd_pid" 2>/dev/null || break
	sleep 0.2
done
if [ "$up" != yes ]; then
	tail -5 "$T/dockerd.log" | sed 's/^/# dockerd: /'
	skip "dockerd did not start here"
fi

# ---- the image: the programs the entrypoint and the probes run, with their
# libraries, from this machine (there is no registry to pull from)
R=$T/rootfs
mkdir -p "$R/bin" "$R/usr/local/bin" "$R/etc/awfs" "$R/run" "$R/tmp" "$R/var/log" "$R/out" \
	"$R/proc" "$R/sys" "$R/dev"
chmod 1777 "$R/tmp"
progs=""
for p in setpriv env true mkfifo mktemp rm sleep cat; do
	f=$(type -P "$p") || skip "no $p program"	# the file, not a shell builtin
	progs="$progs $f"
	cp "$f" "$R/bin/"
done
cp /bin/dash "$R/bin/sh" || skip "no dash"
cp "$AWFS" "$R/usr/local/bin/awfs"
cp "$AWFSCTL" "$R/usr/local/bin/awfsctl"
cp "$PARITY" "$R/usr/local/bin/awfs-parity"
# shellcheck disable=SC2086
for lib in $(ldd /bin/dash $progs "$AWFS" "$AWFSCTL" "$PARITY" | grep -o '/[^ ]*\.so[^ ]*' | sort -u); do
	mkdir -p "$R$(dirname "$lib")"
	cp -L "$lib" "$R$lib"
done
printf 'root:x:0:0::/:/bin/sh\nagent:x:%s:%s::/tmp:/bin/sh\n' "$AGENT" "$AGENT" >"$R/etc/passwd"
printf 'root:x:0:\nagent:x:%s:\n' "$AGENT" >"$R/etc/group"
printf 'PATH=/usr/local/bin:/bin\n' >"$R/etc/environment"
tar -C "$R" -c . | "$DOCKER" import -c 'ENV PATH=/usr/local/bin:/bin' - awfs-test:parity >/dev/null
check "the image was imported" "yes" \
	"$("$DOCKER" image inspect awfs-test:parity >/dev/null 2>&1 && echo yes)"

# ---- docker-entrypoint: compose, with contrib's fragment merged in as is
P=$T/project
mkdir -p "$P/awfs" "$T/log" "$T/out"
chmod 755 "$T/log"
chown "$AGENT:$AGENT" "$T/out"
cp "$here/policy.conf" "$P/awfs/policy.conf"
cp "$CONTRIB/awfs-entrypoint.sh" "$P/awfs/awfs-entrypoint.sh"
chmod 644 "$P/awfs/policy.conf"
chmod 755 "$P/awfs/awfs-entrypoint.sh"
cat >"$P/compose.yml" <<'EOF'
services:
  agent:
    image: awfs-test:parity
    network_mode: none
EOF
# what a workflow's own file says for its tree: this test's fixture, not the
# host's /tmp/gh-aw; the log where the host can read it; the agent as 1000
cat >"$P/test.yml" <<EOF
services:
  agent:
    volumes:
      - $T/d:/tmp/gh-aw
      - $T/log:/var/log/awfs
      - $T/out:/out
    environment:
      AWFS_AGENT_USER: "$AGENT:$AGENT"
      AWFS_LOG: /var/log/awfs/awfs.log
EOF
compose() {	# (a bound for a hang, never reached otherwise)
	(cd "$P" && timeout 600 docker-compose -p awfsparity -f compose.yml -f "$CONTRIB/docker-compose.awfs.yml" \
		-f test.yml "$@")
}
bash "$here/fixture.sh" "$T/d" "$AGENT"
# the transcript goes to a file: docker-compose may lose the last lines of
# a container's output when it exits at once
compose run --rm -T agent sh -c "awfs-parity /tmp/gh-aw $AGENT >/out/entrypoint.txt; cat /proc/self/status >/out/status
	echo from-the-agent >/tmp/gh-aw/rw/from-agent" \
	>"$T/d.out" 2>"$T/d.err"
rc=$?
check "docker-entrypoint: the container mounted awfs and ran the probe" "0" "$rc"
[ "$rc" = 0 ] || tail -20 "$T/d.err" | sed 's/^/#   /'
compare docker-entrypoint "$T/out/entrypoint.txt"
check "docker-entrypoint: awfsctl verify held before the agent started" "yes" \
	"$(grep -q 'awfsctl verify: /tmp/gh-aw: [0-9]* checks held' "$T/d.err" && echo yes)"
check "docker-entrypoint: the agent runs with no capabilities and no_new_privs" \
	"CapBnd:0000000000000000 CapEff:0000000000000000 CapPrm:0000000000000000 NoNewPrivs:1" \
	"$(grep -E '^(Cap(Bnd|Eff|Prm)|NoNewPrivs):' "$T/out/status" 2>/dev/null | tr -d '\t' | sort | tr '\n' ' ' | sed 's/ $//')"
check "docker-entrypoint: a denial is logged with the agent's command, uid and path" "yes" \
	"$(grep -Eq "denied open\(O_WRONLY\) for pid [0-9]+ \(\"awfs-parity\"\) uid $AGENT gid $AGENT by read_only rule \"ro\" \([^)]*\); EROFS: \"/tmp/gh-aw/ro/file\":" \
		"$T/log/awfs.log" 2>/dev/null && echo yes)"
check "docker-entrypoint: with the fragment's CAP_DAC_READ_SEARCH awfs uses file handles (no word against them)" "" \
	"$(grep 'no file handles' "$T/log/awfs.log" 2>/dev/null)"
check "docker-entrypoint: awfs wrote its unmount summary before the container ended" "yes" \
	"$(grep -Eq 'awfs: unmounting /tmp/gh-aw: [0-9]+ writes? denied' "$T/log/awfs.log" 2>/dev/null && echo yes)"
check "docker-entrypoint: the agent's write reached the host directory, as the agent" \
	"from-the-agent $AGENT" "$(cat "$T/d/rw/from-agent" 2>/dev/null) $(stat -c %u "$T/d/rw/from-agent" 2>/dev/null)"

# what the agent leaves running is ended before awfs unmounts: a survivor
# reading a masked file in a loop never sees the directory beneath
: >"$T/out/leak"
chmod 666 "$T/out/leak"
compose run --rm -T agent sh -c '(while :; do cat /tmp/gh-aw/secret/data 2>/dev/null; done >>/out/leak) & exit 0' \
	>/dev/null 2>&1
check "docker-entrypoint: a process the agent left is ended before awfs unmounts (never reads the mask)" \
	"exit 0, read 0" "exit $?, read $(grep -c TOPSECRET "$T/out/leak")"

# the agent's exit status is the container's
compose run --rm -T agent sh -c 'exit 7' >/dev/null 2>&1
check "docker-entrypoint: the agent's exit status is the container's" "7" "$?"

# docker stop and docker kill signal the container's init, the entrypoint:
# the signal must reach the agent itself (which traps it, to show it got it:
# a shell cannot trap INT if it started with INT ignored), and awfs must be
# stopped cleanly after it. A lost TERM would show as 137 (SIGKILL after the
# grace time), not the agent's 5.
signalled() {	# SIGNAL: run an agent that waits for SIGNAL, send it, print what came back
	local id
	: >"$T/log/awfs.log"
	rm -f "$T/out/signal" "$T/out/trapping"
	id=$(compose run -d agent sh -c \
		'trap "echo got-TERM >/out/signal; exit 5" TERM; trap "echo got-INT >/out/signal; exit 5" INT
		 : >/out/trapping; while :; do sleep 1 & wait $!; done' 2>/dev/null | tail -1)
	for _ in $(seq 1500); do	# the agent says when its traps are set
		[ -e "$T/out/trapping" ] && break
		sleep 0.2
	done
	if [ "$1" = TERM ]; then
		"$DOCKER" stop -t 120 "$id" >/dev/null
	else
		"$DOCKER" kill -s "$1" "$id" >/dev/null
	fi
	echo "$(timeout 150 "$DOCKER" wait "$id") $(cat "$T/out/signal" 2>/dev/null)" \
		"$(grep -Ec 'awfs: unmounting /tmp/gh-aw: [0-9]+ writes? denied' "$T/log/awfs.log")"
	"$DOCKER" rm -f "$id" >/dev/null 2>&1
}
check "docker-entrypoint: docker stop: the agent gets SIGTERM, then awfs writes its summary" \
	"5 got-TERM 1" "$(signalled TERM)"
check "docker-entrypoint: docker kill -s INT: the agent gets SIGINT, then awfs writes its summary" \
	"5 got-INT 1" "$(signalled INT)"

# ---- docker-bind: awfs on the host, the container bind-mounts the mount
bash "$here/fixture.sh" "$T/e" "$AGENT"
"$AWFS" "$T/e" --policy "$P/awfs/policy.conf" --runtime docker --log "$T/e.log" 2>"$T/e.err"
check "docker-bind: awfs mounted on the host" "0" "$?"
rm -f "$T/out/bind.txt"
timeout 600 "$DOCKER" run --rm --network none --user "$AGENT:$AGENT" --cap-drop ALL \
	--security-opt no-new-privileges -v "$T/e:/tmp/gh-aw" -v "$T/out:/out" awfs-test:parity \
	sh -c "awfs-parity /tmp/gh-aw $AGENT >/out/bind.txt" >"$T/e.out" 2>&1
rc=$?
check "docker-bind: the container ran the probe" "0" "$rc"
[ "$rc" = 0 ] || tail -20 "$T/e.out" | sed 's/^/#   /'
compare docker-bind "$T/out/bind.txt"
check "docker-bind: the container's denial is logged on the host with its uid and the host path" "yes" \
	"$(grep -Eq "denied open\(O_WRONLY\) for pid [0-9]+ \(\"awfs-parity\"\) uid $AGENT gid $AGENT by read_only rule \"ro\" \([^)]*\); EROFS: \"$T/e/ro/file\":" \
		"$T/e.log" && echo yes)"
umount "$T/e"
check "docker-bind: awfs unmounted" "0" "$(grep -c " $T/e " /proc/self/mountinfo)"
check "the two Docker transcripts are byte-identical" "same" \
	"$(cmp -s "$T/out/entrypoint.txt" "$T/out/bind.txt" && echo same)"
echo "# $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
