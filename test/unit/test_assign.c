/* assign_hash_merge: how a gitlab.rb hash entry lands on the entries merged over the defaults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "config/assign.h"

static const char *key_of(const void *list, size_t i)
{
	return ((const struct kv *)list)[i].name;
}

static struct kv defaults[] = {{"A", "1"}, {"B", "2"}, {"C", "3"}};

static enum hash_merge merge(const char *key, const char *val, size_t n, size_t *at)
{
	struct assign_ent e = {(char *)key, (char *)val, {0}, false};
	*at = 99;
	return assign_hash_merge(&e, defaults, n, key_of, at);
}

static void test_nil_missing_is_noop(void **state)
{
	(void)state;
	size_t at;
	assert_int_equal(merge("Z", NULL, 3, &at), HASH_NOOP);
	assert_int_equal(at, 3);
	assert_int_equal(merge("A", NULL, 0, &at), HASH_NOOP); /* nothing merged yet */
	assert_int_equal(at, 0);
}

static void test_nil_removes_default(void **state)
{
	(void)state;
	size_t at;
	assert_int_equal(merge("B", NULL, 3, &at), HASH_REMOVE);
	assert_int_equal(at, 1);
	/* only the first n count: C beyond n is not there */
	assert_int_equal(merge("C", NULL, 2, &at), HASH_NOOP);
}

static void test_replace_keeps_one(void **state)
{
	(void)state;
	size_t at;
	assert_int_equal(merge("C", "x", 3, &at), HASH_REPLACE);
	assert_int_equal(at, 2); /* the existing slot, not a second entry */
	assert_int_equal(merge("c", "x", 3, &at), HASH_ADD); /* names are case-sensitive */
	assert_int_equal(at, 3);
	assert_int_equal(merge("", "", 3, &at), HASH_ADD);
	assert_int_equal(at, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nil_missing_is_noop),
	    cmocka_unit_test(test_nil_removes_default),
	    cmocka_unit_test(test_replace_keeps_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
