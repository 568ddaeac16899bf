# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh - what run.sh and docker.sh share. The programs under test, skip,
# check, finish and the EXIT trap that removes $T (docker.sh sets its own)
# come from the integration tests' lib.sh; added here: the checks every
# runtime needs (root, /dev/fuse), the agent's uid the transcript was made
# with, and the comparison of a runtime's transcript with the checked-in
# expected.txt.
# Sourced after here= is set to the tests/parity directory.
. "$here/../integration/lib.sh"
PARITY=$AWFS_PARITY
EXPECTED=$here/expected.txt
AGENT=1000	# expected.txt's, whatever AWFS_TEST_UID says
KEEP_T=${AWFS_PARITY_KEEP:-}	# lib.sh's cleanup keeps $T then

[ "$(id -u)" = 0 ] || skip "needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"

# compare NAME FILE [EXPECTED]: FILE (NAME's transcript) equals EXPECTED
# (expected.txt, or what run.sh made of it for a share without xattrs)
compare() {
	local want=${3:-$EXPECTED}
	if [ ! -s "$2" ]; then
		check "$1: a transcript was made" "yes" "no"
	elif cmp -s "$want" "$2"; then
		check "$1: the transcript equals ${want##*/} ($(wc -l <"$want") lines)" same same
	else
		check "$1: the transcript equals ${want##*/}" same different
		diff -u "$want" "$2" | sed 's/^/#   /' | head -40
	fi
}
