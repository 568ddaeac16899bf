#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-all.sh - install what is missing, build, and run every test:
# the cmocka unit tests, the integration tests on real mounts and the
# runtime parity suite (make check), cppcheck and clang-tidy (make lint), the
# unit tests under valgrind, the enforcement rule's mutants (make
# check-mutants), then make distcheck with ASan and UBSan builds.
# Run as root on Debian 12.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/contrib/deps.sh"
awfs_install_deps
awfs_install_deps "$AWFS_TEST_DEPS" || echo "run-all: $AWFS_TEST_DEPS not installed: the Docker runtimes will report themselves skipped" >&2
cd "$top"
[ -x configure ] || autoreconf -fi >/dev/null
[ -f Makefile ] || ./configure -q
make -s -j"$(nproc)" >/dev/null

# every test program's log (globs, expanded where they are used)
TEST_LOGS="tests/unit/*.log tests/integration/*.log tests/adversary/*.log tests/parity/*.log tests/package/*.log"
rc=0
make -s check || rc=$?
# print the logs of failed tests, so a failure is explained right here
for log in $TEST_LOGS; do
	[ -f "$log" ] || continue
	if grep -q '^not ok\|^\[  FAILED  \]\|^FAIL' "$log"; then
		echo "---- $log"
		cat "$log"
	fi
done
# static analysis and memcheck of the unit tests
if [ "$rc" = 0 ]; then
	make -s lint >lint.log 2>&1 || { rc=$?; echo "---- make lint"; cat lint.log; }
fi
if [ "$rc" = 0 ]; then
	make -s check-valgrind >valgrind.log 2>&1 || { rc=$?; echo "---- make check-valgrind"; tail -50 valgrind.log; }
fi
# every small break of the enforcement rule must fail its table test
if [ "$rc" = 0 ]; then
	make -s check-mutants >mutants.log 2>&1 || { rc=$?; echo "---- make check-mutants"; cat mutants.log; }
fi
# the Debian package: built from make dist's tarball (unpacked with umask
# 0002), checked by lintian, installed into a clean Debian 12 root, purged
if [ "$rc" = 0 ]; then
	awfs_install_deps "$AWFS_PACKAGE_DEPS" ||
		echo "run-all: $AWFS_PACKAGE_DEPS not installed: tests/package/run.sh will report itself skipped" >&2
	if make -s check-package >tests/package/run.log 2>&1; then
		grep '^SKIP: ' tests/package/run.log || true
	else
		rc=1
		echo "---- make check-package"
		cat tests/package/run.log
	fi
fi
# distcheck builds the tarball and runs every test again from it, here with
# AddressSanitizer and UndefinedBehaviorSanitizer in every binary
if [ "$rc" = 0 ] && [ "${AWFS_SKIP_DISTCHECK:-0}" != 1 ]; then
	# under umask 0002, as a user with a group of their own builds and tests
	(umask 0002 && make -s distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-sanitizers) >distcheck.log 2>&1 ||
		{ rc=$?; tail -80 distcheck.log; }
	grep -E '^(PASS|FAIL|SKIP|ERROR): ' distcheck.log | sed 's/^/sanitizers: /'
fi

# one closing line over every check of every test program
pass=0 fail=0 skip=0
for log in $TEST_LOGS; do
	[ -f "$log" ] || continue
	if grep -q '^SKIP: ' "$log"; then
		skip=$((skip + 1))
	elif grep -qE '^# [0-9]+ passed, [0-9]+ failed' "$log"; then
		set -- $(grep -E '^# [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
		pass=$((pass + $2)) fail=$((fail + $4))
	else
		# cmocka prints one PASSED/FAILED line per group
		pass=$((pass + $(awk '/^\[  PASSED  \] [0-9]+ test/ { n += $4 } END { print n + 0 }' "$log")))
		fail=$((fail + $(awk '/^\[  FAILED  \] [0-9]+ test/ { n += $4 } END { print n + 0 }' "$log")))
	fi
done
# a test the sanitizer builds skipped is a skip too, not silence
if [ -f distcheck.log ]; then
	skip=$((skip + $(grep -c '^SKIP: ' distcheck.log || true)))
fi
[ "$rc" = 0 ] || [ "$fail" -gt 0 ] || fail=1
echo "checks: $pass passed, $fail failed, $skip skipped"
exit "$rc"
