/* cmd_load: one load for every command, and which diagnostics each policy shows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmd/load.h"

static char dir[] = "/tmp/test_cmd_load.XXXXXX";

/* A gitlab.rb with text in the test directory, and a ctl reading it. */
static void ctl_with(struct ctl *c, const char *text)
{
	char path[sizeof dir + 16];
	snprintf(path, sizeof path, "%s/gitlab.rb", dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(ctl_init(c, NULL, path), 0);
}

/* cmd_load with how, its report captured into *out (freed by the caller). */
static int load(const char *text, enum cmd_report how, struct loaded *l, char **out)
{
	struct ctl c;
	size_t len;
	ctl_with(&c, text);
	FILE *fp = open_memstream(out, &len);
	assert_non_null(fp);
	int rc = cmd_load(&c, l, how, "show-config", fp);
	assert_int_equal(fclose(fp), 0);
	return rc;
}

static const char warns[] = "redis['no_such_key'] = 1\n";
static const char fails[] = "redis['port'] = \n";

static void test_quiet_sums_warnings_up(void **state)
{
	(void)state;
	struct loaded l;
	char *out;
	assert_int_equal(load(warns, CMD_REPORT_QUIET, &l, &out), 0);
	assert_true(l.ok);
	assert_non_null(strstr(out, "gitlab-ctl show-config: 1 config warning: run gitlab-ctl "
	                            "check-config"));
	assert_null(strstr(out, "no_such_key"));
	free(out);
	cmd_unload(&l);
}

static void test_full_shows_each_warning(void **state)
{
	(void)state;
	struct loaded l;
	char *out;
	assert_int_equal(load(warns, CMD_REPORT_FULL, &l, &out), 0);
	assert_non_null(strstr(out, "gitlab.rb:1:"));
	assert_non_null(strstr(out, "warning: redis['no_such_key']"));
	free(out);
	cmd_unload(&l);
}

/* probe, lifecycle verbs: silent when it loads, yet the warnings stay in l.d. */
static void test_failed_is_silent_on_success(void **state)
{
	(void)state;
	struct loaded l;
	char *out;
	assert_int_equal(load(warns, CMD_REPORT_FAILED, &l, &out), 0);
	assert_string_equal(out, "");
	assert_int_equal(l.d.n - l.d.nerr - l.d.nnote, 1);
	free(out);
	cmd_unload(&l);
}

static void test_failed_shows_errors(void **state)
{
	(void)state;
	struct loaded l;
	char *out;
	assert_int_equal(load(fails, CMD_REPORT_FAILED, &l, &out), -1);
	assert_false(l.ok);
	assert_true(l.d.nerr > 0);
	assert_non_null(strstr(out, "gitlab.rb:1:"));
	assert_non_null(strstr(out, "error:"));
	free(out);
	cmd_unload(&l);
}

/* check-config, reconfigure: nothing printed, every record kept for the command. */
static void test_none_keeps_errors(void **state)
{
	(void)state;
	struct loaded l;
	char *out;
	assert_int_equal(load(fails, CMD_REPORT_NONE, &l, &out), -1);
	assert_string_equal(out, "");
	assert_true(l.d.nerr > 0);
	free(out);
	cmd_unload(&l);
	cmd_unload(&l); /* harmless twice */
}

static void test_catalog_alone(void **state)
{
	(void)state;
	struct ctl c;
	struct catalog cat;
	ctl_with(&c, "");
	assert_int_equal(cmd_load_catalog(&c, &cat, CMD_REPORT_FULL, "service-list", stderr), 0);
	assert_non_null(catalog_find(&cat, "redis"));
	catalog_free(&cat);
	assert_int_equal(ctl_init(&c, NULL, NULL), 0);
	strlcpy(c.datadir, "/nonexistent", sizeof c.datadir);
	assert_int_equal(cmd_load_catalog(&c, &cat, CMD_REPORT_NONE, "service-list", NULL), -1);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	char path[sizeof dir + 16];
	snprintf(path, sizeof path, "%s/gitlab.rb", dir);
	unlink(path);
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quiet_sums_warnings_up),
	    cmocka_unit_test(test_full_shows_each_warning),
	    cmocka_unit_test(test_failed_is_silent_on_success),
	    cmocka_unit_test(test_failed_shows_errors),
	    cmocka_unit_test(test_none_keeps_errors),
	    cmocka_unit_test(test_catalog_alone),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
