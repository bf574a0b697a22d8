/* sdunit: when reconfigure starts runsvdir through systemd, and the unit file's ExecStart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runit/sdunit.h"

static struct sdunit_facts yes(void)
{
	return (struct sdunit_facts){.booted = true, .unit_found = true, .runs_self = true};
}

static void test_decide_all_hold(void **state)
{
	(void)state;
	struct sdunit_facts f = yes();
	assert_true(sdunit_decide(&f));
	f.env = "1";
	assert_true(sdunit_decide(&f));
}

static void test_decide_each_condition(void **state)
{
	(void)state;
	struct sdunit_facts f = yes();
	f.root_given = true; /* a private tree is never the unit's */
	assert_false(sdunit_decide(&f));
	f = yes();
	f.booted = false; /* no systemd: a chroot, a container, runit or sysvinit */
	assert_false(sdunit_decide(&f));
	f = yes();
	f.env = "0"; /* the operator's way out */
	assert_false(sdunit_decide(&f));
	f = yes();
	f.unit_found = false; /* installed without the unit */
	assert_false(sdunit_decide(&f));
	f = yes();
	f.runs_self = false; /* a build tree's binary must not start the packaged one */
	assert_false(sdunit_decide(&f));
}

static void test_probe_with_root(void **state)
{
	(void)state;
	struct ctl ctl;
	assert_int_equal(ctl_init(&ctl, "/tmp", NULL), 0);
	struct sdunit_facts f;
	sdunit_probe(&ctl, &f);
	assert_true(f.root_given);
	assert_false(sdunit_decide(&f));
}

static void test_exec_path(void **state)
{
	(void)state;
	char out[64];
	assert_int_equal(
	    sdunit_exec_path("[Unit]\nDescription=x\n[Service]\nType=simple\n"
	                     "ExecStart=/usr/bin/gitlab-ctl runsvdir\nRestart=always\n",
	                     out, sizeof out),
	    0);
	assert_string_equal(out, "/usr/bin/gitlab-ctl");
	assert_int_equal(sdunit_exec_path("  ExecStart=-@/opt/x/gitlab-ctl\n", out, sizeof out), 0);
	assert_string_equal(out, "/opt/x/gitlab-ctl");
	assert_int_equal(sdunit_exec_path("ExecStart=/usr/bin/gitlab-ctl", out, sizeof out), 0);
	assert_string_equal(out, "/usr/bin/gitlab-ctl");
	/* ExecStartPre= is not ExecStart=, and a missing one is an error */
	assert_int_equal(sdunit_exec_path("ExecStartPre=/bin/true\n", out, sizeof out), -1);
	assert_int_equal(sdunit_exec_path("", out, sizeof out), -1);
	assert_int_equal(sdunit_exec_path("ExecStart=\n", out, sizeof out), -1);
	char small[8];
	assert_int_equal(sdunit_exec_path("ExecStart=/usr/bin/gitlab-ctl\n", small, sizeof small),
	                 -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decide_all_hold),
	    cmocka_unit_test(test_decide_each_condition),
	    cmocka_unit_test(test_probe_with_root),
	    cmocka_unit_test(test_exec_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
