/*
 * Unit tests of dirtrust: a run's cache gives the verdicts of a fresh walk, and a
 * kept directory replaced (by a symlink, another directory) or chmodded between two checks
 * of one run is examined again, never passed by its name.
 */
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

static char dir[] = "/tmp/gitlab-ctl-dirtrust-test.XXXXXX";

static const char *P(const char *rel)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, rel);
	return buf[k];
}

/* The run's cache c says what a walk from a cache of its own says. */
static int same(struct dirtrust *c, const char *root, const char *path)
{
	char bad1[PATH_MAX] = "", bad2[PATH_MAX] = "";
	const char *why1 = NULL, *why2 = NULL;
	int r1 = dirtrust_path(root, path, bad1, sizeof bad1, &why1);
	int r2 = dirtrust_check(c, path, bad2, sizeof bad2, &why2);
	assert_int_equal(r1, r2);
	if (r1 == -1) {
		assert_string_equal(bad1, bad2);
		assert_string_equal(why1, why2);
	}
	return r1;
}

static void test_same_verdicts(void **state)
{
	(void)state;
	struct dirtrust c;
	dirtrust_init(&c, "");
	assert_int_equal(same(&c, "", P("a/b/c")), 0); /* missing: root creates them */
	assert_int_equal(same(&c, "", "/"), 0);
	assert_int_equal(same(&c, "", "relative"), -1);
	assert_int_equal(mkdir(P("a"), 0755), 0);
	assert_int_equal(same(&c, "", P("a/b")), 0);
	assert_int_equal(same(&c, "", P("a")), 0);
	assert_int_equal(chmod(P("a"), 0777), 0); /* kept a, chmodded since: examined again */
	assert_int_equal(same(&c, "", P("a/b")), -1);
	assert_int_equal(chmod(P("a"), 01777), 0); /* sticky: the next one must exist, ours */
	assert_int_equal(same(&c, "", P("a/b")), -1);
	assert_int_equal(same(&c, "", P("a")), -1); /* the path itself writable by others */
	assert_int_equal(mkdir(P("a/b"), 0755), 0);
	assert_int_equal(same(&c, "", P("a/b/c")), 0);
	assert_int_equal(same(&c, "", P("a/b/c/d/e")), 0);
	assert_int_equal(chmod(P("a/b"), 0775), 0);
	assert_int_equal(same(&c, "", P("a/b")), -1);
	assert_int_equal(same(&c, "", P("a/b/c")), -1);
	assert_int_equal(chmod(P("a/b"), 0755), 0);
	assert_int_equal(symlink(P("a"), P("l")), 0);
	assert_int_equal(same(&c, "", P("l/b")), -1); /* a symlink below the root */
	struct dirtrust below;
	dirtrust_init(&below, P("l")); /* the root itself may be one */
	assert_int_equal(same(&below, P("l"), P("l/b")), 0);
	assert_int_equal(same(&below, P("l"), P("l/b/x")), 0);
	dirtrust_free(&below);
	int fd = open(P("f"), O_WRONLY | O_CREAT | O_EXCL, 0644); /* a file on the way */
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(same(&c, "", P("f")), 0);
	assert_int_equal(same(&c, "", P("f/x")), -1);
	assert_int_equal(same(&c, "", P("f/x/y")), -1);
	if (geteuid() == 0) {
		assert_int_equal(mkdir(P("o"), 0755), 0);
		assert_int_equal(same(&c, "", P("o/log")), 0);
		assert_int_equal(chown(P("o"), 65534, 65534), 0);
		assert_int_equal(same(&c, "", P("o/log")), -1);
	}
	dirtrust_free(&c);
}

/*
 * The cache must not be fooled: s/d is found trusted and kept, then swapped (as an account
 * with write access there would) for a symlink to a directory anyone can write, and for
 * another directory: the next check through s/d sees the swap.
 */
static void test_swapped_dir(void **state)
{
	(void)state;
	struct dirtrust c;
	char bad[PATH_MAX];
	const char *why = NULL;
	dirtrust_init(&c, "");
	assert_int_equal(mkdir(P("s"), 0755), 0);
	assert_int_equal(mkdir(P("s/d"), 0755), 0);
	assert_int_equal(mkdir(P("s/d/e"), 0755), 0);
	assert_int_equal(mkdir(P("w"), 0777), 0);
	assert_int_equal(chmod(P("w"), 0777), 0);
	assert_int_equal(dirtrust_check(&c, P("s/d/e/run"), bad, sizeof bad, &why), 0);
	assert_int_equal(rename(P("s/d"), P("s/old")), 0);
	assert_int_equal(symlink(P("w"), P("s/d")), 0);
	assert_int_equal(dirtrust_check(&c, P("s/d/e/run"), bad, sizeof bad, &why), -1);
	assert_string_equal(bad, P("s/d"));
	assert_non_null(strstr(why, "symlink"));
	/* another directory, writable by others, in its place */
	assert_int_equal(unlink(P("s/d")), 0);
	assert_int_equal(mkdir(P("s/d"), 0755), 0);
	assert_int_equal(chmod(P("s/d"), 0777), 0);
	assert_int_equal(dirtrust_check(&c, P("s/d/e/run"), bad, sizeof bad, &why), -1);
	assert_string_equal(bad, P("s/d"));
	assert_non_null(strstr(why, "writable"));
	dirtrust_free(&c);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_verdicts),
	    cmocka_unit_test(test_swapped_dir),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
