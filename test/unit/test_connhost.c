/* connect_host and connect_tcp: where probes connect, and the one connect by a deadline. */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/clock.h"

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

/* A socket bound to a loopback port of the kernel's choice (its port in *port), listening or not.
 */
static int bound(int *port, bool listening)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd != -1);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sin;
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	if (listening)
		assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

static void connects_and_refuses(void **state)
{
	(void)state;
	char err[256] = "";
	int port, l = bound(&port, true);
	int fd = connect_tcp("127.0.0.1", port, mono_ms() + 2000, err, sizeof err);
	assert_true(fd >= 0);
	close(fd);
	close(l);
	/* Bound but not listening: refused, and no other process can take the port meanwhile. */
	l = bound(&port, false);
	assert_int_equal(connect_tcp("127.0.0.1", port, mono_ms() + 2000, err, sizeof err), -1);
	assert_int_equal(errno, ECONNREFUSED);
	assert_string_equal(err, "");
	close(l);
	/* A name that does not resolve: -2, the reason in err. */
	assert_int_equal(connect_tcp("no-such-host.invalid", 80, mono_ms() + 2000, err, sizeof err),
	                 -2);
	assert_true(strncmp(err, "no-such-host.invalid: ", 22) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(wildcards_are_loopback),
	    cmocka_unit_test(hosts_stay),
	    cmocka_unit_test(connects_and_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
