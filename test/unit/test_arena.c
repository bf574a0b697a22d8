/* arena: strings kept intact across chunks, aligned, freed at once; an impossible size dies 111. */
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "child.h"

#include "lib/arena.h"

/* Many strings spill over several chunks; every one still reads back as written. */
static void test_strings_survive_new_chunks(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a);
	enum { N = 3000 };
	char *v[N];
	for (int i = 0; i < N; i++) {
		char buf[32];
		snprintf(buf, sizeof buf, "svc-%04d=value", i);
		v[i] = arena_strdup(&a, buf);
	}
	for (int i = 0; i < N; i++) {
		char buf[32];
		snprintf(buf, sizeof buf, "svc-%04d=value", i);
		assert_string_equal(v[i], buf);
	}
	arena_free(&a);
	assert_null(a.head);
}

static void test_aligned_and_distinct(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a);
	char *p = arena_alloc(&a, 1), *q = arena_alloc(&a, 0), *r = arena_alloc(&a, 3);
	assert_true(p != q && q != r && p != r); /* 0 bytes: still a pointer of its own */
	assert_int_equal((uintptr_t)p % alignof(max_align_t), 0);
	assert_int_equal((uintptr_t)q % alignof(max_align_t), 0);
	assert_int_equal((uintptr_t)r % alignof(max_align_t), 0);
	arena_free(&a);
}

/* A request larger than a chunk gets one of its own; the chunk being filled goes on. */
static void test_large_request(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a);
	char *small = arena_strdup(&a, "before");
	char *big = arena_alloc(&a, 4 * ARENA_CHUNK);
	memset(big, 'x', 4 * ARENA_CHUNK);
	char *after = arena_strdup(&a, "after");
	assert_string_equal(small, "before");
	assert_string_equal(after, "after");
	assert_int_equal(big[4 * ARENA_CHUNK - 1], 'x');
	arena_free(&a);
}

static void test_strndup(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a);
	assert_string_equal(arena_strndup(&a, "abcdef", 3), "abc");
	assert_string_equal(arena_strndup(&a, "ab", 10), "ab"); /* stops at the NUL */
	assert_string_equal(arena_strdup(&a, ""), "");
	arena_free(&a);
	/* empty again: usable as a new arena */
	assert_string_equal(arena_strdup(&a, "again"), "again");
	arena_free(&a);
}

static int alloc_huge(void *arg)
{
	struct arena a;
	arena_init(&a);
	void *p = arena_alloc(&a, *(const size_t *)arg);
	arena_free(&a);
	return p != NULL ? 0 : 1;
}

static void test_impossible_size_dies_111(void **state)
{
	(void)state;
	size_t huge = SIZE_MAX, over = SIZE_MAX - 8;
	assert_int_equal(in_child(alloc_huge, &huge, NULL, 0), 111);
	assert_int_equal(in_child(alloc_huge, &over, NULL, 0), 111);
	size_t fine = 100;
	assert_int_equal(in_child(alloc_huge, &fine, NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_strings_survive_new_chunks),
	    cmocka_unit_test(test_aligned_and_distinct),
	    cmocka_unit_test(test_large_request),
	    cmocka_unit_test(test_strndup),
	    cmocka_unit_test(test_impossible_size_dies_111),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
