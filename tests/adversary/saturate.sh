#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# saturate.sh - the adversary (run.sh) with its saturation kinds (-S):
# more workers (12) than awfs has (8), among the usual attacks copies of
# 128 MiB, fsyncs of 4 MiB, first pages of a 100,000-entry directory listed
# again and again, opens of .awfs/denials held (256 a worker) and floods of
# refused creates. The invariants are run.sh's, and two more: a canary
# (root, and uid 65533, which does not attack) never waits 500 ms for one
# call (-t; 1,500 ms in a sanitizer build, below), and awfs's
# RSS grows by 32 MiB at most. 20 s in make check; longer by hand:
# AWFS_ADVERSARY_SECONDS=600 bash tests/adversary/saturate.sh
export AWFS_ADVERSARY_SATURATE=1
export AWFS_ADVERSARY_SECONDS=${AWFS_ADVERSARY_SECONDS:-20}
export AWFS_ADVERSARY_PROCS=${AWFS_ADVERSARY_PROCS:-12}
export AWFS_ADVERSARY_RSS_MB=${AWFS_ADVERSARY_RSS_MB:-32}
# the unprivileged canary is a caller of its own, not one of the attackers
export AWFS_ADVERSARY_CANARY_UID=${AWFS_ADVERSARY_CANARY_UID:-65533}
# The canary's bound is a design's (a stall, not a slow call): the broken
# queue took about 1 s in a normal build. An ASan build is two to three
# times slower in every call, and CI runs it with two busy loops on the
# cores (0.61 s seen once): there the bound is 1,500 ms, still under what
# that stall would take in such a build.
stall=500
ldd "${AWFS:-$(dirname "$0")/../../awfs}" 2>/dev/null | grep -q libasan && stall=1500
export AWFS_ADVERSARY_ARGS="-S -t ${AWFS_ADVERSARY_STALL_MS:-$stall} ${AWFS_ADVERSARY_ARGS:-}"
exec bash "$(dirname "$0")/run.sh"
