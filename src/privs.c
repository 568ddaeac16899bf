/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * privs.c - the daemon's capabilities, no-new-privileges and syscall
 * filter after mounting (see privs.h).
 */
#include "privs.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define AWFS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AWFS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

static bool dropped;
static uint64_t kept;

static uint64_t permitted(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &hdr, d) != 0)
		return 0;
	return (uint64_t)d[0].permitted | (uint64_t)d[1].permitted << 32;
}

static int capset_sets(uint64_t permitted, uint64_t effective)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {
		{ (uint32_t)effective, (uint32_t)permitted, 0 },
		{ (uint32_t)(effective >> 32), (uint32_t)(permitted >> 32), 0 },
	};

	return (int)syscall(SYS_capset, &hdr, d);
}

/*
 * System calls a file server has no use for once mounted: making or moving
 * mounts, entering or making namespaces (and clone(2) with a namespace
 * flag; clone3, whose flags a filter cannot read, answers ENOSYS and glibc
 * falls back to clone), loading code into the kernel, keys, clocks, swap,
 * reboot. Each is refused with EPERM. (umount2 stays:
 * the clean unmount at the end; ptrace stays: LeakSanitizer in the test
 * builds stops the process with it, and without CAP_SYS_PTRACE it reaches
 * only processes with no more capabilities than awfs.)
 */
static const long refused[] = {
	SYS_mount, SYS_pivot_root, SYS_unshare, SYS_setns,
#ifdef SYS_open_tree
	SYS_open_tree, SYS_move_mount, SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_fspick,
#endif
#ifdef SYS_mount_setattr
	SYS_mount_setattr,
#endif
	SYS_kexec_load,
#ifdef SYS_kexec_file_load
	SYS_kexec_file_load,
#endif
	SYS_init_module, SYS_finit_module, SYS_delete_module,
	SYS_bpf, SYS_perf_event_open, SYS_userfaultfd,
	SYS_keyctl, SYS_add_key, SYS_request_key,
	SYS_swapon, SYS_swapoff, SYS_reboot, SYS_acct, SYS_quotactl,
	SYS_sethostname, SYS_setdomainname, SYS_settimeofday, SYS_clock_settime,
	SYS_clock_adjtime, SYS_adjtimex, SYS_syslog, SYS_process_vm_writev,
#ifdef SYS_iopl
	SYS_iopl, SYS_ioperm,
#endif
};

/* A filter under construction: jumps name their targets, resolved at the end. */
enum { L_EPERM = -1, L_ENOSYS = -2, L_CLONE = -3 };

struct prog {
	struct sock_filter f[128];
	int target[128];	/* a label for a jump's true branch, or 0 */
	unsigned n;
};

static void emit(struct prog *p, struct sock_filter ins, int target)
{
	p->target[p->n] = target;
	p->f[p->n++] = ins;
}

static void resolve(struct prog *p, int label, unsigned at)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->target[i] == label)
			p->f[i].jt = (unsigned char)(at - i - 1);
}

static int install_filter(char *why, size_t len)
{
#ifdef AWFS_AUDIT_ARCH
	/* the namespaces clone(2) could make; clone3's flags are out of reach: ENOSYS, glibc falls back */
	const uint32_t ns = 0x00020000 /* NEWNS */ | 0x02000000 /* NEWCGROUP */ | 0x04000000 /* NEWUTS */ |
			    0x08000000 /* NEWIPC */ | 0x10000000 /* NEWUSER */ | 0x20000000 /* NEWPID */ |
			    0x40000000 /* NEWNET */;
	struct prog p = { .n = 0 };
	struct sock_fprog prog;
	unsigned at;

	/* another ABI (x32, i386) would number the calls differently: refused */
	emit(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)), 0);
	emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AWFS_AUDIT_ARCH, 1, 0), 0);
	emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM), 0);
	emit(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)), 0);
#if defined(__x86_64__)
	emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 0), L_EPERM);
#endif
#ifdef SYS_clone3
	emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 0), L_ENOSYS);
#endif
	emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 0), L_CLONE);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)refused[i], 0, 0), L_EPERM);
	emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), 0);
	/* clone: its flags (the low half of the first argument) */
	resolve(&p, L_CLONE, p.n);
	emit(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])), 0);
	emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, ns, 0, 0), L_EPERM);
	emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), 0);
	resolve(&p, L_ENOSYS, p.n);
	emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS), 0);
	at = p.n;
	resolve(&p, L_EPERM, at);
	emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM), 0);
	prog.len = (unsigned short)p.n;
	prog.filter = p.f;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
		if (errno == EINVAL) {
			/* a kernel built without seccomp filters: the capabilities still hold */
			fprintf(stderr, "awfs: warning: this kernel has no seccomp filters; serving without a syscall filter\n");
			return 0;
		}
		snprintf(why, len, "cannot install the syscall filter: %s", strerror(errno));
		return -1;
	}
#else
	(void)why;
	(void)len;
#endif
	return 0;
}

int privs_drop(char *why, size_t len)
{
	/*
	 * Not root: no capability to drop, and no-new-privileges would stop
	 * libfuse's unmount through the set-user-ID fusermount3 at the end.
	 */
	if (geteuid() != 0)
		return 0;
	{
		uint64_t keep;
		int last = 0;

		/* the bounding set: what nothing this process runs could ever regain */
		while (prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0) >= 0)
			last++;
		for (int c = 0; c <= last; c++) {
			if ((AWFS_KEEP_CAPS >> c) & 1 || prctl(PR_CAPBSET_READ, c, 0, 0, 0) != 1)
				continue;
			if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EPERM) {
				snprintf(why, len, "cannot drop capability %d from the bounding set: %s", c,
					 strerror(errno));
				return -1;
			}
			/* EPERM: no CAP_SETPCAP; the capsets and no-new-privileges below still hold */
		}
		(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
		/* of what it has: a container may not have given it all of them */
		keep = permitted() & AWFS_KEEP_CAPS;
		if (capset_sets(keep, keep & AWFS_SERVE_CAPS) < 0) {
			snprintf(why, len, "cannot drop capabilities: %s", strerror(errno));
			return -1;
		}
		kept = keep;
		dropped = true;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(why, len, "cannot set no-new-privileges: %s", strerror(errno));
		return -1;
	}
	return install_filter(why, len);
}

void privs_for_unmount(void)
{
	if (dropped)
		(void)capset_sets(kept, kept);
}
