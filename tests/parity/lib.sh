# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh - what run.sh and docker.sh share: the programs under test, the
# checks every runtime needs (root, /dev/fuse), a check, and the comparison
# of a runtime's transcript with the checked-in expected.txt. Sourced after
# here= is set to the tests/parity directory.
AWFS=${AWFS:?AWFS must name the awfs binary}
PARITY=${AWFS_PARITY:?AWFS_PARITY must name the awfs-parity binary}
AWFSCTL=${AWFSCTL:?AWFSCTL must name the awfsctl binary}
EXPECTED=$here/expected.txt
AGENT=1000
PASS=0 FAIL=0

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"

check() {
	if [ "$2" = "$3" ]; then PASS=$((PASS + 1)); echo "ok - $1"
	else FAIL=$((FAIL + 1)); echo "not ok - $1"; echo "#   expected: $2"; echo "#   got:      $3"; fi
}

# compare NAME FILE: FILE (NAME's transcript) equals expected.txt
compare() {
	if [ ! -s "$2" ]; then
		check "$1: a transcript was made" "yes" "no"
	elif cmp -s "$EXPECTED" "$2"; then
		check "$1: the transcript equals expected.txt ($(wc -l <"$EXPECTED") lines)" same same
	else
		check "$1: the transcript equals expected.txt" same different
		diff -u "$EXPECTED" "$2" | sed 's/^/#   /' | head -40
	fi
}
