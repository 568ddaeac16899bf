/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_inode.c - the inode table's list of host files, newest first: what
 * inode_oldest() names and in which order, that a second lookup makes a file
 * the newest, that directories are not on it, that a rename (inode_moved)
 * changes the name named for the file in its class only, the pressure hook past the
 * high mark, and that freeing takes a file off the list; that a file keeps
 * the directory it was found in alive, and the directory goes with its last
 * file; finding a host inode (a directory by (dev, ino): one inode
 * whatever the state it is found in, taking the last; a file by (dev, ino,
 * state)), collecting the inodes a
 * predicate accepts, and the hook a directory is freed through (its fd still
 * open); the fd cache: at most its cap of fds open however many inodes,
 * each opened again from its handle as the same object, an open file's fd
 * never closed, a deleted file ENOENT, another thread's own fd, and an
 * inode number taken by another object while the fd was closed found as a
 * new inode (the old one no longer found, its node id still answering).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
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

#include "inode.h"

#define NFILES 5

static char dir[64];
static struct awfs_inode *root;
static int pokes;
static bool handles;
static char why[160];

static void poke(void)
{
	pokes++;
}

/* Look up NAME in @in (its path under DIR: @at) as the daemon does: an O_PATH fd and its stat. */
static struct awfs_inode *take_in(struct awfs_inode *in, const char *at, const char *name)
{
	char path[192];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s%s/%s", dir, at, name);
	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	return inode_take_host(fd, &st, NULL, in, name);
}

static struct awfs_inode *take(const char *name)
{
	return take_in(root, "", name);
}

/* The next n oldest names, space-separated (a second name after a +). */
static const char *oldest(size_t n)
{
	static char out[256];
	struct inode_ref v[NFILES + 1];
	size_t got = inode_oldest(v, n);

	out[0] = '\0';
	for (size_t i = 0; i < got; i++) {
		assert_int_equal(v[i].parent_id, 1);	/* the root's nodeid */
		strcat(out, i ? " " : "");
		strcat(out, v[i].name);
		if (v[i].name2) {
			assert_int_equal(v[i].parent_id2, 1);
			strcat(out, "+");
			strcat(out, v[i].name2);
		}
		free(v[i].name);
		free(v[i].name2);
	}
	return out;
}

static int setup(void **state)
{
	char path[128];
	struct stat st;
	int fd;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/awfs-test-inode.XXXXXX");
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/sub", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/sub/g", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	handles = inode_init(fd, &st, NULL, why, sizeof(why));
	root = inode_root();
	return 0;
}

static void test_lru(void **state)
{
	struct awfs_inode *in[NFILES], *sub;
	char name[8], path[160], link_path[160];

	(void)state;
	inode_set_pressure(UINT64_MAX, 3, poke);
	for (int i = 0; i < NFILES; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		in[i] = take(name);
	}
	assert_int_equal(inode_host_files(), NFILES);
	assert_int_equal(pokes, 2);	/* the 4th and the 5th file */
	sub = take("sub");
	/* a directory counts towards the mark (it holds an fd) */
	assert_int_equal(inode_host_files(), NFILES);
	assert_int_equal(inode_host_dirs(), 1);
	assert_int_equal(pokes, 3);

	assert_string_equal(oldest(2), "f0 f1");
	/* named ones go to the newest end: the next call names others */
	assert_string_equal(oldest(2), "f2 f3");
	/* a second lookup makes a file the newest */
	assert_ptr_equal(take("f4"), in[4]);
	assert_string_equal(oldest(NFILES), "f0 f1 f2 f3 f4");
	/*
	 * never more than there are, and the directory (counted towards the
	 * mark above) is never named: dropping it would drop its subtree
	 */
	assert_string_equal(oldest(NFILES + 1), "f0 f1 f2 f3 f4");

	/* a rename through awfs: the kernel has the file under its new name now */
	inode_moved(in[1]->dev, in[1]->ino, NULL, root, "f1", root, "renamed");
	assert_string_equal(oldest(2), "f0 renamed");
	/* a lookup under the same name changes nothing but the order */
	assert_ptr_equal(take("f2"), in[2]);
	inode_put(in[2], 1);
	/* an inode of the same file in another class keeps its own name */
	inode_moved(in[3]->dev, in[3]->ino, (const struct awfs_state *)&pokes, root, "f3", root, "other");
	assert_string_equal(oldest(NFILES), "f3 f4 f0 renamed f2");
	inode_moved(in[1]->dev, in[1]->ino, NULL, root, "renamed", root, "f1");
	/* a hard link found: the kernel holds both names, both are named ... */
	snprintf(path, sizeof(path), "%s/f3", dir);
	snprintf(link_path, sizeof(link_path), "%s/hl", dir);
	assert_int_equal(link(path, link_path), 0);
	assert_ptr_equal(take("hl"), in[3]);
	inode_put(in[3], 1);
	assert_string_equal(oldest(NFILES), "f4 f0 f1 f2 hl+f3");
	/* ... and a rename of either name moves that one */
	inode_moved(in[3]->dev, in[3]->ino, NULL, root, "f3", root, "f3b");
	inode_moved(in[3]->dev, in[3]->ino, NULL, root, "hl", root, "hl2");
	assert_string_equal(oldest(NFILES), "f4 f0 f1 f2 hl2+f3b");
	assert_int_equal(unlink(link_path), 0);

	/* freed: off the list */
	inode_put(in[4], 2);
	inode_put(in[0], 1);
	assert_int_equal(inode_host_files(), NFILES - 2);
	assert_string_equal(oldest(NFILES), "f1 f2 hl2+f3b");
	inode_put(sub, 1);
	assert_int_equal(inode_host_dirs(), 0);
	for (int i = 1; i < 4; i++)
		inode_put(in[i], 1);
	assert_int_equal(inode_host_files(), 0);
	assert_string_equal(oldest(NFILES), "");
	inode_set_pressure(UINT64_MAX, UINT64_MAX, NULL);
}

static void test_parent_ref(void **state)
{
	struct awfs_inode *sub, *g;
	uint64_t base;

	(void)state;
	base = inode_count();
	sub = take("sub");
	g = take_in(sub, "/sub", "g");
	assert_ptr_equal(g->parent, sub);
	assert_int_equal(sub->refs, 2);	/* the lookup and its file */
	/* the kernel forgets the directory first: it stays for its file */
	inode_put(sub, 1);
	assert_int_equal(inode_count(), base + 2);
	assert_true(fcntl(sub->cfd, F_GETFD) >= 0);
	/* the file goes, and the directory with it */
	inode_put(g, 1);
	assert_int_equal(inode_count(), base);
}

static int freed_dirs, freed_fd_open;

static void on_dir_free(struct awfs_inode *d)
{
	freed_dirs++;
	freed_fd_open += fcntl(d->cfd, F_GETFD) >= 0;
}

static bool is_file(const struct awfs_inode *in)
{
	return in->type == S_IFREG;
}

static void test_find_collect(void **state)
{
	struct awfs_inode *sub, *g, *f;
	struct inode_ref *r;
	struct stat st;
	size_t n;

	(void)state;
	inode_set_dir_free(on_dir_free);
	sub = take("sub");
	g = take_in(sub, "/sub", "g");
	f = take("f1");
	assert_int_equal(fstat(g->cfd, &st), 0);
	assert_int_equal(inode_find_host(st.st_dev, st.st_ino, NULL), inode_nodeid(g));
	/* a file in another state is another inode: none */
	assert_int_equal(inode_find_host(st.st_dev, st.st_ino, (const struct awfs_state *)&st), 0);
	/* one directory, one inode: found again in another state, it is the
	 * same inode and takes that state */
	{
		const struct awfs_state *other = (const struct awfs_state *)&st;
		struct stat dst;
		struct awfs_inode *sub2;
		int fd2;

		assert_int_equal(fstat(sub->cfd, &dst), 0);
		fd2 = open(".", O_PATH);	/* closed: the inode exists */
		assert_true(fd2 >= 0);
		sub2 = inode_take_host(fd2, &dst, other, root, "sub-again");
		assert_ptr_equal(sub2, sub);
		assert_ptr_equal(sub->state, other);
		assert_int_equal(inode_find_host(dst.st_dev, dst.st_ino, NULL), inode_nodeid(sub));
		inode_restate(dst.st_dev, dst.st_ino, NULL);
		assert_null(sub->state);
		inode_put(sub2, 1);
	}
	assert_int_equal(inode_find_host(root->dev, root->ino, NULL), 1);

	n = inode_collect(is_file, &r);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		if (r[i].id == inode_nodeid(g)) {
			assert_int_equal(r[i].parent_id, inode_nodeid(sub));
			assert_string_equal(r[i].name, "g");
		} else {
			assert_int_equal(r[i].id, inode_nodeid(f));
			assert_int_equal(r[i].parent_id, 1);
			assert_string_equal(r[i].name, "f1");
		}
		free(r[i].name);
	}
	free(r);

	/* freeing: the hook sees the directory, its fd still open; files not */
	inode_put(f, 1);
	inode_put(sub, 1);
	assert_int_equal(freed_dirs, 0);
	inode_put(g, 1);
	assert_int_equal(freed_dirs, 1);
	assert_int_equal(freed_fd_open, 1);
	assert_int_equal(inode_find_host(st.st_dev, st.st_ino, NULL), 0);
	inode_set_dir_free(NULL);
}

/* fds this process has open */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3;	/* ., .. and the listing's own */
}

static bool same_object(int fd, const struct awfs_inode *in)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_dev == in->dev && st.st_ino == in->ino;
}

static void *other_thread(void *arg)
{
	struct awfs_inode *in = arg;
	int fd = -1;
	intptr_t ok = inode_open(in, O_PATH, &fd) == 0 && same_object(fd, in);

	close(fd);
	return (void *)ok;
}

#define NMANY 300
#define CAP 64

static void test_fd_cache(void **state)
{
	struct awfs_inode *in[NMANY];
	char name[16], path[160];
	int base, fd, pinned, fd5;
	void *ok;
	pthread_t t;

	(void)state;
	if (!handles) {
		printf("no file handles here (%s): the cache is not used\n", why);
		skip();
	}
	for (int i = 0; i < NMANY; i++) {
		snprintf(path, sizeof(path), "%s/m%d", dir, i);
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	inode_set_fd_cache(CAP, UINT64_MAX);
	base = open_fds();
	for (int i = 0; i < NMANY; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		in[i] = take(name);
		assert_true(inode_fds() <= CAP);
	}
	assert_int_equal(inode_fds(), CAP);
	assert_int_equal(inode_host_files(), NMANY);
	assert_true(open_fds() <= base + CAP);
	/* each is opened again as the same object, the cache still bounded */
	for (int i = 0; i < NMANY; i++) {
		assert_int_equal(inode_fd(in[i], &fd), 0);
		assert_true(same_object(fd, in[i]));
	}
	assert_int_equal(inode_fds(), CAP);
	assert_true(open_fds() <= base + CAP);
	/* an open file's fd stays open, the same number, while the others churn */
	assert_int_equal(inode_fd(in[0], &pinned), 0);
	inode_opened(in[0], false);
	for (int r = 0; r < 3; r++)
		for (int i = 1; i < NMANY; i++)
			assert_int_equal(inode_fd(in[i], &fd), 0);
	assert_int_equal(in[0]->cfd, pinned);
	assert_true(same_object(pinned, in[0]));
	assert_int_equal(inode_fds(), CAP);
	assert_int_equal(inode_open_fds(), 1);
	inode_released(in[0], false);
	assert_int_equal(inode_open_fds(), 0);
	assert_int_equal(inode_fds(), CAP);
	/* with a limit, the cache gives way to open files (48 fds reserved, a
	 * floor of 8), and an open that would eat into that is refused */
	{
		const uint64_t limit = 48 + CAP + 10;
		int n = 0;

		inode_set_fd_cache(CAP, limit);
		for (int i = 0; i < 20; i++, n++) {	/* 40 fds: its own and its inode's */
			assert_int_equal(inode_fd(in[100 + i], &fd), 0);
			inode_opened(in[100 + i], true);
		}
		assert_int_equal(inode_open_fds(), 40);
		assert_int_equal(inode_fds(), limit - 48 - 40 - 1);	/* and the mount's fd */
		for (int i = 0; i < NMANY; i++)
			assert_int_equal(inode_fd(in[i], &fd), 0);
		assert_int_equal(inode_fds(), limit - 48 - 40 - 1);	/* and the mount's fd */
		while (inode_may_open()) {
			assert_int_equal(inode_fd(in[100 + n], &fd), 0);
			inode_opened(in[100 + n++], true);
		}
		assert_true(inode_open_fds() + 1 + 2 + 48 + 8 > limit);
		assert_true(inode_open_fds() + 1 <= limit - 48 - 8);
		/* what is left of the budget, at least the floor */
		assert_int_equal(inode_fds(), limit - 48 - (inode_open_fds() + 1));
		assert_true(inode_fds() >= 8);
		while (n > 0)
			inode_released(in[100 + --n], true);
		assert_int_equal(inode_open_fds(), 0);
		inode_set_fd_cache(CAP, UINT64_MAX);
	}
	/* a directory whose case folding is known (set, as ops.c does) is as
	 * closable as any: the accounting does not depend on other fields */
	{
		struct awfs_inode *sub = take("sub");

		sub->folds = AWFS_FOLDS_NOT;
		for (int i = 0; i < NMANY; i++)
			assert_int_equal(inode_fd(in[i], &fd), 0);
		assert_true(sub->cfd < 0);
		assert_int_equal(inode_fd(sub, &fd), 0);
		assert_true(same_object(fd, sub));
		assert_int_equal(inode_open_fds(), 0);
		assert_int_equal(inode_fds(), CAP);
		inode_put(sub, 1);
		assert_int_equal(inode_open_fds(), 0);
		assert_int_equal(inode_fds(), CAP - 1);
	}
	/* another thread gets an fd of its own */
	assert_int_equal(pthread_create(&t, NULL, other_thread, in[7]), 0);
	assert_int_equal(pthread_join(t, &ok), 0);
	assert_true(ok != NULL);
	/* a file deleted on the host while its fd was closed: ENOENT, nothing else */
	assert_int_equal(inode_fd(in[5], &fd5), 0);
	for (int i = 10; i < 10 + CAP; i++)
		assert_int_equal(inode_fd(in[i], &fd), 0);
	assert_true(in[5]->cfd < 0);
	snprintf(path, sizeof(path), "%s/m5", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(inode_fd(in[5], &fd), ENOENT);
	assert_int_equal(inode_open(in[5], O_PATH, &fd), ENOENT);
	/* the number of a file whose fd is closed, found for another object
	 * (the host reused it): another inode; the old one no longer found */
	{
		struct awfs_inode *old = in[6], *nw;
		struct stat st = { .st_dev = old->dev, .st_ino = old->ino, .st_mode = S_IFREG, .st_nlink = 1 };

		assert_true(old->cfd < 0);
		snprintf(path, sizeof(path), "%s/m7", dir);
		fd = open(path, O_PATH | O_CLOEXEC);
		assert_true(fd >= 0);
		nw = inode_take_host(fd, &st, NULL, root, "m6");
		assert_ptr_not_equal(nw, old);
		assert_int_equal(inode_find_host(old->dev, old->ino, NULL), inode_nodeid(nw));
		assert_int_equal(inode_fd(old, &fd), 0);	/* still itself */
		assert_true(same_object(fd, old));
		inode_put(nw, 1);
		/* the same object found again is the same inode, its fd adopted */
		for (int i = 10; i < 10 + CAP; i++)
			assert_int_equal(inode_fd(in[i], &fd), 0);
		assert_true(in[8]->cfd < 0);
		snprintf(path, sizeof(path), "%s/m8", dir);
		fd = open(path, O_PATH | O_CLOEXEC);
		assert_int_equal(fstat(fd, &st), 0);
		assert_ptr_equal(inode_take_host(fd, &st, NULL, root, "m8"), in[8]);
		assert_int_equal(in[8]->cfd, fd);
		inode_put(in[8], 1);
	}
	for (int i = 0; i < NMANY; i++)
		inode_put(in[i], 1);
	assert_int_equal(inode_fds(), 0);
	assert_true(open_fds() <= base);
	inode_set_fd_cache(UINT64_MAX, UINT64_MAX);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lru),
		cmocka_unit_test(test_parent_ref),
		cmocka_unit_test(test_find_collect),
		cmocka_unit_test(test_fd_cache),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
