#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-all.sh - install what is missing, build, and run every test:
# the cmocka unit tests and the integration tests on real mounts
# (make check), then make distcheck. Run as root on Debian 12.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/contrib/deps.sh"
awfs_install_deps
cd "$top"
[ -x configure ] || autoreconf -fi >/dev/null
[ -f Makefile ] || ./configure -q
make -s -j"$(nproc)" >/dev/null

rc=0
make -s check || rc=$?
# print each test's own result lines, so a failure is explained right here
for log in tests/unit/*.log tests/integration/*.log; do
	[ -f "$log" ] || continue
	case "$log" in *test-suite.log) continue ;; esac
	if grep -q '^not ok\|^\[  FAILED  \]\|^FAIL' "$log"; then
		echo "---- $log"
		cat "$log"
	fi
done
if [ "$rc" = 0 ] && [ "${AWFS_SKIP_DISTCHECK:-0}" != 1 ]; then
	make -s distcheck >distcheck.log 2>&1 || { rc=$?; tail -50 distcheck.log; }
fi

# one closing line over every check of every test program
pass=0 fail=0 skip=0
for log in tests/unit/*.log tests/integration/*.log; do
	[ -f "$log" ] || continue
	case "$log" in *test-suite.log) continue ;; esac
	if grep -q '^SKIP: ' "$log"; then skip=$((skip + 1)); continue; fi
	if l=$(grep -E '^# [0-9]+ passed, [0-9]+ failed' "$log" | tail -1 || true) && [ -n "$l" ]; then
		set -- $l
		pass=$((pass + $2)); fail=$((fail + $4))
	elif l=$(grep -E '^\[  PASSED  \] [0-9]+ test' "$log" | tail -1 || true) && [ -n "$l" ]; then
		set -- $l
		pass=$((pass + $4))
		f=$(grep -E '^\[  FAILED  \] [0-9]+ test' "$log" | tail -1 | awk '{print $4}' || true)
		fail=$((fail + ${f:-0}))
	fi
done
[ "$rc" = 0 ] || [ "$fail" -gt 0 ] || fail=1
echo "checks: $pass passed, $fail failed, $skip skipped"
exit "$rc"
