/*
 * svdir: the pidfile lock protocol (running, stopping, nudge), ensure's paths that start
 * nothing real, and the mtime settling. Each test has its own --root in a temp dir.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "build_config.h"
#include "lib/clock.h"
#include "lib/ctl.h"
#include "lib/diag.h"
#include "lib/rmtree.h"
#include "runit/svdir.h"
#include "render/tree.h"
#include "lib/pathsafe.h"

static char top[64];
static struct ctl ctl;

static int setup(void **state)
{
	(void)state;
	strlcpy(top, "/tmp/test_svdir.XXXXXX", sizeof top);
	if (mkdtemp(top) == NULL || ctl_init(&ctl, top, NULL) == -1)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(top, NULL);
}

static void var_path(char *out, size_t len, const char *file)
{
	char var[PATH_MAX];
	assert_int_equal(ctl_var_dir(&ctl, var, sizeof var), 0);
	snprintf(out, len, "%s/%s", var, file);
}

/*
 * A child that holds the pidfile's exclusive lock like the wrapper, with its pid (and the
 * stopping mark) in it, until SIGUSR1 (exit 42) or hold_ms (exit 0).
 */
static pid_t holder(bool stopping, long hold_ms)
{
	char var[PATH_MAX], pidfile[PATH_MAX + 16];
	assert_int_equal(ctl_var_dir(&ctl, var, sizeof var), 0);
	assert_int_equal(pathsafe_mkdirs(var, 0755), 0);
	var_path(pidfile, sizeof pidfile, "runsvdir.pid");
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	sigset_t usr1, old;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		close(ready[0]);
		int fd = open(pidfile, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd == -1 || flock(fd, LOCK_EX) == -1 ||
		    dprintf(fd, "%ld\n%s", (long)getpid(), stopping ? "stopping\n" : "") < 0 ||
		    write(ready[1], "r", 1) != 1)
			_exit(2);
		struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
		_exit(sigtimedwait(&usr1, NULL, &ts) == SIGUSR1 ? 42 : 0);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(ready[1]);
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
}

static int reaped(pid_t pid)
{
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_running(void **state)
{
	(void)state;
	pid_t pid = -7;
	/* No var dir, no pidfile: not running. */
	assert_int_equal(svdir_running(&ctl, &pid), 0);
	assert_int_equal(pid, 0);
	errno = 0;
	assert_int_equal(svdir_nudge(&ctl), -1);
	assert_int_equal(errno, ESRCH);

	/* Held: running, with the holder's pid; a nudge is a SIGUSR1 to exactly that pid. */
	pid_t h = holder(false, 20000);
	assert_int_equal(svdir_running(&ctl, &pid), 1);
	assert_int_equal(pid, h);
	assert_int_equal(svdir_nudge(&ctl), 0);
	assert_int_equal(reaped(h), 42);

	/* A pidfile left behind unlocked (the wrapper died): not running. */
	assert_int_equal(svdir_running(&ctl, &pid), 0);

	/* Held while stopping: not a supervisor to rely on. */
	h = holder(true, 20000);
	assert_int_equal(svdir_running(&ctl, &pid), SVDIR_STOPPING);
	assert_int_equal(pid, h);
	kill(h, SIGTERM);
	assert_int_equal(reaped(h), 128 + SIGTERM);
}

static void test_ensure_running(void **state)
{
	(void)state;
	char log[PATH_MAX + 16];
	var_path(log, sizeof log, "runsvdir.log");
	unlink(log);
	/* Running already: nothing is started (ctl.self would fail to run). */
	struct ctl saved = ctl;
	strlcpy(ctl.self, "/nonexistent/gitlab-ctl", sizeof ctl.self);
	pid_t h = holder(false, 20000);
	struct diags d;
	diags_init(&d);
	assert_int_equal(svdir_ensure(&ctl, &d), 0);
	assert_int_equal(d.n, 0);
	struct stat st;
	assert_int_equal(stat(log, &st), -1);
	kill(h, SIGTERM);
	reaped(h);
	ctl = saved;
}

/* The file's text, valid until the next call. */
static const char *slurp(const char *p)
{
	static char *last;
	free(last);
	return last = tl_slurp(p);
}

/*
 * A wrapper that cannot be started: ensure fails with the wrapper's own last words. When
 * one is stopping, ensure first waits for it to exit.
 */
static void test_ensure_fails_after_stopping(void **state)
{
	(void)state;
	char log[PATH_MAX + 16];
	var_path(log, sizeof log, "runsvdir.log");
	unlink(log);
	struct ctl saved = ctl;
	strlcpy(ctl.self, "/nonexistent/gitlab-ctl", sizeof ctl.self);

	struct diags d;
	diags_init(&d);
	assert_int_equal(svdir_ensure(&ctl, &d), -1);
	assert_non_null(strstr(slurp(log), "cannot exec /nonexistent/gitlab-ctl"));
	/* Recorded for the command, with the wrapper's last words. */
	assert_int_equal(d.nerr, 1);
	assert_non_null(strstr(d.v[0].msg, "runsvdir did not start (exit status "));
	diags_free(&d);

	pid_t h = holder(true, 300);
	char *said = NULL;
	size_t saidlen = 0;
	d.live = open_memstream(&said, &saidlen);
	assert_non_null(d.live);
	assert_int_equal(svdir_ensure(&ctl, &d), -1);
	assert_int_equal(fclose(d.live), 0);
	assert_non_null(strstr(said, ") is stopping; waiting for it to exit\n")); /* live */
	free(said);
	diags_free(&d);
	/* It returned only after the stopping one let go of its lock. */
	int st;
	assert_int_equal(waitpid(h, &st, WNOHANG), h);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	const char *text = slurp(log);
	const char *first = strstr(text, "cannot exec");
	assert_non_null(first);
	assert_non_null(strstr(first + 1, "cannot exec")); /* a second start was tried */
	ctl = saved;
}

static void test_mtime_settle(void **state)
{
	(void)state;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/svc", top);
	assert_int_equal(mkdir(dir, 0755), 0);
	time_t m = 0, now = time(NULL);
	struct stat st;

	/* Changed "now" (here: later than now): backdated to a second before now. */
	struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = now + 100}};
	assert_int_equal(utimensat(AT_FDCWD, dir, ts, 0), 0);
	assert_int_equal(svdir_mtime(dir, &m), 0);
	assert_int_equal(m, now + 100);
	assert_int_equal(svdir_settle(dir, now - 50, true), 1);
	assert_int_equal(stat(dir, &st), 0);
	assert_true(st.st_mtime < time(NULL) && st.st_mtime >= now - 1);

	/* runsvdir may have seen now - 1 already: a backdated mtime would hide the change. */
	assert_int_equal(utimensat(AT_FDCWD, dir, ts, 0), 0);
	assert_int_equal(svdir_settle(dir, now + 200, true), 0);
	assert_int_equal(svdir_mtime(dir, &m), 0);
	assert_int_equal(m, now + 100);
	/* With no runsvdir its first scan sees everything: backdated anyway. */
	assert_int_equal(svdir_settle(dir, now + 200, false), 1);
	assert_int_equal(svdir_mtime(dir, &m), 0);
	assert_true(m < time(NULL));

	/* Already in the past: nothing to do. */
	ts[1].tv_sec = now - 100;
	assert_int_equal(utimensat(AT_FDCWD, dir, ts, 0), 0);
	assert_int_equal(svdir_settle(dir, 0, false), 0);
	assert_int_equal(svdir_mtime(dir, &m), 0);
	assert_int_equal(m, now - 100);

	char missing[PATH_MAX + 8];
	snprintf(missing, sizeof missing, "%s/none", top);
	errno = 0;
	assert_int_equal(svdir_mtime(missing, &m), -1);
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_int_equal(svdir_settle(missing, 0, false), -1);
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_running),
	    cmocka_unit_test(test_ensure_running),
	    cmocka_unit_test(test_ensure_fails_after_stopping),
	    cmocka_unit_test(test_mtime_settle),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
