/*
 * subreaper -- COMMAND ARGS...: run COMMAND as the child of a child
 * subreaper that reaps whatever it adopts and passes runsv's signals on.
 * Hidden: a catalog command for a service whose program detaches its own
 * children on purpose (Patroni starts postmaster through a double fork, so
 * postmaster outlives a Patroni restart). Without it such a child is adopted
 * by the runsvdir wrapper, which stops every orphan it adopts; with it the
 * service stays one tree under its runsv.
 *
 * The subreaper is a process of its own, not COMMAND: Patroni reaps only
 * the children it started, so a postmaster it adopted and that died stayed
 * a zombie, which Patroni takes for a running postmaster. After a SIGKILL of
 * postmaster it then neither started it again nor gave up the leader key
 * (bench/failover). It exits as COMMAND did, once COMMAND has exited; what
 * COMMAND left running goes to the next subreaper up. COMMAND is killed
 * with it (parent-death signal), as it was when it was the process runsv
 * started.
 */
#include <err.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/commands.h"

/* What runsv and gitlab-ctl's control verbs send, passed on to COMMAND. */
static const int forwarded[] = {SIGTERM, SIGINT,  SIGHUP,  SIGQUIT,
                                SIGUSR1, SIGUSR2, SIGALRM, SIGCONT};

/* Exit as a child that ended with wait status st did. */
static _Noreturn void exit_as(int st)
{
	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		if (signal(sig, SIG_DFL) != SIG_ERR && sigprocmask(SIG_UNBLOCK, &one, NULL) == 0)
			raise(sig);
		_exit(128 + sig);
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

int cmd_subreaper(const struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	if (argc < 3 || strcmp(argv[1], "--") != 0 || argv[2][0] != '/') {
		fprintf(stderr, "usage: gitlab-ctl subreaper -- /ABSOLUTE/COMMAND [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		err(1, "subreaper: cannot become a child subreaper");
	/* Blocked before the fork, taken with sigwaitinfo: none is lost in between. */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
		sigaddset(&set, forwarded[i]);
	if (sigprocmask(SIG_BLOCK, &set, &old) == -1)
		err(1, "subreaper: sigprocmask");
	pid_t self = getpid();
	pid_t child = fork();
	if (child == -1)
		err(1, "subreaper: fork");
	if (child == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != self)
			_exit(1); /* the subreaper is already gone */
		if (sigprocmask(SIG_SETMASK, &old, NULL) == -1)
			_exit(127);
		execv(argv[2], argv + 2);
		fprintf(stderr, "gitlab-ctl: subreaper: cannot exec %s: %s\n", argv[2],
		        strerror(errno));
		_exit(127);
	}
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);
		if (sig == -1) {
			if (errno == EINTR)
				continue;
			err(1, "subreaper: sigwaitinfo");
		}
		if (sig != SIGCHLD) {
			if (kill(child, sig) == -1 && errno != ESRCH)
				warn("subreaper: cannot pass signal %d on", sig);
			continue;
		}
		/* One SIGCHLD may stand for several exits: reap all there are. */
		for (;;) {
			int st;
			pid_t p = waitpid(-1, &st, WNOHANG);
			if (p == -1 && errno == EINTR)
				continue;
			if (p <= 0)
				break;
			if (p == child)
				exit_as(st);
		}
	}
}
