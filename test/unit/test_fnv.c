/* fnv: the digest records hold, pinned (a changed value would re-run every recorded step). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/fnv.h"

static void test_words(void **state)
{
	(void)state;
	char a[] = "a", bc[] = "bc", ab[] = "ab", c[] = "c";
	char *one[] = {a, bc, NULL}, *two[] = {ab, c, NULL};
	assert_true(fnv_argv(one) == 0x2bebde89d835668bULL); /* independent FNV-1a 64 */
	assert_true(fnv_argv(two) == 0xe8a71f98eeeb2a7fULL); /* the NUL separates words */
	assert_true(fnv_str(fnv_str(FNV_OFFSET, "a"), "bc") == fnv_argv(one));
	char *none[] = {NULL};
	assert_true(fnv_argv(none) == FNV_OFFSET);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
