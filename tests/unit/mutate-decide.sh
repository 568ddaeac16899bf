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
	'/struct awfs_decision decide_symlink/,/^}/{/d = anchor_at(e, 0);/d}'
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
mutant "links = \"none\": a symlink made there" \
	'/struct awfs_decision decide_symlink/,/^}/s/kind_at(e, S_IFLNK, 0)/d/'
mutant "links = \"none\": a FIFO or socket made there (mknod)" \
	'/struct awfs_decision decide_mknod/,/^}/s/kind_at(e, mode \& S_IFMT, 0)/d/'
mutant "links = \"none\": a link of a special object made there" \
	'/struct awfs_decision decide_link/,/^}/{/special(type) \&\& closed(e->st)/,+1d}'
mutant "links = \"none\": anything moved in from a tree that allows links" \
	's/(strictness(from->st) < strictness(to->st) || special(type))/special(type)/'
mutant "links = \"none\": a special object moved in from another such tree" \
	's/(strictness(from->st) < strictness(to->st) || special(type))/(strictness(from->st) < strictness(to->st))/'
mutant "links = \"read-only\": taken for \"any\"" \
	's/return policy_links_strictness(decide_links(st));/return decide_links(st) == AWFS_LINKS_NONE ? 2 : 0;/'
mutant "links: a directory from a \"read-only\" tree into a \"none\" one (strictness not compared)" \
	's/strictness(from->st) < strictness(to->st)/!closed(from->st)/'
mutant "links = \"read-only\": a FIFO made there" \
	's/(l == AWFS_LINKS_READ_ONLY \&\& !S_ISLNK(type))/false/'
mutant "links = \"read-only\": a symlink linked in (link of one)" \
	's/special(type) \&\& closed(e->st)/special(type) \&\& decide_links(e->st) == AWFS_LINKS_NONE/'
mutant "links = \"none\": an exchange checked one way only" \
	'/struct awfs_decision decide_rename/,/^}/{/d = move_at(to, ttype, from, 0);/d}'
mutant "links = \"none\": a device node counted as a regular file" \
	's/return type \&\& !S_ISREG(type) \&\& !S_ISDIR(type);/return S_ISLNK(type) || S_ISFIFO(type) || S_ISSOCK(type);/'
mutant "links: a directory renamed from above a rule with other links" \
	'/if (mixed_below(from->st))/,+1d'
mutant "links: a directory renamed onto a position above a rule with other links" \
	'/if (mixed_below(to->st))/,+1d'

echo "1..$n"
exit $fail
