/* Fixed-argv child processes (see spawn.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/gcovflush.h"
#include "lib/clock.h"
#include "lib/rlimits.h"
#include "lib/spawn.h"

static char *const default_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", NULL};

static int redirect(int fd, int target, int null)
{
	if (fd == SPAWN_INHERIT)
		return 0;
	return dup2(fd == SPAWN_NULL ? null : fd, target) == -1 ? -1 : 0;
}

/* In the child: only async-signal-safe calls until execve. */
static void child(const char *path, char *const argv[], const struct spawn *sp)
{
	gcov_child();
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null == -1 || dup2(null, STDIN_FILENO) == -1 ||
	    redirect(sp->out, STDOUT_FILENO, null) == -1 ||
	    redirect(sp->err, STDERR_FILENO, null) == -1)
		_exit(127);
	if (sp->dir != NULL && chdir(sp->dir) == -1)
		_exit(127);
	if (sp->sane_limits)
		(void)rlimits_reset();
	/* Its own group: at a deadline, whatever it started is killed with it. */
	if (sp->deadline != 0 && setpgid(0, 0) == -1)
		_exit(127);
	char *const *envp = sp->envp ? sp->envp : default_env;
	gcov_before_exec();
	if (sp->search)
		execvpe(path, argv, envp);
	else
		execve(path, argv, envp);
	_exit(127);
}

/*
 * Wait for pid until deadline: a pidfd becomes readable when it exits; without
 * pidfds (before Linux 5.3), a poll from 1 ms doubling to 50 ms. 0 when it has
 * exited (not reaped), -1 with ETIMEDOUT when the deadline came first.
 */
static int wait_until(pid_t pid, long deadline)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (long step = 1;; step = step < 50 ? step * 2 : 50) {
		siginfo_t si = {0};
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == pid)
			break;
		long left = deadline - mono_ms();
		if (left <= 0) {
			if (pfd != -1)
				close(pfd);
			errno = ETIMEDOUT;
			return -1;
		}
		if (pfd != -1) {
			struct pollfd p = {.fd = pfd, .events = POLLIN};
			poll(&p, 1, (int)(left < 60000 ? left : 60000));
		} else {
			sleep_ms(step < left ? step : left);
		}
	}
	if (pfd != -1)
		close(pfd);
	return 0;
}

int spawn_wait(const char *path, char *const argv[], const struct spawn *sp)
{
	pid_t pid = fork();
	if (pid == -1)
		return -1;
	if (pid == 0)
		child(path, argv, sp);
	int st, timed_out = 0;
	if (sp->deadline != 0 && wait_until(pid, sp->deadline) == -1) {
		setpgid(pid, pid); /* in case the child has not got there yet */
		kill(-pid, SIGKILL);
		timed_out = 1;
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	if (timed_out) {
		errno = ETIMEDOUT;
		return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
