#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh - one policy, one transcript, the runtimes without Docker
# (docker.sh has the two with it):
#   container  awfs mounted over the fixture in a fresh mount + pid namespace
#              (the Docker agent container's situation), probed as uid 1000;
#   host-user  awfs mounted on the runner (--runtime host-user); the agent a
#              separate uid in a unit of its own, as gh-aw's host-user
#              sandbox runs it: a private /tmp with the runner's /tmp/gh-aw
#              bound into it, the rest of the file system read-only, homes
#              hidden, no capabilities, no_new_privs; the single files the
#              engine writes granted to its uid by ACL (fixture.sh). Through
#              systemd-run where systemd runs (/run/systemd/system), else in
#              a mount namespace that makes the same view (host_user_unit);
#   virtiofs   awfs mounted on the host in a private mount namespace, exported
#              by virtiofsd, probed inside a QEMU guest (q35, vhost-user-fs-pci,
#              the device Cloud Hypervisor uses) as uid 1000;
#   in-guest   a plain directory exported by virtiofsd, awfs mounted over the
#              virtiofs share inside the guest, probed there as uid 1000.
# Each guest runtime runs twice, with the share as gh-aw deploys it and with
# everything a share can carry:
#   awf        virtiofsd as AWF's Cloud Hypervisor runtime starts it
#              (--sandbox=namespace --seccomp=kill --cache=auto
#              --inode-file-handles=never, no --xattr): the C virtiofsd's
#              -o sandbox=namespace -o cache=auto; it has no option for the
#              other two and always does what they ask (a seccomp filter
#              that kills, O_PATH fds rather than file handles);
#   acls       the same with -o xattr -o posix_acl.
# The guest kernel is Debian 12's (6.1, as AWF's guests boot), checked.
# Every transcript must equal the checked-in expected.txt, but for what a
# share without xattrs cannot carry, each a sed script here that names the
# lines it changes and why: share-without-acls.sed (an ACL on the host is
# not seen by the guest's kernel), export-without-xattrs.sed (virtiofsd
# itself answers setxattr before awfs sees it). The host log of the virtiofs
# runs must have the guest's denials. Exit 77 (skipped) when it cannot run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
RUN_GUEST=${AWFS_RUN_GUEST:-$here/../vm/run-guest}
WRAPPER=$here/../../contrib/virtiofsd/awfs-virtiofsd
command -v unshare >/dev/null || skip "no unshare (util-linux)"
command -v setfattr >/dev/null || skip "no setfattr (attr)"
command -v setfacl >/dev/null || skip "no setfacl (acl)"

# removed by lib.sh's EXIT trap; the namespaces took their mounts with them,
# nothing is left mounted here
T=$(mktemp -d /tmp/awfs-parity.XXXXXX)
chmod 755 "$T"

# transcript NAME: the lines between the markers in $T/NAME.raw, in $T/NAME.txt
transcript() {
	sed -n '/^@@PARITY-BEGIN@@$/,/^@@PARITY-END@@$/p' "$T/$1.raw" | sed '1d;$d' | tr -d '\r' >"$T/$1.txt"
}

# expected_for NAME SED...: expected.txt as a share without xattrs changes
# it, in $T/NAME.expected; each script must change what it says it changes
# (the count on its first line), so that none of them can go stale unseen
expected_for() {
	local name=$1 f want got
	shift
	cp "$EXPECTED" "$T/$name.expected"
	for f in "$@"; do
		want=$(sed -n '1s/^# changes \([0-9][0-9]*\) lines.*/\1/p' "$here/$f")
		sed -f "$here/$f" "$T/$name.expected" >"$T/$name.expected.new"
		got=$(diff "$T/$name.expected" "$T/$name.expected.new" | grep -c '^>')
		check "$name: $f changes the $want lines it names" "$want" "$got"
		mv "$T/$name.expected.new" "$T/$name.expected"
	done
}

cp "$here/policy.conf" "$T/policy.conf"
chmod 644 "$T/policy.conf"

# ---- container: a fresh mount and pid namespace, awfs over the directory
# (lib.sh's mount_awfs, exported to the namespace's shell with what it reads)
bash "$here/fixture.sh" "$T/c" "$AGENT"
export -f mount_awfs
MNT="$T/c" POLICY="$T/policy.conf" LOG="$T/container.log" T="$T" \
	unshare --mount --pid --fork --mount-proc --propagation private bash -c '
	mount_awfs
	echo @@PARITY-BEGIN@@
	"$1" "$MNT" "$2"
	echo @@PARITY-END@@
	kill $AWFS_PID; wait $AWFS_PID' _ "$PARITY" "$AGENT" \
	>"$T/container.raw" 2>"$T/container.err"
transcript container
compare container "$T/container.txt"

# ---- host-user: the agent's unit, as systemd would make it from gh-aw's
# properties (PrivateTmp=yes, BindPaths=/tmp/gh-aw, ProtectSystem=strict,
# ProtectHome=yes, NoNewPrivileges=yes, no capabilities), made here with
# mounts in a namespace of its own. Run in the namespace where awfs is
# mounted at $MNT; prints the unit's checks, then the transcript.
host_user_unit() {
	unshare --mount --propagation private bash -c '
	set -e
	exec 7<"$MNT" 8<"$1"
	# PrivateTmp=yes: a /tmp of its own, with the runner'\''s /tmp/gh-aw in it
	mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
	mkdir /tmp/gh-aw
	mount --bind /proc/self/fd/7 /tmp/gh-aw
	exec 7<&-
	# ProtectSystem=strict: every other mount read-only (the API file systems stay)
	awk "{ print \$5 }" /proc/self/mountinfo | sort -u | while read -r m; do
		m=$(printf %b "$m")
		case "$m" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*|/tmp|/tmp/*) continue ;; esac
		mount -o remount,bind,ro "$m" 2>/dev/null || true
	done
	# ProtectHome=yes: the homes empty
	for h in /home /root /run/user; do
		[ -d "$h" ] && mount -t tmpfs -o ro,mode=0755 tmpfs "$h"
	done
	agent() { setpriv --reuid="$2" --regid="$2" --clear-groups --no-new-privs --bounding-set=-all --inh-caps=-all "${@:3}"; }
	echo "unit-rootfs: $(agent "$1" "$2" sh -c ": >/var/tmp/awfs-host-user.$$" 2>&1 | grep -o "Read-only file system" || echo writable)"
	echo "unit-home: $(ls -A /root | wc -l) entries"
	echo "unit-tmp: $(agent "$1" "$2" sh -c "echo x >/tmp/own && cat /tmp/own" 2>&1)"
	echo @@PARITY-BEGIN@@
	agent "$1" "$2" /proc/self/fd/8 /tmp/gh-aw "$2"
	echo @@PARITY-END@@' _ "$@"
}
bash "$here/fixture.sh" "$T/h" "$AGENT"
if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null; then
	# systemd runs here: the unit is a real one (transient), as gh-aw's is;
	# awfs on the runner, in this mount namespace, where systemd sees it
	HOST_USER_HOW="systemd-run"
	cp "$PARITY" "$T/awfs-parity-unit"
	# awfs is mounted in this namespace here: unmounted at exit whatever happens
	AT_EXIT='fusermount3 -u "$T/h" 2>/dev/null || umount -l "$T/h" 2>/dev/null'
	unit() {	# a transient unit with the properties gh-aw gives the agent's
		systemd-run --wait --pipe --quiet --uid="$AGENT" --gid="$AGENT" \
			-p PrivateTmp=yes -p ProtectSystem=strict -p ProtectHome=yes \
			-p NoNewPrivileges=yes -p CapabilityBoundingSet= \
			-p "BindPaths=$T/h:/tmp/gh-aw" -p "BindReadOnlyPaths=$T/awfs-parity-unit:/run/awfs-parity" "$@"
	}
	(
		MNT="$T/h" POLICY="$T/policy.conf" LOG="$T/host-user.log"
		mount_awfs --runtime host-user
		echo "unit-rootfs: $(unit sh -c ': >/var/tmp/awfs-host-user' 2>&1 | grep -o 'Read-only file system' || echo writable)"
		echo "unit-home: $(systemd-run --wait --pipe --quiet -p ProtectHome=yes sh -c 'ls -A /root | wc -l') entries"
		echo "unit-tmp: $(unit sh -c 'echo x >/tmp/own && cat /tmp/own' 2>&1)"
		echo @@PARITY-BEGIN@@
		unit /run/awfs-parity /tmp/gh-aw "$AGENT"
		echo @@PARITY-END@@
		kill "$AWFS_PID"; wait "$AWFS_PID"
	) >"$T/host-user.raw" 2>"$T/host-user.err"
else
	HOST_USER_HOW="a mount namespace standing in for systemd (no systemd runs here)"
	export -f host_user_unit
	MNT="$T/h" POLICY="$T/policy.conf" LOG="$T/host-user.log" T="$T" \
		unshare --mount --propagation private bash -c '
		mount_awfs --runtime host-user
		host_user_unit "$1" "$2"
		kill $AWFS_PID; wait $AWFS_PID' _ "$PARITY" "$AGENT" \
		>"$T/host-user.raw" 2>"$T/host-user.err"
fi
echo "# host-user: the agent's unit made by $HOST_USER_HOW"
transcript host-user
compare host-user "$T/host-user.txt"
check "host-user: awfs mounted with the runtime named" "yes" \
	"$(grep -q "(source $T/h, runtime host-user, its POSIX ACLs enforced; data path: " "$T/host-user.log" && echo yes)"
check "host-user: the rest of the file system is read-only to the agent" "unit-rootfs: Read-only file system" \
	"$(grep '^unit-rootfs: ' "$T/host-user.raw")"
check "host-user: the homes are hidden" "unit-home: 0 entries" "$(grep '^unit-home: ' "$T/host-user.raw")"
check "host-user: the agent's /tmp is its own and writable" "unit-tmp: x" "$(grep '^unit-tmp: ' "$T/host-user.raw")"
check "host-user: a denial is logged with the agent's uid" "yes" \
	"$(grep -Eq "denied open\(O_WRONLY\) for pid [0-9]+ \(\"[^\"]*\"\) uid $AGENT gid $AGENT .*EROFS: \"$T/h/ro/file\"" "$T/host-user.log" && echo yes)"

# ---- the guest runs need qemu and a kernel: prepare them, or report skipped
if ! "$RUN_GUEST" --prepare --quiet >"$T/prepare.log" 2>&1; then
	cat "$T/prepare.log"
	echo "# $PASS passed, $FAIL failed"
	[ "$FAIL" = 0 ] || exit 1
	skip "no guest here (run-guest --prepare failed): only the container and host-user runtimes were checked"
fi

for share in awf acls; do
	VFSD=(--sandbox namespace --cache-mode auto)
	without=(share-without-acls.sed)
	if [ "$share" = acls ]; then
		VFSD+=(--xattr --vfsd-opt posix_acl)
		without=()
	fi

	# ---- virtiofs: awfs on the host in a private mount namespace, virtiofsd
	# exports it; contrib/virtiofsd/awfs-virtiofsd does both, as a launcher would
	name=virtiofs-$share
	bash "$here/fixture.sh" "$T/v" "$AGENT"
	AWFS_POLICY="$T/policy.conf" AWFS_LOG="$T/$name.log" AWFS_BIN="$AWFS" AWFSCTL_BIN="$AWFSCTL" \
		"$RUN_GUEST" --share "$T/v" "${VFSD[@]}" --timeout 600 --keep --virtiofsd "$WRAPPER" \
		--include "$PARITY:/bin/awfs-parity" \
		--cmd "echo guest-kernel: \$(uname -r); echo @@PARITY-BEGIN@@; awfs-parity \$AWFS_MNT $AGENT; echo @@PARITY-END@@" \
		>"$T/$name.raw" 2>"$T/$name.err"
	rc=$?
	check "$name: the guest booted and ran the probe" "0" "$rc"
	[ "$rc" = 0 ] || { tail -20 "$T/$name.err" | sed 's/^/#   /'; }
	check_match "$name: the guest runs Debian 12's 6.1 kernel" "^guest-kernel: 6\.1\." "$(grep '^guest-kernel: ' "$T/$name.raw")"
	transcript "$name"
	if [ "$share" = awf ]; then
		expected_for "$name" "${without[@]}" export-without-xattrs.sed
	else
		expected_for "$name"
	fi
	compare "$name" "$T/$name.txt" "$T/$name.expected"
	# virtiofsd switches to the guest's uid for the calls that create (create,
	# mkdir, mknod, symlink, link); other calls reach awfs as virtiofsd's root
	check "$name: a denial in the guest is logged on the host with op, path and guest uid" "yes" \
		"$(grep -Eq "denied create for pid [0-9]+ \(\"virtiofsd\"\) uid $AGENT gid $AGENT by read_only rule \"ro\" \([^)]*\); EROFS: \"$T/v/ro/new\": its directory \"$T/v/ro\" is read-only by read_only rule \"ro\"" "$T/$name.log" && echo yes)"
	check_match "$name: the host's awfs names its data path" "data path: (the kernel's passthrough|through awfs)" "$(grep ' mounted ' "$T/$name.log")"
	check "$name: an open for writing in the guest is logged on the host too" "yes" \
		"$(grep -Eq "denied open\(O_WRONLY\) for pid [0-9]+ \(\"virtiofsd\"\) .*; EROFS: \"$T/v/ro/file\":" "$T/$name.log" && echo yes)"
	work=$(sed -n 's/.*work dir kept: //p' "$T/$name.err")
	check "$name: the wrapper verified the mount before virtiofsd started" "yes" \
		"$(grep -q 'awfsctl verify: .* checks held' "$T/$name.err" "$work/virtiofsd.log" 2>/dev/null && echo yes)"
	[ -n "$work" ] && rm -rf "$work"
	check "$name: nothing of awfs is left mounted on the host" "0" "$(grep -c " $T/v " /proc/self/mountinfo)"

	# ---- in-guest: a plain directory exported, awfs mounted over the share in the guest
	name=in-guest-$share
	bash "$here/fixture.sh" "$T/g" "$AGENT"
	"$RUN_GUEST" --quiet --share "$T/g" "${VFSD[@]}" --timeout 600 \
		--include "$AWFS:/bin/awfs" --include "$PARITY:/bin/awfs-parity" \
		--include "$T/policy.conf:/etc/awfs/parity.conf" \
		--cmd "echo guest-kernel: \$(uname -r)
		       awfs \$AWFS_MNT --policy /etc/awfs/parity.conf --runtime guest --log /tmp/awfs.log || exit 3
		       echo @@PARITY-BEGIN@@; awfs-parity \$AWFS_MNT $AGENT; echo @@PARITY-END@@
		       grep -c 'denied open(O_WRONLY) ' /tmp/awfs.log | sed 's/^/guest-denials: /'
		       grep -o ', runtime guest, [^)]*)' /tmp/awfs.log | sed 's/^/guest-acls: /'
		       umount \$AWFS_MNT" >"$T/$name.raw" 2>"$T/$name.err"
	rc=$?
	check "$name: the guest booted, mounted awfs and ran the probe" "0" "$rc"
	[ "$rc" = 0 ] || { tail -20 "$T/$name.err" | sed 's/^/#   /'; tail -20 "$T/$name.raw" | sed 's/^/#   /'; }
	check_match "$name: the guest runs Debian 12's 6.1 kernel" "^guest-kernel: 6\.1\." "$(grep '^guest-kernel: ' "$T/$name.raw")"
	transcript "$name"
	expected_for "$name" "${without[@]}"
	compare "$name" "$T/$name.txt" "$T/$name.expected"
	check "$name: awfs in the guest logged the denial" "yes" \
		"$(grep -Eq '^guest-denials: [1-9]' "$T/$name.raw" && echo yes)"
	if [ "$share" = awf ]; then
		acls="no POSIX ACLs there: modes alone decide access"
	else
		acls="its POSIX ACLs enforced"
	fi
	# ... its data path and its requests: the 6.1 kernel offers neither passthrough nor io_uring
	check "$name: awfs in the guest says what the share keeps, and that its data path and requests are its own" \
		"guest-acls: , runtime guest, $acls; data path: through awfs, this kernel offers no FUSE passthrough: it needs Linux 6.9 or later, CONFIG_FUSE_PASSTHROUGH; requests: through /dev/fuse, this kernel offers no FUSE over io_uring: it needs Linux 6.14 or later, CONFIG_FUSE_IO_URING, and the fuse module's enable_uring set to 1)" \
		"$(grep '^guest-acls: ' "$T/$name.raw" | tr -d '\r')"
done
finish
