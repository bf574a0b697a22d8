/* svlog: the svlogd settings' keys, Omnibus' defaults, text form, set and copy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/svlog.h"

static void expect_text(const struct svlog *l, int k, const char *want)
{
	char *t = svlog_text(l, k);
	assert_string_equal(t, want);
	free(t);
}

static void test_keys(void **state)
{
	(void)state;
	assert_int_equal(svlog_key("svlogd_size"), SVLOG_SIZE);
	assert_int_equal(svlog_key("svlogd_prefix"), SVLOG_PREFIX);
	assert_int_equal(svlog_key("svlogd"), -1);
	assert_int_equal(svlog_key("svlogd_sizes"), -1);
	for (int k = 0; k < SVLOG_N; k++)
		assert_int_equal(svlog_key(svlog_keys[k]), k);
}

static void test_defaults_and_text(void **state)
{
	(void)state;
	struct svlog l;
	svlog_defaults(&l);
	expect_text(&l, SVLOG_SIZE, "209715200");
	expect_text(&l, SVLOG_NUM, "30");
	expect_text(&l, SVLOG_TIMEOUT, "86400");
	expect_text(&l, SVLOG_FILTER, "gzip");
	expect_text(&l, SVLOG_UDP, "");
	expect_text(&l, SVLOG_PREFIX, "");
	svlog_free(&l);
}

static void test_set_and_copy(void **state)
{
	(void)state;
	struct svlog l, c;
	svlog_defaults(&l);
	svlog_set(&l, SVLOG_NUM, "7");
	svlog_set(&l, SVLOG_TIMEOUT, NULL); /* nil: svlogd's own default */
	svlog_set(&l, SVLOG_FILTER, NULL);
	svlog_set(&l, SVLOG_PREFIX, "web");
	expect_text(&l, SVLOG_NUM, "7");
	expect_text(&l, SVLOG_TIMEOUT, "");
	expect_text(&l, SVLOG_FILTER, "");
	svlog_copy(&c, &l);
	svlog_set(&l, SVLOG_PREFIX, "changed"); /* a deep copy: c keeps its own */
	expect_text(&c, SVLOG_PREFIX, "web");
	expect_text(&c, SVLOG_NUM, "7");
	assert_null(c.filter);
	svlog_free(&c);
	svlog_free(&l);
	assert_null(l.prefix);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_keys),
	    cmocka_unit_test(test_defaults_and_text),
	    cmocka_unit_test(test_set_and_copy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
