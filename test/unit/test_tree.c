/* Unit tests of the tree writer: diff against the disk, atomic writes, strays. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "runit/svdir.h"
#include "render/tree.h"
#include "lib/pathsafe.h"

static char root[] = "/tmp/gitlab-ctl-tree-test.XXXXXX";

static const char *P(const char *rel)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", root, rel);
	return buf[k];
}

/* The file's text, valid until the next call. */
static const char *slurp(const char *path)
{
	static char *last;
	free(last);
	return last = tl_slurp(path);
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
	fp = fopen(P("env/.A.gitlab-ctl-tmp.123"), "w");
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
	assert_int_equal(pathsafe_mkdirs("", 0755), -1);
	assert_int_equal(errno, ENOENT);
}

/* The output of f(t, c) for the first change (a real file: diff writes to its fd). */
static char *out_of(struct tree *t, void (*f)(const struct tree *, const struct tchange *, FILE *))
{
	static char buf[8192];
	FILE *fp = tmpfile();
	assert_non_null(fp);
	f(t, &t->c[0], fp);
	fflush(fp);
	rewind(fp);
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static void one_file(struct tree *t, const char *rel, const char *data, mode_t mode)
{
	tree_init(t);
	assert_true(tree_add_file(t, P(rel), data, strlen(data), mode, TREE_NO_OWNER, TREE_NO_OWNER,
	                          0, TR_CONFIG, 0) >= 0);
}

/* A hard link to a victim in place of a managed file: republished, the victim untouched. */
static void test_hard_link(void **state)
{
	(void)state;
	struct tree t;
	assert_int_equal(mkdir(P("hl"), 0755), 0);
	tl_put(P("victim"), "same\n", 0644);
	assert_int_equal(link(P("victim"), P("hl/conf")), 0);
	one_file(&t, "hl/conf", "same\n", 0600);
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 1);
	assert_int_equal(t.c[0].what, TC_RELINK | TC_MODE);
	assert_non_null(strstr(out_of(&t, tree_describe), "2 hard links: republished"));
	assert_int_equal(tree_apply(&t, &t.c[0]), 0);
	struct stat st;
	assert_int_equal(stat(P("victim"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(lstat(P("hl/conf"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 0);
	tree_free(&t);
}

/* A symlink to a secret or a fifo where a file belongs: replaced, never read or followed. */
static void test_replace_non_regular(void **state)
{
	(void)state;
	struct tree t;
	assert_int_equal(mkdir(P("nr"), 0755), 0);
	tl_put(P("secret"), "ROOT-ONLY\n", 0600);
	assert_int_equal(symlink(P("secret"), P("nr/conf")), 0);
	one_file(&t, "nr/conf", "mine\n", 0600);
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 1);
	assert_int_equal(t.c[0].what, TC_REPLACE);
	char want[600];
	snprintf(want, sizeof want, "replace symlink %s with file (mode 0600)\n", P("nr/conf"));
	assert_string_equal(out_of(&t, tree_describe), want);
	const char *diff = out_of(&t, tree_print_diff);
	assert_null(strstr(diff, "ROOT-ONLY"));
	assert_non_null(strstr(diff, "+mine"));
	assert_int_equal(tree_apply(&t, &t.c[0]), 0);
	assert_string_equal(slurp(P("secret")), "ROOT-ONLY\n");
	assert_string_equal(slurp(P("nr/conf")), "mine\n");
	tree_free(&t);

	assert_int_equal(unlink(P("nr/conf")), 0);
	assert_int_equal(mkfifo(P("nr/conf"), 0644), 0);
	one_file(&t, "nr/conf", "mine\n", 0600);
	assert_int_equal(tree_diff(&t), 0); /* does not block on the fifo */
	assert_int_equal(t.c[0].what, TC_REPLACE);
	assert_non_null(strstr(out_of(&t, tree_describe), "replace fifo"));
	assert_int_equal(tree_apply(&t, &t.c[0]), 0);
	assert_string_equal(slurp(P("nr/conf")), "mine\n");
	tree_free(&t);
}

/*
 * --diff shows the bytes read through the checked fd; an old side holding a
 * secret value shows redacted, a new side holding one outside its spans hides the file.
 */
static void test_print_diff(void **state)
{
	(void)state;
	struct tree t;
	assert_int_equal(mkdir(P("pd"), 0755), 0);
	tl_put(P("pd/conf"), "old line\n", 0600);
	one_file(&t, "pd/conf", "new line\n", 0600);
	assert_int_equal(tree_diff(&t), 0);
	const char *diff = out_of(&t, tree_print_diff);
	assert_non_null(strstr(diff, "-old line"));
	assert_non_null(strstr(diff, "+new line"));
	tree_free(&t);
	tl_put(P("pd/conf"), "token: old-hunter2\n", 0600);
	one_file(&t, "pd/conf", "token: new\n", 0600);
	tree_add_secret(&t, "old-hunter2"); /* in the old content only */
	assert_int_equal(tree_diff(&t), 0);
	diff = out_of(&t, tree_print_diff);
	assert_null(strstr(diff, "hunter2"));
	assert_non_null(strstr(diff, "\n-[REDACTED]\n+token: new\n"));
	tree_free(&t);
	one_file(&t, "pd/conf", "token: new-hunter3\n", 0600);
	tree_add_secret(&t, "new-hunter3");
	assert_int_equal(tree_diff(&t), 0);
	assert_string_equal(out_of(&t, tree_print_diff), "    (secret changed)\n");
	tree_free(&t);
}

/* A symlinked directory below the anchor is never followed. */
static void test_symlinked_dir(void **state)
{
	(void)state;
	struct tree t;
	assert_int_equal(mkdir(P("real"), 0755), 0);
	assert_int_equal(symlink(P("real"), P("lnk")), 0);
	one_file(&t, "lnk/conf", "x", 0600);
	assert_int_equal(tree_set_anchor(&t, root), 0);
	assert_int_equal(tree_diff(&t), -1);
	assert_int_equal(errno, ELOOP);
	assert_string_equal(t.errpath, P("lnk"));
	assert_non_null(strstr(t.errwhy, "symlink"));
	tree_free(&t);
	assert_int_equal(access(P("real/conf"), F_OK), -1);
}

/*
 * A symlink deeper down, past a directory already kept: the rest of the path is opened in one
 * openat2 that follows no link, and the walk that follows names the link, never its target.
 */
static void test_symlink_mid_path(void **state)
{
	(void)state;
	struct tree t;
	assert_int_equal(mkdir(P("mid"), 0755), 0);
	assert_int_equal(mkdir(P("mid/real"), 0755), 0);
	assert_int_equal(mkdir(P("mid/real/b"), 0755), 0);
	assert_int_equal(mkdir(P("mid/a"), 0755), 0);
	assert_int_equal(symlink(P("mid/real"), P("mid/a/lnk")), 0);
	tl_put(P("mid/real/b/conf"), "x", 0600);
	one_file(&t, "mid/a/lnk/b/conf", "y", 0600);
	assert_int_equal(tree_set_anchor(&t, root), 0);
	assert_int_equal(tree_diff(&t), -1);
	assert_int_equal(errno, ELOOP);
	assert_string_equal(t.errpath, P("mid/a/lnk"));
	assert_non_null(strstr(t.errwhy, "symlink"));
	tree_free(&t);
	assert_string_equal(slurp(P("mid/real/b/conf")), "x");
}

/* The env dir holds only what gitlab-ctl wrote: anything else fails before any write. */
static void test_env_foreign(void **state)
{
	(void)state;
	const char *foreign[] = {"README.md", ".hidden", "sub"};
	for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
		struct tree t;
		char rel[64];
		assert_int_equal(mkdir(P("fe"), 0700), 0);
		snprintf(rel, sizeof rel, "fe/%s", foreign[i]);
		if (i == 2)
			assert_int_equal(mkdir(P(rel), 0755), 0);
		else
			tl_put(P(rel), "keep", 0644);
		tl_put(P("fe/OLD_VAR"), "x", 0600);
		tree_init(&t);
		assert_true(tree_add_dir(&t, P("fe"), 0700, TREE_NO_OWNER, TREE_NO_OWNER, 0, TR_ENV,
		                         TN_EXCLUSIVE) >= 0);
		assert_int_equal(tree_diff(&t), -1);
		assert_int_equal(errno, ENOTEMPTY);
		assert_string_equal(t.errpath, P(rel));
		assert_int_equal(access(P(rel), F_OK), 0);
		assert_int_equal(access(P("fe/OLD_VAR"), F_OK), 0);
		tree_free(&t);
		char cmd[600];
		snprintf(cmd, sizeof cmd, "%s", P("fe"));
		assert_int_equal(i == 2 ? rmdir(P(rel)) : unlink(P(rel)), 0);
		assert_int_equal(unlink(P("fe/OLD_VAR")), 0);
		assert_int_equal(rmdir(cmd), 0);
	}
}

/* As root: a directory in another account's directory is moved aside; a link temp goes. */
static void test_foreign_dir_and_link_temp(void **state)
{
	(void)state;
	struct tree t;
	assert_int_equal(mkdir(P("home"), 0750), 0);
	assert_int_equal(mkdir(P("home/conf"), 0755), 0);
	assert_int_equal(mkdir(P("svc"), 0755), 0);
	assert_int_equal(symlink("/nowhere", P("svc/.x.gitlab-ctl-tmp.4242")), 0);
	if (geteuid() == 0)
		assert_int_equal(chown(P("home"), 65534, 65534), 0);
	one_file(&t, "home/conf", "x", 0600);
	assert_true(tree_add_link(&t, P("svc/x"), "/target", 0, TR_ENABLE, 0) >= 0);
	int rc = tree_diff(&t);
	if (geteuid() != 0) { /* our own directory: refused */
		assert_int_equal(rc, -1);
		assert_int_equal(errno, EISDIR);
		tree_free(&t);
		return;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(t.nc, 3);
	assert_int_equal(t.c[0].what, TC_REPLACE);
	assert_true(t.c[2].kind == TC_DELETE && t.c[2].stale_temp);
	assert_string_equal(t.c[2].path, P("svc/.x.gitlab-ctl-tmp.4242"));
	for (size_t i = 0; i < t.nc; i++)
		assert_int_equal(tree_apply(&t, &t.c[i]), 0);
	assert_string_equal(slurp(P("home/conf")), "x");
	/* No aside directory set: beside the file, under a random name (not the pid's). */
	char want[600];
	snprintf(want, sizeof want, "%s/.conf.moved-aside.", P("home"));
	assert_non_null(t.c[0].aside);
	assert_int_equal(strncmp(t.c[0].aside, want, strlen(want)), 0);
	assert_int_equal(strlen(t.c[0].aside), strlen(want) + 6);
	struct stat st;
	assert_int_equal(lstat(t.c[0].aside, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(lstat(P("svc/.x.gitlab-ctl-tmp.4242"), &st), -1);
	tree_free(&t);
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

/* Dot entries of dir (temps of the tree writer): how many. */
static int dot_entries(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	for (const struct dirent *e; (e = readdir(d)) != NULL;)
		n += e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 &&
		     strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* ba/one and bb/two (config files in two directories) and the enable link service/b. */
static void two_files(struct tree *t, const char *a, const char *b)
{
	const char *rel[] = {"ba/one", "bb/two"}, *data[] = {a, b};
	tree_init(t);
	for (size_t i = 0; i < 2; i++) {
		char dir[8];
		snprintf(dir, sizeof dir, "%.2s", rel[i]);
		assert_true(tree_add_dir(t, P(dir), 0755, TREE_NO_OWNER, TREE_NO_OWNER, 0, TR_NONE,
		                         0) >= 0);
		assert_true(tree_add_file(t, P(rel[i]), data[i], strlen(data[i]), 0644,
		                          TREE_NO_OWNER, TREE_NO_OWNER, 0, TR_CONFIG, 0) >= 0);
	}
	assert_true(tree_add_link(t, P("service/b"), P("ba"), 0, TR_ENABLE, 0) >= 0);
}

/*
 * Durability is batched: a file of the batch is published (renamed) only when the batch's
 * last change is applied, after every temp is written and fsynced; an enable link is not in
 * the batch and is published at once.
 */
static void test_batch_publish(void **state)
{
	(void)state;
	struct tree t;
	two_files(&t, "1\n", "2\n");
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 5);
	assert_int_equal(t.batch_end, 4);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(tree_apply(&t, &t.c[i]), 0);
	assert_int_equal(access(P("ba/one"), F_OK), -1); /* written as a temp only */
	assert_int_equal(dot_entries(P("ba")), 1);
	assert_int_equal(tree_apply(&t, &t.c[3]), 0);
	assert_string_equal(slurp(P("ba/one")), "1\n");
	assert_string_equal(slurp(P("bb/two")), "2\n");
	assert_int_equal(dot_entries(P("ba")), 0);
	assert_int_equal(dot_entries(P("bb")), 0);
	assert_int_equal(tree_apply(&t, &t.c[4]), 0);
	char target[600] = "";
	assert_true(readlink(P("service/b"), target, sizeof target) > 0);
	assert_string_equal(target, P("ba"));
	tree_free(&t);

	/* a batch left unfinished (the caller stopped) publishes nothing and leaves no temp */
	two_files(&t, "1 new\n", "2 new\n");
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 2);
	assert_int_equal(tree_apply(&t, &t.c[0]), 0);
	tree_free(&t);
	assert_string_equal(slurp(P("ba/one")), "1\n");
	assert_int_equal(dot_entries(P("ba")), 0);
}

/*
 * A failure part way through a batch publishes none of it: the second file's temp name
 * cannot be made (ENAMETOOLONG), and the first file, already written as a temp, keeps its
 * old content; no temp is left.
 */
static void test_batch_all_or_nothing(void **state)
{
	(void)state;
	struct tree t;
	char longname[300];
	memset(longname, 'x', 250);
	strcpy(longname + 250, "");
	char rel[320];
	snprintf(rel, sizeof rel, "bb/%s", longname);
	two_files(&t, "1 v2\n", "2\n");
	assert_true(tree_add_file(&t, P(rel), "x", 1, 0644, TREE_NO_OWNER, TREE_NO_OWNER, 0,
	                          TR_CONFIG, 0) >= 0);
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 2);
	assert_int_equal(tree_apply(&t, &t.c[0]), 0);
	assert_int_equal(tree_apply(&t, &t.c[1]), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	assert_string_equal(t.errpath, P(rel));
	assert_string_equal(slurp(P("ba/one")), "1\n");
	assert_int_equal(dot_entries(P("ba")), 0);
	assert_int_equal(dot_entries(P("bb")), 0);
	tree_free(&t);
}

/*
 * As root, with an aside directory: the account's directory in a file's place goes there
 * (root's, 0700, made or tightened), named after the home and the file, under a random name.
 */
static void test_aside_dir(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	struct tree t;
	assert_int_equal(mkdir(P("ahome"), 0750), 0);
	assert_int_equal(chown(P("ahome"), 65534, 65534), 0);
	assert_int_equal(mkdir(P("ahome/conf"), 0755), 0);
	assert_int_equal(mkdir(P("avar"), 0755), 0);
	assert_int_equal(mkdir(P("avar/aside"), 0755), 0);
	one_file(&t, "ahome/conf", "x", 0600);
	assert_int_equal(tree_set_aside(&t, P("avar/aside")), 0);
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 1);
	assert_int_equal(tree_apply(&t, &t.c[0]), 0);
	assert_true(t.c[0].published);
	assert_string_equal(slurp(P("ahome/conf")), "x");
	char want[600];
	snprintf(want, sizeof want, "%s/ahome.conf.", P("avar/aside"));
	assert_non_null(t.c[0].aside);
	assert_int_equal(strncmp(t.c[0].aside, want, strlen(want)), 0);
	struct stat st;
	assert_int_equal(lstat(t.c[0].aside, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(stat(P("avar/aside"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(dot_entries(P("ahome")), 0);
	tree_free(&t);
	assert_int_equal(tree_set_aside(&t, "relative"), -1);
}

/*
 * As root: a failure below a service account's directory (here a name too long for a temp
 * beside it) drops that service's changes only: its root-owned file staged earlier is not
 * published either, the other service's file is, and tree_failed says what failed.
 */
static void test_failure_contained(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	struct tree t;
	const uid_t r = TREE_NO_OWNER, acct = 65534;
	char rel[320];
	snprintf(rel, sizeof rel, "cf/chome/%0250d", 0);
	assert_int_equal(mkdir(P("cf"), 0755), 0);
	tl_put(P("cf/c0run"), "old\n", 0644);
	tree_init(&t);
	assert_true(tree_add_file(&t, P("cf/c0run"), "new\n", 4, 0644, r, r, 0, TR_RUN, 0) >= 0);
	assert_true(tree_add_dir(&t, P("cf/chome"), 0750, acct, acct, 0, TR_NONE, 0) >= 0);
	assert_true(tree_add_file(&t, P(rel), "x", 1, 0600, acct, acct, 0, TR_CONFIG, 0) >= 0);
	assert_true(tree_add_file(&t, P("cf/c1conf"), "1\n", 2, 0644, r, r, 1, TR_CONFIG, 0) >= 0);
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 4);
	assert_int_equal(tree_apply(&t, &t.c[0]), 0); /* c0run: staged */
	assert_int_equal(tree_apply(&t, &t.c[1]), 0); /* chome: made */
	assert_int_equal(tree_apply(&t, &t.c[2]), 1); /* the long name: service 0 dropped */
	assert_int_equal(tree_apply(&t, &t.c[3]), 0); /* service 1: the batch's end */
	assert_string_equal(slurp(P("cf/c1conf")), "1\n");
	assert_true(t.c[3].published);
	assert_string_equal(slurp(P("cf/c0run")), "old\n");
	assert_false(t.c[0].published || t.c[2].published);
	assert_true(t.c[1].published);
	const struct tree_fail *f = tree_failed(&t, 0);
	assert_non_null(f);
	assert_int_equal(f->err, ENAMETOOLONG);
	assert_string_equal(f->path, P(rel));
	assert_null(tree_failed(&t, 1));
	assert_null(tree_failed(&t, -1));
	assert_int_equal(dot_entries(P("cf")), 0);
	assert_int_equal(dot_entries(P("cf/chome")), 0);
	tree_free(&t);
}

/*
 * Directories are walked once and their fds kept: a symlink swapped in for a walked
 * directory after the diff is not followed; the write lands in the directory the walk
 * checked (wherever it was moved), never in the link's target.
 */
static void test_kept_dir_no_follow(void **state)
{
	(void)state;
	struct tree t;
	two_files(&t, "1\n", "2 v3\n");
	assert_int_equal(tree_diff(&t), 0);
	assert_int_equal(t.nc, 1); /* bb/two */
	assert_int_equal(mkdir(P("elsewhere"), 0755), 0);
	assert_int_equal(rename(P("bb"), P("bb-old")), 0);
	assert_int_equal(symlink(P("elsewhere"), P("bb")), 0);
	for (size_t i = 0; i < t.nc; i++)
		assert_int_equal(tree_apply(&t, &t.c[i]), 0);
	assert_int_equal(access(P("elsewhere/two"), F_OK), -1);
	assert_string_equal(slurp(P("bb-old/two")), "2 v3\n");
	tree_free(&t);
	/* a new run walks again: the link is refused, not followed */
	two_files(&t, "1\n", "2 v4\n");
	assert_int_equal(tree_diff(&t), -1);
	assert_int_equal(errno, ELOOP);
	assert_string_equal(t.errpath, P("bb"));
	tree_free(&t);
}

/*
 * Under a small open-file limit (`ulimit -n 12`: the caller holds some fds too) a tree of many
 * directories and files is still written: fewer directory fds kept, temps synced in smaller
 * rounds, and on EMFILE the kept ones are given back and the call tried again.
 */
static void test_few_fds(void **state)
{
	(void)state;
	struct rlimit old, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	struct tree t;
	tree_init(&t);
	uid_t u = TREE_NO_OWNER;
	char rel[64], data[64];
	for (int d = 0; d < 12; d++)
		for (int f = 0; f < 4; f++) {
			snprintf(rel, sizeof rel, "few/d%d/e%d/f%d", d, d % 3, f);
			snprintf(data, sizeof data, "%d.%d\n", d, f);
			assert_true(tree_add_file(&t, P(rel), data, strlen(data), 0644, u, u, 0,
			                          TR_CONFIG, 0) >= 0);
		}
	low = old;
	low.rlim_cur = 12;
	/* the budget is taken at tree_init: a limit lowered after it is met by shedding */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	int rc = tree_diff(&t);
	for (size_t i = 0; rc == 0 && i < t.nc; i++)
		rc = tree_apply(&t, &t.c[i]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(rc, 0);
	tree_free(&t);
	assert_string_equal(slurp(P("few/d11/e2/f3")), "11.3\n");
	assert_string_equal(slurp(P("few/d0/e0/f0")), "0.0\n");
	assert_int_equal(dot_entries(P("few/d5/e2")), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_then_noop),
	    cmocka_unit_test(test_updates_and_strays),
	    cmocka_unit_test(test_link_retarget),
	    cmocka_unit_test(test_conflict),
	    cmocka_unit_test(test_describe),
	    cmocka_unit_test(test_settle),
	    cmocka_unit_test(test_meta_no_follow),
	    cmocka_unit_test(test_hard_link),
	    cmocka_unit_test(test_replace_non_regular),
	    cmocka_unit_test(test_print_diff),
	    cmocka_unit_test(test_symlinked_dir),
	    cmocka_unit_test(test_symlink_mid_path),
	    cmocka_unit_test(test_env_foreign),
	    cmocka_unit_test(test_foreign_dir_and_link_temp),
	    cmocka_unit_test(test_batch_publish),
	    cmocka_unit_test(test_batch_all_or_nothing),
	    cmocka_unit_test(test_kept_dir_no_follow),
	    cmocka_unit_test(test_few_fds),
	    cmocka_unit_test(test_aside_dir),
	    cmocka_unit_test(test_failure_contained),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
