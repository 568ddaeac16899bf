# SPDX-License-Identifier: GPL-2.0-or-later
# deps.sh - install what building and testing awfs needs on Debian 12, and
# only what is missing. Sourced by contrib/demo.sh and tests/run-all.sh.

# qemu and the rest of the guest harness's needs are installed by tests/vm/run-guest itself
AWFS_DEPS="gcc make autoconf automake pkg-config libfuse3-dev fuse3 libconfig-dev libyaml-dev libcmocka-dev attr acl util-linux jq cppcheck clang-tidy valgrind gdb"
# what only the tests need: a real Docker engine and compose for the two
# Docker runtimes of the parity suite (tests/parity/docker.sh starts its own
# dockerd; the test reports itself skipped where this cannot be installed),
# and bindfs, the slow source uring.sh stops under awfs
AWFS_TEST_DEPS="docker.io docker-compose git sqlite3 rsync bindfs"
# what building and checking the Debian package needs (tests/package/run.sh)
AWFS_PACKAGE_DEPS="dpkg-dev debhelper lintian debootstrap"

# awfs_install_deps [PACKAGES]: install those of PACKAGES [AWFS_DEPS] that are missing
awfs_install_deps() {
	local missing="" p
	for p in ${1:-$AWFS_DEPS}; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "awfs: missing packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
		return 1
	fi
	echo "awfs: installing$missing (apt-get)" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null || return 1
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >/dev/null || return 1
}

# awfs_build SRCDIR: configure (once) and build in the source tree
awfs_build() {
	(
		cd "$1" || exit 1
		[ -x configure ] || autoreconf -fi >/dev/null || exit 1
		[ -f Makefile ] || ./configure -q || exit 1
		make -s -j"$(nproc)" all tests/awfs-probe >/dev/null
	)
}
