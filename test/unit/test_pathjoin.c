/* path_join/path_fmt: a path that does not fit is refused with ENAMETOOLONG, never cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "lib/pathjoin.h"

static void test_join(void **state)
{
	(void)state;
	char p[16];
	assert_int_equal(path_join(p, sizeof p, "/a/b", "c"), 0);
	assert_string_equal(p, "/a/b/c");
	assert_int_equal(path_join(p, sizeof p, "/", "c"), 0);
	assert_string_equal(p, "/c");
	assert_int_equal(path_join(p, sizeof p, "", "c"), 0);
	assert_string_equal(p, "/c");
}

static void test_too_long(void **state)
{
	(void)state;
	char p[8];
	errno = 0;
	assert_int_equal(path_join(p, sizeof p, "/abc", "def"), -1); /* "/abc/def" needs 9 */
	assert_int_equal(errno, ENAMETOOLONG);
	assert_string_equal(p, "");
	assert_int_equal(path_join(p, sizeof p, "/abc", "de"), 0); /* exactly 8 with NUL */
	assert_string_equal(p, "/abc/de");
	errno = 0;
	assert_int_equal(path_fmt(p, sizeof p, "%s.%d", "/abcd", 123), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	assert_int_equal(path_fmt(p, sizeof p, "%s.%d", "/ab", 1), 0);
	assert_string_equal(p, "/ab.1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_join),
	    cmocka_unit_test(test_too_long),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
