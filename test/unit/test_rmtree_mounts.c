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

/* The account's move, made while rmtree works in that directory (when it reports m). */
static char move_from[160], move_to[160], said[2048];

static ssize_t move_on_report(void *cookie, const char *buf, size_t len)
{
	(void)cookie;
	if (move_from[0] != '\0' && rename(move_from, move_to) == 0)
		move_from[0] = '\0';
	size_t have = strlen(said);
	snprintf(said + have, sizeof said - have, "%.*s", (int)len, buf);
	return (ssize_t)len;
}

/*
 * A directory moved away while rmtree empties it: the way up is found again from the top by
 * name (checked by dev/ino), the moved directory is left where it went and named, and what is
 * still in the tree is removed.
 */
static int moved_scenario(void)
{
	char top[128], b[160], m[170];
	snprintf(top, sizeof top, "%s/walk", base);
	snprintf(b, sizeof b, "%s/a/b", top);
	snprintf(m, sizeof m, "%s/m", b);
	if (unshare(CLONE_NEWNS) == -1 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return 80;
	char a[150];
	snprintf(a, sizeof a, "%s/a", top);
	if (mkdir(top, 0755) == -1 || mkdir(a, 0755) == -1 || mkdir(b, 0755) == -1 ||
	    mkdir(m, 0755) == -1 || mount("tmpfs", m, "tmpfs", 0, "mode=0755") == -1)
		return 81;
	touch(a, "file");
	strlcpy(move_from, b, sizeof move_from);
	snprintf(move_to, sizeof move_to, "%s/moved", base);
	char *msg = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&msg, &len);
	FILE *fp = fopencookie(NULL, "w", (cookie_io_functions_t){.write = move_on_report});
	if (mem == NULL || fp == NULL)
		return 82;
	setvbuf(fp, NULL, _IONBF, 0);
	int rc = rmtree(top, fp);
	fclose(fp);
	int rc2 = rmtree(top, mem); /* nothing of the tree is left to remove */
	fclose(mem);
	if (rc != -1 || move_from[0] != '\0')
		return 1;
	char want[256];
	snprintf(want, sizeof want, "cannot remove %s: moved while being removed: left", b);
	if (strstr(said, want) == NULL || strstr(said, "/m: on another file system") == NULL)
		return 4;
	if (access(top, F_OK) == 0 || rc2 != 0 || len != 0)
		return 2;
	char moved_m[200];
	snprintf(moved_m, sizeof moved_m, "%s/m", move_to);
	if (access(moved_m, F_OK) != 0 || umount(moved_m) == -1 || rmdir(moved_m) == -1 ||
	    rmdir(move_to) == -1)
		return 3;
	free(msg);
	return 0;
}

static void test_moved_during_walk(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(mkdir(base, 0700), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0)
		exit(moved_scenario());
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(rmdir(base), 0);
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
	    cmocka_unit_test(test_moved_during_walk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
