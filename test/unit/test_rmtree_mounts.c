/*
 * rmtree and mount points (cleanse of a data directory that is a volume): a tree that is
 * itself a mount point is emptied and kept; a file system mounted inside it is left as it
 * is, said, and the removal fails. Run in a child with its own mount namespace (tmpfs
 * mounts there only), so the machine's mounts are never touched; needs root.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/rmtree.h"

static char base[] = "/tmp/test_rmtree_mounts.XXXXXX";

static void touch(const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *fp = fopen(p, "w");
	if (fp == NULL || fclose(fp) != 0)
		exit(90);
}

static bool exists(const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* In the child: each failed check exits with its own status. */
static int scenario(void)
{
	char top[128], nested[160], sub[160];
	snprintf(top, sizeof top, "%s/top", base);
	snprintf(nested, sizeof nested, "%s/nested", top);
	snprintf(sub, sizeof sub, "%s/sub", top);
	if (unshare(CLONE_NEWNS) == -1 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return 80;
	if (mkdir(top, 0755) == -1 || mount("tmpfs", top, "tmpfs", 0, "mode=0755") == -1)
		return 81;
	if (mkdir(sub, 0755) == -1 || mkdir(nested, 0755) == -1 ||
	    mount("tmpfs", nested, "tmpfs", 0, "mode=0755") == -1)
		return 82;
	touch(top, "file");
	touch(sub, "deep");
	touch(nested, "inner");

	char *msg = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&msg, &len);
	int rc = rmtree(top, fp);
	fclose(fp);
	if (rc != -1)
		return 1;
	if (exists(top, "file") || exists(top, "sub") || !exists(nested, "inner"))
		return 2;
	char want[256];
	snprintf(want, sizeof want, "cannot remove %s/nested: on another file system", top);
	if (strstr(msg, want) == NULL)
		return 3;
	snprintf(want, sizeof want, "%s is a mount point: emptied, kept", top);
	if (strstr(msg, want) == NULL)
		return 4;
	free(msg);

	/* Only the tree itself a mount point: emptied, kept, and that is no failure. */
	if (umount(nested) == -1)
		return 83;
	fp = open_memstream(&msg, &len);
	rc = rmtree(top, fp);
	fclose(fp);
	if (rc != 0 || exists(top, "nested") || access(top, F_OK) != 0)
		return 5;
	if (strstr(msg, "is a mount point: emptied, kept") == NULL)
		return 6;
	free(msg);
	if (umount(top) == -1 || rmdir(top) == -1)
		return 84;
	return 0;
}

static void test_mount_points(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(base));
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0)
		exit(scenario()); /* exit, not _exit: a coverage build writes its counters */
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(rmdir(base), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mount_points),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
