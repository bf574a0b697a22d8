/* sentinelask: the replies to AUTH and SENTINEL get-master-addr-by-name, whole or in parts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "proc/sentinelask.h"

static int parse(const char *s, int authed, char *ip, int *port, char *err)
{
	return sentinel_parse(s, strlen(s), authed, ip, 64, port, err, 128);
}

static void test_answer(void **state)
{
	(void)state;
	char ip[64], err[128];
	int port = 0;
	assert_int_equal(parse("*2\r\n$9\r\n10.0.0.12\r\n$4\r\n6379\r\n", 0, ip, &port, err), 0);
	assert_string_equal(ip, "10.0.0.12");
	assert_int_equal(port, 6379);
	assert_int_equal(parse("+OK\r\n*2\r\n$3\r\n::1\r\n$5\r\n26380\r\n", 1, ip, &port, err), 0);
	assert_string_equal(ip, "::1");
	assert_int_equal(port, 26380);
	/* no such master: a null array */
	assert_int_equal(parse("*-1\r\n", 0, ip, &port, err), 1);
}

/* Every cut of a whole answer is "read more", never an answer or an error. */
static void test_partial(void **state)
{
	(void)state;
	const char *whole = "+OK\r\n*2\r\n$9\r\n10.0.0.12\r\n$4\r\n6379\r\n";
	char ip[64], err[128];
	int port;
	for (size_t n = 0; n < strlen(whole); n++)
		assert_int_equal(sentinel_parse(whole, n, 1, ip, sizeof ip, &port, err, sizeof err),
		                 2);
}

static void test_refused(void **state)
{
	(void)state;
	char ip[64], err[128];
	int port;
	assert_int_equal(
	    parse("-WRONGPASS invalid username-password pair\r\n*-1\r\n", 1, ip, &port, err), -1);
	assert_non_null(strstr(err, "AUTH refused: -WRONGPASS"));
	assert_int_equal(parse("-ERR unknown command\r\n", 0, ip, &port, err), -1);
	assert_int_equal(parse("*3\r\n", 0, ip, &port, err), -1);
	assert_int_equal(parse("hello\r\n", 0, ip, &port, err), -1);
	/* not an address, not a port */
	assert_int_equal(parse("*2\r\n$8\r\n1.2.3 #x\r\n$4\r\n6379\r\n", 0, ip, &port, err), -1);
	assert_int_equal(parse("*2\r\n$4\r\n\r\nab\r\n$4\r\n6379\r\n", 0, ip, &port, err), -1);
	assert_int_equal(parse("*2\r\n$3\r\n1.2\r\n$5\r\n65536\r\n", 0, ip, &port, err), -1);
	assert_int_equal(parse("*2\r\n$3\r\n1.2\r\n$2\r\nab\r\n", 0, ip, &port, err), -1);
	/* longer than the caller's buffer */
	assert_int_equal(parse("*2\r\n$"
	                       "70\r\n0123456789012345678901234567890123456789012345678901234567890"
	                       "123456789\r\n$4\r\n6379\r\n",
	                       0, ip, &port, err),
	                 -1);
}

/* A sentinel that does not listen: connect_tcp's wording, which redisfollow puts after the address.
 */
static void test_closed_port(void **state)
{
	(void)state;
	char ip[64], err[128] = "";
	int port, held = tl_bound(&port, false);
	assert_int_equal(sentinel_ask("127.0.0.1", port, NULL, "gitlab-redis", 2000, ip, sizeof ip,
	                              &port, err, sizeof err),
	                 -1);
	close(held);
	assert_string_equal(err, "connect: Connection refused");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_answer),
	    cmocka_unit_test(test_partial),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_closed_port),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
