#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh - build the libFuzzer targets with clang (ASan + UBSan) and run each
# for FUZZ_SECONDS (default 60), starting from the seed corpus: every policy
# fixture in tests/unit/policies, the shipped policy, and tests/fuzz/corpus/
# (the workflows: the ones tests/integration/workflows has).
# Prints libFuzzer's final figures (executions, coverage, corpus size).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$PWD/fuzz-build}
secs=${FUZZ_SECONDS:-60}
CC=${FUZZ_CC:-clang}
command -v "$CC" >/dev/null || { echo "SKIP: no $CC (apt-get install clang libclang-rt-14-dev)"; exit 77; }
mkdir -p "$build/corpus-policy" "$build/corpus-grants" "$build/corpus-workflow"
cflags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE
	-I"$top/src" $(pkg-config --cflags libconfig yaml-0.1))
libs=($(pkg-config --libs libconfig yaml-0.1) -pthread)
common=("$top/src/policy.c" "$top/src/classify.c" "$top/src/util.c" "$top/src/log.c" "$top/src/explain.c")
"$CC" "${cflags[@]}" "$top/tests/fuzz/fuzz_policy.c" "${common[@]}" "${libs[@]}" -o "$build/fuzz_policy"
"$CC" "${cflags[@]}" "$top/tests/fuzz/fuzz_grants.c" "$top/src/grants.c" "${common[@]}" "${libs[@]}" \
	-o "$build/fuzz_grants"
"$CC" "${cflags[@]}" "$top/tests/fuzz/fuzz_workflow.c" "$top/src/workflow.c" "$top/src/lockcheck.c" \
	"$top/src/grants.c" "${common[@]}" "${libs[@]}" -o "$build/fuzz_workflow"
cp "$top"/tests/unit/policies/good/*.conf "$top"/tests/unit/policies/bad/*.conf "$top/etc/awfs/policy.conf" \
	"$build/corpus-policy/"
cp "$top"/tests/fuzz/corpus/grants/* "$build/corpus-grants/"
cp "$top"/tests/fuzz/corpus/workflow/* "$build/corpus-workflow/"
export LSAN_OPTIONS="suppressions=$top/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
for t in policy grants workflow; do
	echo "== fuzz_$t, ${secs}s"
	# -dict-free, -max_len 4096: policies, permission strings and the test workflows are small text
	"$build/fuzz_$t" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$build/crash-$t-" \
		-print_final_stats=1 "$build/corpus-$t" 2>"$build/fuzz_$t.log" || { tail -40 "$build/fuzz_$t.log"; exit 1; }
	grep -E "^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|stat::peak_rss_mb)|cov: " \
		"$build/fuzz_$t.log" | tail -6
done
