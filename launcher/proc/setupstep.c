/* One-time setup steps, done only when seen done (see setupstep.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/pathjoin.h"
#include "lib/proctree.h"
#include "lib/rmtree.h"
#include "proc/setupstep.h"
#include "proc/svrun.h"
#include "render/tree.h"

/* How long a killed orphan may take to go away. */
#define ORPHAN_GONE_MS 10000

static const char *svc_name(const struct setupstep *x)
{
	return x->svc->def->name;
}

static const char *step_name(const struct setupstep *x)
{
	return x->st->def->name;
}

/*
 * Open the directory at path, walked from / with O_NOFOLLOW: a link a
 * service account placed in its own directories is never followed by root.
 * The fd, or -1 with errno (ELOOP or ENOTDIR: a symlink on the way).
 */
static int open_dir_nofollow(const char *path)
{
	char buf[PATH_MAX], *save = NULL;
	if (strlcpy(buf, path, sizeof buf) >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* Not O_PATH: the last one is fsync'd after a rename in it. */
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (char *comp = strtok_r(buf, "/", &save); fd != -1 && comp != NULL;
	     comp = strtok_r(NULL, "/", &save)) {
		int nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		errno = e;
		fd = nfd;
	}
	return fd;
}

/* The directory above path, open (as above), and path's last component in *base. */
static int open_parent(const char *path, char *base, size_t len)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	if (slash == NULL || strlcpy(base, slash + 1, len) >= len ||
	    (size_t)(slash - path) >= sizeof dir) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return open_dir_nofollow(dir[0] ? dir : "/");
}

/* Does path exist (not following links)? 1 yes, 0 no, -1 with errno. */
static int exists_nofollow(const char *path)
{
	char base[NAME_MAX + 1];
	struct stat sb;
	int fd = open_parent(path, base, sizeof base);
	if (fd == -1)
		return errno == ENOENT ? 0 : -1;
	int r = fstatat(fd, base, &sb, AT_SYMLINK_NOFOLLOW);
	int e = errno;
	close(fd);
	errno = e;
	return r == 0 ? 1 : errno == ENOENT ? 0 : -1;
}

/* ---- records -------------------------------------------------------------------------- */

static int put(const struct setupstep *x, enum step_state state, pid_t pid,
               unsigned long long start, const char *path)
{
	struct step_entry e = {.state = state, .pid = pid, .start = start};
	if (path != NULL)
		strlcpy(e.path, path, sizeof e.path);
	if (steprec_put(x->rec, svc_name(x), step_name(x), &e) == 0)
		return 0;
	diag_add(x->d, DIAG_ERR, "%s: setup step %s: cannot record it in %s: %s", svc_name(x),
	         step_name(x), x->rec->dir, strerror(errno));
	return -1;
}

struct started {
	const struct setupstep *x;
};

/* The step's process exists and waits at svrun's gate: record it by pid and start time. */
static int record_started(void *ctx, pid_t pid)
{
	const struct setupstep *x = ((struct started *)ctx)->x;
	struct pstat ps;
	if (proc_stat(pid, &ps) == -1)
		return -1;
	return put(x, STEP_RUNNING, pid, ps.start, x->st->staging);
}

/* ---- an earlier run's leftovers ----------------------------------------------------------- */

/* Is pid still the process that started at start (a zombie is gone)? */
static bool same_process(pid_t pid, unsigned long long start)
{
	struct pstat ps;
	return proc_stat(pid, &ps) == 0 && ps.start == start && ps.state != 'Z' && ps.state != 'X';
}

/*
 * Kill what is left of a recorded step process: the process itself, if its
 * pid still names it, and its process group, if that id still names its
 * group (proc_group_is). 0 when gone, -1 when it outlived ORPHAN_GONE_MS.
 */
static int stop_orphan(const struct step_entry *e)
{
	long until = mono_ms() + ORPHAN_GONE_MS;
	if (e->pid <= 1)
		return 0;
	for (;;) {
		bool leader = same_process(e->pid, e->start);
		bool group = proc_group_is(e->pid, e->start) && kill(-e->pid, 0) == 0;
		if (!leader && !group)
			return 0;
		if (mono_ms() > until)
			return -1;
		if (leader)
			kill(e->pid, SIGKILL);
		if (group)
			kill(-e->pid, SIGKILL);
		sleep_ms(20);
	}
}

/* Only a name root gave a staging directory is removed: ".<name>.setup-<16 hex>". */
static bool is_staging_name(const char *path)
{
	const char *b = strrchr(path, '/'), *s;
	if (b == NULL || b[1] != '.' || (s = strstr(b, ".setup-")) == NULL || s == b + 1)
		return false;
	s += 7;
	size_t n = strspn(s, "0123456789abcdef");
	return n == 16 && s[n] == '\0';
}

/* A record says the step was running: stop its process, remove its staging directory. */
static int clear_interrupted(const struct setupstep *x, const struct step_entry *e)
{
	char runs[64] = "";
	if (e->pid > 0 && (same_process(e->pid, e->start) || kill(-e->pid, 0) == 0))
		snprintf(runs, sizeof runs, " and still runs (pid %ld): stopping it", (long)e->pid);
	/* Live: stopping it may take its grace time. */
	diag_progress(x->d, "%s: setup step %s of an earlier run was interrupted%s\n", svc_name(x),
	              step_name(x), runs);
	if (stop_orphan(e) == -1) {
		diag_add(x->d, DIAG_ERR,
		         "%s: setup step %s: pid %ld of an earlier run does not exit", svc_name(x),
		         step_name(x), (long)e->pid);
		return -1;
	}
	if (e->path[0] != '\0' && is_staging_name(e->path) && rmtree_diags(e->path, x->d) == -1) {
		diag_add(x->d, DIAG_ERR, "%s: setup step %s: cannot remove %s", svc_name(x),
		         step_name(x), e->path);
		return -1;
	}
	return put(x, STEP_NONE, 0, 0, NULL);
}

int setupstep_assess(const struct setupstep *x, bool dry_run, enum setupstep_need *need,
                     const char **why)
{
	struct step_entry e;
	*need = SETUP_RUN;
	*why = "is missing";
	if (steprec_get(x->rec, svc_name(x), step_name(x), &e) == -1) {
		diag_add(
		    x->d, DIAG_ERR,
		    "%s: setup step %s: cannot read its record in %s (remove it to run the step "
		    "again): %s",
		    svc_name(x), step_name(x), x->rec->dir, strerror(errno));
		return -1;
	}
	if (e.state == STEP_RUNNING) {
		*why = "was interrupted";
		if (dry_run)
			return 0;
		if (clear_interrupted(x, &e) == -1)
			return -1;
	}
	int have = exists_nofollow(x->st->creates);
	if (have == -1) {
		diag_add(x->d, DIAG_ERR, "%s: setup step %s: %s: %s", svc_name(x), step_name(x),
		         x->st->creates, strerror(errno));
		return -1;
	}
	if (have == 1)
		*need = e.state == STEP_DONE && strcmp(e.path, x->st->creates) == 0 ? SETUP_DONE
		                                                                    : SETUP_UNKNOWN;
	return 0;
}

/* ---- running it ------------------------------------------------------------------------ */

/* The staging directory, made by root (the name is root's choice) and given to the account. */
static int make_staging(const struct setupstep *x)
{
	char name[NAME_MAX + 1];
	struct stat sb;
	int pfd = open_parent(x->st->staging, name, sizeof name);
	if (pfd == -1)
		return -1;
	int fd = -1;
	if (mkdirat(pfd, name, 0700) == 0)
		fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int e = errno;
	close(pfd);
	if (fd == -1) {
		errno = e;
		return -1;
	}
	int rc = 0;
	/* The one we made: the account may have swapped the name since. */
	if (fstat(fd, &sb) == -1 || sb.st_uid != geteuid()) {
		errno = EPERM;
		rc = -1;
	} else if (x->uid != TREE_NO_OWNER &&
	           (fchown(fd, x->uid, x->gid) == -1 || fchmod(fd, 0700) == -1)) {
		rc = -1;
	}
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

/* Rename the staging directory to `creates`, never over something there. */
static int publish(const struct setupstep *x)
{
	char from[NAME_MAX + 1], to[NAME_MAX + 1];
	int pfd = open_parent(x->st->staging, from, sizeof from);
	if (pfd == -1)
		return -1;
	int qfd = open_parent(x->st->creates, to, sizeof to);
	int rc = qfd == -1 ? -1 : renameat2(pfd, from, qfd, to, RENAME_NOREPLACE);
	if (rc == 0)
		rc = fsync(qfd);
	int e = errno;
	close(pfd);
	if (qfd != -1)
		close(qfd);
	errno = e;
	return rc;
}

/* The command failed or was not published: nothing of it stays, nor its record. */
static void discard(const struct setupstep *x)
{
	if (x->st->staging != NULL)
		(void)rmtree_diags(x->st->staging, x->d);
	(void)put(x, STEP_NONE, 0, 0, NULL);
}

static void step_failed(const struct setupstep *x, int rc, int err)
{
	if (rc == -1 && err == ETIMEDOUT)
		diag_add(x->d, DIAG_ERR,
		         "%s: setup step %s: not finished within its timeout (%d s)", svc_name(x),
		         step_name(x), x->st->def->timeout);
	else if (rc == -1)
		diag_add(x->d, DIAG_ERR, "%s: setup step %s: %s", svc_name(x), step_name(x),
		         strerror(err));
	else
		diag_add(x->d, DIAG_ERR, "%s: setup step %s: %s exited with status %d", svc_name(x),
		         step_name(x), x->st->argv[0], rc);
}

int setupstep_run(const struct setupstep *x, struct buf *out)
{
	const struct plan_step *st = x->st;
	if (put(x, STEP_RUNNING, 0, 0, st->staging) == -1)
		return -1;
	if (st->staging != NULL && make_staging(x) == -1) {
		diag_add(x->d, DIAG_ERR, "%s: setup step %s: cannot make %s: %s", svc_name(x),
		         step_name(x), st->staging, strerror(errno));
		(void)put(x, STEP_NONE, 0, 0, NULL);
		return -1;
	}
	struct started ctx = {x};
	long deadline = mono_ms() + st->def->timeout * 1000L;
	int rc = svrun_gated(x->ctl, x->svc, st->argv, deadline, out, NULL, record_started, &ctx);
	int e = errno;
	if (rc != 0) {
		step_failed(x, rc, e);
		discard(x);
		return -1;
	}
	if (st->staging != NULL && publish(x) == -1) {
		diag_add(x->d, DIAG_ERR, "%s: setup step %s: cannot rename %s to %s: %s",
		         svc_name(x), step_name(x), st->staging, st->creates, strerror(errno));
		discard(x);
		return -1;
	}
	if (st->staging == NULL && exists_nofollow(st->creates) != 1) {
		diag_add(x->d, DIAG_ERR, "%s: setup step %s: exited 0 but %s is not there",
		         svc_name(x), step_name(x), st->creates);
		discard(x);
		return -1;
	}
	return put(x, STEP_DONE, 0, 0, st->creates);
}

/* ---- a result nobody recorded ---------------------------------------------------------------- */

/* Move `creates` aside to "<creates>.unverified-<16 hex>", beside it. */
static int move_aside(const struct setupstep *x, char *moved, size_t len)
{
	char base[NAME_MAX + 1], to[NAME_MAX + 1];
	unsigned char rnd[8];
	int pfd = open_parent(x->st->creates, base, sizeof base);
	if (pfd == -1)
		return -1;
	arc4random_buf(rnd, sizeof rnd);
	int n = snprintf(to, sizeof to, "%s.unverified-", base);
	for (size_t i = 0; i < sizeof rnd && n > 0 && (size_t)n + 3 <= sizeof to; i++)
		n += snprintf(to + n, sizeof to - (size_t)n, "%02x", rnd[i]);
	int rc = renameat2(pfd, base, pfd, to, RENAME_NOREPLACE);
	if (rc == 0)
		rc = fsync(pfd);
	int e = errno;
	close(pfd);
	errno = e;
	if (path_fmt(moved, len, "%.*s/%s", (int)(strrchr(x->st->creates, '/') - x->st->creates),
	             x->st->creates, to) == -1 &&
	    rc == 0)
		rc = -1; /* moved, but its new name does not fit the caller's buffer */
	return rc;
}

int setupstep_adopt(const struct setupstep *x, char *moved, size_t len, struct buf *out)
{
	const struct plan_step *st = x->st;
	int rc = 0;
	if (st->verify != NULL) {
		long deadline = mono_ms() + st->def->timeout * 1000L;
		rc = svrun(x->ctl, x->svc, st->verify, deadline, out, NULL);
	}
	if (rc == 0) {
		diag_progress(
		    x->d, "%s: setup step %s: %s was not recorded as made by it; %s, kept\n",
		    svc_name(x), step_name(x), st->creates,
		    st->verify != NULL ? "it passes the verify command" : "nothing to verify it");
		return put(x, STEP_DONE, 0, 0, st->creates) == 0 ? 1 : -1;
	}
	if (move_aside(x, moved, len) == -1) {
		diag_add(
		    x->d, DIAG_ERR,
		    "%s: setup step %s: %s fails its verify command and cannot be moved aside: %s",
		    svc_name(x), step_name(x), st->creates, strerror(errno));
		return -1;
	}
	diag_progress(x->d,
	              "%s: setup step %s: %s fails its verify command (not made by a completed "
	              "step): moved aside to %s\n",
	              svc_name(x), step_name(x), st->creates, moved);
	return 0;
}
