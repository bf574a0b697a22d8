/* connect_host: one mapping from a listen host to where probes connect. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "lib/connhost.h"

static void wildcards_are_loopback(void **state)
{
	(void)state;
	assert_string_equal(connect_host(NULL), "127.0.0.1");
	assert_string_equal(connect_host(""), "127.0.0.1"); /* node_exporter ':9100' */
	assert_string_equal(connect_host("*"), "127.0.0.1");
	assert_string_equal(connect_host("0.0.0.0"), "127.0.0.1");
	assert_string_equal(connect_host("::"), "::1");
	assert_string_equal(connect_host("[::]"), "::1");
}

static void hosts_stay(void **state)
{
	(void)state;
	assert_string_equal(connect_host("localhost"), "localhost");
	assert_string_equal(connect_host("127.0.0.2"), "127.0.0.2");
	assert_string_equal(connect_host("::1"), "::1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(wildcards_are_loopback),
	    cmocka_unit_test(hosts_stay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
