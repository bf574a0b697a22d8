/*
 * steprec: records of one-time setup steps (running with pid and start time, done with
 * the path made, none), replaced atomically; a corrupt record is an error, not "none";
 * a record directory others could write is refused.
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

#include "lib/rmtree.h"
#include "render/steprec.h"

static char root[] = "/tmp/test_steprec.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(root) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(root, stderr);
}

static void open_root(struct steprec *r, bool create)
{
	struct ctl ctl;
	assert_int_equal(ctl_init(&ctl, root, NULL), 0);
	assert_int_equal(steprec_open(&ctl, r, create), 0);
}

static void test_states(void **state)
{
	(void)state;
	struct steprec r;
	struct step_entry e, got;
	open_root(&r, true);
	assert_int_equal(steprec_get(&r, "postgresql", "initdb", &got), 0);
	assert_int_equal(got.state, STEP_NONE);

	e = (struct step_entry){.state = STEP_RUNNING, .pid = 1234, .start = 987654321ULL};
	strcpy(e.path, "/x/.data.setup-0123456789abcdef");
	assert_int_equal(steprec_put(&r, "postgresql", "initdb", &e), 0);
	assert_int_equal(steprec_get(&r, "postgresql", "initdb", &got), 0);
	assert_int_equal(got.state, STEP_RUNNING);
	assert_int_equal(got.pid, 1234);
	assert_true(got.start == 987654321ULL);
	assert_string_equal(got.path, e.path);

	/* before the process exists: no pid, no staging directory */
	e = (struct step_entry){.state = STEP_RUNNING};
	assert_int_equal(steprec_put(&r, "postgresql", "initdb", &e), 0);
	assert_int_equal(steprec_get(&r, "postgresql", "initdb", &got), 0);
	assert_int_equal(got.state, STEP_RUNNING);
	assert_int_equal(got.pid, 0);
	assert_string_equal(got.path, "");

	e = (struct step_entry){.state = STEP_DONE};
	strcpy(e.path, "/var/opt/gitlab/postgresql/data dir");
	assert_int_equal(steprec_put(&r, "postgresql", "initdb", &e), 0);
	assert_int_equal(steprec_get(&r, "postgresql", "initdb", &got), 0);
	assert_int_equal(got.state, STEP_DONE);
	assert_string_equal(got.path, e.path);
	/* another step of the same service, and the same step name elsewhere, are apart */
	assert_int_equal(steprec_get(&r, "postgresql", "database", &got), 0);
	assert_int_equal(got.state, STEP_NONE);
	assert_int_equal(steprec_get(&r, "postgresql.initdb", "x", &got), 0);
	assert_int_equal(got.state, STEP_NONE);

	e = (struct step_entry){.state = STEP_NONE};
	assert_int_equal(steprec_put(&r, "postgresql", "initdb", &e), 0);
	assert_int_equal(steprec_get(&r, "postgresql", "initdb", &got), 0);
	assert_int_equal(got.state, STEP_NONE);
	assert_int_equal(steprec_get(&r, "../x", "initdb", &got), -1);
	steprec_close(&r);
}

static void test_corrupt_and_open(void **state)
{
	(void)state;
	struct steprec r;
	struct step_entry got;
	char path[PATH_MAX + 32];
	open_root(&r, true);
	snprintf(path, sizeof path, "%s/redis+seed", r.dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("running twelve\n", f);
	fclose(f);
	assert_int_equal(steprec_get(&r, "redis", "seed", &got), -1);
	assert_int_equal(errno, EBADMSG);
	assert_int_equal(unlink(path), 0);
	/* a directory others could write: whoever can write there could forge "done" */
	assert_int_equal(chmod(r.dir, 0777), 0);
	steprec_close(&r);
	struct ctl ctl;
	assert_int_equal(ctl_init(&ctl, root, NULL), 0);
	assert_int_equal(steprec_open(&ctl, &r, false), -1);
	assert_int_equal(errno, EPERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_states),
	    cmocka_unit_test(test_corrupt_and_open),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
