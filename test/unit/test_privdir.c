/* privdir: one policy for root's private directories (owed restarts, setup records). */
#include <errno.h>
#include <fcntl.h>
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

#include "lib/privdir.h"
#include "lib/rmtree.h"

static char top[64], parent[128], dir[160];

static int setup(void **state)
{
	(void)state;
	strlcpy(top, "/tmp/test_privdir.XXXXXX", sizeof top);
	if (mkdtemp(top) == NULL)
		return -1;
	snprintf(parent, sizeof parent, "%s/var/a", top);
	snprintf(dir, sizeof dir, "%s/private", parent);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(top, NULL);
}

static mode_t mode_of(const char *p)
{
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	return st.st_mode & 07777;
}

static void expect_refused(bool create)
{
	errno = 0;
	assert_int_equal(privdir_open(parent, dir, create), -1);
	assert_int_equal(errno, EPERM);
}

static void test_made_and_repaired(void **state)
{
	(void)state;
	/* Missing and not to be made: ENOENT, nothing made. */
	assert_int_equal(privdir_open(parent, dir, false), -1);
	assert_int_equal(errno, ENOENT);
	int fd = privdir_open(parent, dir, true);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mode_of(dir), 0700);
	assert_int_equal(mode_of(parent), 0755);

	/* Readable by others: read-only use takes it as it is, a writer repairs it. */
	assert_int_equal(chmod(dir, 0755), 0);
	fd = privdir_open(parent, dir, false);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mode_of(dir), 0755);
	fd = privdir_open(parent, dir, true);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mode_of(dir), 0700);

	/* Writable by group or others: refused for reading, repaired through the fd by a writer. */
	for (mode_t m = 0720; m <= 0722; m += 2) {
		assert_int_equal(chmod(dir, m), 0);
		expect_refused(false);
		fd = privdir_open(parent, dir, true);
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(mode_of(dir), 0700);
	}
}

static void test_links_and_owners(void **state)
{
	(void)state;
	char away[192];
	snprintf(away, sizeof away, "%s/elsewhere", top);
	assert_int_equal(mkdir(away, 0700), 0);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(symlink(away, dir), 0);
	/* A link where the directory goes is never followed, with or without create. */
	assert_int_equal(privdir_open(parent, dir, false), -1);
	assert_int_equal(privdir_open(parent, dir, true), -1);
	assert_int_equal(unlink(dir), 0);
	if (geteuid() != 0)
		skip();
	/* Another account's directory: refused, not chowned or chmodded. */
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chown(dir, 65534, 65534), 0);
	expect_refused(false);
	expect_refused(true);
	struct stat st;
	assert_int_equal(lstat(dir, &st), 0);
	assert_int_equal(st.st_uid, 65534);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_made_and_repaired),
	    cmocka_unit_test(test_links_and_owners),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
