/* Commands run as a service runs (see svrun.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/gcovflush.h"
#include "proc/svrun.h"

#define OUT_MAX (64 * 1024)

static char *const run_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};

/* gitlab-ctl exec --envdir ENV --user U --group G --chdir HOME SVC -- argv... */
static char **exec_argv(const struct ctl *ctl, const struct svc *s, char *const *argv)
{
	size_t n = 0;
	while (argv[n])
		n++;
	char **v = xcalloc(n + 16, sizeof *v);
	size_t k = 0;
	v[k++] = (char *)ctl->self;
	v[k++] = "exec";
	v[k++] = "--envdir";
	v[k++] = (char *)s->env_dir;
	v[k++] = "--user";
	v[k++] = (char *)s->user;
	v[k++] = "--group";
	v[k++] = (char *)s->group;
	v[k++] = "--chdir";
	v[k++] = (char *)s->home;
	v[k++] = (char *)s->def->name;
	v[k++] = "--";
	for (size_t i = 0; i < n; i++)
		v[k++] = argv[i];
	v[k] = NULL;
	return v;
}

static void child(int wfd, const char *self, char **v)
{
	gcov_child();
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null == -1 || dup2(null, STDIN_FILENO) == -1 || dup2(wfd, STDOUT_FILENO) == -1 ||
	    dup2(wfd, STDERR_FILENO) == -1)
		_exit(127);
	gcov_before_exec();
	execve(self, v, run_env);
	_exit(127);
}

/* Read the child's output until EOF or the deadline. 0 at EOF, -1 at the deadline. */
static int drain(int rfd, long deadline, struct buf *out)
{
	char buf[4096];
	for (;;) {
		long left = deadline - mono_ms();
		if (left <= 0)
			return -1;
		struct pollfd p = {.fd = rfd, .events = POLLIN};
		int r = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
		if (r == -1 && errno != EINTR)
			return -1;
		if (r <= 0)
			continue;
		ssize_t n = read(rfd, buf, sizeof buf);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		if (out->len < OUT_MAX)
			buf_add(out, buf, (size_t)n);
	}
}

int svrun(const struct ctl *ctl, const struct svc *s, char *const *argv, long deadline,
          struct buf *out)
{
	int fds[2];
	char **v = exec_argv(ctl, s, argv);
	if (pipe2(fds, O_CLOEXEC) == -1) {
		free(v);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0)
		child(fds[1], ctl->self, v);
	int saved = errno;
	free(v);
	close(fds[1]);
	if (pid == -1) {
		close(fds[0]);
		errno = saved;
		return -1;
	}
	bool late = drain(fds[0], deadline, out) == -1;
	close(fds[0]);
	if (late) {
		/* exec leads its own process group: take the command's children too. */
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	int st;
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	if (late) {
		errno = ETIMEDOUT;
		return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
