#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# mutate-daemon.sh - each small break of an invariant in docs/architecture.md's
# table, outside decide.c (tests/unit/mutate-decide.sh has those), must fail
# the test named beside it: proof that the test guards the invariant.
#
#   unit mutants: the mutated module is built into the unit test (no root);
#   mount mutants: into an awfs binary, and the integration test (or the
#   cases of it named in CREDS_ONLY) runs against that binary on a real
#   mount (root and /dev/fuse; elsewhere they are reported skipped).
#
# Run by `make check-mutants`, which passes CC, CFLAGS (with -I for src/ and
# cmocka), LIBS (libawfs.a and the libraries), LDFLAGS, the test programs'
# environment (AWFS_PROBE...), and the source directory as $1. Each mutant is
# one sed expression; one that no longer applies (the code moved) is an
# error, so the list cannot rot quietly. MUTANTS_ONLY=ERE runs the mutants
# whose names match.
set -u
src=${1:?usage: mutate-daemon.sh SRCDIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0 n=0 skipped=0
can_mount=1
{ [ "$(id -u)" = 0 ] && [ -c /dev/fuse ] && command -v fusermount3 >/dev/null; } || can_mount=0
# passthrough.sh's opens and closes: a leak of one backing file a handle
# shows in a few thousand as well as in its default hundred thousand
export PT_OPENS=${PT_OPENS:-3000}

# apply FILE EXPR: the mutated FILE (src/FILE) in $work/FILE, or 1 if the expression changed nothing
apply() {
	mkdir -p "$work/src" && sed "$2" "$src/src/$1" >"$work/src/$1"
	! cmp -s "$work/src/$1" "$src/src/$1"
}

# wanted NAME
wanted() { [ -z "${MUTANTS_ONLY:-}" ] || printf '%s\n' "$1" | grep -Eq -- "$MUTANTS_ONLY"; }

# unit_mutant NAME FILE TEST EXPR: FILE mutated by EXPR must fail tests/unit/TEST.c
unit_mutant() {
	name=$1 file=$2 test=$3 expr=$4
	wanted "$name" || return 0
	n=$((n + 1))
	if ! apply "$file" "$expr"; then
		echo "not ok $n - $name: the mutation no longer applies (update the script)"
		fail=1
		return
	fi
	# the mutant first, so the archive's object of that module is never pulled in
	if ! $CC $CFLAGS -o "$work/t" "$work/src/$file" "$src/tests/unit/$test.c" $LIBS ${LDFLAGS:-} \
		>"$work/cc.log" 2>&1; then
		echo "not ok $n - $name: does not build"
		cat "$work/cc.log"
		fail=1
	elif "$work/t" >"$work/run.log" 2>&1; then
		echo "not ok $n - $name: $test passed with it"
		fail=1
	else
		echo "ok $n - $name: caught by $test"
	fi
}

# mount_mutant NAME FILE "TEST [CASES]" EXPR: awfs with FILE mutated by EXPR must fail
# tests/integration/TEST (CASES: its CREDS_ONLY)
mount_mutant() {
	name=$1 file=$2 test=${3%% *} cases=${3#* } expr=$4
	[ "$cases" = "$3" ] && cases=""
	wanted "$name" || return 0
	n=$((n + 1))
	if ! apply "$file" "$expr"; then
		echo "not ok $n - $name: the mutation no longer applies (update the script)"
		fail=1
		return
	fi
	if [ "$can_mount" = 0 ]; then
		echo "ok $n - $name # SKIP needs root and /dev/fuse"
		skipped=$((skipped + 1))
		return
	fi
	if ! $CC $CFLAGS -o "$work/awfs" "$work/src/$file" "$src/src/awfs.c" $LIBS ${LDFLAGS:-} \
		>"$work/cc.log" 2>&1; then
		echo "not ok $n - $name: does not build"
		cat "$work/cc.log"
		fail=1
		return
	fi
	# a bound for a mutant that hangs the test (none has); the test's own
	# EXIT trap unmounts and stops its awfs on the TERM
	AWFS="$work/awfs" CREDS_ONLY="$cases" timeout -k 30 600 bash "$src/tests/integration/$test" >"$work/run.log" 2>&1
	rc=$?
	# caught: a check of the test failed (not a crash of the test itself);
	# a test that could not run the cases here says so ("not run")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "not ok $n - $name: $test hung with it (stopped after 600 s): a mutant must fail a check, not hang"
		fail=1
	elif [ "$rc" != 0 ] && [ "$rc" != 77 ] && grep -q '^not ok' "$work/run.log"; then
		echo "ok $n - $name: caught by $test${cases:+ ($cases)}: $(grep -m1 '^not ok' "$work/run.log" | cut -c1-120)"
	elif [ "$rc" = 77 ] || { [ "$rc" = 0 ] && grep -q '^# .*not run' "$work/run.log"; }; then
		echo "ok $n - $name # SKIP $test could not run it here: $(grep -m1 -E '^SKIP|^# .*not run' "$work/run.log")"
		skipped=$((skipped + 1))
	elif [ "$rc" = 0 ]; then
		echo "not ok $n - $name: $test ${cases:+($cases) }passed with it"
		fail=1
	else
		echo "not ok $n - $name: $test failed without a failed check (exit $rc):"
		tail -20 "$work/run.log"
		fail=1
	fi
}

# the unmutated modules must pass, or every mutant "fails" for nothing
for t in test_classify test_inode; do
	if ! $CC $CFLAGS -o "$work/t" "$src/tests/unit/$t.c" $LIBS ${LDFLAGS:-} >"$work/cc.log" 2>&1 ||
		! "$work/t" >/dev/null 2>&1; then
		echo "Bail out! $t fails unmutated"
		exit 1
	fi
done
if [ "$can_mount" = 1 ] && [ -z "${MUTANTS_ONLY:-}" ]; then
	for t in creds.sh mask.sh audit.sh passthrough.sh changes.sh privilege.sh; do
		bash "$src/tests/integration/$t" >"$work/run.log" 2>&1
		rc=$?
		if [ "$rc" = 77 ]; then
			echo "# $t skips here ($(grep -m1 '^SKIP' "$work/run.log")): its mutants will say so"
		elif [ "$rc" != 0 ]; then
			echo "Bail out! $t fails with the unmutated awfs ($AWFS)"
			cat "$work/run.log"
			exit 1
		fi
	done
fi

# ---------------------------------------------------------------- the credential switch
# one host call made as the daemon (AS_CALLER dropped at that one site)
as_daemon() { printf '/AS_CALLER(req, err, %s/s/AS_CALLER(req, err, \\(.*\\));$/err = \\1;/' "$1"; }
# CREATE, OPEN and a temporary's create switch by hand (the backing file is registered in the
# same switch): the switch moves to after the call
mount_mutant "CREATE as the daemon" ops.c "creds.sh create" \
	'/^static void ll_create(/,/^}/{/^\tcaller_begin(req);$/d; s/^\tid = end_create(/\tcaller_begin(req);\n&/}'
mount_mutant "MKDIR as the daemon" ops.c "creds.sh mkdir" "$(as_daemon 'host_mkdir(')"
mount_mutant "MKNOD as the daemon" ops.c "creds.sh mknod" "$(as_daemon 'host_mknod(')"
mount_mutant "SYMLINK as the daemon" ops.c "creds.sh symlink" "$(as_daemon 'host_symlink(')"
mount_mutant "LINK as the daemon" ops.c "creds.sh link" "$(as_daemon 'host_link(fd, dfd, name)')"
mount_mutant "UNLINK as the daemon" ops.c "creds.sh unlink" "$(as_daemon 'host_unlink(dfd, name)')"
mount_mutant "RMDIR as the daemon" ops.c "creds.sh rmdir" "$(as_daemon 'host_rmdir(')"
mount_mutant "RENAME and exchange as the daemon" ops.c "creds.sh rename" "$(as_daemon 'host_rename(dfd, name')"
mount_mutant "SETATTR mode (chmod) as the daemon" ops.c "creds.sh chmod" "$(as_daemon 'host_chmod(')"
mount_mutant "SETATTR owner (chown) as the daemon" ops.c "creds.sh chown" "$(as_daemon 'host_chown(')"
mount_mutant "SETATTR size (truncate) as the daemon" ops.c "creds.sh truncate" "$(as_daemon 'host_truncate(')"
mount_mutant "SETATTR times (utimens) as the daemon" ops.c "creds.sh utimens" "$(as_daemon 'host_utimens(')"
mount_mutant "OPEN for writing as the daemon" ops.c "creds.sh open" \
	'/^static void ll_open(/,/^}/{/^\t\t\tcaller_begin(req);$/d; s/^\t\t\tif (!err)\t\/\* as the caller, in the same switch \*\//\t\t\tcaller_begin(req);\n&/}'
mount_mutant "SETXATTR as the daemon" ops.c "creds.sh setxattr" "$(as_daemon 'host_setxattr(')"
mount_mutant "REMOVEXATTR as the daemon" ops.c "creds.sh removexattr" "$(as_daemon 'host_removexattr(')"
mount_mutant "a read-only link's target looked at as the daemon" ops.c "creds.sh beneath" "$(as_daemon 'host_beneath(')"
mount_mutant "a temporary made (O_TMPFILE) as the daemon" ops.c "creds.sh tmpfile" \
	'/^static void temp_create(/,/^}/{/^\t\tcaller_begin(req);$/{N;s/^\t\tcaller_begin(req);\n\(\t\terr = host_tmpfile([^\n]*\)$/\1\n\t\tcaller_begin(req);/}}'
mount_mutant "a temporary linked in before its rename as the daemon" ops.c "creds.sh templink" "$(as_daemon 'temp_hidden(dfd, fd, 0')"
mount_mutant "a temporary renamed onto its rule as the daemon" ops.c "creds.sh temprename" "$(as_daemon 'host_rename(dfd, linked')"
mount_mutant "WRITE as the daemon" ops.c "creds.sh write" \
	'/AS_WRITER(req, (int)fi->fh, n,$/{N;s/AS_WRITER(req, (int)fi->fh, n,\n[[:space:]]*\(.*\));$/n = \1;/}'
mount_mutant "FALLOCATE as the daemon" ops.c "creds.sh fallocate" \
	's/AS_WRITER(req, (int)fi->fh, err, \(host_fallocate(.*)\));/err = \1;/'
mount_mutant "COPY_FILE_RANGE as the daemon" ops.c "creds.sh copyrange" \
	'/AS_WRITER(req, (int)fi_out->fh, err,$/{N;N;s/AS_WRITER(req, (int)fi_out->fh, err,\n[[:space:]]*\(host_copy_file_range([^;]*)\));/err = \1;/}'
mount_mutant "the kernel's writeback (uid 0) written as the daemon, not the opener" ops.c "creds.sh mapped" \
	's/\*uid = __atomic_load_n(&openers\[fd\].uid, __ATOMIC_RELAXED);/*uid = 0;/'
mount_mutant "an open's writer not remembered" ops.c "creds.sh mapped" \
	'/if (fh != fd)$/{N;/opener_set(fh, req);/d}'
mount_mutant "a writer's fsuid kept for the next request (no reset in loop.c)" loop.c "creds.sh writer" \
	'/^static void serve(/,/^}/s/host_writer_reset();/(void)0;/'
mount_mutant "no switch at all (host_as_caller returns at once)" host.c "creds.sh create unlink chmod" \
	's/if (!is_root || (uid == 0 \&\& gid == 0))/if (1)/'
mount_mutant "the caller's supplementary groups not set" host.c "creds.sh groups" \
	's/syscall(SYS_setgroups, uid ? ngroups : 0, groups)/syscall(SYS_setgroups, 0, groups)/'
mount_mutant "the effective capabilities not emptied (SECBIT_NO_SETUID_FIXUP)" host.c "creds.sh unlink chmod chown" \
	's/if (syscall(SYS_capset, \&hdr, data) != 0)/if (0)/'

# ---------------------------------------------------------------- the kernel's passthrough
# (host_backing_open()'s own refusal of uid 0 is not broken alone: ops.c
# never asks for root, so that break is equivalent; ops.c's is below. Nor
# are its fsuid and fsgid: it registers only read-only handles of the
# inode's fd, and no read path consults a backing file's credentials; a
# handle that writes registers as the caller, broken below. Nor is
# host_backing_open_as_caller()'s end of the switch after the ioctl: it is
# the last call of that switch, and ops.c ends the switch right after it
# anyway (host_as_daemon(), a no-op when ended; privilege.sh checks the
# sets after). Nor
# is the mark a passthrough handle's fh carries (FH_PASSTHROUGH): a handle
# without passthrough is never open beside one with it, which the kernel
# refuses, so counting every release is equivalent while that holds)
mount_mutant "a backing file registered with root's fsuid" host.c "creds.sh write rootheld" \
	'/^int host_backing_open_as_caller(/,/^}/s/^\terr = backing_ioctl(devfd, fd, data, id);/\tsetfsuid(0);\n&/'
mount_mutant "a writer's backing file registered outside the caller's switch (without its groups)" ops.c passthrough.sh \
	's/^\t\t\t\tid = open_backing(req, in, fh, fi->flags, true);/\t\t\t\t(void)0;/; s/^\tif (fh >= 0 \&\& fh == fd)\t/\tif (fh >= 0)\t/; s/^\tint id = err ? 0 : create_backing(req, dev, fh, flags);/\tint id = 0; (void)create_backing;/; s/^\tid = adopt_backing(in, id);/\t(void)adopt_backing; id = open_backing(req, in, fh, fi->flags, false);/'
mount_mutant "a backing file registered with the daemon's capabilities" host.c passthrough.sh \
	's/data\[0\].effective = (uint32_t)1 << CAP_SYS_ADMIN;/data[0].effective = data[0].permitted | (uint32_t)1 << CAP_SYS_ADMIN;/'
mount_mutant "CAP_SYS_ADMIN left effective after a backing file's release" host.c privilege.sh \
	's/^\tdata\[0\].effective = had;/\tdata[0].effective = had | (uint32_t)1 << CAP_SYS_ADMIN;/'
mount_mutant "root's handle starts a backing file" ops.c passthrough.sh \
	's/return pt_on() \&\& fuse_req_ctx(req)->uid != 0 \&\& /return pt_on() \&\& /'
mount_mutant "an appending handle starts a backing file" ops.c passthrough.sh \
	's/return pt_on() \&\& fuse_req_ctx(req)->uid != 0 \&\& !((flags \& O_APPEND) \&\& handle_writes(flags));/return pt_on() \&\& fuse_req_ctx(req)->uid != 0;/'
mount_mutant "a file open through awfs given a backing file too" ops.c passthrough.sh \
	's/if (in->opens > 0 || !may_start_backing(req, flags))/if (!may_start_backing(req, flags))/'
mount_mutant "a second handle of a file not given its backing file" ops.c passthrough.sh \
	'/if (in->pt_users > 0)\t\/\* whatever/{N;s/if (in->pt_users > 0)[^\n]*\n[[:space:]]*return in->pt_id;/(void)0;/}'
mount_mutant "a file system stacked too deep turns passthrough off for the mount" passthrough.c passthrough.sh \
	's/if (err == EPERM || err == ENOTTY || err == ENOSYS) {/if (err == EPERM || err == ENOTTY || err == ENOSYS || err == ELOOP) {/'
mount_mutant "a backing file never released" ops.c passthrough.sh \
	's/^\tpt_unregister(in->pt_id);/\t(void)0;/'
mount_mutant "a passthrough open keeps flags the kernel refuses with it (KEEP_CACHE)" loop.c passthrough.sh \
	's/o.open_flags = (o.open_flags | OPEN_PASSTHROUGH) \& OPEN_PASSTHROUGH_MASK;/o.open_flags |= OPEN_PASSTHROUGH;/'
mount_mutant "passthrough with the change record on" passthrough.c changes.sh \
	's/\telse if (pt.record)/\telse if (0)/'

# ---------------------------------------------------------------- stop signals (loop.c)
mount_mutant "a stop signal only marks the session (the listener's poll misses it)" loop.c lifecycle.sh \
	's/res = poll(pfd, 2, -1);/res = poll(pfd, 1, -1);/'

# ---------------------------------------------------------------- the keepers (loop.c)
mount_mutant "keepers without keepers=on" loop.c mount.sh \
	's/keep.armed = wanted \&\& spin_us > 0/keep.armed = spin_us > 0/'
mount_mutant "a keeper never sleeps on its futex" loop.c mount.sh \
	's/^\t\tif (w == 0 || w == mine)\t/\t\tif (0)\t/'
mount_mutant "a keeper yields beside the listener on its CPU" loop.c mount.sh \
	's/^\t\tif (w == 0 || w == mine)\t/\t\tif (w == 0)\t/'
mount_mutant "keepers under a CPU quota" loop.c mount.sh \
	's/if (util_cpu_quota("\/", why, sizeof(why))) {/if (0) {/'
mount_mutant "a keeper not on its CPU" loop.c mount.sh \
	's/if (pthread_attr_setaffinity_np(\&attr, sizeof(one), \&one) == 0 \&\&/if (1 \&\&/'

# ---------------------------------------------------------------- FUSE over io_uring (uring.sh sets enable_uring itself)
mount_mutant "a ring queue lets every entry be held (none kept that comes back at once)" uring.c uring.sh \
	's/^#define KEEP 4$/#define KEEP 0/'
mount_mutant "a queue's thread not on its CPU" uring.c uring.sh \
	's/if (sched_setaffinity(0, sizeof(set), \&set) < 0) {/if (1) {/'
mount_mutant "one caller may hold every ring entry (no cap a caller)" loop.c uring.sh \
	's/(ent \&\& ln->queued + ln->running >= LANE_RING_HELD) ||/0 ||/'
mount_mutant "a worker started by a queue's thread stays on its CPU" loop.c uring.sh \
	's/^\tunpin();$/\t(void)0;/'
mount_mutant "COPY_FILE_RANGE_64 left to libfuse 3.14 (ENOSYS, and the kernel's race after it)" loop.c uring.sh \
	's/in->opcode = FUSE_COPY_FILE_RANGE;/(void)in;/'

# ---------------------------------------------------------------- classify.c's match order
unit_mutant "a shallower rule's class kept over a deeper one's when stricter" classify.c test_classify \
	's/^\tif (best) {$/\tif (best \&\& (parent->origin != AWFS_ORIGIN_RULE || best->cls >= parent->cls)) {/'
unit_mutant "a glob beats a literal component" classify.c test_classify \
	's/return a->literal\[i\];/return !a->literal[i];/'
unit_mutant "the laxer class wins at equal shape" classify.c test_classify \
	's/return a->cls > b->cls;/return a->cls < b->cls;/'
unit_mutant "the first matching rule at equal depth wins (no comparison)" classify.c test_classify \
	's/if (!\*best || beats(r, \*best))/if (!*best)/'

# ---------------------------------------------------------------- masks show nothing of the host
mount_mutant "a mask is served from the host (names, bytes, sizes, times, xattrs)" ops.c mask.sh \
	'/^\tif (classify_class(st) == AWFS_CLASS_MASK) {$/s/classify_class(st) == AWFS_CLASS_MASK/0/'
mount_mutant "a masked entry's attributes are the host's" ops.c mask.sh \
	'/in = inode_take_mask(dir, name, type, st);/{n;/mask_attr(in, &sb);/d}'
mount_mutant "a masked directory listed from the host" ops.c mask.sh \
	's/if (dir->kind == AWFS_INODE_INFO || is_masked(dir))$/if (dir->kind == AWFS_INODE_INFO)/'
mount_mutant "a masked entry listed with its host inode number" ops.c mask.sh \
	'/out->ino = inode_mask_ino(dir, de->d_name);/d'

# ---------------------------------------------------------------- every refusal counted, logged, audited
mount_mutant "a refusal not counted" verdict.c audit.sh \
	'/atomic_fetch_add(d.expected ? &expected_refusals : &denials, 1);/d'
mount_mutant "a refusal not logged" verdict.c audit.sh \
	'/log_msg(AWFS_LOG_WARN, "%s%s%s", line, writable_word, writable_hint);/d'
mount_mutant "a refusal not audited" verdict.c audit.sh \
	's/wrote += audit_deny(&d);/wrote += 0;/'
mount_mutant "a refusal not in .awfs/denials" verdict.c audit.sh \
	'/info_add_denial(line, ctx->uid, first);/d'

# ---------------------------------------------------------------- the fd bound
unit_mutant "the fd cache never closes an fd" inode.c test_inode \
	's/while (ncached > room \&\& cache.tail) {/while (0 \&\& ncached > room \&\& cache.tail) {/'
unit_mutant "the fd cache's room ignores the open files" inode.c test_inode \
	's/uint64_t used = others() + FD_RESERVE, room;/uint64_t used = FD_RESERVE, room;/'
unit_mutant "an open allowed past the fd limit" inode.c test_inode \
	's/ok = fd_limit == UINT64_MAX || others() + 2 + FD_RESERVE + CACHE_FLOOR <= fd_limit;/ok = true;/'

echo "1..$n"
[ "$skipped" = 0 ] || echo "# $skipped skipped (not root, or no /dev/fuse)"
exit $fail
