/* Unit tests of the tree writer: diff against the disk, atomic writes, strays. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "svdir.h"
#include "tree.h"

static char root[] = "/tmp/gitlab-ctl-tree-test.XXXXXX";

static const char *P(const char *rel)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", root, rel);
	return buf[k];
}

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	static char buf[4096];
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static void build(struct tree *t, const char *run, const char *val)
{
	tree_init(t);
	uid_t u = TREE_NO_OWNER;
	assert_true(tree_add_dir(t, P("sv/x"), 0755, u, u, 0, TR_NONE, 0) >= 0);
	assert_true(tree_add_file(t, P("sv/x/run"), run, strlen(run), 0755, u, u, 0, TR_RUN, 0) >=
	            0);
	assert_true(tree_add_dir(t, P("env"), 0700, u, u, 0, TR_ENV, TN_EXCLUSIVE) >= 0);
	assert_true(tree_add_file(t, P("env/A"), val, strlen(val), 0600, u, u, 0, TR_ENV, 0) >= 0);
	assert_true(tree_add_link(t, P("bin/tool"), "/bin/true", -1, TR_NONE, TN_IF_MISSING) >= 0);
	assert_true(tree_add_link(t, P("service/x"), P("sv/x"), 0, TR_ENABLE, 0) >= 0);
}

static void apply_all(struct tree *t)
{
	for (size_t i = 0; i < t->nc; i++)
		assert_int_equal(tree_apply(t, &t->c[i]), 0);
}

static int setup(void **state)
{
	(void)state;
	umask(022);
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {"rm", "-rf", root, NULL};
		execvp("rm", argv);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return 0;
}

static void test_create_then_noop(void **state)
{
	(void)state;
	struct tree t;
	build(&t, "#!/bin/sh\nexec true\n", "v1");
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 6);
	for (size_t i = 0; i < t.nc; i++)
		assert_int_equal(t.c[i].kind, TC_CREATE);
	apply_all(&t);
	struct stat st;
	assert_int_equal(stat(P("env"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(P("env/A"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(P("sv/x/run"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_string_equal(slurp(P("env/A")), "v1"); /* no trailing newline */
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 0);
	tree_free(&t);
}

static void test_updates_and_strays(void **state)
{
	(void)state;
	struct tree t;
	/* external edits: mode, stray env var, leftover temp file, bin/tool replaced */
	assert_int_equal(chmod(P("sv/x/run"), 0700), 0);
	FILE *fp = fopen(P("env/OLD"), "w");
	assert_non_null(fp);
	fclose(fp);
	fp = fopen(P("env/.A.tmp123"), "w");
	assert_non_null(fp);
	fclose(fp);
	unlink(P("bin/tool"));
	assert_int_equal(symlink("/bin/false", P("bin/tool")), 0);

	build(&t, "#!/bin/sh\nexec true\n", "v2\n'$(x)");
	assert_int_equal(tree_diff(&t), 0);
	int mode = 0, content = 0, del = 0;
	for (size_t i = 0; i < t.nc; i++) {
		const struct tchange *c = &t.c[i];
		if (c->kind == TC_DELETE)
			del++;
		else if (c->kind == TC_UPDATE && c->what == TC_MODE)
			mode++, assert_string_equal(t.v[c->node].path, P("sv/x/run"));
		else if (c->kind == TC_UPDATE && c->what == TC_CONTENT)
			content++, assert_string_equal(t.v[c->node].path, P("env/A"));
		else
			fail_msg("unexpected change %d on %s", c->kind, t.v[c->node].path);
	}
	assert_int_equal(mode, 1);
	assert_int_equal(content, 1);
	assert_int_equal(del, 2);
	apply_all(&t);
	assert_string_equal(slurp(P("env/A")), "v2\n'$(x)");
	assert_int_equal(access(P("env/OLD"), F_OK), -1);
	char target[64] = "";
	assert_true(readlink(P("bin/tool"), target, sizeof target) > 0);
	assert_string_equal(target, "/bin/false"); /* TN_IF_MISSING: kept as found */
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 0);
	tree_free(&t);
}

static void test_link_retarget(void **state)
{
	(void)state;
	struct tree t;
	tree_init(&t);
	assert_true(tree_add_link(&t, P("service/x"), "/elsewhere", 0, TR_ENABLE, 0) >= 0);
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 1);
	assert_int_equal(t.c[0].kind, TC_UPDATE);
	assert_int_equal(tree_apply(&t, &t.c[0]), 0);
	char target[64] = "";
	assert_true(readlink(P("service/x"), target, sizeof target) > 0);
	assert_string_equal(target, "/elsewhere");
	tree_free(&t);
}

static void test_conflict(void **state)
{
	(void)state;
	struct tree t;
	tree_init(&t);
	/* a directory where a file belongs is an error naming the path, not a silent overwrite */
	assert_true(tree_add_file(&t, P("sv/x"), "x", 1, 0644, TREE_NO_OWNER, TREE_NO_OWNER, 0,
	                          TR_NONE, 0) >= 0);
	assert_int_equal(tree_diff(&t), -1);
	assert_string_equal(t.errpath, P("sv/x"));
	tree_free(&t);
}

static void test_describe(void **state)
{
	(void)state;
	struct tree t;
	tree_init(&t);
	assert_true(tree_add_file(&t, P("new"), "hello\n", 6, 0640, TREE_NO_OWNER, TREE_NO_OWNER, 0,
	                          TR_NONE, 0) >= 0);
	assert_int_equal(tree_diff(&t), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	tree_describe(&t, &t.c[0], fp);
	fclose(fp);
	char want[600];
	snprintf(want, sizeof want, "create file %s (mode 0640)\n", P("new"));
	assert_string_equal(buf, want);
	free(buf);
	tree_free(&t);
}

/*
 * A mode fix never follows a symlink swapped in after the diff (a service
 * user owns the directories where its files live): the link's target keeps
 * its mode, and a fresh file is renamed over the link instead.
 */
static void test_meta_no_follow(void **state)
{
	(void)state;
	struct tree t;
	tree_init(&t);
	assert_int_equal(mkdir(P("meta"), 0755), 0);
	FILE *fp = fopen(P("meta/victim"), "w");
	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(chmod(P("meta/victim"), 04755), 0);
	fp = fopen(P("meta/conf"), "w");
	assert_non_null(fp);
	fputs("x", fp);
	fclose(fp);
	assert_int_equal(chmod(P("meta/conf"), 0644), 0);
	assert_true(tree_add_file(&t, P("meta/conf"), "x", 1, 0600, TREE_NO_OWNER, TREE_NO_OWNER, 0,
	                          TR_CONFIG, 0) >= 0);
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 1);
	assert_int_equal(t.c[0].what, TC_MODE);
	/* the swap, between diff and apply */
	assert_int_equal(unlink(P("meta/conf")), 0);
	assert_int_equal(symlink(P("meta/victim"), P("meta/conf")), 0);
	assert_int_equal(tree_apply(&t, &t.c[0]), 0);
	struct stat st;
	assert_int_equal(stat(P("meta/victim"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 04755);
	assert_int_equal(lstat(P("meta/conf"), &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_string_equal(slurp(P("meta/conf")), "x");
	tree_free(&t);
	/* mkdir -p of nothing is an error, not a read past the path */
	errno = 0;
	assert_int_equal(tree_mkdirs("", 0755), -1);
	assert_int_equal(errno, ENOENT);
}

/* svdir_settle: backdate only when runsvdir cannot hold the new mtime already. */
static void test_settle(void **state)
{
	(void)state;
	const char *d = P("settle");
	assert_int_equal(mkdir(d, 0755), 0);
	time_t now = time(NULL);
	struct stat st;

	/* changed long after the last change: backdated to now - 1, still newer than before */
	assert_int_equal(svdir_settle(d, now - 10, true), 1);
	assert_int_equal(stat(d, &st), 0);
	assert_true(st.st_mtime == now - 1 || st.st_mtime == now); /* a second may tick */

	/* the previous change is 1 s old: now - 1 could equal what runsvdir saw, keep it */
	struct timespec ts[2] = {{.tv_nsec = UTIME_NOW}, {.tv_nsec = UTIME_NOW}};
	assert_int_equal(utimensat(AT_FDCWD, d, ts, 0), 0);
	now = time(NULL);
	int r = svdir_settle(d, now - 1, true);
	assert_true(r == 0 || (r == 1 && time(NULL) != now)); /* unless the clock ticked */

	/* no runsvdir yet: its first scan is unconditional, always backdate */
	assert_int_equal(utimensat(AT_FDCWD, d, ts, 0), 0);
	now = time(NULL);
	r = svdir_settle(d, now, false);
	assert_true(r == 1 || time(NULL) != now);
	assert_int_equal(stat(d, &st), 0);
	assert_true(st.st_mtime < time(NULL));

	/* already older than now: nothing to do */
	assert_int_equal(svdir_settle(d, 0, true), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_then_noop), cmocka_unit_test(test_updates_and_strays),
	    cmocka_unit_test(test_link_retarget),    cmocka_unit_test(test_conflict),
	    cmocka_unit_test(test_describe),         cmocka_unit_test(test_settle),
	    cmocka_unit_test(test_meta_no_follow),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
