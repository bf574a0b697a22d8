/*
 * reap_until: a child that exits in time gives its status; one that ignores SIGTERM
 * is killed after the grace, with what it started; signals do not cut the wait short.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/reap.h"

static pid_t child_exiting(int code, long after_ms)
{
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		sleep_ms(after_ms);
		_exit(code);
	}
	return pid;
}

static void test_exits_in_time(void **state)
{
	(void)state;
	assert_int_equal(reap_until(child_exiting(7, 10), mono_ms() + 30000, 100), 7);
	assert_int_equal(reap_until(child_exiting(0, 10), 0, 100), 0);
}

static void test_signal_status(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		raise(SIGUSR1);
		_exit(0);
	}
	assert_int_equal(reap_until(pid, mono_ms() + 30000, 100), 128 + SIGUSR1);
}

static void on_term(int sig)
{
	(void)sig;
	static const char t = 'T';
	(void)!write(STDOUT_FILENO, &t, 1);
	_exit(0);
}

/* A child that honours SIGTERM gets it at the deadline: no SIGKILL without a grace first. */
static void test_term_first(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		signal(SIGTERM, on_term);
		(void)setpgid(0, 0);
		(void)!write(STDOUT_FILENO, "r", 1);
		for (;;)
			pause();
	}
	close(p[1]);
	char c = 0;
	assert_int_equal(read(p[0], &c, 1), 1); /* its handler is in place */
	errno = 0;
	assert_int_equal(reap_until(pid, mono_ms() + 20, 30000), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(c, 'T');
	close(p[0]);
}

/*
 * A child that ignores SIGTERM, and a grandchild in its group that does too: both go
 * with SIGKILL after the grace. As a subreaper, the test reaps the orphaned grandchild
 * and sees the signal that ended it.
 */
static void test_kill_after_grace(void **state)
{
	(void)state;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		signal(SIGTERM, SIG_IGN);
		(void)setpgid(0, 0);
		pid_t g = fork();
		if (g == 0)
			for (;;)
				pause();
		(void)!write(p[1], &g, sizeof g);
		for (;;)
			pause();
	}
	close(p[1]);
	pid_t g = 0;
	assert_int_equal(read(p[0], &g, sizeof g), (ssize_t)sizeof g);
	close(p[0]);
	errno = 0;
	assert_int_equal(reap_until(pid, mono_ms() + 20, 50), -1);
	assert_int_equal(errno, ETIMEDOUT);
	int st;
	assert_int_equal(waitpid(g, &st, 0), g);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal every 2 ms interrupts poll and waitpid (no SA_RESTART): the wait goes on. */
static void test_eintr(void **state)
{
	(void)state;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	struct itimerval it = {{0, 2000}, {0, 2000}};
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	int rc = reap_until(child_exiting(3, 200), mono_ms() + 30000, 100);
	int rc0 = reap_until(child_exiting(4, 100), 0, 100);
	struct itimerval off = {{0, 0}, {0, 0}};
	assert_int_equal(setitimer(ITIMER_REAL, &off, NULL), 0);
	assert_int_equal(rc, 3);
	assert_int_equal(rc0, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exits_in_time), cmocka_unit_test(test_signal_status),
	    cmocka_unit_test(test_term_first),    cmocka_unit_test(test_kill_after_grace),
	    cmocka_unit_test(test_eintr),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
