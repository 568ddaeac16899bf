#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh - one policy, one transcript, three runtimes:
#   container  awfs mounted over the fixture in a fresh mount + pid namespace
#              (the Docker agent container's situation), probed as uid 1000;
#   virtiofs   awfs mounted on the host in a private mount namespace, exported
#              by virtiofsd, probed inside a QEMU guest (q35, vhost-user-fs-pci,
#              the device Cloud Hypervisor uses) as uid 1000;
#   in-guest   a plain directory exported by virtiofsd, awfs mounted over the
#              virtiofs share inside the guest, probed there as uid 1000.
# Passes only when the three transcripts are byte-identical and equal to the
# checked-in expected.txt, and the host log of the virtiofs run has the line
# for a denial made in the guest. Exit 77 (skipped) when it cannot run here.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
RUN_GUEST=${AWFS_RUN_GUEST:-$here/../vm/run-guest}
WRAPPER=$here/../../contrib/virtiofsd/awfs-virtiofsd
command -v unshare >/dev/null || skip "no unshare (util-linux)"
command -v setfattr >/dev/null || skip "no setfattr (attr)"

# removed by lib.sh's EXIT trap; the namespaces took their mounts with them,
# nothing is left mounted here
T=$(mktemp -d /tmp/awfs-parity.XXXXXX)
chmod 755 "$T"

# transcript NAME: the lines between the markers in $T/NAME.raw, in $T/NAME.txt
transcript() {
	sed -n '/^@@PARITY-BEGIN@@$/,/^@@PARITY-END@@$/p' "$T/$1.raw" | sed '1d;$d' | tr -d '\r' >"$T/$1.txt"
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

# ---- the guest runs need qemu and a kernel: prepare them, or report skipped
if ! "$RUN_GUEST" --prepare --quiet >"$T/prepare.log" 2>&1; then
	cat "$T/prepare.log"
	echo "# $PASS passed, $FAIL failed"
	[ "$FAIL" = 0 ] || exit 1
	skip "no guest here (run-guest --prepare failed): only the container runtime was checked"
fi

# ---- virtiofs: awfs on the host in a private mount namespace, virtiofsd
# exports it; contrib/virtiofsd/awfs-virtiofsd does both, as a launcher would
bash "$here/fixture.sh" "$T/v" "$AGENT"
AWFS_POLICY="$T/policy.conf" AWFS_LOG="$T/virtiofs.log" AWFS_BIN="$AWFS" AWFSCTL_BIN="$AWFSCTL" \
	"$RUN_GUEST" --share "$T/v" --xattr --timeout 600 --keep --virtiofsd "$WRAPPER" \
	--include "$PARITY:/bin/awfs-parity" \
	--cmd "echo @@PARITY-BEGIN@@; awfs-parity \$AWFS_MNT $AGENT; echo @@PARITY-END@@" \
	>"$T/virtiofs.raw" 2>"$T/virtiofs.err"
rc=$?
check "virtiofs: the guest booted and ran the probe" "0" "$rc"
[ "$rc" = 0 ] || { tail -20 "$T/virtiofs.err" | sed 's/^/#   /'; }
transcript virtiofs
compare virtiofs "$T/virtiofs.txt"
# virtiofsd switches to the guest's uid for the calls that create (create,
# mkdir, mknod, symlink, link); other calls reach awfs as virtiofsd's root
check "virtiofs: a denial in the guest is logged on the host with op, path and guest uid" "yes" \
	"$(grep -Eq "denied create for pid [0-9]+ \(\"virtiofsd\"\) uid $AGENT gid $AGENT by read_only rule \"ro\" \([^)]*\); EROFS: \"$T/v/ro/new\": its directory \"$T/v/ro\" is read-only by read_only rule \"ro\"" "$T/virtiofs.log" && echo yes)"
check "virtiofs: an open for writing in the guest is logged on the host too" "yes" \
	"$(grep -Eq "denied open\(O_WRONLY\) for pid [0-9]+ \(\"virtiofsd\"\) .*; EROFS: \"$T/v/ro/file\":" "$T/virtiofs.log" && echo yes)"

# ---- in-guest: a plain directory exported, awfs mounted over the share in the guest
bash "$here/fixture.sh" "$T/g" "$AGENT"
"$RUN_GUEST" --quiet --share "$T/g" --xattr --timeout 600 \
	--include "$AWFS:/bin/awfs" --include "$PARITY:/bin/awfs-parity" \
	--include "$T/policy.conf:/etc/awfs/parity.conf" \
	--cmd "awfs \$AWFS_MNT --policy /etc/awfs/parity.conf --log /tmp/awfs.log || exit 3
	       echo @@PARITY-BEGIN@@; awfs-parity \$AWFS_MNT $AGENT; echo @@PARITY-END@@
	       grep -c 'denied open(O_WRONLY) ' /tmp/awfs.log | sed 's/^/guest-denials: /'
	       umount \$AWFS_MNT" >"$T/in-guest.raw" 2>"$T/in-guest.err"
rc=$?
check "in-guest: the guest booted, mounted awfs and ran the probe" "0" "$rc"
[ "$rc" = 0 ] || { tail -20 "$T/in-guest.err" | sed 's/^/#   /'; tail -20 "$T/in-guest.raw" | sed 's/^/#   /'; }
transcript in-guest
compare in-guest "$T/in-guest.txt"
check "in-guest: awfs in the guest logged the denial" "yes" \
	"$(grep -Eq '^guest-denials: [1-9]' "$T/in-guest.raw" && echo yes)"

check "virtiofs: the wrapper verified the mount before virtiofsd started" "yes" \
	"$(grep -q 'awfsctl verify: .* checks held' "$T/virtiofs.err" "$(sed -n 's/.*work dir kept: //p' "$T/virtiofs.err")/virtiofsd.log" 2>/dev/null && echo yes)"
rm -rf "$(sed -n 's/.*work dir kept: //p' "$T/virtiofs.err")"
check "virtiofs: nothing of awfs is left mounted on the host" "0" "$(grep -c " $T/v " /proc/self/mountinfo)"
check "the three transcripts are byte-identical" "same" \
	"$(cmp -s "$T/container.txt" "$T/virtiofs.txt" && cmp -s "$T/container.txt" "$T/in-guest.txt" && echo same)"
finish
