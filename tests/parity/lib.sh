# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh - what run.sh and docker.sh share: a check, and the comparison of
# a runtime's transcript with the checked-in expected.txt. Sourced; needs
# EXPECTED, PASS and FAIL set.

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
