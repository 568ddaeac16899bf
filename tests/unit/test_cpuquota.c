/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cpuquota.c - util_cpu_quota() over made-up /proc and /sys trees: cgroup
 * v2 (its own root and under unified/), v1's cpu hierarchies, a quota on the
 * process's cgroup, on one above it, on a namespace's root, none, and
 * nothing to read. The keepers (loop.c) start only where it finds none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util.h"

static char root[] = "/tmp/awfs-cpuquota.XXXXXX";

/* Write @text to @rel under a fresh root's subdirectory @tree, making the directories on the way. */
static void put(const char *tree, const char *rel, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", root, tree, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		(void)mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int quota(const char *tree, char *why, size_t len)
{
	char r[4096];

	snprintf(r, sizeof(r), "%s/%s", root, tree);
	why[0] = '\0';
	return util_cpu_quota(r, why, len);
}

static void test_v2(void **state)
{
	char why[512];

	(void)state;
	put("v2none", "proc/self/cgroup", "0::/system.slice/runner.service\n");
	put("v2none", "sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
	put("v2none", "sys/fs/cgroup/system.slice/runner.service/cpu.max", "max 100000\n");
	put("v2none", "sys/fs/cgroup/system.slice/cpu.max", "max 100000\n");
	assert_int_equal(quota("v2none", why, sizeof(why)), 0);

	put("v2own", "proc/self/cgroup", "0::/docker/abc\n");
	put("v2own", "sys/fs/cgroup/cgroup.controllers", "cpu\n");
	put("v2own", "sys/fs/cgroup/docker/abc/cpu.max", "200000 100000\n");
	assert_int_equal(quota("v2own", why, sizeof(why)), 1);
	assert_non_null(strstr(why, "/sys/fs/cgroup/docker/abc/cpu.max: 200000 100000"));

	/* on a cgroup above the process's */
	put("v2up", "proc/self/cgroup", "0::/a/b/c\n");
	put("v2up", "sys/fs/cgroup/cgroup.controllers", "cpu\n");
	put("v2up", "sys/fs/cgroup/a/b/c/cpu.max", "max 100000\n");
	put("v2up", "sys/fs/cgroup/a/cpu.max", "50000 100000\n");
	assert_int_equal(quota("v2up", why, sizeof(why)), 1);
	assert_non_null(strstr(why, "/sys/fs/cgroup/a/cpu.max"));

	/* a container's namespace: its cgroup is the root of what it sees */
	put("v2ns", "proc/self/cgroup", "0::/\n");
	put("v2ns", "sys/fs/cgroup/cgroup.controllers", "cpu\n");
	put("v2ns", "sys/fs/cgroup/cpu.max", "150000 100000\n");
	assert_int_equal(quota("v2ns", why, sizeof(why)), 1);

	/* hybrid: v2 under unified/, without the cpu controller there */
	put("hybrid", "proc/self/cgroup", "1:cpu:/\n0::/\n");
	put("hybrid", "sys/fs/cgroup/unified/cgroup.controllers", "\n");
	put("hybrid", "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
	assert_int_equal(quota("hybrid", why, sizeof(why)), 0);
	put("hybrid2", "proc/self/cgroup", "0::/x\n");
	put("hybrid2", "sys/fs/cgroup/unified/x/cpu.max", "100000 100000\n");
	assert_int_equal(quota("hybrid2", why, sizeof(why)), 1);
	assert_non_null(strstr(why, "/sys/fs/cgroup/unified/x/cpu.max"));
}

static void test_v1(void **state)
{
	char why[512];

	(void)state;
	put("v1none", "proc/self/cgroup", "4:memory:/m\n3:cpu,cpuacct:/docker/x\n0::/\n");
	put("v1none", "sys/fs/cgroup/cpu,cpuacct/docker/x/cpu.cfs_quota_us", "-1\n");
	put("v1none", "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
	assert_int_equal(quota("v1none", why, sizeof(why)), 0);

	put("v1own", "proc/self/cgroup", "3:cpuacct,cpu:/docker/x\n");
	put("v1own", "sys/fs/cgroup/cpu/docker/x/cpu.cfs_quota_us", "100000\n");
	assert_int_equal(quota("v1own", why, sizeof(why)), 1);
	assert_non_null(strstr(why, "/sys/fs/cgroup/cpu/docker/x/cpu.cfs_quota_us: 100000"));

	/* a container without a cgroup namespace: its path is not in what it mounts */
	put("v1ct", "proc/self/cgroup", "2:cpu:/docker/y\n");
	put("v1ct", "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "150000\n");
	assert_int_equal(quota("v1ct", why, sizeof(why)), 1);

	/* ... nor, below the container's own, the cgroup it made for awfs */
	put("v1sub", "proc/self/cgroup", "2:cpu:/docker/y/awfs\n");
	put("v1sub", "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
	put("v1sub", "sys/fs/cgroup/cpu/awfs/cpu.cfs_quota_us", "50000\n");
	assert_int_equal(quota("v1sub", why, sizeof(why)), 1);
	assert_non_null(strstr(why, "/sys/fs/cgroup/cpu/awfs/cpu.cfs_quota_us: 50000"));

	/* "cpuset" is not "cpu" */
	put("v1set", "proc/self/cgroup", "3:cpuset:/\n");
	put("v1set", "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "100000\n");
	assert_int_equal(quota("v1set", why, sizeof(why)), 0);
}

static void test_nothing(void **state)
{
	char why[512];

	(void)state;
	assert_int_equal(quota("absent", why, sizeof(why)), 0);
	put("empty", "proc/self/cgroup", "");
	assert_int_equal(quota("empty", why, sizeof(why)), 0);
	put("garbled", "proc/self/cgroup", "no colons\n0:\n0::relative\n");
	assert_int_equal(quota("garbled", why, sizeof(why)), 0);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_nothing),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
