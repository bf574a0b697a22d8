/* runsvdir lifecycle: the foreground wrapper, detached start, rescan nudges (see svdir.h). */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bsd/libutil.h>

#include "lib/pathjoin.h"
#include "lib/pathsearch.h"
#include "lib/clock.h"
#include "lib/readfile.h"
#include "lib/gcovflush.h"
#include "lib/proctree.h"
#include "lib/rlimits.h"
#include "runit/runit.h"
#include "runit/sdunit.h"
#include "runit/svdirlog.h"
#include "runit/svdir.h"
#include "lib/pathsafe.h"

#define SVDIR_PIDFILE    "runsvdir.pid"
#define SVDIR_LOG        "runsvdir.log"
#define START_TIMEOUT_MS 5000
#define STOPPING_MARK    "stopping"
#define STOPPING_WAIT_MS (150 * 1000) /* a stopping wrapper's own bound is its SVWAIT */
#define SWEEP_MS         1000         /* how often the wrapper looks for orphans */
#define MAX_SWEEP        64           /* orphans remembered between sweeps */
#define DEFAULT_PATH     "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

int svdir_running(const struct ctl *ctl, pid_t *pid)
{
	char var[PATH_MAX], path[PATH_MAX];
	*pid = 0;
	if (ctl_var_dir(ctl, var, sizeof var) == -1 ||
	    path_join(path, sizeof path, var, SVDIR_PIDFILE) == -1)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return errno == ENOENT ? 0 : -1;
	/*
	 * A shared probe: fails only while the wrapper holds its exclusive lock.
	 * (The wrapper retries its own lock briefly, so this probe cannot make a
	 * starting wrapper believe another one runs.)
	 */
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		close(fd);
		return 0;
	}
	if (errno != EWOULDBLOCK) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	char buf[64];
	ssize_t n = read_full(fd, buf, sizeof buf - 1);
	close(fd);
	bool stopping = false;
	if (n > 0) {
		buf[n] = '\0';
		stopping = strstr(buf, "\n" STOPPING_MARK) != NULL;
		buf[strcspn(buf, "\n")] = '\0';
		*pid = (pid_t)strtonum(buf, 1, INT32_MAX, NULL);
	}
	return stopping ? SVDIR_STOPPING : 1;
}

/* In the child: become `gitlab-ctl [--root R] runsvdir` with a clean environment. */
static void exec_wrapper(const struct ctl *ctl, int logfd)
{
	gcov_child();
	int null = open("/dev/null", O_RDONLY);
	/* A daemon keeps no directory of the caller's busy. */
	if (setsid() == -1 || null == -1 || chdir("/") == -1 || dup2(null, 0) == -1 ||
	    dup2(logfd, 1) == -1 || dup2(logfd, 2) == -1)
		_exit(127);
	closefrom(3);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	/* The caller's shell limits (ulimit -n 10) are not the services'. */
	rlimits_reset();

	/* Like Omnibus' runsvdir-start (env - PATH=$PATH): services inherit nothing else. */
	char path_env[4096], datadir_env[PATH_MAX + 32], svwait_env[64];
	const char *p = getenv("PATH");
	snprintf(path_env, sizeof path_env, "PATH=%s", p && *p ? p : DEFAULT_PATH);
	char *envp[4] = {path_env, NULL, NULL, NULL};
	int ne = 1;
	const char *dd = getenv("GITLAB_CTL_DATADIR");
	if (dd != NULL && *dd) {
		snprintf(datadir_env, sizeof datadir_env, "GITLAB_CTL_DATADIR=%s", dd);
		envp[ne++] = datadir_env;
	}
	/* The wrapper's stop deadline; it is not passed on to runsvdir. */
	long wait_s;
	const char *errstr;
	if (getenv("SVWAIT") != NULL && sv_wait_seconds(&wait_s, &errstr) == 0) {
		snprintf(svwait_env, sizeof svwait_env, "SVWAIT=%ld", wait_s);
		envp[ne++] = svwait_env;
	}
	char *argv[5];
	int i = 0;
	argv[i++] = (char *)ctl->self;
	if (ctl->root[0] != '\0') {
		argv[i++] = "--root";
		argv[i++] = (char *)ctl->root;
	}
	argv[i++] = "runsvdir";
	argv[i] = NULL;
	gcov_before_exec();
	execve(ctl->self, argv, envp);
	dprintf(2, "gitlab-ctl: cannot exec %s: %s\n", ctl->self, strerror(errno));
	_exit(127);
}

/* The last line of the wrapper's log, for an error message. */
static const char *last_line(const char *log, char *buf, size_t len)
{
	strlcpy(buf, "no message", len);
	int fd = open(log, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return buf;
	char tail[512];
	off_t end = lseek(fd, 0, SEEK_END);
	off_t from = end > (off_t)sizeof tail - 1 ? end - (off_t)sizeof tail + 1 : 0;
	ssize_t n = pread(fd, tail, sizeof tail - 1, from);
	close(fd);
	if (n <= 0)
		return buf;
	tail[n] = '\0';
	while (n > 0 && tail[n - 1] == '\n')
		tail[--n] = '\0';
	char *nl = strrchr(tail, '\n');
	strlcpy(buf, nl ? nl + 1 : tail, len);
	return buf;
}

/*
 * A wrapper that is stopping its services still holds its lock: wait until
 * it has exited (lock released), so that a new one can be started, instead
 * of taking it for a running supervisor. 0 when it is gone, -1 at deadline.
 */
static int wait_stopped(const struct ctl *ctl, pid_t pid, struct diags *d)
{
	long deadline = mono_ms() + STOPPING_WAIT_MS;
	diag_progress(d, "runsvdir (pid %ld) is stopping; waiting for it to exit\n", (long)pid);
	for (long step = 10;; step = step < 200 ? step * 2 : 200) {
		pid_t p;
		int r = svdir_running(ctl, &p);
		if (r == 0)
			return 0;
		if (r == -1 || mono_ms() >= deadline) {
			diag_add(
			    d, DIAG_ERR,
			    "runsvdir (pid %ld) is still stopping its services; try again later",
			    (long)pid);
			return -1;
		}
		sleep_ms(step);
	}
}

int svdir_ensure(const struct ctl *ctl, struct diags *d)
{
	pid_t pid;
	char var[PATH_MAX], log[PATH_MAX];
	if (ctl_var_dir(ctl, var, sizeof var) == -1) {
		diag_add(d, DIAG_ERR, "runsvdir: bad root: %s", strerror(errno));
		return -1;
	}
	int r = svdir_running(ctl, &pid);
	if (r == 1)
		return 0;
	if (r == SVDIR_STOPPING) {
		if (wait_stopped(ctl, pid, d) == -1)
			return -1;
		r = 0; /* gone: start anew, through the unit where systemd runs */
	}
	int unit = r == 0 ? sdunit_start(ctl, svdir_running, d) : 0;
	if (unit != 0)
		return unit == 1 ? 0 : -1;
	if (r == -1 || pathsafe_mkdirs(var, 0755) == -1 ||
	    path_join(log, sizeof log, var, SVDIR_LOG) == -1) {
		diag_add(d, DIAG_ERR, "cannot check runsvdir state in %s: %s", var,
		         strerror(errno));
		return -1;
	}
	int logfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (logfd == -1) {
		diag_add(d, DIAG_ERR, "cannot open %s: %s", log, strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid_t child = fork();
	if (child == -1) {
		diag_add(d, DIAG_ERR, "fork: %s", strerror(errno));
		close(logfd);
		return -1;
	}
	if (child == 0)
		exec_wrapper(ctl, logfd);
	close(logfd);

	long t0 = mono_ms();
	for (long step = 1;; step = step < 20 ? step * 2 : 20) {
		if (svdir_running(ctl, &pid) == 1)
			return 0;
		int st;
		if (waitpid(child, &st, WNOHANG) == child) {
			/* It lost a race with another starter: fine if that one now runs. */
			if (svdir_running(ctl, &pid) == 1)
				return 0;
			char last[512];
			diag_add(d, DIAG_ERR, "runsvdir did not start (exit status %d): %s; see %s",
			         WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
			         last_line(log, last, sizeof last), log);
			return -1;
		}
		if (mono_ms() - t0 > START_TIMEOUT_MS) {
			diag_add(d, DIAG_ERR, "runsvdir did not take its lock within %d ms; see %s",
			         START_TIMEOUT_MS, log);
			return -1;
		}
		sleep_ms(step);
	}
}

int svdir_nudge(const struct ctl *ctl)
{
	pid_t pid;
	int r = svdir_running(ctl, &pid);
	if (r == -1)
		return -1;
	if (r == 0 || pid <= 0) {
		errno = ESRCH;
		return -1;
	}
	/* The pid is the lock holder's, so it cannot have been reused. */
	return kill(pid, SIGUSR1);
}

int svdir_mtime(const char *service_dir, time_t *mtime)
{
	struct stat st;
	if (stat(service_dir, &st) == -1)
		return -1;
	*mtime = st.st_mtime;
	return 0;
}

int svdir_settle(const char *service_dir, time_t before, bool running)
{
	struct stat st;
	if (stat(service_dir, &st) == -1)
		return -1;
	time_t now = time(NULL);
	time_t want = now - 1;
	/* runsvdir sleeps 1 s before scanning only when mtime >= now (in seconds). */
	if (st.st_mtime < now)
		return 0;
	if (running && want <= before)
		return 0; /* runsvdir might hold `want` as the mtime it saw: keep the change visible
		           */
	struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = want, .tv_nsec = 0}};
	if (utimensat(AT_FDCWD, service_dir, ts, 0) == -1)
		return -1;
	return 1;
}

/* runsvdir from PATH, else where distributions put it (systemd's PATH may be minimal). */
static int find_runsvdir(char *out, size_t len)
{
	const char *path = getenv("PATH");
	if (path_search(path && *path ? path : DEFAULT_PATH, "runsvdir", path_runnable_self, NULL,
	                out, len) == 0)
		return 0;
	return path_search("/usr/bin:/usr/sbin:/bin:/sbin", "runsvdir", path_runnable_self, NULL,
	                   out, len);
}

/*
 * Wake runsvdir: one NUL byte on its log pipe (it ignores NULs). The pipe is
 * reached through /proc/PID/fd/2, which opens the pipe itself, not a copy.
 */
static void nudge_child(pid_t child, int *fd)
{
	if (*fd == -1) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%ld/fd/2", (long)child);
		*fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		struct stat st;
		if (*fd != -1 && (fstat(*fd, &st) == -1 || !S_ISFIFO(st.st_mode))) {
			close(*fd); /* not its log pipe: never write a NUL into a file */
			*fd = -1;
		}
		if (*fd == -1)
			return;
	}
	if (write(*fd, "", 1) == -1 && errno != EAGAIN) {
		close(*fd);
		*fd = -1;
	}
}

static void exec_runsvdir(const char *prog, const char *service_dir, pid_t wrapper)
{
	gcov_child();
	/*
	 * A wrapper killed with SIGKILL cleans up nothing: the kernel HUPs runsvdir
	 * instead, and runsvdir answers HUP by TERMing every runsv, so no service
	 * runs on unsupervised holding locks a new wrapper's runsv would need. The
	 * wrapper may already be gone by the time the signal is armed.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGHUP) == -1 || getppid() != wrapper)
		_exit(111);
	/* Each runsv in its own session (-P); runsvdir in its own too, so a terminal's ^C
	 * reaches only this wrapper, which then stops the services in order. */
	setsid();
	/* Whatever an init system or a shell left open must not reach every runsv and svlogd. */
	closefrom(3);
	sigset_t none;
	sigemptyset(&none);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/*
	 * The readproctitle log: runsvdir's errors show in `ps`, like Omnibus' runsvdir. runsvdir
	 * writes them over the dots of its own copy of argv (execv copies the strings), so this
	 * array needs only the length, not to outlive this frame: automatic, not static.
	 */
	char logarg[] = "log: ..........................................................."
	                "..............................................................."
	                "...............................................................";
	char *argv[] = {"runsvdir", "-P", (char *)service_dir, logarg, NULL};
	gcov_before_exec();
	execv(prog, argv);
	dprintf(2, "gitlab-ctl runsvdir: cannot exec %s: %s\n", prog, strerror(errno));
	_exit(127);
}

/*
 * Signal every direct child: after runsvdir is gone these are the runsv's we
 * adopted as subreaper (a second TERM to a runsv is harmless) and anything
 * orphaned by a runsv that died. Found by parentage, never by name.
 */
static void signal_children(int sig)
{
	pid_t kids[256];
	int n = proc_children(getpid(), kids, sizeof kids / sizeof kids[0]);
	for (int i = 0; i < n && i < (int)(sizeof kids / sizeof kids[0]); i++)
		if (kids[i] > 1)
			kill(kids[i], sig);
}

/* Processes the wrapper has told to stop, and since when (mono_ms). */
struct sweep {
	struct {
		pid_t pid;
		unsigned long long start;
		long since;
	} v[MAX_SWEEP];
	size_t n;
	long grace_ms; /* TERM, then KILL after this */
};

static long since_of(const struct sweep *sw, const struct pstat *ps)
{
	for (size_t i = 0; i < sw->n; i++)
		if (sw->v[i].pid == ps->pid && sw->v[i].start == ps->start)
			return sw->v[i].since;
	return -1;
}

/*
 * Stop what is left in the tree and says so in the log: processes first
 * seen get TERM (and CONT), those still there after the grace get KILL.
 * keep: runsvdir (while it runs), never touched. orphans_only: see
 * proc_descendants()' PROC_ORPHANS. force: KILL at once.
 */
static void sweep(struct sweep *sw, struct svdirlog *log, pid_t keep, bool orphans_only, bool force)
{
	struct pstat *v;
	size_t n;
	if (proc_descendants(getpid(), &keep, keep > 0,
	                     PROC_GROUPS | (orphans_only ? PROC_ORPHANS : 0), &v, &n) == -1) {
		warn("runsvdir: cannot list leftover processes");
		return;
	}
	long now = mono_ms();
	struct sweep next = {.grace_ms = sw->grace_ms};
	for (size_t i = 0; i < n; i++) {
		const struct pstat *ps = &v[i];
		long since = since_of(sw, ps);
		if (force || (since != -1 && now - since >= sw->grace_ms)) {
			svdirlog_orphan(log, true,
			                "runsvdir: killing pid %ld (%s, ppid %ld, pgrp %ld): still "
			                "running %ld ms after TERM",
			                (long)ps->pid, ps->comm, (long)ps->ppid, (long)ps->pgrp,
			                since == -1 ? 0 : now - since);
			kill(ps->pid, SIGKILL);
			continue;
		}
		if (since == -1) {
			svdirlog_orphan(
			    log, false,
			    "runsvdir: stopping pid %ld (%s, ppid %ld, pgrp %ld) left in "
			    "the service tree",
			    (long)ps->pid, ps->comm, (long)ps->ppid, (long)ps->pgrp);
			kill(ps->pid, SIGTERM);
			kill(ps->pid, SIGCONT);
			since = now;
		}
		if (next.n < MAX_SWEEP) {
			next.v[next.n].pid = ps->pid;
			next.v[next.n].start = ps->start;
			next.v[next.n++].since = since;
		}
	}
	free(v);
	*sw = next;
}

/* Reap every exited child. true when none is left (ECHILD). */
static bool reap(void)
{
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		;
	return p == -1 && errno == ECHILD;
}

/*
 * After runsvdir exits on our HUP, its runsv's are ours (subreaper): TERM
 * them, so each stops its service, and wait for the tree to empty. A service
 * that ignores TERM keeps its runsv waiting: at the grace (SVWAIT) everything
 * left below us is killed, by pid, and named in the log. A second stop
 * signal (hurry: `uninstall` at its own SVWAIT) ends the grace at once.
 */
static void reap_all(const sigset_t *set, long grace_ms, bool hurry, struct svdirlog *log)
{
	long t0 = mono_ms();
	struct sweep sw = {.grace_ms = grace_ms};
	bool forced = false;
	if (hurry)
		grace_ms = 0;
	signal_children(SIGTERM);
	while (!reap()) {
		long ms = mono_ms() - t0;
		if (ms >= grace_ms) {
			if (!forced)
				warnx("runsvdir: services still running after %ld ms; killing them",
				      grace_ms);
			sweep(&sw, log, 0, false, true);
			svdirlog_tick(log);
			if (forced && ms >= grace_ms + 10000) {
				warnx("runsvdir: processes left after SIGKILL; exiting");
				return;
			}
			forced = true;
		}
		struct timespec ts = {0, 100 * 1000000};
		int sig = sigtimedwait(set, NULL, &ts);
		if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && grace_ms > ms)
			grace_ms = ms;
	}
}

/* Tell svdir_running() callers that this wrapper is on its way out. */
static void mark_stopping(struct pidfh *pfh)
{
	int fd = pidfile_fileno(pfh);
	if (fd == -1 || ftruncate(fd, 0) == -1 ||
	    dprintf(fd, "%ld\n" STOPPING_MARK "\n", (long)getpid()) < 0)
		warn("runsvdir: cannot mark the pidfile as stopping");
}

/* The pidfile, locked, with our pid in it; NULL after saying why not. */
static struct pidfh *take_pidfile(const char *pidfile)
{
	struct pidfh *pfh = NULL;
	pid_t other = -1;
	/* Retry briefly: svdir_running()'s shared probe may hold the lock for microseconds. */
	for (int tries = 0; tries < 20; tries++) {
		pfh = pidfile_open(pidfile, 0644, &other);
		if (pfh != NULL || errno != EEXIST)
			break;
		sleep_ms(10);
	}
	if (pfh == NULL) {
		if (errno == EEXIST)
			warnx("runsvdir already running for this root (pid %ld)", (long)other);
		else
			warn("cannot open %s", pidfile);
		return NULL;
	}
	if (pidfile_write(pfh) == -1) {
		warn("cannot write %s", pidfile);
		pidfile_remove(pfh);
		return NULL;
	}
	return pfh;
}

/*
 * Until runsvdir exits: SIGUSR1 nudges it, TERM/INT/HUP make it stop every
 * service (HUP, once), and once a second orphans left by a runsv that died
 * are stopped (sweep). Returns its wait status; *stopping tells whether we
 * asked it to stop, *hurry whether a second stop signal came.
 */
static int supervise(pid_t child, const sigset_t *set, struct pidfh *pfh, long grace_ms,
                     struct svdirlog *log, bool *stopping, bool *hurry)
{
	int status = 0, logfd = -1;
	struct sweep sw = {.grace_ms = grace_ms};
	long next_sweep = mono_ms() + SWEEP_MS;
	for (bool done = false; !done;) {
		struct timespec ts = {SWEEP_MS / 1000, (SWEEP_MS % 1000) * 1000000L};
		int sig = sigtimedwait(set, NULL, &ts);
		if (!*stopping && mono_ms() >= next_sweep) {
			pid_t kids[4];
			int n = proc_children(getpid(), kids, 4);
			/* The common case costs one read: runsvdir is our only child. Without
			 * /proc/PID/task/TID/children (n == -1), the full scan. */
			if (n != 1 || kids[0] != child || sw.n > 0)
				sweep(&sw, log, child, true, false);
			svdirlog_tick(log);
			next_sweep = mono_ms() + SWEEP_MS;
		}
		if (sig == -1)
			continue;
		if (sig == SIGUSR1) {
			nudge_child(child, &logfd);
			continue;
		}
		if (sig != SIGCHLD) {
			if (!*stopping) {
				mark_stopping(pfh);
				kill(child, SIGHUP);
			} else {
				*hurry = true;
			}
			*stopping = true;
			continue;
		}
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			if (p == child) {
				done = true;
				status = st;
			}
		}
	}
	if (logfd != -1)
		close(logfd);
	return status;
}

int svdir_run(const struct ctl *ctl)
{
	/* Block first: a SIGUSR1 nudge must never kill a wrapper that is starting up. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_DFL); /* an inherited SIG_IGN would auto-reap runsvdir */

	char var[PATH_MAX], pidfile[PATH_MAX], service[PATH_MAX], prog[PATH_MAX];
	if (ctl_var_dir(ctl, var, sizeof var) == -1 ||
	    path_join(pidfile, sizeof pidfile, var, SVDIR_PIDFILE) == -1 ||
	    ctl_service_dir(ctl, service, sizeof service) == -1) {
		warn("runsvdir: bad root");
		return 1;
	}
	const char *unmade = pathsafe_mkdirs(var, 0755) == -1       ? var
	                     : pathsafe_mkdirs(service, 0755) == -1 ? service
	                                                            : NULL;
	if (unmade != NULL) {
		warn("runsvdir: cannot create %s", unmade);
		return 1;
	}
	/*
	 * Everything that can refuse to start is checked before the pidfile lock:
	 * a holder of the lock counts as a running runsvdir, and reconfigure would
	 * wait for services from a wrapper that is about to give up.
	 */
	if (find_runsvdir(prog, sizeof prog) == -1) {
		warnx("runsvdir not found in PATH, /usr/bin or /usr/sbin (install runit)");
		return SDUNIT_EXIT_CONFIG;
	}
	/* Started by hand from a shell: its limits are not the services'. Under an init
	 * system (our parent is pid 1, or systemd's INVOCATION_ID), its unit's limits are. */
	if (getppid() != 1 && getenv("INVOCATION_ID") == NULL && rlimits_reset() == -1)
		warn("runsvdir: cannot reset every resource limit to pid 1's");
	struct diags d;
	diags_init(&d);
	int low = rlimits_nofile_low(&d); /* the wrapper is the runsvdir verb's command layer */
	diags_flush(&d, stderr);
	if (low == -1)
		return 1;
	struct pidfh *pfh = take_pidfile(pidfile);
	if (pfh == NULL)
		return svdir_running(ctl, &(pid_t){0}) == 1 ? SDUNIT_EXIT_RUNNING : 1;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		warn("cannot become a child subreaper; stop will not wait for services");
	long wait_s;
	const char *errstr;
	if (sv_wait_seconds(&wait_s, &errstr) == -1)
		wait_s = SV_WAIT_DEFAULT;
	unsetenv("SVWAIT");

	pid_t self = getpid();
	pid_t child = fork();
	if (child == -1) {
		warn("fork");
		pidfile_remove(pfh);
		return 1;
	}
	if (child == 0) {
		pidfile_close(pfh); /* the lock is not the child's to hold (close-on-exec anyway) */
		exec_runsvdir(prog, service, self);
	}

	bool stopping = false, hurry = false;
	struct svdirlog log;
	svdirlog_init(&log, var);
	int status = supervise(child, &set, pfh, wait_s * 1000L, &log, &stopping, &hurry);
	/*
	 * Whatever ended runsvdir, nothing it started outlives the wrapper: a
	 * restarted wrapper's runsvdir would otherwise find runsv's it does not
	 * know, holding their supervise locks.
	 */
	if (!stopping)
		mark_stopping(pfh);
	reap_all(&set, wait_s * 1000L, hurry, &log);
	pidfile_remove(pfh);
	if (stopping)
		return 0;
	if (WIFEXITED(status)) {
		warnx("runsvdir exited with status %d", WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	warnx("runsvdir killed by signal %d", WTERMSIG(status));
	return 128 + WTERMSIG(status);
}
