/* Commands run as a service runs (see svrun.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/gcovflush.h"
#include "lib/reap.h"
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
	if (gate == -1)
		return;
	if (fdio_read(gate, &c, 1) != 1)
		_exit(127);
	close(gate);
}

static void child(int wout, int werr, int gate, const char *self, char **v)
{
	gcov_child();
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	/*
	 * A new session: no controlling terminal the account could open as /dev/tty. Made
	 * before the gate, so the group a started() record names exists when it is written.
	 */
	if (setsid() == -1 || null == -1 || dup2(null, STDIN_FILENO) == -1 ||
	    dup2(wout, STDOUT_FILENO) == -1 || dup2(werr, STDERR_FILENO) == -1)
		_exit(127);
	await_gate(gate);
	gcov_before_exec();
	execve(self, v, run_env);
	_exit(127);
}

/* One read from fd into b (kept up to OUT_MAX). 1 while open, 0 at EOF. */
static int take(int fd, struct buf *b)
{
	char buf[4096];
	ssize_t n = fdio_read(fd, buf, sizeof buf);
	if (n == -1)
		return errno == EAGAIN;
	if (n > 0 && b->len < OUT_MAX)
		buf_add(b, buf, (size_t)n);
	return n > 0;
}

/* Read both pipes until EOF on each or the deadline. 0 at EOF, -1 at the deadline. */
static int drain(int rout, int rerr, long deadline, struct buf *out, struct buf *err)
{
	struct pollfd p[2] = {{.fd = rout, .events = POLLIN}, {.fd = rerr, .events = POLLIN}};
	while (p[0].fd != -1 || p[1].fd != -1) {
		if (ms_until(deadline) == 0)
			return -1;
		int r = poll_fds_until(p, 2, deadline);
		if (r <= 0)
			return -1;
		for (int i = 0; i < 2; i++)
			if (p[i].revents != 0 && !take(p[i].fd, i == 0 ? out : err))
				p[i].fd = -1; /* poll skips negative fds */
	}
	return 0;
}

static void close_pair(int *fds)
{
	if (fds[0] != -1)
		close(fds[0]);
	if (fds[1] != -1)
		close(fds[1]);
}

/* The child's pid is known: let started() record it, then open the gate (or kill it). */
static int open_gate(pid_t pid, int gate[2], svrun_started_fn started, void *ctx)
{
	if (started == NULL)
		return 0;
	close(gate[0]);
	int rc = started(ctx, pid);
	int e = errno;
	if (rc == 0 && fdio_write_all(gate[1], "g", 1) == -1) {
		rc = -1;
		e = errno;
	}
	close(gate[1]);
	errno = e;
	return rc;
}

/* Pipes for stdout, stderr (when err is wanted) and the gate (when started is given). */
static int make_pipes(int po[2], int pe[2], int gate[2], bool err, bool gated)
{
	if (pipe2(po, O_CLOEXEC) == -1)
		return -1;
	if ((!err || pipe2(pe, O_CLOEXEC) == 0) && (!gated || pipe2(gate, O_CLOEXEC) == 0))
		return 0;
	int saved = errno;
	close_pair(po);
	close_pair(pe);
	errno = saved;
	return -1;
}

int svrun_gated(const struct ctl *ctl, const struct svc *s, char *const *argv, long deadline,
                struct buf *out, struct buf *err, svrun_started_fn started, void *ctx)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, gate[2] = {-1, -1};
	if (make_pipes(po, pe, gate, err != NULL, started != NULL) == -1)
		return -1;
	char **v = exec_argv(ctl, s, argv);
	pid_t pid = fork();
	if (pid == 0) {
		if (gate[1] != -1)
			close(gate[1]);
		child(po[1], err != NULL ? pe[1] : po[1], gate[0], ctl->self, v);
	}
	int saved = errno;
	free(v);
	close(po[1]);
	if (pe[1] != -1)
		close(pe[1]);
	if (pid == -1) {
		close(po[0]);
		if (pe[0] != -1)
			close(pe[0]);
		close_pair(gate);
		errno = saved;
		return -1;
	}
	if (open_gate(pid, gate, started, ctx) == -1) {
		saved = errno;
		close(po[0]);
		if (pe[0] != -1)
			close(pe[0]);
		(void)reap_until(pid, mono_ms(), 0);
		errno = saved;
		return -1;
	}
	/* Past the deadline, reap_until stops the child's session's group (setsid above). */
	(void)drain(po[0], pe[0], deadline, out, err);
	close(po[0]);
	if (pe[0] != -1)
		close(pe[0]);
	return reap_until(pid, deadline, REAP_GRACE_MS);
}

int svrun(const struct ctl *ctl, const struct svc *s, char *const *argv, long deadline,
          struct buf *out, struct buf *err)
{
	return svrun_gated(ctl, s, argv, deadline, out, err, NULL, NULL);
}
