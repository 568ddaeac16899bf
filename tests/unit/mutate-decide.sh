#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# mutate-decide.sh - each small break of the enforcement rule (src/decide.c)
# must fail tests/unit/test_decide: proof that the table covers the rule.
# Run by `make check-mutants`, which passes the compiler and flags:
#   CC, CFLAGS (with -I for src/ and cmocka), LIBS (libawfs.a and the
#   libraries), and the source directory as $1.
# Each mutant is one sed expression on decide.c; one that no longer applies
# (the code moved) is an error too, so the list cannot rot quietly.
set -u
src=${1:?usage: mutate-decide.sh SRCDIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0 n=0

mutant() {
	name=$1 expr=$2
	n=$((n + 1))
	sed "$expr" "$src/src/decide.c" >"$work/decide.c"
	if cmp -s "$work/decide.c" "$src/src/decide.c"; then
		echo "not ok $n - $name: the mutation no longer applies (update the script)"
		fail=1
		return
	fi
	# the mutant first, so the archive's decide.o is never pulled in
	if ! $CC $CFLAGS -o "$work/t" "$work/decide.c" "$src/tests/unit/test_decide.c" $LIBS \
		>"$work/cc.log" 2>&1; then
		echo "not ok $n - $name: does not build"
		cat "$work/cc.log"
		fail=1
	elif "$work/t" >"$work/run.log" 2>&1; then
		echo "not ok $n - $name: test_decide passed with it (the table misses it)"
		fail=1
	else
		echo "ok $n - $name: caught"
	fi
}

# the unmutated module must pass, or every mutant "fails" for nothing
if ! $CC $CFLAGS -o "$work/t" "$src/src/decide.c" "$src/tests/unit/test_decide.c" $LIBS ||
	! "$work/t" >/dev/null 2>&1; then
	echo "Bail out! test_decide fails on the real decide.c"
	exit 1
fi

mutant "create allowed at a read-only rule's position (entry check dropped)" \
	'/if (!writable(e->st))/,+1d'
mutant "a read-only directory's names changeable (parent check dropped)" \
	'/if (!writable(e->dir))/,+1d'
mutant "the information directory writable" \
	'/if (e->info)/,+1d'
mutant "setattr/setxattr/write on a read-only object allowed" \
	'/if (!writable(o->st))/,+1d'
mutant "a masked class counted as writable" \
	's/== AWFS_CLASS_WRITE;/!= AWFS_CLASS_RO;/'
mutant "O_TRUNC with O_RDONLY allowed" \
	's/ || (flags \& O_TRUNC)//'
mutant "symlink where a rule is anchored" \
	's/return d.how ? d : anchor_at(e, 0);/return d;/'
mutant "rename: the source side not checked" \
	'/struct awfs_decision decide_rename/,/^}/s/entry_at(from, 0)/allowed/'
mutant "rename: the target side not checked" \
	'/struct awfs_decision decide_rename/,/^}/{/d = entry_at(to, 1);/d}'
mutant "rename out of an anchored position" \
	'/struct awfs_decision decide_rename/,/^}/{/d = anchor_at(from, 0);/d}'
mutant "rename into an anchored position" \
	'/struct awfs_decision decide_rename/,/^}/{/d = anchor_at(to, 1);/d}'
mutant "link into a read-only directory" \
	'/struct awfs_decision decide_link/,/^}/{/d = entry_at(e, 1);/d}'
mutant "link where a rule is anchored" \
	'/struct awfs_decision decide_link/,/^}/{/d = anchor_at(e, 1);/d}'
mutant "link of a read-only object" \
	'/struct awfs_decision decide_link/,/^}/s/object_at(o, 0)/allowed/'
mutant "the refusal names the wrong end" \
	'/struct awfs_decision decide_rename/,/^}/s/entry_at(to, 1)/entry_at(to, 0)/'
mutant "an anchored refusal names the state's rule, not the anchored one" \
	's/d.rule = classify_anchored(st);/d.rule = classify_rule(st);/'

echo "1..$n"
exit $fail
