/* grow(): doubling from `first`, room for `need`; an impossible size dies with 111. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

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

/* Exit status of a child that grows an array of 2 ints to need elements. */
static int grow_in_child(size_t need)
{
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		int *v = NULL;
		size_t cap = 0;
		grow(&v, &cap, 2, sizeof *v, 2);
		grow(&v, &cap, need, sizeof *v, 2);
		_exit(v != NULL && cap >= need ? 0 : 1);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
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
