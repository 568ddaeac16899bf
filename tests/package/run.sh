#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh - the Debian package as a user gets it (make check-package):
#   1. the source package from `make dist`'s tarball (the orig), unpacked
#      with umask 0002, and debian/ from this tree; dpkg-buildpackage -us -uc
#      builds it (its build runs the unit tests and says it skips the rest);
#   2. lintian: no error and no warning that debian/ does not override
#      with a reason;
#   3. a clean Debian 12 root (debootstrap --variant=minbase bookworm), with
#      nothing of the build: the package's dependencies installed there by
#      apt from its Depends field, then the package by dpkg; awfs --version
#      says the package's version, awfsctl check accepts the installed
#      policy, and the installed demo (/usr/share/awfs/demo.sh) mounts the
#      installed awfs with it and shows a mask, a write that passes and a
#      refusal with its log line;
#   4. dpkg -r removes the programs and keeps the changed conffile;
#      dpkg --purge leaves the root as it was before the package.
#
#   bash tests/package/run.sh awfs-VERSION.tar.gz
#
# Needs root, /dev/fuse, dpkg-dev, debhelper, lintian, debootstrap and a
# Debian mirror (AWFS_DEBIAN_MIRROR, default http://deb.debian.org/debian);
# exits 77 (skipped) when one is missing. AWFS_PACKAGE_KEEP=1 keeps the
# directory.
set -u
here=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$here/../.." && pwd)
. "$here/../integration/lib.sh"
KEEP_T=${AWFS_PACKAGE_KEEP:-}

TARBALL=${1:-}
case $TARBALL in
*/awfs-*.tar.gz | awfs-*.tar.gz) ;;
*) echo "usage: $0 awfs-VERSION.tar.gz (make check-package makes it)"; exit 99 ;;
esac
[ -f "$TARBALL" ] || { echo "$TARBALL: no such file"; exit 99; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot, a FUSE mount in the clean root)"
[ -c /dev/fuse ] || skip "no /dev/fuse"
[ -f "$TOP/debian/control" ] || skip "no debian/ in $TOP (the packaging is in the repository, not in the release tarball)"
for c in dpkg-buildpackage dh lintian debootstrap unshare chroot; do
	command -v "$c" >/dev/null || skip "no $c (apt-get install dpkg-dev debhelper lintian debootstrap)"
done
# the package is built here and installed into Debian 12: built on another
# release it would depend on that release's libraries
. /etc/os-release 2>/dev/null
[ "${ID:-}" = debian ] && [ "${VERSION_ID:-}" = 12 ] ||
	skip "not Debian 12 here (${PRETTY_NAME:-unknown}): the package is built for and installed into Debian 12"
MIRROR=${AWFS_DEBIAN_MIRROR:-http://deb.debian.org/debian}

V=${TARBALL##*/awfs-}
V=${V%.tar.gz}
T=$(mktemp -d /tmp/awfs-package.XXXXXX)
chmod 755 "$T"

# ---- 1. the package, from the tarball
cp "$TARBALL" "$T/awfs_$V.orig.tar.gz"
# tar as root keeps the archive's modes unless told not to; a user's tar
# applies the umask
(umask 0002 && tar -C "$T" --no-same-permissions -xzf "$T/awfs_$V.orig.tar.gz")
S=$T/awfs-$V
check "the tarball unpacks into awfs-$V" "yes" "$([ -f "$S/configure.ac" ] && echo yes)"
check "the tarball has no debian/ (the orig of the source package)" "no" "$([ -e "$S/debian" ] && echo yes || echo no)"
check "unpacked with umask 0002, nothing in it is writable by group or others" "" \
	"$(find "$S" -perm /022 ! -type l | head -3)"
# debian/ as in this tree, without what a build in place leaves in it
tar -C "$TOP" --exclude=debian/awfs --exclude=debian/awfs-dbgsym --exclude=debian/.debhelper \
	--exclude=debian/tmp --exclude=debian/files --exclude='debian/*.substvars' \
	--exclude='debian/*.debhelper*' --exclude=debian/debhelper-build-stamp -c debian | tar -C "$S" -x
PV=$(cd "$S" && dpkg-parsechangelog -S Version)
check "the changelog's version is the tarball's, with a Debian revision" "$V" "${PV%-*}"
(cd "$S" && dpkg-buildpackage -us -uc) >"$T/build.log" 2>&1
rc=$?
check "dpkg-buildpackage -us -uc builds it" "0" "$rc"
[ "$rc" = 0 ] || { tail -40 "$T/build.log"; finish; }
# automake's summary of make check-unit: every unit test ran and passed
total=$(awk '/^# TOTAL: / { n = $3 } END { print n + 0 }' "$T/build.log")
check "the build ran the unit tests, all passed" "yes $total" \
	"$([ "$total" -gt 0 ] && echo yes) $(awk '/^# PASS: / { n = $3 } END { print n + 0 }' "$T/build.log")"
check "... none failed" "0" "$(awk '/^# (FAIL|ERROR): / { n += $3 } END { print n + 0 }' "$T/build.log")"
check_match "... and said it skipped the tests on real mounts" "tests on real FUSE mounts .* are skipped in a package build" \
	"$(cat "$T/build.log")"
DEB=$T/awfs_${PV}_$(dpkg --print-architecture).deb
check "the package is built" "yes" "$([ -f "$DEB" ] && echo yes)"
[ -f "$DEB" ] || finish

contents=$(dpkg-deb -c "$DEB" | awk '{ print $1, $2, $6 }')
for f in ./usr/bin/awfs ./usr/bin/awfsctl; do
	check_match "$f, root's, 0755" "^-rwxr-xr-x root/root $f\$" "$(grep " $f\$" <<<"$contents")"
done
for f in ./usr/share/man/man1/awfs.1.gz ./usr/share/man/man1/awfsctl.1.gz ./usr/share/man/man5/awfs-policy.5.gz \
	./lib/systemd/system/awfs@.service ./usr/share/awfs/demo.sh ./usr/share/awfs/docker/awfs-entrypoint.sh \
	./usr/share/awfs/docker/docker-compose.awfs.yml ./usr/share/awfs/virtiofsd/awfs-virtiofsd \
	./usr/share/doc/awfs/README.md.gz ./usr/share/doc/awfs/security.md.gz ./usr/share/doc/awfs/copyright \
	./usr/share/doc/awfs/README.Debian ./usr/share/doc/awfs/README.docker.md.gz; do
	check "the package has $f" "yes" "$(grep -q " $f\$" <<<"$contents" && echo yes)"
done
check "/etc/awfs/policy.conf: root's, 0644" "-rw-r--r-- root/root ./etc/awfs/policy.conf" \
	"$(grep ' ./etc/awfs/policy.conf$' <<<"$contents")"
ctl=$T/control
dpkg-deb -e "$DEB" "$ctl"
check "/etc/awfs/policy.conf is a conffile" "/etc/awfs/policy.conf" "$(cat "$ctl/conffiles")"
check "no maintainer script runs at install or removal" "" \
	"$(cd "$ctl" && ls preinst postinst prerm postrm config 2>/dev/null)"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
check_match "Depends: fuse3 and the libraries awfs links" "fuse3.*libconfig9.*libfuse3-3.*libyaml-0-2" "$DEPENDS"

# ---- 2. lintian: E: and W: lines are what is left after debian's overrides
lintian --pedantic -I --fail-on error,warning "$T"/awfs_"${PV}"_*.changes >"$T/lintian.log" 2>&1
rc=$?
check "lintian: no error or warning" "0 " "$rc $(grep -E '^(E|W): ' "$T/lintian.log")"
# again, showing the overridden (lintian 2.116 then counts them for --fail-on)
lintian --pedantic -I --show-overrides "$T"/awfs_"${PV}"_*.changes >"$T/lintian.log" 2>&1
check "lintian read the binary package, its override in force" "yes" \
	"$(grep -q '^O: awfs: initial-upload-closes-no-bugs' "$T/lintian.log" && echo yes)"
# every override says why, in a comment right above it
check "every lintian override has its reason above it" "" \
	"$(awk '!/^#/ && NF && !prev { print FILENAME ": " $0 } { prev = /^#/ }' "$S"/debian/*lintian-overrides)"

# ---- 3. a clean Debian 12 root
R=$T/root
# no_mirror STEP LOG: STEP could not reach the mirror; skip, unless a
# check above failed (a skip must not hide it)
no_mirror() {
	tail -5 "$2" | sed "s/^/# $1: /"
	[ "$FAIL" = 0 ] || finish
	skip "$1 from $MIRROR failed here (no mirror reachable?): the package was built and checked, not installed"
}
debootstrap --variant=minbase bookworm "$R" "$MIRROR" >"$T/debootstrap.log" 2>&1 ||
	no_mirror "debootstrap of Debian 12" "$T/debootstrap.log"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null
# the root as dpkg and apt leave it, beside what a package installs
NOT_THE_PACKAGES=(\( -path ./var/lib/dpkg -o -path ./var/lib/apt -o -path ./var/cache -o -path ./var/log
	-o -path ./tmp -o -path ./run -o -path ./proc -o -path ./sys -o -path ./dev \) -prune)
snapshot() {
	(cd "$R" && find . -xdev "${NOT_THE_PACKAGES[@]}" -o -printf '%y %m %u %s %p\n' | sort &&
		find . -xdev "${NOT_THE_PACKAGES[@]}" -o -type f -print0 | sort -z | xargs -0 md5sum)
}
# in_root CMD...: CMD in the root, with /dev (for /dev/fuse), /proc and
# /sys mounted in a mount namespace of its own (they go when it ends)
in_root() {
	unshare --mount --propagation private sh -c '
		R=$1; shift
		mount --bind /dev "$R/dev" && mount -t proc proc "$R/proc" && mount -t sysfs sysfs "$R/sys" || exit 125
		exec chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"' _ "$R" "$@"
}
check "the clean root has no awfs" "none" "$(in_root sh -c 'command -v awfs awfsctl || echo none')"
deps=$(sed -e 's/([^)]*)//g' -e 's/|[^,]*//g' -e 's/,/ /g' <<<"$DEPENDS")
in_root apt-get update -q >"$T/apt.log" 2>&1 || no_mirror "apt-get update in the clean root" "$T/apt.log"
# shellcheck disable=SC2086
in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"' _ $deps >>"$T/apt.log" 2>&1
rc=$?
check "apt installs the Depends into the clean root ($deps)" "0" "$rc"
[ "$rc" = 0 ] || { tail -20 "$T/apt.log"; finish; }
before=$(snapshot)
cp "$DEB" "$R/tmp/"
check "dpkg -i installs the package" "0" "$(in_root dpkg -i "/tmp/${DEB##*/}" >"$T/dpkg.log" 2>&1; echo $?)"
check "dpkg says it is installed, at $PV" "install ok installed $PV" \
	"$(in_root dpkg-query -W -f='${Status} ${Version}' awfs)"
check_match "awfs --version: the package's version" "^awfs $V " "$(in_root awfs --version 2>&1)"
check_match "awfsctl --version too" "^awfsctl $V" "$(in_root awfsctl --version 2>&1)"
out=$(in_root awfsctl check --policy /etc/awfs/policy.conf 2>&1)
rc=$?
check "awfsctl check accepts the installed policy" "0" "$rc"
check_match "... and says so" "/etc/awfs/policy.conf: 0 errors, 0 warnings" "$out"
check_match "awfsctl check --strict does too (the conffile's mode is 0644)" "0 errors, 0 warnings" \
	"$(in_root awfsctl check --strict --policy /etc/awfs/policy.conf 2>&1)"
check "man awfs is there to read" "yes" "$(in_root sh -c 'zcat /usr/share/man/man1/awfs.1.gz | grep -q "^\.TH AWFS" && echo yes')"
out=$(in_root sh -c 'AWFS_DEMO_UID=1000 /usr/share/awfs/demo.sh </dev/null; rc=$?
	echo "awfs mounts left: $(grep -c " fuse.awfs " /proc/self/mountinfo)"; exit $rc' 2>&1)
rc=$?
echo "$out" >"$T/demo.log"
check "the installed demo exits 0" "0" "$rc"
check_match "the demo mounts the installed awfs with the installed policy" \
	"awfs: mounted /tmp/gh-aw-demo\.[A-Za-z0-9]+/gh-aw .*masked: mcp-logs, sandbox/firewall/logs" "$out"
check_match "a masked log is not there" "gateway.log: No such file or directory" "$out"
check_match "a write to a memory passes through" "a note for later" "$out"
check_match "a denied write is logged with its rule" \
	"awfs: denied create for pid [0-9]+ \(\"sh\"\) uid 1000 gid 1000 by read_only rule \"mcp-payloads\"" "$out"
check_match "the agent sees EROFS" "forged.json: Read-only file system" "$out"
check "the demo left no mount in the root" "awfs mounts left: 0" "$(tail -1 <<<"$out")"

# ---- 4. removal and purge
echo '# changed by the administrator' >>"$R/etc/awfs/policy.conf"
check "dpkg -r removes it" "0" "$(in_root dpkg -r awfs >>"$T/dpkg.log" 2>&1; echo $?)"
check "... its programs are gone" "none" "$(in_root sh -c 'command -v awfs awfsctl || echo none')"
check "... the changed policy stays (a conffile)" "# changed by the administrator" "$(tail -1 "$R/etc/awfs/policy.conf")"
check "... dpkg keeps its config files" "deinstall ok config-files" "$(in_root dpkg-query -W -f='${Status}' awfs)"
check "dpkg --purge purges it" "0" "$(in_root dpkg --purge awfs >>"$T/dpkg.log" 2>&1; echo $?)"
check "... dpkg knows it no more" "" "$(in_root dpkg-query -W -f='${Status}' awfs 2>/dev/null)"
check "... and the root is as it was before the package (no file left, none taken)" "" \
	"$(diff <(echo "$before") <(snapshot))"
finish
