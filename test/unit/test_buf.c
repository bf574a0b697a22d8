/* lib/buf: appends keep a NUL-terminated string; growth past any size_t dies with 111. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"

#include "lib/buf.h"

static void test_empty_is_empty_string(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b);
	assert_string_equal(buf_str(&b), "");
	assert_int_equal(b.len, 0);
	char *s = buf_take(&b);
	assert_string_equal(s, "");
	free(s);
	buf_free(&b);
}

static void test_appends(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b);
	buf_adds(&b, "ab");
	buf_addc(&b, 'c');
	buf_add(&b, "d\0e", 3); /* bytes, NUL included */
	buf_addf(&b, "[%d:%s]", 42, "x");
	assert_int_equal(b.len, 3 + 3 + 6);
	assert_memory_equal(b.p, "abcd\0e[42:x]", b.len + 1);
	buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(buf_str(&b), "");
	buf_adds(&b, "again");
	char *s = buf_take(&b);
	assert_string_equal(s, "again");
	assert_null(b.p);
	assert_int_equal(b.len, 0);
	free(s);
}

static void test_grows_across_doublings(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b);
	for (int i = 0; i < 10000; i++)
		buf_addf(&b, "%04d\n", i % 10000);
	assert_int_equal(b.len, 50000);
	assert_true(b.cap > b.len);
	assert_memory_equal(b.p + 5 * 9999, "9999\n", 6); /* and the NUL */
	buf_free(&b);
	assert_null(b.p);
}

static void test_room_commit(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b);
	buf_adds(&b, "x");
	char *to = buf_room(&b, 1000);
	assert_ptr_equal(to, b.p + 1);
	memcpy(to, "yz", 2);
	buf_commit(&b, 2);
	assert_string_equal(b.p, "xyz");
	buf_free(&b);
}

static int overflow_room(void *arg)
{
	(void)arg;
	struct buf b;
	buf_init(&b);
	buf_adds(&b, "x");
	buf_room(&b, SIZE_MAX); /* len + n + 1 wraps */
	return 0;
}

static void test_size_overflow_dies_111(void **state)
{
	(void)state;
	assert_int_equal(in_child(overflow_room, NULL, NULL, 0), 111);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty_is_empty_string),  cmocka_unit_test(test_appends),
	    cmocka_unit_test(test_grows_across_doublings), cmocka_unit_test(test_room_commit),
	    cmocka_unit_test(test_size_overflow_dies_111),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
