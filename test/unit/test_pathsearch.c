/* pathsearch: the PATH search exec, pre-flight, the runsvdir wrapper and spawn share. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "lib/pathsearch.h"
#include "lib/rmtree.h"

static char top[64];

static void at(char *out, size_t len, const char *rel)
{
	tl_path(out, len, top, rel);
}

static void mkfile(const char *rel, mode_t mode)
{
	char p[256];
	at(p, sizeof p, rel);
	tl_put(p, "#!/bin/sh\n", mode);
}

static void mkdir_at(const char *rel)
{
	char p[256];
	at(p, sizeof p, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

/* "a:b" of top-relative directories into "<top>/a:<top>/b"; "" elements stay empty. */
static void path_of(char *out, size_t len, const char *const *dirs)
{
	out[0] = '\0';
	for (size_t i = 0; dirs[i] != NULL; i++) {
		char p[256] = "";
		if (dirs[i][0] != '\0')
			at(p, sizeof p, dirs[i]);
		snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? ":" : "", p);
	}
}

static int setup(void **state)
{
	(void)state;
	strlcpy(top, "/tmp/test_pathsearch.XXXXXX", sizeof top);
	if (mkdtemp(top) == NULL || chmod(top, 0755) == -1)
		return -1;
	mkdir_at("plain");  /* prog: not executable */
	mkdir_at("dir");    /* prog: a directory */
	mkdir_at("run");    /* prog: executable */
	mkdir_at("run2");   /* prog: executable too */
	mkdir_at("linked"); /* prog: a link to run/prog */
	mkdir_at("dir/prog");
	mkfile("plain/prog", 0644);
	mkfile("run/prog", 0755);
	mkfile("run2/prog", 0755);
	char p[256], t[256];
	at(p, sizeof p, "linked/prog");
	at(t, sizeof t, "run/prog");
	return symlink(t, p);
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(top, NULL);
}

static int search(const char *const *dirs, const char *cmd, char *out, size_t len)
{
	char path[2048];
	path_of(path, sizeof path, dirs);
	return path_search(path, cmd, path_runnable_self, NULL, out, len);
}

static void expect_found(const char *const *dirs, const char *cmd, const char *rel)
{
	char out[PATH_MAX], want[256];
	at(want, sizeof want, rel);
	assert_int_equal(search(dirs, cmd, out, sizeof out), 0);
	assert_string_equal(out, want);
}

static void expect_error(const char *const *dirs, const char *cmd, int e)
{
	char out[PATH_MAX];
	errno = 0;
	assert_int_equal(search(dirs, cmd, out, sizeof out), -1);
	assert_int_equal(errno, e);
}

static void test_first_runnable_wins(void **state)
{
	(void)state;
	expect_found((const char *const[]){"run", "run2", NULL}, "prog", "run/prog");
	expect_found((const char *const[]){"run2", "run", NULL}, "prog", "run2/prog");
	/* a link is followed: its target is what runs */
	expect_found((const char *const[]){"linked", "run2", NULL}, "prog", "linked/prog");
}

/* What cannot be run is passed over for a later element, as execvp does. */
static void test_skips_what_cannot_run(void **state)
{
	(void)state;
	expect_found((const char *const[]){"plain", "run", NULL}, "prog", "run/prog");
	expect_found((const char *const[]){"dir", "run", NULL}, "prog", "run/prog");
	expect_found((const char *const[]){"dir", "plain", "run2", NULL}, "prog", "run2/prog");
}

static void test_not_runnable(void **state)
{
	(void)state;
	char out[PATH_MAX], want[256];
	/* only a file it may not run: EACCES, naming the first one */
	assert_int_equal(
	    search((const char *const[]){"dir", "plain", "plain", NULL}, "prog", out, sizeof out),
	    -1);
	assert_int_equal(errno, EACCES);
	at(want, sizeof want, "plain/prog");
	assert_string_equal(out, want);
	/* a directory is not a program: not found */
	expect_error((const char *const[]){"dir", NULL}, "prog", ENOENT);
	expect_error((const char *const[]){"run", NULL}, "no-such-prog", ENOENT);
	expect_error((const char *const[]){"run", NULL}, "", ENOENT);
}

/* An empty or relative element would be the cwd, which root and the account do not share. */
static void test_cwd_never_searched(void **state)
{
	(void)state;
	char cwd[PATH_MAX], run[256], out[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof cwd));
	at(run, sizeof run, "run");
	assert_int_equal(chdir(run), 0);
	const char *const paths[] = {"", ":", ".", "./", "run", "::"};
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		errno = 0;
		assert_int_equal(
		    path_search(paths[i], "prog", path_runnable_self, NULL, out, sizeof out), -1);
		assert_int_equal(errno, ENOENT);
	}
	assert_int_equal(chdir(top), 0); /* "run" relative to top is there too */
	assert_int_equal(path_search("run", "prog", path_runnable_self, NULL, out, sizeof out), -1);
	/* the absolute elements around an empty one still count */
	expect_found((const char *const[]){"", "run2", "", NULL}, "prog", "run2/prog");
	assert_int_equal(chdir(cwd), 0);
}

static void test_name_too_long(void **state)
{
	(void)state;
	char name[NAME_MAX + 2], out[PATH_MAX];
	memset(name, 'x', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	expect_error((const char *const[]){"run", NULL}, name, ENAMETOOLONG);
	/* an element that does not fit is skipped, as execvp does; alone, it is the reason */
	char small[sizeof top + 16], longdir[600], path[1024];
	memset(longdir, 'd', sizeof longdir - 1);
	longdir[0] = '/';
	longdir[sizeof longdir - 1] = '\0';
	at(small, sizeof small, "run");
	snprintf(path, sizeof path, "%s:%s", longdir, top);
	assert_int_equal(path_search(path, "prog", path_runnable_self, NULL, out, 64), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	snprintf(path, sizeof path, "%s:%s", longdir, small);
	assert_int_equal(path_search(path, "prog", path_runnable_self, NULL, out, 64), 0);
	assert_string_equal(strrchr(out, '/'), "/prog");
	/* a command with a '/' is taken as it is, if it fits */
	assert_int_equal(path_search(NULL, "./prog", path_runnable_self, NULL, out, 7), 0);
	assert_string_equal(out, "./prog");
	assert_int_equal(path_search(NULL, "./prog", path_runnable_self, NULL, out, 6), -1);
	assert_int_equal(errno, ENAMETOOLONG);
}

/* The caller decides who runs it: pre-flight asks about the service's account. */
static bool refuse_run(const char *file, void *arg)
{
	(*(int *)arg)++;
	return strstr(file, "/run/") == NULL;
}

static void test_runnable_decides(void **state)
{
	(void)state;
	char path[1024], out[PATH_MAX], want[256];
	int calls = 0;
	path_of(path, sizeof path, (const char *const[]){"dir", "run", "plain", NULL});
	/* asked about regular files only; plain/prog is not executable, but the callback rules */
	assert_int_equal(path_search(path, "prog", refuse_run, &calls, out, sizeof out), 0);
	at(want, sizeof want, "plain/prog");
	assert_string_equal(out, want);
	assert_int_equal(calls, 2);
}

static void test_default_path(void **state)
{
	(void)state;
	char out[PATH_MAX];
	assert_int_equal(path_search(NULL, "sh", path_runnable_self, NULL, out, sizeof out), 0);
	assert_string_equal(strrchr(out, '/'), "/sh");
	assert_int_equal(out[0], '/');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_first_runnable_wins),
	    cmocka_unit_test(test_skips_what_cannot_run),
	    cmocka_unit_test(test_not_runnable),
	    cmocka_unit_test(test_cwd_never_searched),
	    cmocka_unit_test(test_name_too_long),
	    cmocka_unit_test(test_runnable_decides),
	    cmocka_unit_test(test_default_path),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
