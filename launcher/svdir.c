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

#include "clock.h"
#include "sdunit.h"
#include "svdir.h"
#include "tree.h"

#define SVDIR_PIDFILE    "runsvdir.pid"
#define SVDIR_LOG        "runsvdir.log"
#define START_TIMEOUT_MS 5000
#define STOP_TIMEOUT_S   120 /* then SIGKILL; systemd TimeoutStopSec is 150 s */
#define DEFAULT_PATH     "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

int svdir_running(const struct ctl *ctl, pid_t *pid)
{
	char path[PATH_MAX];
	*pid = 0;
	if (ctl_var_dir(ctl, path, sizeof path) == -1 ||
	    strlcat(path, "/" SVDIR_PIDFILE, sizeof path) >= sizeof path)
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
	char buf[32];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		*pid = (pid_t)strtonum(buf, 1, INT32_MAX, NULL);
	}
	return 1;
}

/* In the child: become `gitlab-ctl [--root R] runsvdir` with a clean environment. */
static void exec_wrapper(const struct ctl *ctl, int logfd)
{
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

	/* Like Omnibus' runsvdir-start (env - PATH=$PATH): services inherit nothing else. */
	char path_env[4096], datadir_env[PATH_MAX + 32];
	const char *p = getenv("PATH");
	snprintf(path_env, sizeof path_env, "PATH=%s", p && *p ? p : DEFAULT_PATH);
	char *envp[3] = {path_env, NULL, NULL};
	const char *dd = getenv("GITLAB_CTL_DATADIR");
	if (dd != NULL && *dd) {
		snprintf(datadir_env, sizeof datadir_env, "GITLAB_CTL_DATADIR=%s", dd);
		envp[1] = datadir_env;
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
	execve(ctl->self, argv, envp);
	dprintf(2, "gitlab-ctl: cannot exec %s: %s\n", ctl->self, strerror(errno));
	_exit(127);
}

int svdir_ensure(const struct ctl *ctl)
{
	pid_t pid;
	int r = svdir_running(ctl, &pid);
	if (r == 1)
		return 0;
	int unit = r == 0 ? sdunit_start(ctl, svdir_running) : 0;
	if (unit != 0)
		return unit == 1 ? 0 : -1;
	char var[PATH_MAX], log[PATH_MAX];
	if (r == -1 || ctl_var_dir(ctl, var, sizeof var) == -1 || tree_mkdirs(var, 0755) == -1 ||
	    (size_t)snprintf(log, sizeof log, "%s/%s", var, SVDIR_LOG) >= sizeof log) {
		warn("cannot check runsvdir state in %s", var);
		return -1;
	}
	int logfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (logfd == -1) {
		warn("cannot open %s", log);
		return -1;
	}
	fflush(NULL);
	pid_t child = fork();
	if (child == -1) {
		warn("fork");
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
			warnx("runsvdir did not start (exit status %d); see %s",
			      WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), log);
			return -1;
		}
		if (mono_ms() - t0 > START_TIMEOUT_MS) {
			warnx("runsvdir did not take its lock within %d ms; see %s",
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
	char buf[4096];
	strlcpy(buf, path && *path ? path : DEFAULT_PATH, sizeof buf);
	strlcat(buf, ":/usr/bin:/usr/sbin:/bin:/sbin", sizeof buf);
	char *save = NULL;
	for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (*d != '/')
			continue;
		if ((size_t)snprintf(out, len, "%s/runsvdir", d) < len && access(out, X_OK) == 0)
			return 0;
	}
	errno = ENOENT;
	return -1;
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

static void exec_runsvdir(const char *prog, const char *service_dir)
{
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
	/* The readproctitle log: runsvdir's errors show in `ps`, like Omnibus' runsvdir. */
	static char logarg[] = "log: ..........................................................."
	                       "..............................................................."
	                       "...............................................................";
	char *argv[] = {"runsvdir", "-P", (char *)service_dir, logarg, NULL};
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
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%ld/children", (long)getpid());
	FILE *fp = fopen(path, "re");
	if (fp == NULL)
		return;
	long pid;
	while (fscanf(fp, "%ld", &pid) == 1)
		if (pid > 1)
			kill((pid_t)pid, sig);
	fclose(fp);
}

/* After runsvdir exits on our HUP, its runsv's are ours (subreaper): wait for them all. */
static void reap_all(const sigset_t *set)
{
	long t0 = mono_ms();
	bool killed = false;
	signal_children(SIGTERM);
	for (;;) {
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			;
		if (p == -1 && errno == ECHILD)
			return;
		long ms = mono_ms() - t0;
		if (!killed && ms > STOP_TIMEOUT_S * 1000L) {
			warnx("runsvdir: services still running after %d s; killing them",
			      STOP_TIMEOUT_S);
			signal_children(SIGKILL);
			killed = true;
		} else if (killed && ms > (STOP_TIMEOUT_S + 5) * 1000L) {
			warnx("runsvdir: children left after SIGKILL; exiting");
			return;
		}
		struct timespec ts = {0, 100 * 1000000};
		sigtimedwait(set, NULL, &ts);
	}
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
 * service (HUP, once). Returns its wait status; *stopping tells whether we
 * asked it to stop.
 */
static int supervise(pid_t child, const sigset_t *set, bool *stopping)
{
	int status = 0, logfd = -1;
	for (bool done = false; !done;) {
		int sig = sigwaitinfo(set, NULL);
		if (sig == -1)
			continue;
		if (sig == SIGUSR1) {
			nudge_child(child, &logfd);
			continue;
		}
		if (sig != SIGCHLD) {
			if (!*stopping)
				kill(child, SIGHUP);
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
	    (size_t)snprintf(pidfile, sizeof pidfile, "%s/%s", var, SVDIR_PIDFILE) >=
	        sizeof pidfile ||
	    ctl_service_dir(ctl, service, sizeof service) == -1) {
		warn("runsvdir: bad root");
		return 1;
	}
	if (tree_mkdirs(var, 0755) == -1 || tree_mkdirs(service, 0755) == -1) {
		warn("runsvdir: cannot create %s or %s", var, service);
		return 1;
	}
	struct pidfh *pfh = take_pidfile(pidfile);
	if (pfh == NULL)
		return svdir_running(ctl, &(pid_t){0}) == 1 ? SDUNIT_EXIT_RUNNING : 1;
	if (find_runsvdir(prog, sizeof prog) == -1) {
		warnx("runsvdir not found in PATH, /usr/bin or /usr/sbin (install runit)");
		pidfile_remove(pfh);
		return SDUNIT_EXIT_CONFIG;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		warn("cannot become a child subreaper; stop will not wait for services");

	pid_t child = fork();
	if (child == -1) {
		warn("fork");
		pidfile_remove(pfh);
		return 1;
	}
	if (child == 0) {
		pidfile_close(pfh); /* the lock is not the child's to hold (close-on-exec anyway) */
		exec_runsvdir(prog, service);
	}

	bool stopping = false;
	int status = supervise(child, &set, &stopping);
	/*
	 * Whatever ended runsvdir, nothing it started outlives the wrapper: a
	 * restarted wrapper's runsvdir would otherwise find runsv's it does not
	 * know, holding their supervise locks.
	 */
	reap_all(&set);
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
