/* Fixed-argv child processes (see spawn.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"

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
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null == -1 || dup2(null, STDIN_FILENO) == -1 ||
	    redirect(sp->out, STDOUT_FILENO, null) == -1 ||
	    redirect(sp->err, STDERR_FILENO, null) == -1)
		_exit(127);
	if (sp->dir != NULL && chdir(sp->dir) == -1)
		_exit(127);
	char *const *envp = sp->envp ? sp->envp : default_env;
	if (sp->search)
		execvpe(path, argv, envp);
	else
		execve(path, argv, envp);
	_exit(127);
}

int spawn_wait(const char *path, char *const argv[], const struct spawn *sp)
{
	pid_t pid = fork();
	if (pid == -1)
		return -1;
	if (pid == 0)
		child(path, argv, sp);
	int st;
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
