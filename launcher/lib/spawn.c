/* Fixed-argv child processes (see spawn.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "lib/gcovflush.h"
#include "lib/pathsearch.h"
#include "lib/reap.h"
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
	gcov_before_exec();
	execve(path, argv, sp->envp ? sp->envp : default_env);
	_exit(127);
}

/* PATH of the environment the program gets (not ours, which execvpe would search); or NULL. */
static const char *path_of(char *const *envp)
{
	for (; *envp != NULL; envp++)
		if (strncmp(*envp, "PATH=", 5) == 0)
			return *envp + 5;
	return NULL;
}

int spawn_wait(const char *path, char *const argv[], const struct spawn *sp)
{
	char found[PATH_MAX];
	if (sp->search) {
		if (path_search(path_of(sp->envp ? sp->envp : default_env), path,
		                path_runnable_self, NULL, found, sizeof found) == -1)
			return 127; /* what the child would have exited with */
		path = found;
	}
	pid_t pid = fork();
	if (pid == -1)
		return -1;
	if (pid == 0)
		child(path, argv, sp);
	/* The child makes its group too; whichever runs first, it exists before any kill. */
	if (sp->deadline != 0)
		(void)setpgid(pid, pid); /* EACCES once it has exec'd: it made the group itself */
	return reap_until(pid, sp->deadline, REAP_GRACE_MS);
}
