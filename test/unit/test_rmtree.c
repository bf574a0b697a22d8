/* rmtree: removes a tree, never follows a link out of it, and keeps what is not below it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "lib/rmtree.h"

static char base[64];

static void path(char *out, const char *rel)
{
	tl_path(out, 256, base, rel);
}

static void mkfile(const char *rel)
{
	char p[256];
	path(p, rel);
	tl_put(p, "x\n", 0644);
}

static void mkd(const char *rel)
{
	char p[256];
	path(p, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void link_to(const char *target_rel, const char *rel)
{
	char t[256], p[256];
	path(t, target_rel);
	path(p, rel);
	assert_int_equal(symlink(t, p), 0);
}

static bool exists(const char *rel)
{
	char p[256];
	struct stat st;
	path(p, rel);
	return lstat(p, &st) == 0;
}

static int setup(void **state)
{
	(void)state;
	strcpy(base, "/tmp/test_rmtree.XXXXXX");
	return mkdtemp(base) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(base, NULL);
}

static void test_removes_tree_keeps_outside(void **state)
{
	(void)state;
	mkd("outside");
	mkfile("outside/precious");
	mkd("tree");
	mkd("tree/a");
	mkd("tree/a/b");
	mkfile("tree/a/b/f");
	mkfile("tree/top");
	link_to("outside", "tree/a/dirlink");      /* a planted link to a directory */
	link_to("outside/precious", "tree/flink"); /* and to a file */
	char p[256];
	path(p, "tree/a/b");
	assert_int_equal(chmod(p, 0), 0); /* a mode 0 directory: root still empties it */
	path(p, "tree");
	FILE *warn = tmpfile();
	assert_int_equal(rmtree(p, warn), 0);
	assert_false(exists("tree"));
	assert_true(exists("outside/precious"));
	assert_true(exists("outside"));
	fclose(warn);
}

static void test_missing_and_bad_paths(void **state)
{
	(void)state;
	char p[256];
	path(p, "no-such-dir");
	assert_int_equal(rmtree(p, NULL), 0);
	FILE *warn = tmpfile();
	assert_int_equal(rmtree("relative/path", warn), -1);
	assert_int_equal(rmtree("/", warn), -1);
	path(p, "..");
	assert_int_equal(rmtree(p, warn), -1);
	fclose(warn);
	/* a stage's removal: recorded for the command to print, nothing printed */
	struct diags d;
	diags_init(&d);
	assert_int_equal(rmtree_diags("relative/path", &d), -1);
	assert_int_equal(rmtree_diags(p, &d), -1);
	assert_int_equal(d.nerr, 2);
	assert_string_equal(d.v[0].msg, "cannot remove relative/path: not an absolute path");
	assert_non_null(strstr(d.v[1].msg, "refusing to remove"));
	diags_free(&d);
}

static void test_link_as_the_tree(void **state)
{
	(void)state;
	mkd("target");
	mkfile("target/kept");
	link_to("target", "thelink");
	char p[256];
	path(p, "thelink");
	assert_int_equal(rmtree(p, NULL), 0);
	assert_false(exists("thelink"));
	assert_true(exists("target/kept"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_removes_tree_keeps_outside, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing_and_bad_paths, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_link_as_the_tree, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
