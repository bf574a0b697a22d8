/* grow(): doubling from `first`, room for `need`; an impossible size dies with 111. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"

#include "lib/grow.h"

static void test_doubles_from_first(void **state)
{
	(void)state;
	int *v = NULL;
	size_t cap = 0;
	grow(&v, &cap, 1, sizeof *v, 4);
	assert_int_equal(cap, 4);
	assert_non_null(v);
	v[3] = 42;
	grow(&v, &cap, 4, sizeof *v, 4); /* fits: no change */
	assert_int_equal(cap, 4);
	grow(&v, &cap, 9, sizeof *v, 4); /* 4 -> 8 -> 16 */
	assert_int_equal(cap, 16);
	assert_int_equal(v[3], 42);
	free(v);
}

/* Grows an array of 2 ints to *need elements: 0 when it did. */
static int grow_to(void *need)
{
	int *v = NULL;
	size_t cap = 0, n = *(const size_t *)need;
	grow(&v, &cap, 2, sizeof *v, 2);
	grow(&v, &cap, n, sizeof *v, 2);
	int rc = v != NULL && cap >= n ? 0 : 1;
	free(v);
	return rc;
}

/* Exit status of a child that grows an array of 2 ints to need elements. */
static int grow_in_child(size_t need)
{
	return in_child(grow_to, &need, NULL, 0);
}

static void test_overflow_dies_111(void **state)
{
	(void)state;
	assert_int_equal(grow_in_child(SIZE_MAX), 111);     /* the count itself cannot double */
	assert_int_equal(grow_in_child(SIZE_MAX / 4), 111); /* count * size overflows */
	assert_int_equal(grow_in_child(1000), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_doubles_from_first),
	    cmocka_unit_test(test_overflow_dies_111),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
