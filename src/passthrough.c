/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * passthrough.c - the mount's passthrough state (see passthrough.h).
 */
#include "passthrough.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "host.h"
#include "log.h"

#define MAGIC_OVERLAYFS 0x794c7630
#define MAGIC_ECRYPTFS 0xf15f
#define MAGIC_FUSE 0x65735546

#define DEEP_MAX 16	/* devices found stacked too deep, remembered */

static struct {
	bool wanted, record;
	int devfd;
	dev_t deep[DEEP_MAX];	/* ELOOP there: no backing file of theirs is tried again */
	unsigned ndeep;
	uint32_t depth;		/* max_stack_depth asked for */
	enum pt_mode mode;
	char why[200];		/* PT_OFF_FAILED: what the kernel said */
	uint64_t live, registered, handles;
} pt = { .devfd = -1 };

void pt_configure(bool wanted, bool record, int devfd, int root_fd)
{
	struct statfs sf;

	pt.wanted = wanted;
	pt.record = record;
	pt.devfd = devfd;
	/*
	 * The kernel refuses a backing file whose file system is stacked as
	 * deep as the depth awfs declares, and awfs's own mount is then that
	 * deep (nothing may be stacked on it past the kernel's limit, 2). A
	 * plain file system is depth 0: declare 1. A source that may itself
	 * be stacked (overlayfs: a Docker container's own tree; ecryptfs;
	 * another FUSE file system with passthrough) is 1: declare 2, the
	 * most there is. A source deeper than that fails its first
	 * registration (ELOOP), and awfs serves the data path itself.
	 */
	pt.depth = 1;
	if (fstatfs(root_fd, &sf) == 0 &&
	    (sf.f_type == MAGIC_OVERLAYFS || sf.f_type == MAGIC_ECRYPTFS || sf.f_type == MAGIC_FUSE))
		pt.depth = 2;
}

uint32_t pt_negotiate(bool offered)
{
	if (!pt.wanted)
		pt.mode = PT_OFF_OPTION;
	else if (pt.record)
		pt.mode = PT_OFF_RECORD;
	else if (!offered)
		pt.mode = PT_OFF_KERNEL;
	else if (geteuid() != 0)
		pt.mode = PT_OFF_PRIV;
	else
		pt.mode = PT_ON;
	return pt.mode == PT_ON ? pt.depth : 0;
}

bool pt_on(void)
{
	return pt.mode == PT_ON;
}

/* Each mode in words (the mount line) and in a word (the audit record). */
static const struct {
	const char *text, *word;
} modes[] = {
	[PT_UNDECIDED] = { "data path: through awfs", "awfs" },
	[PT_ON] = { "data path: the kernel's passthrough, open files read and written on the host file without awfs",
		    "passthrough" },
	[PT_OFF_OPTION] = { "data path: through awfs, as -o passthrough=off asks", "awfs (passthrough=off)" },
	[PT_OFF_KERNEL] = { "data path: through awfs, this kernel offers no FUSE passthrough: it needs Linux 6.9 or later, CONFIG_FUSE_PASSTHROUGH",
			    "awfs (not offered by the kernel)" },
	[PT_OFF_PRIV] = { "data path: through awfs, not root: the kernel registers passthrough files only for CAP_SYS_ADMIN",
			  "awfs (not root)" },
	[PT_OFF_RECORD] = { "data path: through awfs, for the change record, which must see every write",
			    "awfs (the change record)" },
	[PT_OFF_FAILED] = { NULL, "awfs (passthrough failed)" },	/* the text: pt.why */
};

const char *pt_mode_text(void)
{
	return pt.mode == PT_OFF_FAILED ? pt.why : modes[pt.mode].text;
}

const char *pt_mode_word(void)
{
	return modes[pt.mode].word;
}

/* The outcome of a registration on the device @dev: the id, or -errno (said in the log where it turns something off). */
static int registered(int err, int id, dev_t dev)
{
	if (!err) {
		pt.live++;
		pt.registered++;
		return id;
	}
	/*
	 * What would fail for every file: not permitted (no CAP_SYS_ADMIN
	 * left to raise), an ioctl this kernel does not know. A file system
	 * stacked deeper than the depth declared at INIT (an overlayfs
	 * mounted below the source) fails for its own files only. Anything
	 * else (no memory, a file the kernel will not take) fails this file
	 * alone, which awfs then serves itself.
	 */
	if (err == EPERM || err == ENOTTY || err == ENOSYS) {
		pt.mode = PT_OFF_FAILED;
		snprintf(pt.why, sizeof(pt.why),
			 "data path: through awfs from now on, the kernel refused a passthrough file: %s",
			 strerror(err));
		log_msg(AWFS_LOG_WARN, "%s", pt.why);
	} else if (err == ELOOP && pt.ndeep < DEEP_MAX) {
		pt.deep[pt.ndeep++] = dev;
		log_msg(AWFS_LOG_WARN, "the files of device %u:%u below the source are stacked too deep for the kernel's passthrough (ELOOP): awfs serves their data itself",
			major(dev), minor(dev));
	}
	return -err;
}

/* Whether @dev is stacked too deep (an earlier registration said ELOOP), or passthrough is off. */
static int refused(dev_t dev)
{
	if (pt.mode != PT_ON)
		return -EOPNOTSUPP;
	for (unsigned i = 0; i < pt.ndeep; i++)
		if (pt.deep[i] == dev)
			return -ELOOP;
	return 0;
}

int pt_register(int fd, dev_t dev, uid_t uid, gid_t gid)
{
	int id = 0, err = refused(dev);

	if (err)
		return err;
	err = host_backing_open(pt.devfd, fd, uid, gid, &id);
	return registered(err, id, dev);
}

int pt_register_as_caller(int fd, dev_t dev)
{
	int id = 0, err = refused(dev);

	if (err)
		return err;
	err = host_backing_open_as_caller(pt.devfd, fd, &id);
	return registered(err, id, dev);
}

void pt_unregister(int id)
{
	int err = host_backing_close(pt.devfd, id);

	if (err)	/* the kernel keeps it until the unmount: said, not fatal */
		log_msg(AWFS_LOG_WARN, "cannot release the passthrough file %d: %s", id, strerror(err));
	else
		pt.live--;
}

void pt_count_handle(void)
{
	pt.handles++;
}

void pt_fini(void)
{
	if (pt.registered == 0 && pt.mode != PT_ON)
		return;
	log_msg(AWFS_LOG_INFO, "passthrough: %llu handles served, %llu backing files registered, %llu still registered at unmount (the kernel drops them with the connection)",
		(unsigned long long)pt.handles, (unsigned long long)pt.registered,
		(unsigned long long)pt.live);
}
