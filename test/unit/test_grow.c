/* grow(): doubling from `first`, room for `need`, overflow refused with the array intact. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "lib/grow.h"

static void test_doubles_from_first(void **state)
{
	(void)state;
	int *v = NULL;
	size_t cap = 0;
	assert_int_equal(grow(&v, &cap, 1, sizeof *v, 4), 0);
	assert_int_equal(cap, 4);
	assert_non_null(v);
	v[3] = 42;
	assert_int_equal(grow(&v, &cap, 4, sizeof *v, 4), 0); /* fits: no change */
	assert_int_equal(cap, 4);
	assert_int_equal(grow(&v, &cap, 9, sizeof *v, 4), 0); /* 4 -> 8 -> 16 */
	assert_int_equal(cap, 16);
	assert_int_equal(v[3], 42);
	free(v);
}

static void test_overflow_refused(void **state)
{
	(void)state;
	int *v = NULL;
	size_t cap = 0;
	assert_int_equal(grow(&v, &cap, 2, sizeof *v, 2), 0);
	int *before = v;
	errno = 0;
	assert_int_equal(grow(&v, &cap, SIZE_MAX, sizeof *v, 2), -1);
	assert_int_equal(errno, ENOMEM);
	assert_ptr_equal(v, before);
	assert_int_equal(cap, 2);
	errno = 0;
	assert_int_equal(grow(&v, &cap, SIZE_MAX / 4, sizeof *v, 2),
	                 -1); /* count * size overflows */
	assert_int_equal(errno, ENOMEM);
	assert_ptr_equal(v, before);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_doubles_from_first),
	    cmocka_unit_test(test_overflow_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
