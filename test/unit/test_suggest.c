/* suggest: edit distances and which names are suggested. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/suggest.h"

/* cand is suggested for word among candidates of its own. */
static bool close_to(const char *word, const char *cand)
{
	return suggest_pick(word, &cand, 1) != NULL;
}

static void test_distance(void **state)
{
	(void)state;
	assert_int_equal(suggest_distance("", "", 5), 0);
	assert_int_equal(suggest_distance("status", "status", 5), 0);
	assert_int_equal(suggest_distance("statsu", "status", 5), 1); /* transposition */
	assert_int_equal(suggest_distance("listen_prot", "listen_port", 5), 1);
	assert_int_equal(suggest_distance("gitlab_exportr", "gitlab_exporter", 5), 1);
	assert_int_equal(suggest_distance("kitten", "sitting", 5), 3);
	assert_int_equal(suggest_distance("", "abc", 5), 3);
	assert_int_equal(suggest_distance("abc", "", 5), 3);
	assert_int_equal(suggest_distance("ca", "abc", 5), 3); /* OSA, not full Damerau */
}

static void test_limit(void **state)
{
	(void)state;
	/* Beyond the limit every answer is limit + 1, also by length alone. */
	assert_int_equal(suggest_distance("kitten", "sitting", 2), 3);
	assert_int_equal(suggest_distance("a", "abcdefgh", 2), 3);
	assert_int_equal(suggest_distance("abcdef", "uvwxyz", 1), 2);
	char longer[100];
	memset(longer, 'a', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	assert_int_equal(suggest_distance(longer, longer, 2), 0);
	assert_int_equal(suggest_distance(longer, "a", 2), 3);
}

static void test_pick(void **state)
{
	(void)state;
	const char *cmds[] = {"start", "stop", "status", "restart", "tail", "inspect"};
	size_t n = sizeof cmds / sizeof cmds[0];
	assert_string_equal(suggest_pick("statsu", cmds, n), "status");
	assert_string_equal(suggest_pick("stat", cmds, n), "start"); /* first of equals */
	assert_string_equal(suggest_pick("inspekt", cmds, n), "inspect");
	assert_null(suggest_pick("status", cmds, n)); /* an exact name is no typo */
	assert_null(suggest_pick("reconfigure", cmds, n));
	assert_null(suggest_pick("x", cmds, n));
	assert_null(suggest_pick("anything", NULL, 0));

	const char *svcs[] = {"gitlab_exporter", "node_exporter"};
	assert_string_equal(suggest_pick("gitlab_exportr", svcs, 2), "gitlab_exporter");
	assert_string_equal(suggest_pick("node_exportr", svcs, 2), "node_exporter");
	/* Real Omnibus names that are not typos of ours stay unsuggested. */
	assert_null(suggest_pick("redis_exporter", svcs, 2));
	assert_null(suggest_pick("postgres_exporter", svcs, 2));
	assert_null(suggest_pick("gitlab_rails", svcs, 2));
}

static void test_close(void **state)
{
	(void)state;
	assert_true(close_to("listen_prot", "listen_port"));
	assert_true(close_to("lstn_port", "listen_port"));
	assert_false(close_to("port", "listen_port"));
	assert_true(close_to("usr", "user"));
	assert_false(close_to("usr", "uid"));   /* short words: one edit */
	assert_false(close_to("user", "user")); /* equal is not a suggestion */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_distance),
	    cmocka_unit_test(test_limit),
	    cmocka_unit_test(test_pick),
	    cmocka_unit_test(test_close),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
