/* rmtree: depth without limit, moved directories, unusable parents, on a private temp dir. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/rmtree.h"
#include "child.h"

static char top[64];

static int setup(void **state)
{
	(void)state;
	strlcpy(top, "/tmp/test_rmtree_limits.XXXXXX", sizeof top);
	return mkdtemp(top) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
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

/* A chain of `levels` directories named "d" below top/name, with a file at each level. */
static void make_chain(const char *name, int levels)
{
	int dfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd != -1);
	assert_int_equal(mkdirat(dfd, name, 0755), 0);
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < levels; i++) {
		assert_true(fd != -1);
		int f = openat(fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(f != -1);
		close(f);
		assert_int_equal(mkdirat(fd, "d", 0755), 0);
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	close(fd);
	close(dfd);
}

static int remove_with_few_fds(void *path)
{
	/* Eight descriptors, stdio included, whatever the runner left open (flock's lock fd). */
	closefrom(3);
	struct rlimit rl = {8, 8};
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		return 90;
	return rmtree(path, NULL) == 0 ? 0 : 1;
}

/*
 * A chain far deeper than PATH_MAX allows to name (what an account can make in its home):
 * removed to the end, with a handful of descriptors (no fd per level, no recursion).
 */
static void test_deep(void **state)
{
	(void)state;
	make_chain("deep", 1200);
	char p[128];
	snprintf(p, sizeof p, "%s/deep", top);
	char err[512] = "";
	assert_int_equal(in_child(remove_with_few_fds, p, err, sizeof err), 0);
	assert_string_equal(err, "");
	struct stat st;
	assert_int_equal(lstat(p, &st), -1);
	assert_int_equal(errno, ENOENT);
}

/* A subtree moved away and replaced by a link to it: the link is removed, the subtree kept. */
static void test_link_to_moved_subtree(void **state)
{
	(void)state;
	make_chain("moving", 3);
	char from[128], to[128], p[128];
	snprintf(p, sizeof p, "%s/moving", top);
	snprintf(from, sizeof from, "%s/moving/d/d", top);
	snprintf(to, sizeof to, "%s/elsewhere", top);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(symlink(to, from), 0);
	int rc;
	char *out = run(p, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(access(to, F_OK), 0);
	snprintf(p, sizeof p, "%s/elsewhere/f", top);
	assert_int_equal(access(p, F_OK), 0);
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
	    cmocka_unit_test(test_deep),
	    cmocka_unit_test(test_link_to_moved_subtree),
	    cmocka_unit_test(test_bad_parents),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
