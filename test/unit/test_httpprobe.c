/* httpprobe: one GET against local listeners on ports the kernel picks (parallel-safe). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "lib/clock.h"
#include "proc/httpprobe.h"

static void send_str(int fd, const char *s)
{
	size_t len = strlen(s);
	if (len > 0 && send(fd, s, len, MSG_NOSIGNAL) != (ssize_t)len)
		_exit(3);
}

/*
 * A one-connection server in a child: it checks the request is the GET we expect, then
 * sends head (and tail after a pause, so the status line arrives in pieces) and closes.
 */
static pid_t serve(int lfd, const char *head, const char *tail)
{
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid != 0)
		return pid;
	int c = accept(lfd, NULL, NULL);
	if (c == -1)
		_exit(2);
	char req[1024];
	size_t len = 0;
	while (len < sizeof req - 1) {
		ssize_t n = recv(c, req + len, sizeof req - 1 - len, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
		req[len] = '\0';
		if (strstr(req, "\r\n\r\n") != NULL)
			break;
	}
	req[len] = '\0';
	const char *want = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n";
	if (strncmp(req, want, strlen(want)) != 0) {
		send_str(c, "HTTP/1.0 400 Bad Request\r\n\r\n");
		_exit(1);
	}
	send_str(c, head);
	if (tail != NULL) {
		sleep_ms(50);
		send_str(c, tail);
	}
	close(c);
	_exit(0);
}

static void reap(pid_t pid, int want)
{
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), want);
}

static int probe_with(const char *host, const char *head, const char *tail, char *err,
                      size_t errlen)
{
	int port;
	int lfd = tl_bound(&port, true);
	pid_t pid = serve(lfd, head, tail);
	int code = http_probe(host, port, "/metrics", NULL, 10000, err, errlen);
	close(lfd);
	reap(pid, 0);
	return code;
}

static void test_status_codes(void **state)
{
	(void)state;
	char err[256];
	assert_int_equal(
	    probe_with("127.0.0.1", "HTTP/1.1 200 OK\r\n\r\nbody", NULL, err, sizeof err), 200);
	assert_int_equal(
	    probe_with("127.0.0.1", "HTTP/1.0 404 Not Found\r\n\r\n", NULL, err, sizeof err), 404);
	/* The status line in two pieces. */
	assert_int_equal(
	    probe_with("127.0.0.1", "HTTP/1.1 5", "03 Unavailable\r\n\r\n", err, sizeof err), 503);
	/* A server on the wildcard address is probed on the loopback. */
	assert_int_equal(
	    probe_with("0.0.0.0", "HTTP/1.1 204 No Content\r\n\r\n", NULL, err, sizeof err), 204);
	assert_int_equal(probe_with("*", "HTTP/1.1 200 OK\r\n\r\n", NULL, err, sizeof err), 200);
}

static void test_not_http(void **state)
{
	(void)state;
	char err[256] = "";
	assert_int_equal(probe_with("127.0.0.1", "SSH-2.0-OpenSSH_9.2\r\n", NULL, err, sizeof err),
	                 -1);
	assert_string_equal(err, "not an HTTP answer");
	assert_int_equal(probe_with("127.0.0.1", "HTTP/1.1 2x0 OK\r\n", NULL, err, sizeof err), -1);
	assert_string_equal(err, "not an HTTP answer");
	/* Accepted, then closed without a word. */
	assert_int_equal(probe_with("127.0.0.1", "", NULL, err, sizeof err), -1);
	assert_string_equal(err, "connection closed without an answer");
}

/* The kernel completes the handshake from the backlog; nobody ever answers. */
static void test_timeout(void **state)
{
	(void)state;
	char err[256] = "";
	int port;
	int lfd = tl_bound(&port, true);
	long t0 = mono_ms();
	assert_int_equal(http_probe("127.0.0.1", port, "/metrics", NULL, 200, err, sizeof err), -1);
	long took = mono_ms() - t0;
	close(lfd);
	assert_string_equal(err, "no answer in time");
	/* It gave up at its deadline rather than when the test ended: a lower bound only. */
	assert_true(took >= 190);
}

/* A port nobody listens on (bound, so no one else can take it meanwhile). */
static void test_closed_port(void **state)
{
	(void)state;
	char err[256] = "";
	int port;
	int fd = tl_bound(&port, false);
	assert_int_equal(http_probe("127.0.0.1", port, "/metrics", NULL, 5000, err, sizeof err),
	                 -1);
	close(fd);
	assert_string_equal(err, "connect: Connection refused");
}

static void test_request_too_long(void **state)
{
	(void)state;
	char err[256] = "", path[1100];
	memset(path, 'a', sizeof path - 1);
	path[0] = '/';
	path[sizeof path - 1] = '\0';
	int port;
	int lfd = tl_bound(&port, true);
	assert_int_equal(http_probe("127.0.0.1", port, path, NULL, 5000, err, sizeof err), -1);
	close(lfd);
	assert_string_equal(err, "request too long");
}

static void test_status_line_parse(void **state)
{
	(void)state;
#define CODE(s) http_status_code(s, strlen(s))
	assert_int_equal(CODE("HTTP/1.0 200"), 200);
	assert_int_equal(CODE("HTTP/1.1 301 Moved"), 301);
	assert_int_equal(CODE("HTTP/1.1 404\r\n"), 404);
	assert_int_equal(CODE("HTTP/1.1 500\n"), 500);
	assert_int_equal(CODE("HTTP/1.1 20"), -1);   /* too short */
	assert_int_equal(CODE("HTTP/1.1 2000"), -1); /* four digits */
	assert_int_equal(CODE("HTTP/1.1 2a0 OK"), -1);
	assert_int_equal(CODE("HTTP/2 200 OK"), -1);
	assert_int_equal(CODE("HTTP/1.1_200 OK"), -1);
	assert_int_equal(CODE("http/1.1 200 OK"), -1);
#undef CODE
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_status_codes),     cmocka_unit_test(test_not_http),
	    cmocka_unit_test(test_timeout),          cmocka_unit_test(test_closed_port),
	    cmocka_unit_test(test_request_too_long), cmocka_unit_test(test_status_line_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
