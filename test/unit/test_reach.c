/* reach: the path walk with another account's permissions, on a private temp tree. */
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

#include "lib/reach.h"

static char top[64];

static void path(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", top, rel);
}

static void mk(const char *rel, mode_t mode, bool dir)
{
	char p[256];
	path(p, sizeof p, rel);
	if (dir) {
		assert_int_equal(mkdir(p, 0700), 0);
	} else {
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fclose(f);
	}
	assert_int_equal(chmod(p, mode), 0);
}

static int setup(void **state)
{
	(void)state;
	strlcpy(top, "/tmp/test_reach.XXXXXX", sizeof top);
	if (mkdtemp(top) == NULL || chmod(top, 0755) == -1)
		return -1;
	mk("open", 0755, true);
	mk("open/prog", 0755, false);
	mk("open/data", 0644, false);
	mk("shut", 0700, true);
	mk("shut/prog", 0755, false);
	mk("group", 0710, true);
	mk("group/prog", 0750, false);
	char p[256], t[256];
	path(p, sizeof p, "open/link");
	path(t, sizeof t, "shut/prog");
	if (symlink(t, p) == -1)
		return -1;
	path(p, sizeof p, "open/rel");
	if (symlink("prog", p) == -1)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	const char *rm[] = {"open/rel",   "open/link", "open/prog", "open/data", "shut/prog",
	                    "group/prog", "open",      "shut",      "group"};
	for (size_t i = 0; i < sizeof rm / sizeof rm[0]; i++) {
		char p[256];
		path(p, sizeof p, rm[i]);
		if (remove(p) == -1)
			return -1;
	}
	return rmdir(top);
}

/* An account that owns nothing here and is in no group of these files. */
static struct reach_who stranger(void)
{
	struct reach_who w = {.name = "stranger", .uid = 64999, .gids = {64999}, .ngids = 1};
	return w;
}

static int check(const struct reach_who *w, const char *rel, char *why, size_t len)
{
	char p[256];
	path(p, sizeof p, rel);
	return reach_exec(w, p, why, len);
}

static void test_open(void **state)
{
	(void)state;
	struct reach_who w = stranger();
	char why[512];
	assert_int_equal(check(&w, "open/prog", why, sizeof why), 0);
	assert_string_equal(why, "");
	assert_int_equal(check(&w, "open/rel", why, sizeof why), 0); /* relative link */
}

static void test_blocked_dir(void **state)
{
	(void)state;
	struct reach_who w = stranger();
	char why[512], want[512];
	assert_int_equal(check(&w, "shut/prog", why, sizeof why), 1);
	snprintf(want, sizeof want, "%s/shut is not searchable by stranger (mode 0700)", top);
	assert_string_equal(why, want);
	/* A link is followed: the directory of its target is what blocks. */
	assert_int_equal(check(&w, "open/link", why, sizeof why), 1);
	assert_string_equal(why, want);
}

static void test_not_executable(void **state)
{
	(void)state;
	struct reach_who w = stranger();
	char why[512], want[512];
	assert_int_equal(check(&w, "open/data", why, sizeof why), 1);
	snprintf(want, sizeof want, "%s/open/data is not executable by stranger (mode 0644)", top);
	assert_string_equal(why, want);
	struct reach_who root = {.name = "root", .uid = 0, .gids = {0}, .ngids = 1};
	assert_int_equal(check(&root, "open/data", why, sizeof why), 1); /* no x bit at all */
	assert_int_equal(check(&root, "shut/prog", why, sizeof why), 0);
}

static void test_missing(void **state)
{
	(void)state;
	struct reach_who w = stranger();
	char why[512], want[512];
	assert_int_equal(check(&w, "nope/prog", why, sizeof why), 1);
	snprintf(want, sizeof want, "%s/nope: No such file or directory", top);
	assert_string_equal(why, want);
	assert_int_equal(check(&w, "open", why, sizeof why), 1); /* a directory is no program */
	assert_int_equal(reach_exec(&w, "relative/prog", why, sizeof why), 1);
	assert_string_equal(why, "relative/prog: not an absolute path");
}

static void test_group(void **state)
{
	(void)state;
	struct reach_who w = stranger();
	char why[512];
	assert_int_equal(check(&w, "group/prog", why, sizeof why), 1);
	/* A member of the files' group gets the group bits: search and execute. */
	w.gids[w.ngids++] = getegid();
	assert_int_equal(check(&w, "group/prog", why, sizeof why), 0);
	/* The owner's bits apply to the owner, even where others' would not do. */
	struct reach_who owner = {.name = "owner", .uid = geteuid(), .gids = {64999}, .ngids = 1};
	assert_int_equal(check(&owner, "shut/prog", why, sizeof why), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_open),           cmocka_unit_test(test_blocked_dir),
	    cmocka_unit_test(test_not_executable), cmocka_unit_test(test_missing),
	    cmocka_unit_test(test_group),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
