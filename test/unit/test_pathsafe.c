/* Unit tests of the path policy: normalisation, containment, StrictModes, gitlab.rb. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/dirtrust.h"
#include "lib/pathsafe.h"
#include "lib/rmtree.h"

static char dir[] = "/tmp/gitlab-ctl-pathsafe-test.XXXXXX";

static const char *P(const char *rel)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, rel);
	return buf[k];
}

static void test_normalize(void **state)
{
	(void)state;
	char out[PATH_MAX];
	const char *why = NULL;
	assert_int_equal(pathsafe_normalize("/a//b/./c/", out, sizeof out, &why), 0);
	assert_string_equal(out, "/a/b/c");
	assert_int_equal(pathsafe_normalize("/", out, sizeof out, &why), 0);
	assert_string_equal(out, "/");
	assert_int_equal(pathsafe_normalize("/a/..b/c..", out, sizeof out, &why), 0);
	assert_string_equal(out, "/a/..b/c..");
	assert_int_equal(pathsafe_normalize("/r/var/../../../shared", out, sizeof out, &why), -1);
	assert_non_null(strstr(why, ".."));
	assert_int_equal(pathsafe_normalize("/a/..", out, sizeof out, &why), -1);
	assert_int_equal(pathsafe_normalize("rel/x", out, sizeof out, &why), -1);
	assert_int_equal(pathsafe_normalize("/abcdef", out, 4, &why), -1);
}

static void test_below(void **state)
{
	(void)state;
	assert_true(pathsafe_below("/r/x", "/r"));
	assert_true(pathsafe_below("/r", "/r"));
	assert_true(pathsafe_below("/r/x", "/r/"));
	assert_false(pathsafe_below("/rx", "/r"));
	assert_false(pathsafe_below("/", "/r"));
	assert_true(pathsafe_below("/anything", ""));
}

static void test_trusted(void **state)
{
	(void)state;
	char bad[PATH_MAX];
	const char *why = NULL;
	/* missing components: root creates them */
	assert_int_equal(dirtrust_path("", P("a/b/c"), bad, sizeof bad, &why), 0);
	assert_int_equal(mkdir(P("a"), 0755), 0);
	assert_int_equal(dirtrust_path("", P("a/b"), bad, sizeof bad, &why), 0);
	/* writable by others: refused, naming the directory */
	assert_int_equal(chmod(P("a"), 0777), 0);
	assert_int_equal(dirtrust_path("", P("a/b"), bad, sizeof bad, &why), -1);
	assert_string_equal(bad, P("a"));
	assert_non_null(strstr(why, "writable"));
	/* sticky: fine when the next component exists and is ours, not before */
	assert_int_equal(chmod(P("a"), 01777), 0);
	assert_int_equal(dirtrust_path("", P("a/b"), bad, sizeof bad, &why), -1);
	assert_string_equal(bad, P("a"));
	assert_int_equal(mkdir(P("a/b"), 0755), 0);
	assert_int_equal(dirtrust_path("", P("a/b/c"), bad, sizeof bad, &why), 0);
	/* the path itself writable by others */
	assert_int_equal(chmod(P("a/b"), 0775), 0);
	assert_int_equal(dirtrust_path("", P("a/b"), bad, sizeof bad, &why), -1);
	assert_int_equal(chmod(P("a/b"), 0755), 0);
	/* a symlink below the root is refused; the root itself may be one */
	assert_int_equal(symlink(P("a"), P("l")), 0);
	assert_int_equal(dirtrust_path(dir, P("l/b"), bad, sizeof bad, &why), -1);
	assert_string_equal(bad, P("l"));
	assert_non_null(strstr(why, "symlink"));
	assert_int_equal(dirtrust_path(P("l"), P("l/b"), bad, sizeof bad, &why), 0);
	/* owned by another account (needs root to set up) */
	if (geteuid() == 0) {
		assert_int_equal(mkdir(P("o"), 0755), 0);
		assert_int_equal(chown(P("o"), 65534, 65534), 0);
		assert_int_equal(dirtrust_path("", P("o/log"), bad, sizeof bad, &why), -1);
		assert_string_equal(bad, P("o"));
		assert_non_null(strstr(why, "owned"));
	}
}

static void test_config_file(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	char msg[PATH_MAX + 200];
	FILE *fp = fopen(P("gitlab.rb"), "w");
	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(chmod(P("gitlab.rb"), 0644), 0);
	assert_int_equal(pathsafe_config_file(P("gitlab.rb"), msg, sizeof msg), 0);
	assert_int_equal(chmod(P("gitlab.rb"), 0664), 0);
	assert_int_equal(pathsafe_config_file(P("gitlab.rb"), msg, sizeof msg), -1);
	assert_non_null(strstr(msg, "chmod 600"));
	assert_int_equal(chmod(P("gitlab.rb"), 0600), 0);
	assert_int_equal(chown(P("gitlab.rb"), 65534, 0), 0);
	assert_int_equal(pathsafe_config_file(P("gitlab.rb"), msg, sizeof msg), -1);
	assert_non_null(strstr(msg, "chown root"));
	assert_int_equal(pathsafe_config_file(P("missing.rb"), msg, sizeof msg), 0);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(dir, NULL);
}

/* mkdir -p: existing directories pass; a file where a directory belongs is ENOTDIR at it. */
static void test_mkdirs(void **state)
{
	(void)state;
	char p[PATH_MAX], f[PATH_MAX];
	snprintf(p, sizeof p, "%s/m/a/b", dir);
	assert_int_equal(pathsafe_mkdirs(p, 0755), 0);
	assert_int_equal(pathsafe_mkdirs(p, 0755), 0); /* again: all there */
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	snprintf(f, sizeof f, "%s/m/file", dir);
	int fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pathsafe_mkdirs(f, 0755), -1);
	assert_int_equal(errno, ENOTDIR);
	snprintf(p, sizeof p, "%s/m/file/x", dir);
	assert_int_equal(pathsafe_mkdirs(p, 0755), -1);
	assert_int_equal(errno, ENOTDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_normalize), cmocka_unit_test(test_below),
	    cmocka_unit_test(test_trusted),   cmocka_unit_test(test_config_file),
	    cmocka_unit_test(test_mkdirs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
