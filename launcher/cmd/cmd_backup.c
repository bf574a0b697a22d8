/*
 * backup-etc, as Omnibus has it: one tar archive of the operator's configuration (the
 * root's etc/gitlab, gitlab.rb and whatever sits beside it) and of the generated tree
 * (<install>/sv without runsv's supervise/, <install>/etc), named
 * gitlab_config_<epoch>_<YYYY_MM_DD>.tar, mode 0600, in a directory only the invoking
 * user (root) can enter. The archive holds secrets, so the directory is checked before
 * anything is written there, and tar(1) stores links as links (it never follows one).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build_config.h"
#include "cmd/commands.h"
#include "lib/alloc.h"
#include "lib/grow.h"
#include "lib/dirtrust.h"
#include "lib/pathsafe.h"
#include "lib/rootlock.h"
#include "lib/spawn.h"
#include "lib/pathjoin.h"

#define BACKUP_KEEP_DEFAULT 7
#define BACKUP_PREFIX       "gitlab_config_"

struct backup_opts {
	char dir[PATH_MAX];
	bool prune;
	long long keep;
};

static int backup_parse(const struct ctl *ctl, int argc, char **argv, struct backup_opts *o)
{
	static const struct option longopts[] = {
	    {"delete-old-backups", no_argument, NULL, 'd'},
	    {"keep", required_argument, NULL, 'k'},
	    {"path", required_argument, NULL, 'p'},
	    {NULL, 0, NULL, 0},
	};
	const char *path = NULL, *why = NULL;
	o->prune = false;
	o->keep = BACKUP_KEEP_DEFAULT;
	optind = 1;
	for (int ch; (ch = command_getopt(argc, argv, "+k:p:", longopts)) != -1;) {
		if (ch == 'd')
			o->prune = true;
		else if (ch == 'p')
			path = optarg;
		else if (ch == 'k') {
			o->keep = strtonum(optarg, 1, 100000, &why);
			if (why != NULL) {
				fprintf(stderr, "gitlab-ctl backup-etc: -k %s: %s (a count >= 1)\n",
				        optarg, why);
				return 2;
			}
		} else
			return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "gitlab-ctl backup-etc: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (path == NULL)
		return ctl_path(ctl, o->dir, sizeof o->dir, "/etc/gitlab/config_backup",
		                (char *)NULL) == 0
		           ? 0
		           : 2;
	if (path[0] != '/' || pathsafe_normalize(path, o->dir, sizeof o->dir, &why) == -1) {
		fprintf(stderr, "gitlab-ctl backup-etc: -p %s: %s\n", path,
		        why ? why : "is not an absolute path");
		return 2;
	}
	return 0;
}

/*
 * Open the backup directory (made 0700 when missing, its parent must exist) with no link
 * followed at its last component, and refuse one that another account could write to.
 */
static int backup_dir_open(const char *dir)
{
	char bad[PATH_MAX];
	const char *why = NULL;
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		fprintf(stderr, "gitlab-ctl backup-etc: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (dirtrust_path("", dir, bad, sizeof bad, &why) == -1) {
		fprintf(stderr,
		        "gitlab-ctl backup-etc: refusing %s: %s %s (only root may write to it and "
		        "the directories above it)\n",
		        dir, bad, why);
		return -1;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd == -1 || fstat(fd, &st) == -1) {
		fprintf(stderr, "gitlab-ctl backup-etc: %s: %s\n", dir, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	const char *reason = st.st_uid != geteuid() ? "not owned by root"
	                     : (st.st_mode & 0077)  ? "readable or writable by others (chmod 0700)"
	                                            : NULL;
	if (reason != NULL) {
		fprintf(stderr,
		        "gitlab-ctl backup-etc: refusing %s: %s; the archive holds secrets\n", dir,
		        reason);
		close(fd);
		return -1;
	}
	return fd;
}

/* The members that exist, relative to the root: tar runs in the root's "/". */
static size_t backup_members(const struct ctl *ctl, char **argv, size_t n, char store[][64])
{
	static const char *const want[] = {GITLAB_CTL_CONFIG_FILE, GITLAB_CTL_INSTALL_DIR "/sv",
	                                   GITLAB_CTL_INSTALL_DIR "/etc"};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char path[PATH_MAX];
		struct stat st;
		const char *abs = want[i];
		/* gitlab.rb's directory: Omnibus keeps what sits beside gitlab.rb too */
		char etc[64];
		if (i == 0) {
			strlcpy(etc, abs, sizeof etc);
			char *slash = strrchr(etc, '/');
			if (slash != NULL && slash != etc)
				*slash = '\0';
			abs = etc;
		}
		if (ctl_path(ctl, path, sizeof path, abs, (char *)NULL) == -1 ||
		    lstat(path, &st) == -1 || !S_ISDIR(st.st_mode))
			continue;
		strlcpy(store[i], abs + 1, sizeof store[i]);
		argv[n++] = store[i];
	}
	return n;
}

/* tar into fd: links stored as links, runsv's state and the backups themselves left out. */
static int backup_tar(const struct ctl *ctl, const char *dir, int fd)
{
	char top[PATH_MAX + 1], excl[PATH_MAX + 16], store[3][64];
	size_t rl = strlen(ctl->root);
	if (path_fmt(top, sizeof top, "%s/", ctl->root) == -1)
		return -1;
	/* the backup directory's name inside the archive, when it lies below the root */
	const char *rel =
	    strlen(dir) > rl + 1 && pathsafe_below(dir, rl ? ctl->root : "/") ? dir + rl + 1 : NULL;
	if (rel != NULL && path_fmt(excl, sizeof excl, "--exclude=%s", rel) == -1)
		return -1;
	char *argv[16] = {"tar",
	                  "--create",
	                  "--file=-",
	                  "--directory",
	                  top,
	                  "--numeric-owner",
	                  "--format=gnu",
	                  "--one-file-system",
	                  "--exclude=supervise",
	                  rel ? excl : "--exclude=supervise"};
	size_t n = backup_members(ctl, argv, 10, store);
	if (n == 10) {
		fprintf(stderr, "gitlab-ctl backup-etc: nothing to back up below %s\n", top);
		return -1;
	}
	argv[n] = NULL;
	const struct spawn sp = {.out = fd, .err = SPAWN_INHERIT};
	int rc = spawn_wait("/usr/bin/tar", argv, &sp);
	if (rc != 0) {
		fprintf(stderr, "gitlab-ctl backup-etc: tar failed (%s %d)\n",
		        rc < 0 ? strerror(errno) : "exit", rc);
		return -1;
	}
	return 0;
}

/* Write the archive under a temporary name, then rename it: no half archive is ever seen. */
static int backup_write(const struct ctl *ctl, const char *dir, int dfd, char *name, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;
	char day[16], tmp[NAME_MAX + 1];
	if (localtime_r(&now, &tm) == NULL || strftime(day, sizeof day, "%Y_%m_%d", &tm) == 0)
		return -1;
	if (path_fmt(name, len, BACKUP_PREFIX "%lld_%s.tar", (long long)now, day) == -1 ||
	    path_fmt(tmp, sizeof tmp, ".backup.%ld.tmp", (long)getpid()) == -1)
		return -1;
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1) {
		fprintf(stderr, "gitlab-ctl backup-etc: %s/%s: %s\n", dir, tmp, strerror(errno));
		return -1;
	}
	int rc = backup_tar(ctl, dir, fd);
	if (rc == 0 && fsync(fd) == -1)
		rc = -1;
	if (close(fd) == -1)
		rc = -1;
	if (rc == 0 && faccessat(dfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		fprintf(stderr, "gitlab-ctl backup-etc: %s/%s already exists; try again\n", dir,
		        name);
		rc = -1;
	} else if (rc == 0 && renameat(dfd, tmp, dfd, name) == -1) {
		fprintf(stderr, "gitlab-ctl backup-etc: %s/%s: %s\n", dir, name, strerror(errno));
		rc = -1;
	}
	if (rc != 0)
		unlinkat(dfd, tmp, 0);
	return rc;
}

/* The epoch of a name this verb writes, or -1. */
static long long backup_epoch(const char *name)
{
	size_t p = strlen(BACKUP_PREFIX), n = strlen(name);
	if (strncmp(name, BACKUP_PREFIX, p) != 0 || n < p + 16 || strcmp(name + n - 4, ".tar") != 0)
		return -1;
	char *end;
	errno = 0;
	long long e = strtoll(name + p, &end, 10);
	return errno == 0 && end != name + p && *end == '_' && e >= 0 ? e : -1;
}

struct backup_entry {
	long long epoch;
	char name[NAME_MAX + 1];
};

static int by_epoch_desc(const void *a, const void *b)
{
	const struct backup_entry *x = a, *y = b;
	return x->epoch < y->epoch ? 1 : x->epoch > y->epoch ? -1 : strcmp(y->name, x->name);
}

/* Keep the newest keep archives; only regular files this verb names are removed. */
static int backup_prune(int dfd, const char *dir, long long keep)
{
	int fd = dup(dfd);
	DIR *d = fd == -1 ? NULL : fdopendir(fd);
	if (d == NULL) {
		if (fd != -1)
			close(fd);
		fprintf(stderr, "gitlab-ctl backup-etc: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	struct backup_entry *v = NULL;
	size_t n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		struct stat st;
		long long epoch = backup_epoch(e->d_name);
		if (epoch < 0 || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISREG(st.st_mode))
			continue;
		grow(&v, &cap, n + 1, sizeof *v, 8);
		v[n].epoch = epoch;
		strlcpy(v[n].name, e->d_name, sizeof v[n].name);
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(v, n, sizeof *v, by_epoch_desc);
	int rc = 0, removed = 0;
	for (size_t i = (size_t)keep; i < n; i++) {
		if (unlinkat(dfd, v[i].name, 0) == -1) {
			fprintf(stderr, "gitlab-ctl backup-etc: %s/%s: %s\n", dir, v[i].name,
			        strerror(errno));
			rc = -1;
		} else
			removed++;
	}
	printf("Removed %d old configuration backup%s (keeping the newest %lld)\n", removed,
	       removed == 1 ? "" : "s", keep);
	free(v);
	return rc;
}

int cmd_backup_etc(const struct ctl *ctl, int argc, char **argv)
{
	struct backup_opts o;
	int rc = backup_parse(ctl, argc, argv, &o);
	if (rc != 0)
		return rc;
	int lock = -1;
	if (command_lock(ctl, false, &lock) == -1)
		return 1;
	int dfd = backup_dir_open(o.dir);
	char name[NAME_MAX + 1];
	rc = 1;
	if (dfd != -1 && backup_write(ctl, o.dir, dfd, name, sizeof name) == 0) {
		printf("Configuration backup archive complete: %s/%s\n", o.dir, name);
		rc = o.prune && backup_prune(dfd, o.dir, o.keep) == -1 ? 1 : 0;
	}
	if (dfd != -1)
		close(dfd);
	rootlock_release(lock);
	return rc;
}
