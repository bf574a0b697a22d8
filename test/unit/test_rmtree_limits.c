/* rmtree: what it refuses or reports (too deep, unusable parents), on a private temp dir. */
#include <errno.h>
#include <fcntl.h>
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

#include "lib/rmtree.h"

static char top[64];

static int setup(void **state)
{
	(void)state;
	strlcpy(top, "/tmp/test_rmtree_limits.XXXXXX", sizeof top);
	return mkdtemp(top) == NULL ? -1 : 0;
}

/* Removes the deep chain level by level from the bottom, relative to directory fds. */
static void remove_chain(int dfd, const char *name, int levels)
{
	if (levels == 0)
		return;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return;
	remove_chain(fd, "d", levels - 1);
	close(fd);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

static int teardown(void **state)
{
	(void)state;
	int dfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd != -1) {
		remove_chain(dfd, "deep", 400);
		close(dfd);
	}
	return rmtree(top, NULL);
}

static char *run(const char *path, int *rc)
{
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);
	assert_non_null(fp);
	*rc = rmtree(path, fp);
	fclose(fp);
	return out;
}

/* A chain deeper than rmtree descends: it stops there and says so, removing nothing above. */
static void test_too_deep(void **state)
{
	(void)state;
	int dfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd != -1);
	assert_int_equal(mkdirat(dfd, "deep", 0755), 0);
	int fd = openat(dfd, "deep", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < 300; i++) {
		assert_true(fd != -1);
		assert_int_equal(mkdirat(fd, "d", 0755), 0);
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	close(fd);
	close(dfd);
	char p[128];
	snprintf(p, sizeof p, "%s/deep", top);
	int rc;
	char *out = run(p, &rc);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(out, ": too deep\n"));
	free(out);
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
}

static void test_bad_parents(void **state)
{
	(void)state;
	char p[128];
	int rc;
	/* The parent is a file: cannot be opened as a directory. */
	snprintf(p, sizeof p, "%s/file", top);
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd != -1);
	close(fd);
	snprintf(p, sizeof p, "%s/file/child", top);
	char *out = run(p, &rc);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(out, "cannot open"));
	assert_non_null(strstr(out, "Not a directory"));
	free(out);
	/* A missing parent: nothing to remove, no error. */
	snprintf(p, sizeof p, "%s/none/child", top);
	out = run(p, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "");
	free(out);
	/* Names that are never removed. */
	const char *refused[] = {"/tmp/.", "/tmp/..", "/tmp/"};
	for (size_t i = 0; i < 3; i++) {
		out = run(refused[i], &rc);
		assert_int_equal(rc, -1);
		assert_non_null(strstr(out, "refusing to remove"));
		free(out);
	}
	out = run("relative/path", &rc);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(out, "not an absolute path"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_too_deep),
	    cmocka_unit_test(test_bad_parents),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
