#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uring.sh - the adversary with its saturation kinds (saturate.sh) on a
# mount that takes its requests through FUSE over io_uring (src/uring.h):
# the same invariants, the same canary bound (500 ms) and RSS bound, with
# every request but FORGET and INTERRUPT served by the queues' threads and
# the workers' replies handed back to them. Skipped where the kernel has no
# FUSE over io_uring (Linux 6.14 and later, CONFIG_FUSE_IO_URING).
export AWFS_ADVERSARY_URING=1
exec bash "$(dirname "$0")/saturate.sh"
