#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# noacl.sh - the adversary (run.sh) over a source that keeps no ACLs: a
# ramfs, with no xattrs at all, as a virtiofs share exported without them
# is inside a guest. awfs answers the kernel's ACL reads there with "no
# ACL", and the modes alone decide; every invariant of run.sh must hold
# all the same (the root-only files unread, nothing changed where the
# agent may not write). 20 s unless AWFS_ADVERSARY_SECONDS says otherwise.
export AWFS_ADVERSARY_SOURCE=ramfs
export AWFS_ADVERSARY_SECONDS=${AWFS_ADVERSARY_SECONDS:-20}
exec bash "$(dirname "$0")/run.sh"
