/*
 * pending: durable records of owed restarts (add, get, clear, prune, stale temps,
 * a directory others could write is refused), and proctree's stat parsing and
 * group identity check, which the wrapper and graceful-kill rely on.
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
#include <unistd.h>

#include <cmocka.h>

#include "render/pending.h"
#include "lib/proctree.h"

static char root[] = "/tmp/test_pending.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(root) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "%s/opt/gitlab/var/pending", root);
	/* the few files the tests made, by name */
	const char *names[] = {"a", "b", ".a.123"};
	for (size_t i = 0; i < 3; i++) {
		char p[PATH_MAX + 32];
		snprintf(p, sizeof p, "%s/%s", cmd, names[i]);
		unlink(p);
	}
	rmdir(cmd);
	snprintf(cmd, sizeof cmd, "%s/opt/gitlab/var", root);
	rmdir(cmd);
	snprintf(cmd, sizeof cmd, "%s/opt/gitlab", root);
	rmdir(cmd);
	snprintf(cmd, sizeof cmd, "%s/opt", root);
	rmdir(cmd);
	return rmdir(root);
}

static void open_root(struct pending *pd, bool create)
{
	struct ctl ctl;
	assert_int_equal(ctl_init(&ctl, root, NULL), 0);
	assert_int_equal(pending_open(&ctl, pd, create), 0);
}

static void test_add_get_clear(void **state)
{
	(void)state;
	struct pending pd;
	open_root(&pd, true);
	struct stat st;
	assert_int_equal(fstat(pd.dirfd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);

	unsigned what = 99;
	assert_int_equal(pending_get(&pd, "a", &what), 0);
	assert_int_equal(what, 0);
	assert_int_equal(pending_add(&pd, "a", PENDING_RESTART), 0);
	assert_int_equal(pending_add(&pd, "a", PENDING_LOG_RELOAD), 0);
	assert_int_equal(pending_get(&pd, "a", &what), 0);
	assert_int_equal(what, PENDING_RESTART | PENDING_LOG_RELOAD);

	/* another open (a later run) sees the same record */
	struct pending again;
	open_root(&again, false);
	assert_int_equal(pending_get(&again, "a", &what), 0);
	assert_int_equal(what, PENDING_RESTART | PENDING_LOG_RELOAD);
	pending_close(&again);

	assert_int_equal(pending_clear(&pd, "a", PENDING_RESTART), 0);
	assert_int_equal(pending_get(&pd, "a", &what), 0);
	assert_int_equal(what, PENDING_LOG_RELOAD);
	assert_int_equal(pending_clear(&pd, "a", PENDING_ALL), 0);
	assert_int_equal(faccessat(pd.dirfd, "a", F_OK, 0), -1); /* no file once nothing is owed */

	char buf[64];
	/* reasons are kept with the restart */
	assert_int_equal(pending_add(&pd, "a", PENDING_RESTART | PENDING_ENV), 0);
	assert_int_equal(pending_get(&pd, "a", &what), 0);
	assert_int_equal(what, PENDING_RESTART | PENDING_ENV);
	assert_int_equal(pending_clear(&pd, "a", PENDING_ALL), 0);
	assert_string_equal(
	    pending_text(PENDING_RESTART | PENDING_LOG_RESTART | PENDING_ENV, buf, sizeof buf),
	    "restart, log restart");
	/* names that would leave the directory are refused */
	assert_int_equal(pending_add(&pd, "../x", PENDING_RESTART), -1);
	assert_int_equal(pending_add(&pd, "", PENDING_RESTART), -1);
	pending_close(&pd);
}

static void test_prune(void **state)
{
	(void)state;
	struct pending pd;
	open_root(&pd, true);
	assert_int_equal(pending_add(&pd, "a", PENDING_RESTART), 0);
	assert_int_equal(pending_add(&pd, "b", PENDING_RESTART), 0);
	int fd = openat(pd.dirfd, ".a.123", O_WRONLY | O_CREAT, 0600); /* a killed run's temp */
	assert_true(fd >= 0);
	close(fd);
	const char *keep[] = {"a", "c"};
	bool present[] = {false, true};
	assert_int_equal(pending_prune(&pd, keep, 2, present), 0);
	assert_true(present[0]);  /* a has a record: the caller reads it */
	assert_false(present[1]); /* c has none: the caller need not look */
	unsigned what;
	assert_int_equal(pending_get(&pd, "a", &what), 0);
	assert_int_equal(what, PENDING_RESTART);
	assert_int_equal(faccessat(pd.dirfd, "b", F_OK, 0), -1);
	assert_int_equal(faccessat(pd.dirfd, ".a.123", F_OK, 0), -1);
	assert_int_equal(pending_clear(&pd, "a", PENDING_ALL), 0);
	pending_close(&pd);
}

static void test_refuses_open_dir(void **state)
{
	(void)state;
	struct pending pd;
	open_root(&pd, true);
	assert_int_equal(fchmod(pd.dirfd, 0777), 0);
	pending_close(&pd);
	struct ctl ctl;
	assert_int_equal(ctl_init(&ctl, root, NULL), 0);
	/* read-only use: a directory others could write is not trusted */
	assert_int_equal(pending_open(&ctl, &pd, false), -1);
	assert_int_equal(errno, EPERM);
	/* reconfigure (create) takes it back */
	assert_int_equal(pending_open(&ctl, &pd, true), 0);
	struct stat st;
	assert_int_equal(fstat(pd.dirfd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	pending_close(&pd);
}

/* Something other than a record in the way: every operation fails, nothing is lost. */
static void test_in_the_way(void **state)
{
	(void)state;
	struct pending pd;
	open_root(&pd, true);
	unsigned what;
	assert_int_equal(mkdirat(pd.dirfd, "a", 0700), 0); /* a directory where a record goes */
	assert_int_equal(pending_get(&pd, "a", &what), -1);
	assert_int_equal(errno, EISDIR);
	assert_int_equal(pending_add(&pd, "a", PENDING_RESTART), -1);
	assert_int_equal(pending_clear(&pd, "a", PENDING_ALL), -1);
	const char *keep[] = {"b"};
	assert_int_equal(pending_prune(&pd, keep, 1, NULL), -1); /* a directory is not unlinked */
	assert_int_equal(unlinkat(pd.dirfd, "a", AT_REMOVEDIR), 0);

	char tmp[64];
	snprintf(tmp, sizeof tmp, ".b.%ld", (long)getpid()); /* where b's temp file goes */
	assert_int_equal(mkdirat(pd.dirfd, tmp, 0700), 0);
	assert_int_equal(pending_add(&pd, "b", PENDING_RESTART), -1);
	assert_int_equal(faccessat(pd.dirfd, "b", F_OK, 0), -1); /* no half record */
	assert_int_equal(unlinkat(pd.dirfd, tmp, AT_REMOVEDIR), 0);
	pending_close(&pd);

	/* read-only use of a root never reconfigured: no directory, an error, nothing made */
	char fresh[] = "/tmp/test_pending_fresh.XXXXXX", path[PATH_MAX];
	assert_non_null(mkdtemp(fresh));
	struct ctl ctl;
	assert_int_equal(ctl_init(&ctl, fresh, NULL), 0);
	assert_int_equal(pending_open(&ctl, &pd, false), -1);
	assert_int_equal(errno, ENOENT);
	/* a file where <root>/opt goes: the directories cannot be made */
	snprintf(path, sizeof path, "%s/opt", fresh);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pending_open(&ctl, &pd, true), -1);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(fresh), 0);
}

static void test_proc_stat(void **state)
{
	(void)state;
	struct pstat ps;
	const char *line = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 "
	                   "20 0 1 0 987654 1000 10 18446744073709551615";
	assert_int_equal(proc_stat_parse(line, &ps), 0);
	assert_int_equal(ps.pid, 4242);
	assert_int_equal(ps.ppid, 1);
	assert_int_equal(ps.pgrp, 4242);
	assert_int_equal(ps.sid, 4242);
	assert_int_equal(ps.start, 987654);
	assert_string_equal(ps.comm, "a (weird) name");
	assert_int_equal(proc_stat_parse("garbage", &ps), -1);

	/* our own group: its leader's start time says it is the same; another does not */
	struct pstat me;
	assert_int_equal(proc_stat(getpid(), &me), 0);
	assert_int_equal(me.pid, getpid());
	assert_int_equal(me.ppid, getppid());
	struct pstat leader;
	if (proc_stat(me.pgrp, &leader) == 0) {
		assert_true(proc_group_is(me.pgrp, leader.start));
		assert_false(proc_group_is(me.pgrp, leader.start + 1));
	}
	pid_t kids[4];
	assert_true(proc_children(getpid(), kids, 4) >= 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_add_get_clear),    cmocka_unit_test(test_prune),
	    cmocka_unit_test(test_refuses_open_dir), cmocka_unit_test(test_in_the_way),
	    cmocka_unit_test(test_proc_stat),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
