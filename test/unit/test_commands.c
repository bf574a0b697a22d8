/* The command table: what main() does differently for a command is a flag of its entry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cmd/commands.h"

static unsigned flags_of(const char *name)
{
	const struct command *c = command_find(name);
	assert_non_null(c);
	return c->flags;
}

static void test_flags(void **state)
{
	(void)state;
	/* status alone reads only the runit tree, without stdio; exec alone keeps a -c after its
	 * name */
	assert_int_equal(flags_of("status"), CMD_ROOT_ONLY);
	assert_int_equal(flags_of("exec"), CMD_OWN_CONFIG);
	assert_int_equal(flags_of("subreaper"), CMD_ROOT_ONLY); /* runs as a service account */
	assert_int_equal(flags_of("sentinel-config"), CMD_ROOT_ONLY); /* so does this */
	for (const struct command *c = commands; c->name != NULL; c++)
		if (strcmp(c->name, "status") != 0 && strcmp(c->name, "exec") != 0 &&
		    strcmp(c->name, "subreaper") != 0 && strcmp(c->name, "sentinel-config") != 0)
			assert_int_equal(c->flags, 0);
}

/* Designated initializers leave out what an entry does not set: what must be there is. */
static void test_entries_complete(void **state)
{
	(void)state;
	size_t n = 0;
	for (const struct command *c = commands; c->name != NULL; c++, n++) {
		assert_non_null(c->fn);
		assert_non_null(c->usage);
		assert_ptr_equal(command_find(c->name), c);
		if (c->summary ==
		    NULL) /* internal: only what generated scripts and the catalog run */
			assert_true(strcmp(c->name, "probe") == 0 ||
			            strcmp(c->name, "subreaper") == 0 ||
			            strcmp(c->name, "sentinel-config") == 0 ||
			            strcmp(c->name, "pgb-watch") == 0);
	}
	assert_true(n > 20);
	assert_null(command_find("statsu"));
}

/* Omnibus' check-leader/check-replica exit codes: 200 -> 0, any other answer 1, none 3. */
static void test_patroni_check_exit(void **state)
{
	(void)state;
	assert_int_equal(patroni_check_exit(200), 0);
	assert_int_equal(patroni_check_exit(503), 1);
	assert_int_equal(patroni_check_exit(401), 1);
	assert_int_equal(patroni_check_exit(-1), 3);
	/* an unknown sub-command is a usage error, before any configuration is read */
	char a0[] = "patroni", a1[] = "nosuch";
	char *argv[] = {a0, a1, NULL};
	assert_int_equal(cmd_patroni(NULL, 2, argv), 2);
	/* a value is never taken for an option of patronictl's; unknown options are refused */
	char b0[] = "patroni", b1[] = "switchover", b2[] = "--candidate", b3[] = "--force";
	char *sw[] = {b0, b1, b2, b3, NULL};
	assert_int_equal(cmd_patroni(NULL, 4, sw), 2);
	char c1[] = "failover", c2[] = "--scheduled", c3[] = "now";
	char *fo[] = {b0, c1, c2, c3, NULL}; /* --scheduled is switchover's alone */
	assert_int_equal(cmd_patroni(NULL, 4, fo), 2);
	char d1[] = "reinitialize-replica", d2[] = "--member";
	char *ri[] = {b0, d1, d2, NULL};
	assert_int_equal(cmd_patroni(NULL, 3, ri), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flags),
	    cmocka_unit_test(test_entries_complete),
	    cmocka_unit_test(test_patroni_check_exit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
