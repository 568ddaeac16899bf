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
 * open).
 */
#include <fcntl.h>
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
	inode_init(fd, &st, NULL);
	root = inode_root();
	return 0;
}

static void test_lru(void **state)
{
	struct awfs_inode *in[NFILES], *sub;
	char name[8], path[160], link_path[160];

	(void)state;
	inode_set_pressure(3, poke);
	for (int i = 0; i < NFILES; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		in[i] = take(name);
	}
	assert_int_equal(inode_host_files(), NFILES);
	assert_int_equal(pokes, 2);	/* the 4th and the 5th file */
	sub = take("sub");
	/* a directory counts towards the mark (it holds an fd) ... */
	assert_int_equal(inode_host_files(), NFILES);
	assert_int_equal(inode_host_dirs(), 1);
	assert_int_equal(pokes, 3);

	assert_string_equal(oldest(2), "f0 f1");
	/* named ones go to the newest end: the next call names others */
	assert_string_equal(oldest(2), "f2 f3");
	/* a second lookup makes a file the newest */
	assert_ptr_equal(take("f4"), in[4]);
	assert_string_equal(oldest(NFILES), "f0 f1 f2 f3 f4");
	/* never more than there are */
	/* ... but is never named: dropping it would drop its subtree */
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
	inode_set_pressure(UINT64_MAX, NULL);
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
	assert_true(fcntl(sub->fd, F_GETFD) >= 0);
	/* the file goes, and the directory with it */
	inode_put(g, 1);
	assert_int_equal(inode_count(), base);
}

static int freed_dirs, freed_fd_open;

static void on_dir_free(struct awfs_inode *d)
{
	freed_dirs++;
	freed_fd_open += fcntl(d->fd, F_GETFD) >= 0;
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
	assert_int_equal(fstat(g->fd, &st), 0);
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

		assert_int_equal(fstat(sub->fd, &dst), 0);
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
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
