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

/* Wait for the parent's go: one byte. EOF means the parent died or gave up. */
static void await_gate(int gate)
{
	char c;
	ssize_t n;
	if (gate == -1)
		return;
	while ((n = read(gate, &c, 1)) == -1 && errno == EINTR)
		;
	if (n != 1)
		_exit(127);
	close(gate);
}

static void child(int wfd, int gate, const char *self, char **v)
{
	gcov_child();
	await_gate(gate);
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

/* The child's pid is known: let started() record it, then open the gate (or kill it). */
static int open_gate(pid_t pid, int gate[2], svrun_started_fn started, void *ctx)
{
	if (started == NULL)
		return 0;
	close(gate[0]);
	int rc = started(ctx, pid);
	int e = errno;
	if (rc == 0 && write(gate[1], "g", 1) != 1) {
		rc = -1;
		e = errno;
	}
	close(gate[1]);
	errno = e;
	return rc;
}

/* Reap pid; kill its process group first when late. The exit status, or -1. */
static int reap(pid_t pid, bool late)
{
	if (late) {
		/* exec leads its own process group: take the command's children too. */
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	int st;
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int svrun_gated(const struct ctl *ctl, const struct svc *s, char *const *argv, long deadline,
                struct buf *out, svrun_started_fn started, void *ctx)
{
	int fds[2], gate[2] = {-1, -1};
	char **v = exec_argv(ctl, s, argv);
	if (pipe2(fds, O_CLOEXEC) == -1) {
		free(v);
		return -1;
	}
	if (started != NULL && pipe2(gate, O_CLOEXEC) == -1) {
		free(v);
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		if (gate[1] != -1)
			close(gate[1]);
		child(fds[1], gate[0], ctl->self, v);
	}
	int saved = errno;
	free(v);
	close(fds[1]);
	if (pid == -1) {
		close(fds[0]);
		if (gate[0] != -1) {
			close(gate[0]);
			close(gate[1]);
		}
		errno = saved;
		return -1;
	}
	if (open_gate(pid, gate, started, ctx) == -1) {
		saved = errno;
		close(fds[0]);
		reap(pid, true);
		errno = saved;
		return -1;
	}
	bool late = drain(fds[0], deadline, out) == -1;
	close(fds[0]);
	int rc = reap(pid, late);
	if (late) {
		errno = ETIMEDOUT;
		return -1;
	}
	return rc;
}

int svrun(const struct ctl *ctl, const struct svc *s, char *const *argv, long deadline,
          struct buf *out)
{
	return svrun_gated(ctl, s, argv, deadline, out, NULL, NULL);
}
