/* Waiting for a child against a deadline, then stopping it (see reap.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/reap.h"

static bool exited(pid_t pid)
{
	siginfo_t si = {0};
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/*
 * Until pid has exited (not reaped) or deadline passed: a pidfd becomes readable when it
 * exits; without pidfds (before Linux 5.3), a poll from 1 ms doubling to 50 ms.
 */
static bool exits_by(pid_t pid, long deadline)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	long step = 1;
	bool done = exited(pid);
	while (!done && ms_until(deadline) > 0) {
		if (pfd != -1)
			(void)poll_until(pfd, POLLIN, deadline);
		else
			sleep_ms(step < ms_until(deadline) ? step : ms_until(deadline));
		step = step < 50 ? step * 2 : 50;
		done = exited(pid);
	}
	if (pfd != -1)
		close(pfd);
	return done;
}

/* The group first: a child that has already exited leaves its own pid unused. */
static void signal_all(pid_t pid, int sig)
{
	(void)kill(-pid, sig); /* ESRCH: it made no group of its own, or the group is gone */
	(void)kill(pid, sig);
}

static int wait_status(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int reap_until(pid_t pid, long deadline, long grace_ms)
{
	if (deadline == 0 || exits_by(pid, deadline))
		return wait_status(pid);
	if (grace_ms > 0) {
		signal_all(pid, SIGTERM);
		(void)exits_by(pid, mono_ms() + grace_ms);
	}
	/* Unreaped, pid still holds its group id: what is left of the group goes now. */
	signal_all(pid, SIGKILL);
	if (wait_status(pid) == -1)
		return -1;
	errno = ETIMEDOUT;
	return -1;
}
