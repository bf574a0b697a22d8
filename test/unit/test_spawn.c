/* spawn: exit codes, output capture, PATH search, environment, errors and the deadline kill. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/clock.h"
#include "lib/spawn.h"

static char top[64];

static int setup(void **state)
{
	(void)state;
	strlcpy(top, "/tmp/test_spawn.XXXXXX", sizeof top);
	return mkdtemp(top) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	char p[128];
	snprintf(p, sizeof p, "%s/out", top);
	unlink(p);
	return rmdir(top);
}

/* A fresh, empty capture file (O_TRUNC), open for the child to write. */
static int capture(void)
{
	char p[128];
	snprintf(p, sizeof p, "%s/out", top);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd != -1);
	return fd;
}

static void captured(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
}

static int sh(const char *script, const struct spawn *sp)
{
	char *const argv[] = {"sh", "-c", (char *)script, NULL};
	return spawn_wait("/bin/sh", argv, sp);
}

static void test_exit_status(void **state)
{
	(void)state;
	struct spawn sp = {.out = SPAWN_NULL, .err = SPAWN_NULL};
	assert_int_equal(sh("exit 0", &sp), 0);
	assert_int_equal(sh("exit 3", &sp), 3);
	/* Killed by a signal: 128 + its number, like a shell. */
	assert_int_equal(sh("kill -TERM $$", &sp), 128 + SIGTERM);
}

static void test_capture_stdout_stderr(void **state)
{
	(void)state;
	char buf[256];
	int fd = capture();
	struct spawn sp = {.out = fd, .err = SPAWN_NULL};
	assert_int_equal(sh("echo to-out; echo to-err >&2", &sp), 0);
	captured(fd, buf, sizeof buf);
	assert_string_equal(buf, "to-out\n");

	fd = capture();
	sp = (struct spawn){.out = SPAWN_NULL, .err = fd};
	assert_int_equal(sh("echo to-out; echo to-err >&2", &sp), 0);
	captured(fd, buf, sizeof buf);
	assert_string_equal(buf, "to-err\n");

	/* stdin is /dev/null: a read sees end of file at once. */
	fd = capture();
	sp = (struct spawn){.out = fd, .err = SPAWN_NULL};
	assert_int_equal(sh("if read x; then echo got; else echo eof; fi", &sp), 0);
	captured(fd, buf, sizeof buf);
	assert_string_equal(buf, "eof\n");
}

static void test_environment(void **state)
{
	(void)state;
	char buf[256];
	/* Default: only a standard PATH, nothing of ours. */
	setenv("TEST_SPAWN_LEAK", "leaked", 1);
	int fd = capture();
	struct spawn sp = {.out = fd, .err = SPAWN_NULL};
	assert_int_equal(sh("printf '%s|%s' \"$PATH\" \"${TEST_SPAWN_LEAK-unset}\"", &sp), 0);
	captured(fd, buf, sizeof buf);
	assert_string_equal(buf, "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin|unset");

	char *const env[] = {"FOO=bar", NULL};
	fd = capture();
	sp = (struct spawn){.out = fd, .err = SPAWN_NULL, .envp = env};
	assert_int_equal(sh("printf '%s|%s' \"$FOO\" \"${PATH-none}\"", &sp), 0);
	captured(fd, buf, sizeof buf);
	/* dash sets a default PATH when none is given; bar must be passed either way. */
	assert_true(strncmp(buf, "bar|", 4) == 0);
	unsetenv("TEST_SPAWN_LEAK");
}

static void test_dir(void **state)
{
	(void)state;
	char buf[256], want[256];
	int fd = capture();
	struct spawn sp = {.out = fd, .err = SPAWN_NULL, .dir = top};
	assert_int_equal(sh("pwd -P", &sp), 0);
	captured(fd, buf, sizeof buf);
	assert_non_null(realpath(top, want));
	strlcat(want, "\n", sizeof want);
	assert_string_equal(buf, want);

	/* A directory that is not there: the program does not run. */
	char missing[128];
	snprintf(missing, sizeof missing, "%s/no-such-dir", top);
	sp = (struct spawn){.out = SPAWN_NULL, .err = SPAWN_NULL, .dir = missing};
	assert_int_equal(sh("exit 0", &sp), 127);
}

static void test_search(void **state)
{
	(void)state;
	char *const argv[] = {"true", NULL};
	/* In an empty directory a bare name is not found without the PATH search... */
	struct spawn sp = {.out = SPAWN_NULL, .err = SPAWN_NULL, .dir = top};
	assert_int_equal(spawn_wait("true", argv, &sp), 127);
	/* ...and is with it. */
	sp.search = true;
	assert_int_equal(spawn_wait("true", argv, &sp), 0);
	char *const fargv[] = {"false", NULL};
	assert_int_equal(spawn_wait("false", fargv, &sp), 1);
	assert_int_equal(spawn_wait("test-spawn-no-such-program", argv, &sp), 127);
}

/* The PATH searched is the one the program gets, not the caller's. */
static void test_search_envp_path(void **state)
{
	(void)state;
	char bin[128], prog[160], path_env[160];
	snprintf(bin, sizeof bin, "%s/bin", top);
	snprintf(prog, sizeof prog, "%s/test-spawn-prog", bin);
	snprintf(path_env, sizeof path_env, "PATH=%s", bin);
	assert_int_equal(mkdir(bin, 0755), 0);
	FILE *f = fopen(prog, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\nexit 7\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(prog, 0755), 0);
	char *const argv[] = {"test-spawn-prog", NULL}, *const env[] = {path_env, NULL};
	struct spawn sp = {.out = SPAWN_NULL, .err = SPAWN_NULL, .envp = env, .search = true};
	assert_int_equal(spawn_wait("test-spawn-prog", argv, &sp), 7);
	/* ours holds it, the program's does not: not found */
	char *saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	setenv("PATH", bin, 1);
	sp.envp = NULL;
	assert_int_equal(spawn_wait("test-spawn-prog", argv, &sp), 127);
	if (saved != NULL)
		setenv("PATH", saved, 1);
	free(saved);
	assert_int_equal(unlink(prog), 0);
	assert_int_equal(rmdir(bin), 0);
}

static void test_exec_errors(void **state)
{
	(void)state;
	char *const argv[] = {"x", NULL};
	struct spawn sp = {.out = SPAWN_NULL, .err = SPAWN_NULL};
	assert_int_equal(spawn_wait("/nonexistent/test-spawn", argv, &sp), 127);
	/* A directory is not executable. */
	assert_int_equal(spawn_wait(top, argv, &sp), 127);
	/* An output descriptor that is not open cannot be connected. */
	sp.out = 987;
	assert_int_equal(spawn_wait("/bin/true", argv, &sp), 127);
}

static void test_sane_limits(void **state)
{
	(void)state;
	char *const argv[] = {"true", NULL};
	struct spawn sp = {.out = SPAWN_NULL, .err = SPAWN_NULL, .sane_limits = true};
	assert_int_equal(spawn_wait("/bin/true", argv, &sp), 0);
}

/* A deadline that is not reached changes nothing: the status comes back. */
static void test_deadline_not_reached(void **state)
{
	(void)state;
	struct spawn sp = {.out = SPAWN_NULL, .err = SPAWN_NULL, .deadline = mono_ms() + 60000};
	assert_int_equal(sh("exit 5", &sp), 5);
}

static bool gone(pid_t pid)
{
	char p[64], st[512];
	snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "r");
	if (f == NULL)
		return true;
	size_t n = fread(st, 1, sizeof st - 1, f);
	fclose(f);
	st[n] = '\0';
	const char *rp = strrchr(st, ')');
	return rp != NULL && (rp[2] == 'Z' || rp[2] == 'X'); /* dead, not yet reaped by init */
}

/* At the deadline the program and what it started (its process group) are killed. */
static void test_deadline_kills_group(void **state)
{
	(void)state;
	char buf[256];
	int fd = capture();
	struct spawn sp = {.out = fd, .err = SPAWN_NULL, .deadline = mono_ms() + 1000};
	/* The grandchild's pid is written first, then both wait far beyond the deadline. */
	errno = 0;
	int rc = sh("sleep 60 & echo $!; wait", &sp);
	int e = errno;
	captured(fd, buf, sizeof buf);
	assert_int_equal(rc, -1);
	assert_int_equal(e, ETIMEDOUT);
	buf[strcspn(buf, "\n")] = '\0';
	const char *errstr = NULL;
	pid_t grandchild = (pid_t)strtonum(buf, 2, INT32_MAX, &errstr);
	assert_null(errstr);
	/* SIGKILL is delivered asynchronously: poll, with a generous bound. */
	bool dead = false;
	for (int i = 0; i < 1000 && !(dead = gone(grandchild)); i++)
		sleep_ms(10);
	if (!dead)
		kill(grandchild, SIGKILL);
	assert_true(dead);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exit_status),
	    cmocka_unit_test(test_capture_stdout_stderr),
	    cmocka_unit_test(test_environment),
	    cmocka_unit_test(test_dir),
	    cmocka_unit_test(test_search),
	    cmocka_unit_test(test_search_envp_path),
	    cmocka_unit_test(test_exec_errors),
	    cmocka_unit_test(test_sane_limits),
	    cmocka_unit_test(test_deadline_not_reached),
	    cmocka_unit_test(test_deadline_kills_group),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
