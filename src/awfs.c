/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * awfs.c - the daemon's command line and mount sequence.
 *
 * Order matters, and each step fails before the next one can expose anything:
 *  1. load the policy whole (any error: exit 2, nothing mounted);
 *  2. open the source directory BEFORE mounting, since the mount will cover
 *     it when the source is the mount point itself;
 *  3. check or create every literal allow_write target;
 *  4. mount with default_permissions (and allow_other as root) and never
 *     with auto_unmount: if the daemon dies the mount must stay, dead
 *     (ENOTCONN), rather than reveal the unmasked directory beneath it;
 *  5. bind the mount at each --also-at alias, or unmount and fail;
 *  6. keep only the capabilities serving needs, no new privileges, and a
 *     syscall filter (privs.h), before the first request.
 * A dead awfs at the mount point is mounted over, never uncovered (remount.h).
 *
 * Errors: each step of main() says what failed and why on stderr, and
 * returns the exit status to leave with (2: the command line, the policy,
 * the FUSE options; 1: anything else), or 0 to go on. Helpers below the
 * steps return 0 or a positive errno, as host.h's do.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "changes.h"
#include "boundary.h"
#include "classify.h"
#include "host.h"
#include "info.h"
#include "inode.h"
#include "log.h"
#include "loop.h"
#include "mountinfo.h"
#include "ops.h"
#include "policy.h"
#include "util.h"
#include "verdict.h"
#include "token.h"
#include "privs.h"
#include "passthrough.h"
#include "uring.h"
#include "remount.h"

struct options {
	char *policy;
	char *source;
	char *runtime;
	char *log;
	char *audit;
	char *info_dir;
	char *cache;
	char *spin;
	char *ready_fd;
	char *fd_cache;
	char *passthrough;
	char *io_uring;
	char *keepers;
	char **also_at;
	size_t nalso;
	char *positional[2];
	int npositional;
	int foreground;
	int xattr;
	int no_info_dir;
	int fail_on_denial;
	int record_changes;
	int show_help;
	int show_version;
};

/*
 * Each setting has one value, said once: "--policy FILE", "--policy=FILE"
 * and "-o policy=FILE" are three spellings of one setting, and a second
 * one is an error, never a silent override. A wrapper that sets --policy
 * and passes its user's -o options through would otherwise enforce the
 * -o policy while its `awfsctl verify` checked the other one.
 */
struct setting {
	const char *name;	/* the -o form: name=VALUE */
	const char *flag;	/* the command-line form: --flag VALUE, --flag=VALUE */
	size_t off;		/* where the value goes in struct options */
};

static const struct setting settings[] = {
	{ "policy", "--policy", offsetof(struct options, policy) },
	{ "source", "--source", offsetof(struct options, source) },
	{ "runtime", "--runtime", offsetof(struct options, runtime) },
	{ "log", "--log", offsetof(struct options, log) },
	{ "audit", "--audit", offsetof(struct options, audit) },
	{ "info_dir", "--info-dir", offsetof(struct options, info_dir) },
	{ "cache", NULL, offsetof(struct options, cache) },
	{ "spin", NULL, offsetof(struct options, spin) },
	{ "ready_fd", "--ready-fd", offsetof(struct options, ready_fd) },
	{ "fd_cache", NULL, offsetof(struct options, fd_cache) },
	{ "passthrough", NULL, offsetof(struct options, passthrough) },
	{ "io_uring", NULL, offsetof(struct options, io_uring) },
	{ "keepers", NULL, offsetof(struct options, keepers) },
};

enum {
	KEY_DEBUG,
	KEY_ALSO_AT,
	KEY_XATTR,
	KEY_NOXATTR,
	KEY_REFUSED,
	KEY_SETTING,	/* + the index in settings[] */
};

/*
 * fuse_opt calls opt_proc once for every template an argument matches, and
 * "--flag " matches "--flag=V" too (handing over "--flag=V"): one template
 * for both forms, or the setting would be seen twice.
 */
#define SETTING(i, f, n) FUSE_OPT_KEY(f " ", KEY_SETTING + (i)), FUSE_OPT_KEY(n "=", KEY_SETTING + (i))
#define OPT(t, p) { t, offsetof(struct options, p), 1 }
static const struct fuse_opt awfs_opts[] = {
	SETTING(0, "--policy", "policy"), SETTING(1, "--source", "source"),
	SETTING(2, "--runtime", "runtime"), SETTING(3, "--log", "log"),
	SETTING(4, "--audit", "audit"), SETTING(5, "--info-dir", "info_dir"),
	FUSE_OPT_KEY("cache=", KEY_SETTING + 6), FUSE_OPT_KEY("spin=", KEY_SETTING + 7),
	SETTING(8, "--ready-fd", "ready_fd"), FUSE_OPT_KEY("fd_cache=", KEY_SETTING + 9),
	FUSE_OPT_KEY("passthrough=", KEY_SETTING + 10), FUSE_OPT_KEY("io_uring=", KEY_SETTING + 11),
	FUSE_OPT_KEY("keepers=", KEY_SETTING + 12),
	{ "--no-info-dir", offsetof(struct options, no_info_dir), 1 },
	{ "noinfo_dir", offsetof(struct options, no_info_dir), 1 },
	{ "--fail-on-denial", offsetof(struct options, fail_on_denial), 1 },
	{ "fail_on_denial", offsetof(struct options, fail_on_denial), 1 },
	{ "--record-changes", offsetof(struct options, record_changes), 1 },
	{ "record_changes", offsetof(struct options, record_changes), 1 },
	FUSE_OPT_KEY("--also-at ", KEY_ALSO_AT), FUSE_OPT_KEY("also_at=", KEY_ALSO_AT),
	FUSE_OPT_KEY("xattr", KEY_XATTR), FUSE_OPT_KEY("noxattr", KEY_NOXATTR),
	/* would remove the mount when the daemon dies: the raw directory, unmasked */
	FUSE_OPT_KEY("auto_unmount", KEY_REFUSED),
	OPT("-h", show_help), OPT("--help", show_help),
	OPT("-V", show_version), OPT("--version", show_version),
	OPT("-f", foreground), FUSE_OPT_KEY("-d", KEY_DEBUG),
	FUSE_OPT_KEY("debug", KEY_DEBUG),
	FUSE_OPT_END
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: awfs MOUNTPOINT --policy FILE [options]\n"
		"       awfs SOURCE MOUNTPOINT -o policy=FILE[,options]   (mount.fuse3 / fstab form)\n"
		"\n"
		"Serve SOURCE (default: MOUNTPOINT itself) at MOUNTPOINT under one policy:\n"
		"masked paths are empty, allow_write paths pass writes through, every other\n"
		"write fails with EROFS and is logged with the rule that refused it.\n"
		"\n"
		"  --policy FILE        the policy (libconfig; see awfs-policy(5))      [required]\n"
		"  --source DIR         the directory to serve               [MOUNTPOINT itself]\n"
		"  --runtime NAME       apply the rules for this runtime too\n"
		"                       (docker, cloud-hypervisor, nvx, qemu, guest, host-user)\n"
		"  --log DEST           stderr, syslog or a file to append to\n"
		"                       [stderr with -f, else syslog]\n"
		"  --also-at PATH       show the same view at PATH too (a bind mount); repeatable\n"
		"  --audit FILE         append JSON-lines audit records to FILE\n"
		"  --fail-on-denial     exit 3 at unmount if any write was denied (use with -f)\n"
		"  --record-changes     record every change the agent makes in the audit\n"
		"                       trail (needs --audit; also record_changes = true;\n"
		"                       in the policy; read it with awfsctl changes)\n"
		"  --info-dir NAME      name of the read-only information directory at the\n"
		"                       mount root (README, denials)                    [.awfs]\n"
		"  --no-info-dir        serve no information directory\n"
		"  --ready-fd N         write \"ready\\n\" to descriptor N and close it once the\n"
		"                       mount serves (for a supervisor that keeps awfs in\n"
		"                       the foreground and must not start the agent before)\n"
		"  -f                   stay in the foreground\n"
		"  -d                   debug: foreground, and print every FUSE request\n"
		"  -o OPT[,OPT...]      FUSE mount options, and:\n"
		"       cache=auto|strict|always|never  how long the kernel keeps entries and\n"
		"                         attributes: auto = 1 h for writable and masked paths;\n"
		"                         read-only ones (the host may write there) watched,\n"
		"                         host changes told at once, else 60 s (1 s where not\n"
		"                         watchable); strict = 1 s for all, nothing watched;\n"
		"                         always = 1 day; never = 0  [auto]\n"
		"       xattr | noxattr   serve extended attributes (off: all but the host's\n"
		"                         POSIX ACLs, which are always enforced)   [noxattr]\n"
		"       spin=USEC         how long awfs polls for the next request before it\n"
		"                         sleeps (a caller's next request then finds it\n"
		"                         awake); 0 sleeps at once, at most 10000      [50]\n"
		"       keepers=on|off    while awfs serves, a thread on each other CPU\n"
		"                         yields it, so a reply to a caller there wakes no\n"
		"                         halted CPU (on a VM: about half a request); they\n"
		"                         spend host CPU: a VM whose CPUs share the host's\n"
		"                         runs slower with them (none under a CPU quota,\n"
		"                         with spin=0 or io_uring)                    [off]\n"
		"       passthrough=on|off  open files' reads and writes go from the kernel\n"
		"                         to the host file (FUSE passthrough, Linux 6.9 and\n"
		"                         later, awfs as root) where the kernel offers it;\n"
		"                         off: every read and write through awfs      [on]\n"
		"       io_uring=on|off   take requests through the kernel's io_uring queues\n"
		"                         (FUSE over io_uring, Linux 6.14 and later) where the\n"
		"                         kernel offers it (the fuse module's enable_uring);\n"
		"                         off: every request through /dev/fuse         [on]\n"
		"       fd_cache=N        fds of looked-up files and directories kept open\n"
		"                         (more are opened again from their file handles);\n"
		"                         64 or more   [5/8 of the open file limit]\n"
		"       policy=, source=, runtime=, log=, also_at=, audit=, info_dir=,\n"
		"       noinfo_dir, fail_on_denial, ready_fd=   as the options above\n"
		"  -h, --help           this help\n"
		"  -V, --version        the version\n"
		"\n"
		"Exit status: 0 after a clean unmount, 1 when mounting failed, 2 for a bad\n"
		"policy or command line, 3 when writes were denied and --fail-on-denial\n"
		"was given.\n");
}

/* The value in @arg, in whichever of its spellings fuse_opt handed over. */
static const char *setting_value(const struct setting *st, const char *arg)
{
	size_t nl = strlen(st->name), fl = st->flag ? strlen(st->flag) : 0;

	if (strncmp(arg, st->name, nl) == 0 && arg[nl] == '=')
		return arg + nl + 1;
	if (st->flag && strncmp(arg, st->flag, fl) == 0)
		return arg + fl + (arg[fl] == '=');	/* "--flag=V", or "--flagV" for "--flag V" */
	return arg;
}

static int set_setting(struct options *o, const struct setting *st, const char *arg)
{
	char **field = (char **)((char *)o + st->off);

	if (*field) {
		fprintf(stderr, "awfs: %s%s%s given twice (`%s' and `%s'): each setting is said once, in one place\n",
			st->flag ? st->flag : "", st->flag ? " / -o " : "-o ", st->name, *field,
			setting_value(st, arg));
		return -1;
	}
	*field = util_xstrdup(setting_value(st, arg));
	return 0;
}

/*
 * --ready-fd N: a descriptor the caller opened for writing (a pipe or FIFO
 * it reads), not one of the standard three. Checked before anything is
 * mounted, so a wrong number is a usage error, not a supervisor that waits
 * forever; close-on-exec, so nothing awfs starts keeps the reader waiting.
 * Sets *fd; 0, or the exit status 2.
 */
static int parse_ready_fd(const char *text, int *fd)
{
	char *end;
	long n;
	int fl;

	errno = 0;
	n = strtol(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || text[0] == '+' || n < 3 || n > INT_MAX) {
		fprintf(stderr, "awfs: ready_fd=%s: expected a descriptor number of 3 or more\n", text);
		return 2;
	}
	fl = fcntl((int)n, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || (fl & O_PATH)) {
		fprintf(stderr, "awfs: ready_fd=%ld: %s\n", n,
			fl < 0 ? "not an open descriptor" : "not open for writing");
		return 2;
	}
	(void)fcntl((int)n, F_SETFD, FD_CLOEXEC);
	*fd = (int)n;
	return 0;
}

/* the mount serves, with every alias: tell the supervisor, once */
static void say_ready(int fd)
{
	static const char ready[] = "ready\n";

	if (write(fd, ready, sizeof(ready) - 1) != (ssize_t)sizeof(ready) - 1)
		log_msg(AWFS_LOG_WARN, "cannot tell the ready descriptor (--ready-fd %d) that the mount serves: %s",
			fd, strerror(errno));
	close(fd);
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct options *o = data;

	(void)outargs;
	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		if (o->npositional >= 2) {
			fprintf(stderr, "awfs: unexpected argument `%s'\n", arg);
			return -1;
		}
		o->positional[o->npositional++] = util_xstrdup(arg);
		return 0;
	case KEY_ALSO_AT: {
		/* fuse_opt hands over "--also-at=P", "also_at=P" or "--also-atP" (for "--also-at P") */
		const char *v = strncmp(arg, "--also-at=", 10) == 0 ? arg + 10 :
				strncmp(arg, "also_at=", 8) == 0 ? arg + 8 : arg + 9;

		o->also_at = util_xrealloc(o->also_at, (o->nalso + 1) * sizeof(*o->also_at));
		o->also_at[o->nalso++] = util_xstrdup(v);
		return 0;
	}
	case KEY_DEBUG:
		o->foreground = 1;
		return 1;	/* keep: libfuse prints the requests */
	case KEY_XATTR:
	case KEY_NOXATTR:
		if (o->xattr >= 0 && o->xattr != (key == KEY_XATTR)) {
			fprintf(stderr, "awfs: both xattr and noxattr given: say one\n");
			return -1;
		}
		o->xattr = key == KEY_XATTR;
		return 0;
	case KEY_REFUSED:
		fprintf(stderr, "awfs: -o %s refused: a daemon that dies would take the mount with it and show the raw directory, masked paths included; awfs leaves a dead mount (ENOTCONN) instead\n",
			arg);
		return -1;
	default:
		if (key >= KEY_SETTING && key < KEY_SETTING + (int)AWFS_ARRAY_LEN(settings))
			return set_setting(o, &settings[key - KEY_SETTING], arg);
		return 1;
	}
}

static void options_free(struct options *o)
{
	for (size_t i = 0; i < AWFS_ARRAY_LEN(settings); i++)	/* every setting's value */
		free(*(char **)((char *)o + settings[i].off));
	for (size_t i = 0; i < o->nalso; i++)
		free(o->also_at[i]);
	free(o->also_at);
	for (int i = 0; i < o->npositional; i++)
		free(o->positional[i]);
}

/*
 * Bind the live mount at each alias before awfs returns to its caller, so no
 * alias ever shows the raw directory. On failure undo the ones made (the
 * exit status 1).
 */
static int bind_aliases(const char *mnt, char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (mount(mnt, paths[i], NULL, MS_BIND, NULL) < 0) {
			fprintf(stderr, "awfs: cannot show the view at %s (--also-at): %s\n", paths[i],
				strerror(errno));
			while (i-- > 0)
				umount2(paths[i], MNT_DETACH);
			return 1;
		}
	}
	return 0;
}

/* Unbind the aliases that are still this awfs (an administrator may have done it). */
static void unbind_aliases(char **paths, size_t n, const char *mnt)
{
	struct awfs_mount m, self;

	if (n == 0)
		return;	/* no mountinfo to read at every unmount */
	if (mountinfo_find(mnt, &self) != 0)
		self.source = NULL;
	for (size_t i = 0; i < n; i++) {
		if (mountinfo_find(paths[i], &m) != 0)
			continue;
		if (strcmp(m.fstype, "fuse.awfs") == 0 && (!self.source || strcmp(m.source, self.source) == 0) &&
		    umount2(paths[i], MNT_DETACH) < 0)
			log_msg(AWFS_LOG_ERR, "cannot unmount the alias %s: %s", paths[i], strerror(errno));
		mountinfo_free(&m);
	}
	mountinfo_free(&self);
}

/* The FUSE options awfs always sets: the ones its guarantees rest on. */
static void add_mount_options(struct fuse_args *args, const char *src)
{
	char *fsname = util_xasprintf("fsname=%s", src);

	/* a comma in the source would split the option list */
	for (char *p = fsname; *p; p++)
		if (*p == ',')
			*p = '_';
	/*
	 * Last, so they win over anything given with -o: the kernel checks
	 * ordinary permissions (default_permissions); set-user-ID bits and
	 * device nodes of the host tree mean nothing in the sandbox.
	 */
	fuse_opt_add_arg(args, "-o");
	fuse_opt_add_arg(args, fsname);
	fuse_opt_add_arg(args, "-o");
	fuse_opt_add_arg(args, geteuid() == 0 ? "subtype=awfs,default_permissions,nosuid,nodev,allow_other"
					      : "subtype=awfs,default_permissions,nosuid,nodev");
	free(fsname);
}

#define AWFS_WANT_NOFILE 1048576
#define AWFS_MIN_NOFILE 65536
/*
 * Host inodes past which the kernel is asked to drop files, to bound
 * awfs's memory (about 290 bytes each with their names: docs/performance.md).
 */
#define AWFS_INODES_HIGH 262144

/*
 * How many fds of looked-up files and directories awfs keeps open: the
 * fd cache's size with file handles (inode.h), else the mark past which
 * the kernel is asked to drop some files (loop.c): 5/8 of the open file
 * limit, the rest for open files (and, without handles, the files looked
 * up while the kernel forgets).
 */
static uint64_t files_high(void)
{
	struct rlimit rl;
	uint64_t high;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return AWFS_WANT_NOFILE / 8 * 5;
	high = (uint64_t)rl.rlim_cur / 8 * 5;
	return high > 64 ? high : 64;
}

/* The fds of looked-up inodes awfs keeps: -o fd_cache=, else files_high(). */
static uint64_t fds_kept(unsigned long long fd_cache)
{
	return fd_cache ? (uint64_t)fd_cache : files_high();
}

/*
 * Every inode the kernel holds keeps an O_PATH fd: a find over a big tree
 * needs as many fds as the kernel keeps entries cached. So raise the fd
 * limit as far as the system allows (root may go past the hard limit, up
 * to fs.nr_open). Fails (the exit status 1) only when even
 * soft-to-hard is refused; a limit that stays low is a warning with what to
 * do about it.
 */
static int raise_nofile(unsigned long long fd_cache)
{
	struct rlimit rl, want;
	unsigned long long nr_open = AWFS_WANT_NOFILE;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%llu", &nr_open) != 1)
			nr_open = AWFS_WANT_NOFILE;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	want.rlim_cur = want.rlim_max = nr_open < AWFS_WANT_NOFILE ? nr_open : AWFS_WANT_NOFILE;
	if (want.rlim_max > rl.rlim_max && setrlimit(RLIMIT_NOFILE, &want) == 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			fprintf(stderr, "awfs: cannot raise the open file limit to %llu: %s\n",
				(unsigned long long)rl.rlim_max, strerror(errno));
			return 1;
		}
	}
	if (rl.rlim_cur < AWFS_MIN_NOFILE)
		fprintf(stderr, "awfs: note: the open file limit is %llu; awfs keeps at most %llu fds of files and directories looked up (more are opened again from file handles, or, on a source without them, the kernel is asked to drop the least recently used files), and files the agent opens past the limit fail with EMFILE (raise the hard limit: ulimit -Hn %d, or LimitNOFILE= in a unit)\n",
			(unsigned long long)rl.rlim_cur, (unsigned long long)fds_kept(fd_cache), AWFS_WANT_NOFILE);
	return 0;
}

/*
 * What main() sets up, in order; main()'s labels take it down in reverse.
 * root_fd is never closed: the inode table holds it as the root's fd.
 */
struct awfs_run {
	struct fuse_args args;
	struct options o;
	const char *mountpoint;		/* as given */
	unsigned long spin_us;
	unsigned long long fd_cache;	/* 0: fds_kept() picks */
	int ready_fd;
	struct awfs_policy *policy;
	struct awfs_classifier *classifier;
	struct awfs_ops_config oc;
	struct fuse_session *se;
	char mnt[PATH_MAX], src[PATH_MAX];	/* absolute, resolved */
	struct stat root_st;
	int root_fd;
	enum host_acls acls;	/* what the source's root says to an ACL read */
	bool over_dead;		/* mounted on top of a dead awfs (remount.h) */
	bool passthrough, io_uring, keepers;	/* the on|off settings, defaults applied */
};

/*
 * Parse the command line; answer --help and --version (status 0, and
 * o.show_help or o.show_version says the run ends there).
 */
static int read_options(struct awfs_run *r)
{
	struct options *o = &r->o;

	if (fuse_opt_parse(&r->args, o, awfs_opts, opt_proc) < 0)
		return 2;
	if (o->xattr < 0)
		o->xattr = 0;
	if (o->no_info_dir && o->info_dir) {
		fprintf(stderr, "awfs: both --info-dir %s and --no-info-dir given: say one\n", o->info_dir);
		return 2;
	}
	if (o->show_help) {
		usage(stdout);
		return 0;
	}
	if (o->show_version)
		printf("awfs %s (libfuse %d.%d, FUSE_USE_VERSION %d)\n", PACKAGE_VERSION,
		       fuse_version() / 100, fuse_version() % 100, FUSE_USE_VERSION);
	return 0;
}

/* An on|off setting: absent, it is DEFAULT; any other word is refused. */
static int check_switch(const char *name, const char *value, bool dflt, bool *on)
{
	if (!value)
		*on = dflt;
	else if (strcmp(value, "on") == 0)
		*on = true;
	else if (strcmp(value, "off") == 0)
		*on = false;
	else {
		fprintf(stderr, "awfs: %s=%s: expected %s=on or off\n", name, value, name);
		return 2;
	}
	return 0;
}

/* The mount point, the source, the policy file and the named settings. */
static int check_names(struct awfs_run *r)
{
	struct options *o = &r->o;

	if (o->npositional == 0) {
		fprintf(stderr, "awfs: no mount point given\n");
		usage(stderr);
		return 2;
	}
	r->mountpoint = o->positional[o->npositional - 1];
	if (o->npositional == 2 && o->source) {
		fprintf(stderr, "awfs: the source given twice (`%s' before the mount point, and `%s'): say it once\n",
			o->positional[0], o->source);
		return 2;
	}
	if (o->npositional == 2)
		o->source = util_xstrdup(o->positional[0]);
	if (!o->policy) {
		fprintf(stderr, "awfs: no policy given: awfs %s --policy /etc/awfs/policy.conf\n", r->mountpoint);
		return 2;
	}
	if (o->runtime && !policy_runtime_known(o->runtime)) {
		fprintf(stderr, "awfs: unknown runtime `%s': expected one of %s\n", o->runtime,
			policy_runtime_list());
		return 2;
	}
	if (o->info_dir && (!o->info_dir[0] || strchr(o->info_dir, '/') || strcmp(o->info_dir, ".") == 0 ||
			    strcmp(o->info_dir, "..") == 0 || strlen(o->info_dir) > NAME_MAX)) {
		fprintf(stderr, "awfs: --info-dir %s: expected one file name, such as .awfs\n", o->info_dir);
		return 2;
	}
	if (o->cache && strcmp(o->cache, "auto") != 0 && strcmp(o->cache, "strict") != 0 &&
	    strcmp(o->cache, "always") != 0 && strcmp(o->cache, "never") != 0) {
		fprintf(stderr, "awfs: cache=%s: expected cache=auto, strict, always or never\n", o->cache);
		return 2;
	}
	if (check_switch("passthrough", o->passthrough, true, &r->passthrough) ||
	    check_switch("io_uring", o->io_uring, true, &r->io_uring) ||
	    check_switch("keepers", o->keepers, false, &r->keepers))
		return 2;
	return 0;
}

/* spin=, fd_cache= and --ready-fd: numbers, each in its range. */
static int check_numbers(struct awfs_run *r)
{
	const struct options *o = &r->o;
	char *end;

	if (o->spin) {
		errno = 0;
		r->spin_us = strtoul(o->spin, &end, 10);
		if (errno || end == o->spin || *end || o->spin[0] == '-' || r->spin_us > LOOP_SPIN_US_MAX) {
			fprintf(stderr, "awfs: spin=%s: expected microseconds, 0 to %d\n", o->spin,
				LOOP_SPIN_US_MAX);
			return 2;
		}
	}
	if (o->fd_cache) {
		errno = 0;
		r->fd_cache = strtoull(o->fd_cache, &end, 10);
		if (errno || end == o->fd_cache || *end || !isdigit((unsigned char)o->fd_cache[0]) ||
		    r->fd_cache < 64) {
			fprintf(stderr, "awfs: fd_cache=%s: expected a number of fds, 64 or more\n",
				o->fd_cache);
			return 2;
		}
	}
	if (o->ready_fd)
		return parse_ready_fd(o->ready_fd, &r->ready_fd);
	return 0;
}

/* The policy, whole (all its errors, then nothing mounted). */
static int load_policy(struct awfs_run *r)
{
	r->policy = policy_load_or_report(r->o.policy, r->o.runtime, stderr, "awfs", "; nothing mounted");
	return r->policy ? 0 : 2;
}

/*
 * The options against the policy: the information directory would hide
 * what a rule names there; --fail-on-denial in the background is a warning.
 */
static int check_policy_fits(const struct awfs_run *r)
{
	const struct awfs_policy *p = r->policy;
	const char *name = r->o.info_dir ? r->o.info_dir : ".awfs";

	for (size_t i = 0; i < p->nrules && !r->o.no_info_dir; i++) {
		const struct awfs_rule *rule = &p->rules[i];

		if (rule->ncomps && fnmatch(rule->comps[0], name, 0) == 0) {
			fprintf(stderr, "awfs: the information directory %s would hide what %s rule \"%s\" (%s:%d) names; pick another with --info-dir NAME, or --no-info-dir\n",
				name, policy_class_key(rule->cls), rule->path, p->file, rule->line);
			return 2;
		}
	}
	if (r->o.fail_on_denial && !r->o.foreground)
		fprintf(stderr, "awfs: warning: --fail-on-denial without -f: in the background the exit status reaches nobody\n");
	if ((r->o.record_changes || p->record_changes) && !r->o.audit) {
		fprintf(stderr, "awfs: %s asks for the change record, which is written to the audit trail: add --audit FILE\n",
			r->o.record_changes ? "--record-changes" : "the policy's record_changes = true");
		return 2;
	}
	return 0;
}

/* The mount point's absolute path, or the dead awfs mount there to replace. */
static int find_mount_point(struct awfs_run *r, int *beneath)
{
	struct stat mst;

	if (remount_find_dead(r->mountpoint, r->mnt, sizeof(r->mnt), &r->over_dead, beneath) != 0)
		return 1;
	if (r->over_dead) {
		/* mnt is the absolute path of the dead mount; realpath would fail on it */
		fprintf(stderr, "awfs: replacing the dead awfs mount at %s\n", r->mnt);
	} else if (!realpath(r->mountpoint, r->mnt) || stat(r->mnt, &mst) < 0 || !S_ISDIR(mst.st_mode)) {
		fprintf(stderr, "awfs: bad mount point `%s': %s\n", r->mountpoint,
			errno ? strerror(errno) : "Not a directory");
		return 1;
	}
	return 0;
}

/* The source's fd: the directory under a dead mount at the mount point, or opened. */
static int open_root(struct awfs_run *r, int beneath)
{
	const char *source = r->o.source ? r->o.source : r->mnt;
	int err;

	if (!r->o.source && beneath >= 0) {
		r->root_fd = beneath;
		err = fstat(r->root_fd, &r->root_st) < 0 ? errno : 0;
		snprintf(r->src, sizeof(r->src), "%s", r->mnt);
	} else {
		if (beneath >= 0)
			close(beneath);
		err = host_open_root(source, &r->root_fd, &r->root_st);
		if (!err && !realpath(source, r->src))
			err = errno;
	}
	if (err) {
		fprintf(stderr, "awfs: bad source `%s': %s\n", source, strerror(err));
		return 1;
	}
	return 0;
}

/*
 * Rules match names byte for byte: a source that folds case would let
 * "SECRET" past the mask on "secret" (one that cannot be asked is refused too).
 */
static int check_case(const struct awfs_run *r)
{
	const char *what = "?";
	enum host_case folds = host_dir_folds_case(r->root_fd, &what);

	if (folds == HOST_CASE_UNKNOWN) {
		fprintf(stderr, "awfs: cannot tell whether the source %s matches names case-insensitively: %s\n",
			r->src, strerror(errno));
		return 1;
	}
	if (folds == HOST_CASE_FOLDS) {
		fprintf(stderr, "awfs: the source %s matches names case-insensitively (%s): rules match names byte for byte, so a name in another case would slip past them. Serve a case-sensitive directory.\n",
			r->src, what);
		return 1;
	}
	return 0;
}

/* The mount point and the source, opened before the mount covers them. */
static int open_source(struct awfs_run *r)
{
	int beneath = -1, err;

	umask(0);	/* the kernel already applied the caller's umask */
	err = host_init();
	if (err) {
		fprintf(stderr, "awfs: cannot open /proc/self/fd: %s\n", strerror(err));
		return 1;
	}
	if (find_mount_point(r, &beneath) != 0 || open_root(r, beneath) != 0)
		return 1;
	return check_case(r);
}

/* The FUSE session: its options are checked here, before anything is created. */
static int new_session(struct awfs_run *r)
{
	add_mount_options(&r->args, r->src);
	r->se = fuse_session_new(&r->args, &ops_lowlevel, sizeof(ops_lowlevel), NULL);
	if (!r->se) {
		fprintf(stderr, "awfs: bad FUSE options (see the message above; awfs --help, mount.fuse3(8))\n");
		return 2;
	}
	return 0;
}

/* The log (syslog in the background: stderr is gone then) and the audit file. */
static int open_outputs(const struct options *o)
{
	char why[PATH_MAX + 512];	/* a message may name a directory on the way */

	if (o->log) {
		if (log_open(o->log, why, sizeof(why)) < 0) {
			fprintf(stderr, "awfs: cannot open log `%s': %s\n", o->log, why);
			return 1;
		}
	} else if (!o->foreground) {
		log_open("syslog", NULL, 0);
	}
	if (o->audit && audit_open(o->audit, why, sizeof(why)) < 0) {
		fprintf(stderr, "awfs: cannot open audit file `%s': %s\n", o->audit, why);
		return 1;
	}
	return 0;
}

/* The classifier and the inode table, rooted at the source. */
static void init_inodes(struct awfs_run *r)
{
	char why[160];
	struct rlimit rl;

	r->classifier = classify_new(r->policy);
	if (!inode_init(r->root_fd, &r->root_st, classify_root(r->classifier), why, sizeof(why)))
		log_msg(AWFS_LOG_WARN, "the source gives no file handles awfs can open (%s): awfs keeps an fd for each file and directory the kernel caches and asks the kernel to drop files past %llu (a directory tree larger than the open file limit fails with EMFILE)",
			why, (unsigned long long)fds_kept(r->fd_cache));
	inode_set_fd_cache(fds_kept(r->fd_cache),
			   getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ?
				   (uint64_t)rl.rlim_cur : UINT64_MAX);
}

/*
 * auto: writable and masked paths change only through awfs (the host
 * works there before and after the agent), so the kernel may keep what
 * it learnt for an hour; read-only paths may be written by the host
 * during the run (spilled payloads): awfs watches them and tells the
 * kernel of each change, and keeps them a minute (what a watch cannot
 * see: writes through a mapping until closed, other hard links), or a
 * second where it cannot watch. The other modes do not watch.
 */
static void set_cache_timeouts(struct awfs_ops_config *oc, const char *cache)
{
	oc->keep_cache = true;
	oc->timeout_own = 3600.0;
	oc->timeout_shared = 1.0;
	oc->timeout_watched = 60.0;
	if (cache && strcmp(cache, "strict") == 0) {
		oc->timeout_own = oc->timeout_watched = 1.0;
	} else if (cache && strcmp(cache, "always") == 0) {
		oc->timeout_own = oc->timeout_shared = oc->timeout_watched = 86400.0;
	} else if (cache && strcmp(cache, "never") == 0) {
		oc->timeout_own = oc->timeout_shared = oc->timeout_watched = 0.0;
		oc->keep_cache = false;
	}
}

/*
 * What the source's root says to an ACL read, for the mount line; where it
 * keeps none and checks more than its modes, accesses the ACL would decide
 * fail (ops.c's xattrs section), which is said once here.
 */
static void check_acls(struct awfs_run *r)
{
	const char *what;

	r->acls = host_acls(r->root_fd, &what);
	if (r->acls == HOST_ACLS_FOREIGN)
		log_msg(AWFS_LOG_WARN, "the source %s keeps no POSIX ACLs and is %s, whose permission checks go beyond its modes, which awfs cannot repeat: an access by a uid that does not own the object fails with EOPNOTSUPP (closed, not open)",
			r->src, what);
	else if (host_is_other_fuse(r->root_fd, &what))
		log_msg(AWFS_LOG_WARN, "the source %s is %s other than virtiofs: awfs reads its files as itself once the kernel has checked the modes and the ACLs it serves, so a check of its daemon's own beyond those (refusing some callers) is not repeated (docs/security.md)",
			r->src, what);
}

/* The request handlers' configuration, and the information directory. */
static void init_ops(struct awfs_run *r)
{
	struct awfs_ops_config *oc = &r->oc;

	oc->policy = r->policy;
	oc->classifier = r->classifier;
	oc->mountpoint = r->mnt;
	oc->source = r->src;
	oc->xattr = r->o.xattr;
	oc->info_dir = r->o.no_info_dir ? NULL : r->o.info_dir ? r->o.info_dir : ".awfs";
	info_init(oc->info_dir, r->policy, r->mnt);
	set_cache_timeouts(oc, r->o.cache);
	ops_init(oc);
}

/* A stop signal ends the session, and main() unmounts (loop.h). */
static int install_signals(struct awfs_run *r)
{
	int err = loop_set_signal_handlers(r->se);

	if (err) {
		fprintf(stderr, "awfs: cannot install signal handlers: %s\n", strerror(-err));
		loop_remove_signal_handlers();
		return 1;
	}
	return 0;
}

/* The mount: libfuse's, or on top of a dead awfs (remount.h). */
static int mount_session(struct awfs_run *r)
{
	if (r->over_dead)
		return remount_mount(r->se, r->mnt, r->src) != 0;
	if (fuse_session_mount(r->se, r->mnt) != 0) {
		fprintf(stderr, "awfs: cannot mount on %s (is /dev/fuse usable?)\n", r->mnt);
		return 1;
	}
	return 0;
}

/* What serving needs of the mounted session, checked before anyone sees it. */
static int check_session(struct awfs_run *r)
{
	if (!host_can_switch()) {
		fprintf(stderr, "awfs: cannot act as a caller (setfsuid, setgroups or capset refused): "
			"awfs would serve requests with its own power; not mounting\n");
		return 1;
	}
	if (loop_wrap_io(r->se) != 0) {
		fprintf(stderr, "awfs: cannot set up the session's I/O\n");
		return 1;
	}
	return 0;
}

/*
 * Serve with only what serving needs (privs.h): before the caller is told
 * the mount is ready (a failure is then a failed mount, not a mount that
 * goes away), and before any thread starts; what is dropped stays dropped
 * across the fork that puts awfs in the background.
 */
static int drop_privileges(void)
{
	char why[256];

	if (privs_drop(why, sizeof(why)) < 0) {
		fprintf(stderr, "awfs: %s: awfs would serve with more power than it needs; not mounting\n",
			why);
		return 1;
	}
	return 0;
}

/* INIT, served before the mount is announced (loop_init()). */
static int first_request(struct awfs_run *r)
{
	int err = loop_init(r->se);

	if (err) {
		fprintf(stderr, "awfs: the kernel's first request failed: %s; not mounting\n", strerror(-err));
		return 1;
	}
	return 0;
}

/* Say what is mounted: the log and audit, awfsctl verify's token, the supervisor. */
static void announce(struct awfs_run *r)
{
	char why[256];

	boundary_log(r->policy, r->classifier, r->root_fd, r->mnt, r->src, r->oc.info_dir, r->acls,
		     pt_mode_text(), pt_mode_word(), uring_mode_text(), uring_mode_word());
	if (token_publish(r->mnt, r->o.also_at, r->o.nalso, why, sizeof(why)) != 0)
		log_msg(AWFS_LOG_INFO, "awfsctl verify's probes will be logged and counted as denials: cannot keep this mount's verify token in %s",
			why);
	/* the mount serves (requests wait for the loop): before the fork, so
	 * that in the background "ready" comes before the command returns */
	if (r->ready_fd >= 0)
		say_ready(r->ready_fd);
}

/* Into the background unless -f; then this process's /proc/self/fd. */
static int go_background(const struct awfs_run *r)
{
	int err;

	if (fuse_daemonize(r->o.foreground) != 0) {
		fprintf(stderr, "awfs: cannot go to the background\n");
		return 1;
	}
	err = host_init();	/* after the fork */
	if (err) {
		log_msg(AWFS_LOG_ERR, "cannot open /proc/self/fd: %s; unmounting", strerror(err));
		return 1;
	}
	return 0;
}

/* Serve until unmounted; the exit status (3: writes denied, --fail-on-denial). */
static int serve(const struct awfs_run *r)
{
	int ret, err = 0;
	char *summary;

	if (r->o.record_changes || r->policy->record_changes) {
		changes_enable();
		err = changes_start();
		if (err) {
			log_msg(AWFS_LOG_ERR, "cannot start the change record: %s; unmounting", strerror(err));
			return 1;
		}
		log_msg(AWFS_LOG_INFO, "recording every change in the audit trail (%s)", r->o.audit);
	}
	ret = loop_run(r->se, (unsigned)r->spin_us, r->keepers, 8,
		       fds_kept(r->fd_cache), AWFS_INODES_HIGH) < 0;
	pt_fini();	/* the counts; the kernel drops what is still registered with the connection */
	changes_stop();	/* what it holds, before the unmount record */
	summary = verdict_summary();

	if (r->o.fail_on_denial && verdict_denials() > 0) {
		/* loud on purpose: the step must not exit 0 over lost writes */
		fprintf(stderr, "awfs: %s; failing (--fail-on-denial)\n", summary);
		ret = 3;
	}
	free(summary);
	return ret;
}

/* What every exit frees, mounted or not. */
static void release(struct awfs_run *r)
{
	fuse_opt_free_args(&r->args);
	ops_fini();
	info_fini();
	audit_close();
	classify_free(r->classifier);
	policy_free(r->policy);
	options_free(&r->o);
	log_close();
}

/*
 * The steps in the order of the file's head. Each one that can fail says
 * why and returns the exit status (1 or 2), else 0; each label undoes what
 * the steps before it did, in reverse.
 */
int main(int argc, char *argv[])
{
	struct awfs_run r = {
		.args = FUSE_ARGS_INIT(argc, argv),
		.o = { .xattr = -1 },
		.spin_us = LOOP_SPIN_US_DEFAULT,
		.ready_fd = -1,
	};
	int ret;

	ret = read_options(&r);
	if (ret || r.o.show_help || r.o.show_version)
		goto out_free;
	ret = check_names(&r);
	if (ret)
		goto out_free;
	ret = check_numbers(&r);
	if (ret)
		goto out_free;
	/* 1. the policy, whole */
	ret = load_policy(&r);
	if (ret)
		goto out_free;
	ret = check_policy_fits(&r);
	if (ret)
		goto out_free;
	ret = raise_nofile(r.fd_cache);
	if (ret)
		goto out_free;
	/* 2. the mount point and the source, opened before the mount covers it */
	ret = open_source(&r);
	if (ret)
		goto out_free;
	ret = new_session(&r);
	if (ret)
		goto out_free;
	ret = open_outputs(&r.o);
	if (ret)
		goto out_session;
	/* 3. the writable targets */
	ret = boundary_prepare_targets(r.policy, r.root_fd, &r.root_st, r.src);
	if (ret)
		goto out_session;
	init_inodes(&r);
	check_acls(&r);
	init_ops(&r);
	/* 4. the mount; never auto_unmount (see the head of this file) */
	ret = install_signals(&r);
	if (ret)
		goto out_session;
	ret = mount_session(&r);
	if (ret)
		goto out_signals;
	ret = check_session(&r);
	if (ret)
		goto out_unmount;
	pt_configure(r.passthrough,
		     r.o.record_changes || r.policy->record_changes, fuse_session_fd(r.se), r.root_fd);
	uring_configure(r.io_uring, fuse_session_fd(r.se));
	/* 5. the aliases, before the caller is told the mount is ready */
	ret = bind_aliases(r.mnt, r.o.also_at, r.o.nalso);
	if (ret)
		goto out_unmount;
	/* 6. only what serving needs, before the first request */
	ret = drop_privileges();
	if (ret)
		goto out_aliases;
	/* what the kernel accepted (passthrough) belongs in the mount line */
	ret = first_request(&r);
	if (ret)
		goto out_aliases;
	announce(&r);
	ret = go_background(&r);
	if (ret)
		goto out_aliases;
	ret = serve(&r);
out_aliases:
	privs_for_unmount();	/* CAP_SYS_ADMIN back, on this thread only, to unmount */
	token_withdraw(r.mnt, r.o.also_at, r.o.nalso);
	unbind_aliases(r.o.also_at, r.o.nalso, r.mnt);
out_unmount:
	fuse_session_unmount(r.se);
	if (r.over_dead)
		remount_unmount(r.mnt);
out_signals:
	loop_remove_signal_handlers();
out_session:
	fuse_session_destroy(r.se);
out_free:
	release(&r);
	return ret;
}
