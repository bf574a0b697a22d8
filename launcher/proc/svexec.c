/* Becoming a service's process (see svexec.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/fdio.h"
#include "lib/gcovflush.h"
#include "lib/pathsearch.h"
#include "lib/ptyrelay.h"
#include "proc/svexec.h"

/*
 * The groups the target runs with: the primary group first, then those
 * --groups names. Nothing else: chpst -u user:group does the same, and every
 * group a service does not need is access it should not have. (initgroups()
 * would also walk every NSS group database; with systemd's module that was
 * half of exec's instructions.)
 */
#define EXEC_MAX_GROUPS 32

struct gidset {
	gid_t v[EXEC_MAX_GROUPS];
	size_t n;
};

/* 0 found; -1 failed (in d); 1 absent and if_present (a warning in d). */
static int lookup_group_if(const char *name, gid_t *gid, bool if_present, struct diags *d)
{
	errno = 0;
	const struct group *gr = getgrnam(name);
	if (gr == NULL) {
		if (errno != 0) {
			diag_add(d, DIAG_ERR, "exec: group %s: %s", name, strerror(errno));
		} else if (if_present) {
			diag_add(d, DIAG_WARN,
			         "exec: no group %s here (no reconfigure made its "
			         "service's account on this machine): not joined",
			         name);
			return 1;
		} else {
			diag_add(d, DIAG_ERR, "exec: no such group: %s", name);
		}
		return -1;
	}
	*gid = gr->gr_gid;
	return 0;
}

static int lookup_group(const char *name, gid_t *gid, struct diags *d)
{
	return lookup_group_if(name, gid, false, d);
}

static bool gidset_has(const struct gidset *gs, gid_t gid)
{
	for (size_t i = 0; i < gs->n; i++)
		if (gs->v[i] == gid)
			return true;
	return false;
}

/* Appends the comma-separated group names of list; duplicates are dropped. */
static int gidset_add_list(struct gidset *gs, const char *list, bool if_present, struct diags *d)
{
	char buf[1024], *save = NULL;
	if (strlcpy(buf, list, sizeof buf) >= sizeof buf) {
		diag_add(d, DIAG_ERR, "exec: --groups: list too long");
		return -1;
	}
	if (buf[0] == '\0' || buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,")) {
		diag_add(d, DIAG_ERR, "exec: --groups '%s': empty group name", list);
		return -1;
	}
	for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		gid_t gid;
		int rc = lookup_group_if(name, &gid, if_present, d);
		if (rc == -1)
			return -1;
		if (rc == 1 || gidset_has(gs, gid))
			continue;
		if (gs->n == EXEC_MAX_GROUPS) {
			diag_add(d, DIAG_ERR, "exec: --groups: more than %d groups",
			         EXEC_MAX_GROUPS);
			return -1;
		}
		gs->v[gs->n++] = gid;
	}
	return 0;
}

/* The kernel's supplementary list is exactly gs, in any order. */
static bool groups_are(const struct gidset *gs)
{
	gid_t now[EXEC_MAX_GROUPS + 1];
	int n = getgroups(EXEC_MAX_GROUPS + 1, now);
	if (n < 0 || (size_t)n != gs->n)
		return false;
	for (int i = 0; i < n; i++)
		if (!gidset_has(gs, now[i]))
			return false;
	return true;
}

/* setgroups, setgid, setuid, in that order (doas, chpst), then prove it. */
static int become(const struct passwd *pw, const struct gidset *gs, struct diags *d)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid, gid = gs->v[0];

	if (setgroups(gs->n, gs->v) == -1) {
		diag_add(d, DIAG_ERR, "exec: setgroups for %s: %s", pw->pw_name, strerror(errno));
		return -1;
	}
	if (setresgid(gid, gid, gid) == -1) {
		diag_add(d, DIAG_ERR, "exec: setgid %lu: %s", (unsigned long)gid, strerror(errno));
		return -1;
	}
	if (setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) == -1) {
		diag_add(d, DIAG_ERR, "exec: setuid %s: %s", pw->pw_name, strerror(errno));
		return -1;
	}
	if (getresuid(&ruid, &euid, &suid) == -1 || getresgid(&rgid, &egid, &sgid) == -1 ||
	    ruid != pw->pw_uid || euid != pw->pw_uid || suid != pw->pw_uid || rgid != gid ||
	    egid != gid || sgid != gid || !groups_are(gs)) {
		diag_add(d, DIAG_ERR, "exec: user %s: ids did not change as asked", pw->pw_name);
		return -1;
	}
	if (pw->pw_uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
		diag_add(d, DIAG_ERR, "exec: user %s: could regain root after dropping it",
		         pw->pw_name);
		return -1;
	}
	return 0;
}

static int lookup_user(const char *user, const struct passwd **pw, struct diags *d)
{
	errno = 0;
	*pw = getpwnam(user);
	if (*pw != NULL)
		return 0;
	if (errno != 0)
		diag_add(d, DIAG_ERR, "exec: user %s: %s", user, strerror(errno));
	else
		diag_add(d, DIAG_ERR, "exec: no such user: %s", user);
	return -1;
}

/* Not root: only "stay who we are" is possible, anything else is an error. */
static int check_unprivileged(const struct passwd *pw, const char *user, const char *group,
                              const struct gidset *gs, struct diags *d)
{
	if (pw != NULL && pw->pw_uid != geteuid()) {
		diag_add(d, DIAG_ERR, "exec: cannot run as %s: only root can switch users", user);
		return -1;
	}
	if (gs->v[0] != getegid()) {
		/* No --group: the user's primary group was asked for. */
		if (group != NULL && group[0] != '\0')
			diag_add(d, DIAG_ERR,
			         "exec: cannot run as group %s: only root can switch groups",
			         group);
		else
			diag_add(d, DIAG_ERR,
			         "exec: cannot run as %s's primary group %lu: only root can switch "
			         "groups",
			         user, (unsigned long)gs->v[0]);
		return -1;
	}
	gid_t now[EXEC_MAX_GROUPS + 1];
	int n = getgroups(EXEC_MAX_GROUPS + 1, now);
	if (n == -1 && gs->n > 1) {
		diag_add(d, DIAG_ERR, "exec: getgroups: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 1; i < gs->n; i++) {
		bool have = false;
		for (int j = 0; j < n; j++)
			have = have || now[j] == gs->v[i];
		if (!have) {
			diag_add(d, DIAG_ERR,
			         "exec: cannot add group %lu: only root can set groups",
			         (unsigned long)gs->v[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * Run as the service user. As root: switch to user and group (default its
 * primary group), with only the --groups as supplementary groups.
 */
static int set_credentials(const struct svexec *t, struct diags *d)
{
	const char *user = t->user, *group = t->group, *groups = t->groups;
	const struct passwd *pw = NULL;
	struct gidset gs = {.v = {getegid()}, .n = 1};

	if (user != NULL && user[0] != '\0') {
		if (lookup_user(user, &pw, d) == -1)
			return -1;
		gs.v[0] = pw->pw_gid;
	}
	if (group != NULL && group[0] != '\0' && lookup_group(group, &gs.v[0], d) == -1)
		return -1;
	if (groups != NULL && gidset_add_list(&gs, groups, t->groups_if_present, d) == -1)
		return -1;
	if (geteuid() != 0)
		return check_unprivileged(pw, user, group, &gs, d);
	if (pw != NULL)
		return become(pw, &gs, d);
	if ((group != NULL && group[0] != '\0') || groups != NULL) {
		if (setgroups(gs.n, gs.v) == -1 || setresgid(gs.v[0], gs.v[0], gs.v[0]) == -1) {
			diag_add(d, DIAG_ERR, "exec: setgid %lu: %s", (unsigned long)gs.v[0],
			         strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 * A missing LD_PRELOAD object makes ld.so print an error into the service log
 * on every start; say it once, clearly, and start without it. Checked after
 * the user switch, so "readable" means readable by the service user. The
 * value is left byte for byte as configured unless something is dropped.
 */
static void filter_preload(struct envv *env, struct diags *d)
{
	const char *val = envv_get(env, "LD_PRELOAD");
	if (val == NULL)
		return;
	char *copy = xstrdup(val);
	struct buf kept;
	buf_init(&kept);
	bool dropped = false;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ": \t", &save); tok; tok = strtok_r(NULL, ": \t", &save)) {
		/* Names without '/' are searched by ld.so in its own paths: leave them. */
		if (strchr(tok, '/') != NULL && access(tok, R_OK) == -1) {
			diag_add(d, DIAG_WARN,
			         "exec: LD_PRELOAD: %s: %s; dropped, the service starts without it",
			         tok, strerror(errno));
			dropped = true;
			continue;
		}
		buf_addf(&kept, "%s%s", kept.len ? ":" : "", tok);
	}
	if (dropped && kept.len == 0)
		envv_unset(env, "LD_PRELOAD");
	else if (dropped)
		envv_set(env, "LD_PRELOAD", kept.p);
	free(copy);
	buf_free(&kept);
}

/*
 * Find the command as a shell does (lib/pathsearch: never in the cwd), in the PATH of the NEW
 * environment, as the account: credentials are already switched. Returns 0 with the path in
 * out, or the exit status to use.
 */
static int resolve(const char *cmd, const struct envv *env, char *out, size_t outlen,
                   struct diags *d)
{
	const char *path = envv_get(env, "PATH");
	if (path_search(path, cmd, path_runnable_self, NULL, out, outlen) == 0)
		return 0;
	if (errno == EACCES) {
		diag_add(d, DIAG_ERR, "exec: %s: found in PATH but not executable", cmd);
		return SVEXEC_NOTEXEC;
	}
	if (errno == ENAMETOOLONG)
		diag_add(d, DIAG_ERR, "exec: %s: path too long", cmd);
	else
		diag_add(d, DIAG_ERR, "exec: %s: not found in PATH=%s", cmd,
		         path != NULL ? path : PATHSEARCH_DEFAULT);
	return SVEXEC_NOTFOUND;
}

/*
 * The signals ignored now, from SigIgn in /proc/self/status (3 syscalls, not one per signal).
 * 0, or -1 when /proc cannot tell.
 */
static int ignored_signals(unsigned long long *mask)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	ssize_t n = fdio_read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *p = strstr(buf, "\nSigIgn:");
	char *end;
	if (p == NULL)
		return -1;
	errno = 0;
	*mask = strtoull(p + strlen("\nSigIgn:"), &end, 16);
	return errno != 0 || (*end != '\n' && *end != '\0') ? -1 : 0;
}

/*
 * Undo whatever runsv, a shell or a container runtime left: ignored signals survive execve
 * (handled ones are reset by it), so only those are set back to default.
 */
static void reset_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	unsigned long long ign = ~0ULL;
	if (ignored_signals(&ign) == -1)
		ign = ~0ULL; /* no /proc: every signal */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && (sig > 64 || (ign >> (sig - 1)) & 1))
			(void)sigaction(sig, &sa, NULL); /* EINVAL for libc-reserved ones */
	sigset_t none;
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Root about to become an account: the boundary root's terminal must not cross. */
static bool to_account(const struct svexec *t)
{
	if (geteuid() != 0 || t->user == NULL || t->user[0] == '\0')
		return false;
	const struct passwd *pw = getpwnam(t->user);
	return pw != NULL && pw->pw_uid != 0;
}

/*
 * Leave the caller's session and controlling terminal: a new session, or, for a
 * process that already leads its group (a shell's job, PID 1) and so cannot start
 * one, giving the terminal up (TIOCNOTTY). Then /dev/tty must not open: an
 * account holding root's terminal could push input into root's shell (TIOCSTI).
 */
static int leave_terminal(const char *account, struct diags *d)
{
	if (setsid() == -1) {
		int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd != -1) {
			/* A session leader that lets go hangs up its foreground: maybe us. */
			(void)signal(SIGHUP, SIG_IGN); /* back to default in reset_signals */
			(void)ioctl(fd, TIOCNOTTY);
			close(fd);
		}
	}
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd == -1 && (errno == ENXIO || errno == ENOENT))
		return 0;
	if (fd != -1)
		close(fd);
	if (account == NULL)
		return 0;
	diag_add(
	    d, DIAG_ERR,
	    "exec: cannot leave the controlling terminal; %s is not run while it could open it",
	    account);
	return -1;
}

/*
 * An account never gets root's terminal: at a terminal it runs on a fresh pty
 * that this process relays (the parent returns the child's status, the child
 * goes on); otherwise it keeps stdio, which is not a terminal, without a
 * controlling one. Returns -1 to go on, else the status to exit with.
 */
static int away_from_terminal(const struct svexec *t, struct diags *d)
{
	bool account = to_account(t);
	if (account && ptyrelay_wanted()) {
		int status;
		pid_t pid = ptyrelay_fork(&status);
		if (pid == -1) {
			diag_add(
			    d, DIAG_ERR,
			    "exec: no pty to run %s on instead of this terminal; run it with "
			    "stdin, stdout and stderr away from the terminal (</dev/null >FILE "
			    "2>&1): %s",
			    t->user, strerror(errno));
			return 1;
		}
		return pid > 0 ? status : -1; /* the child: its session and pty are set up */
	}
	if ((account || t->own_pgrp) && leave_terminal(account ? t->user : NULL, d) == -1)
		return 1;
	return -1;
}

int svexec_prepare(struct svexec *t, char *path, size_t len, struct diags *d)
{
	int away = away_from_terminal(t, d);
	if (away != -1)
		return away;
	if (set_credentials(t, d) == -1)
		return 1;
	umask(077);
	if (t->home != NULL && t->home[0] != '\0' && chdir(t->home) == -1) {
		diag_add(d, DIAG_ERR, "exec: chdir %s: %s", t->home, strerror(errno));
		return 1;
	}
	filter_preload(&t->env, d);
	int rc = resolve(t->argv[0], &t->env, path, len, d);
	return rc != 0 ? rc : -1;
}

int svexec_replace(struct svexec *t, const char *path, struct diags *d)
{
	reset_signals();
	closefrom(3);
	char *empty[] = {NULL}; /* an empty envdir is an empty environment */
	gcov_before_exec();     /* execve discards this process's counters (coverage builds) */
	execve(path, t->argv, t->env.v ? t->env.v : empty);
	int saved = errno;
	diag_add(d, DIAG_ERR, "exec: %s: %s", path, strerror(saved));
	return saved == ENOENT ? SVEXEC_NOTFOUND : SVEXEC_NOTEXEC;
}
