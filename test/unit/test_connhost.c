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

#include "testlib.h"

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

/* A scrape target names the host as Omnibus' prometheus.yml does: a wildcard is localhost. */
static void targets_name_localhost(void **state)
{
	(void)state;
	const char *any[] = {"", "*", "0.0.0.0", "::", "[::]"};
	char t[64];
	for (size_t i = 0; i < sizeof any / sizeof any[0]; i++) {
		assert_true(listen_any(any[i]));
		assert_int_equal(target_host_port(t, sizeof t, any[i], 9100), 0);
		assert_string_equal(t, "localhost:9100");
	}
	assert_false(listen_any("127.0.0.1"));
	assert_int_equal(target_host_port(t, sizeof t, "fe80::1", 9187), 0);
	assert_string_equal(t, "[fe80::1]:9187");
	assert_int_equal(target_host_port(t, sizeof t, "db1.example", 5432), 0);
	assert_string_equal(t, "db1.example:5432");
	/* the bound connhost.h promises, and a cut reported */
	char small[sizeof "[fe80::1]:65535"];
	assert_int_equal(target_host_port(small, strlen("fe80::1") + 9, "fe80::1", 65535), 0);
	assert_int_equal(target_host_port(small, 8, "fe80::1", 65535), -1);
}

static void connects_and_refuses(void **state)
{
	(void)state;
	char err[256] = "";
	int port, l = tl_bound(&port, true);
	int fd = connect_tcp("127.0.0.1", port, mono_ms() + 2000, err, sizeof err);
	assert_true(fd >= 0);
	close(fd);
	close(l);
	/* Bound but not listening: refused, and no other process can take the port meanwhile. */
	l = tl_bound(&port, false);
	assert_int_equal(connect_tcp("127.0.0.1", port, mono_ms() + 2000, err, sizeof err), -1);
	assert_int_equal(errno, ECONNREFUSED);
	assert_string_equal(err, "connect: Connection refused");
	close(l);
	/* A name that does not resolve: the step and reason in err (the caller names the host). */
	assert_int_equal(connect_tcp("no-such-host.invalid", 80, mono_ms() + 2000, err, sizeof err),
	                 -1);
	assert_true(strncmp(err, "resolve: ", 9) == 0);
}

/* read_by: what there is, the deadline, then the peer's close, each worded once. */
static void reads_by_deadline(void **state)
{
	(void)state;
	int sv[2];
	char buf[16], err[128] = "";
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	assert_int_equal(write(sv[1], "hi", 2), 2);
	assert_int_equal(read_by(sv[0], buf, sizeof buf, mono_ms() + 2000, err, sizeof err), 2);
	long t0 = mono_ms();
	assert_int_equal(read_by(sv[0], buf, sizeof buf, t0 + 100, err, sizeof err), -1);
	assert_string_equal(err, "no answer in time");
	assert_true(mono_ms() >= t0 + 100);
	close(sv[1]);
	assert_int_equal(read_by(sv[0], buf, sizeof buf, mono_ms() + 2000, err, sizeof err), 0);
	assert_string_equal(err, "connection closed without an answer");
	close(sv[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(wildcards_are_loopback), cmocka_unit_test(hosts_stay),
	    cmocka_unit_test(targets_name_localhost), cmocka_unit_test(connects_and_refuses),
	    cmocka_unit_test(reads_by_deadline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
