/* ready: readiness is this service's socket, found through /proc, in its own protocol. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "lib/clock.h"
#include "proc/ready.h"

static struct ctl ctl;

/* A child in its own process group that just sleeps: "the supervised service". */
static pid_t idle_child(void)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed assertion leaves no orphan */
		if (dup2(p[1], 3) == -1)
			_exit(1);
		closefrom(4); /* holds none of the test's sockets */
		(void)!write(3, "c", 1);
		close(3);
		pause();
		_exit(0);
	}
	setpgid(pid, pid);
	close(p[1]);
	char c;
	/* Not before it has closed what it inherited: else it holds the listener too. */
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_port_holder(void **state)
{
	(void)state;
	int port;
	int fd = tl_bound(&port, true);
	pid_t pid;
	char cmd[256];
	assert_int_equal(ready_port_holder(port, &pid, cmd, sizeof cmd), 1);
	assert_int_equal(pid, getpid());
	assert_non_null(strstr(cmd, "test_ready"));
	close(fd);
	/*
	 * Nobody listens on a port this test keeps bound: a closed one, free again, may be
	 * taken by any process on the machine before the next call.
	 */
	int held = tl_bound(&port, false);
	assert_int_equal(ready_port_holder(port, &pid, cmd, sizeof cmd), 0);
	close(held);

	/* an IPv6 listener (the kernel's sock_diag answers per family) */
	int fd6 = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	socklen_t sl = sizeof sa6;
	if (fd6 == -1 || bind(fd6, (struct sockaddr *)&sa6, sizeof sa6) == -1) {
		if (fd6 != -1)
			close(fd6);
		return; /* no IPv6 loopback here */
	}
	assert_int_equal(getsockname(fd6, (struct sockaddr *)&sa6, &sl), 0);
	assert_int_equal(listen(fd6, 8), 0);
	assert_int_equal(ready_port_holder(ntohs(sa6.sin6_port), &pid, cmd, sizeof cmd), 1);
	assert_int_equal(pid, getpid());
	close(fd6);
}

/* A service definition with a TCP check on port, for ready_check. */
struct fake {
	struct cat_service def;
	struct svc svc;
	struct attrs a;
};

static void fake_init(struct fake *f, const char *check, int port)
{
	memset(f, 0, sizeof *f);
	f->def.name = "fake";
	f->def.check = (char *)check;
	f->svc.def = &f->def;
	f->svc.listen_host = "127.0.0.1";
	f->svc.listen_port = port;
	f->a.svcs = &f->svc;
	f->a.nsvcs = 1;
}

/* Someone else holds the port: not ready, and the holder is named. */
static void test_tcp_owner(void **state)
{
	(void)state;
	int port;
	int fd = tl_bound(&port, true);
	struct fake f;
	char why[512], want[64];
	fake_init(&f, "tcp", port);
	assert_int_equal(
	    ready_check(&ctl, &f.a, &f.svc, getpid(), mono_ms() + 2000, why, sizeof why), 1);
	pid_t other = idle_child();
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, other, mono_ms() + 2000, why, sizeof why),
	                 0);
	snprintf(want, sizeof want, "127.0.0.1:%d is in use by pid %ld (", port, (long)getpid());
	if (strstr(why, want) == NULL)
		fail_msg("why: %s", why);
	close(fd);
	/* Nothing listens on a port held bound (a closed one may be taken by anyone at once). */
	int held = tl_bound(&port, false);
	fake_init(&f, "tcp", port);
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, other, mono_ms() + 2000, why, sizeof why),
	                 0);
	if (strstr(why, "nothing listens") == NULL)
		fail_msg("why: %s", why);
	close(held);
	reap(other);
}

/* A unix socket served by a child: PING answered +PONG, and only from that child. */
static void test_unix_send_expect(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_ready.XXXXXX", path[128], check[160], why[512];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/s.sock", dir);
	snprintf(check, sizeof check, "unix:%s", path);
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t srv = fork();
	assert_true(srv >= 0);
	if (srv == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		strlcpy(sun.sun_path, path, sizeof sun.sun_path);
		int l = socket(AF_UNIX, SOCK_STREAM, 0);
		if (bind(l, (struct sockaddr *)&sun, sizeof sun) == -1 || listen(l, 4) == -1)
			_exit(1);
		(void)!write(ready[1], "x", 1);
		for (;;) {
			char buf[64];
			int c = accept(l, NULL, NULL);
			if (c == -1)
				_exit(1);
			ssize_t n = read(c, buf, sizeof buf);
			if (n > 0)
				(void)!write(c,
				             n == 6 && memcmp(buf, "PING\r\n", 6) == 0 ? "+PONG\r\n"
				                                                       : "-ERR\r\n",
				             7);
			close(c);
		}
	}
	setpgid(srv, srv);
	char b;
	assert_int_equal(read(ready[0], &b, 1), 1);
	struct fake f;
	fake_init(&f, check, 0);
	f.def.check_send = "PING\r\n";
	f.def.check_expect = "+PONG";
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, srv, mono_ms() + 2000, why, sizeof why),
	                 1);
	f.def.check_send = "HELLO\r\n";
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, srv, mono_ms() + 2000, why, sizeof why),
	                 0);
	assert_non_null(strstr(why, "answered \"-ERR\", not \"+PONG\""));
	pid_t other = idle_child();
	f.def.check_send = "PING\r\n";
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, other, mono_ms() + 2000, why, sizeof why),
	                 0);
	assert_non_null(strstr(why, "is in use by pid"));
	reap(other);
	reap(srv);
	unlink(path);
	rmdir(dir);
	close(ready[0]);
	close(ready[1]);
}

/* A child in its own process group serving one fixed reply to every TCP connection on a
 * loopback port (*port set); delay_ms before answering. */
static pid_t tcp_server(const char *reply, int delay_ms, int *port)
{
	int fd = tl_bound(port, true);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;) {
			char buf[512];
			int c = accept(fd, NULL, NULL);
			if (c == -1)
				_exit(1);
			(void)!read(c, buf, sizeof buf);
			if (delay_ms > 0)
				sleep_ms(delay_ms);
			(void)!write(c, reply, strlen(reply));
			close(c);
		}
	}
	setpgid(pid, pid);
	close(fd); /* the child's socket now: the parent holds no copy */
	return pid;
}

/* http:/PATH: 2xx/3xx is ready; another status, or not HTTP at all, is named. */
static void test_http_answers(void **state)
{
	(void)state;
	int port;
	char why[512];
	struct fake f;
	pid_t srv = tcp_server("HTTP/1.0 302 Found\r\nLocation: /x\r\n\r\n", 0, &port);
	fake_init(&f, "http:/metrics", port);
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, srv, mono_ms() + 5000, why, sizeof why),
	                 1);
	reap(srv);
	srv = tcp_server("HTTP/1.0 404 Not Found\r\n\r\n", 0, &port);
	fake_init(&f, "http:/metrics", port);
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, srv, mono_ms() + 5000, why, sizeof why),
	                 0);
	assert_string_equal(why, "GET /metrics: HTTP 404");
	reap(srv);
	srv = tcp_server("SSH-2.0-OpenSSH_9.2\r\n", 0, &port);
	fake_init(&f, "http:/metrics", port);
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, srv, mono_ms() + 5000, why, sizeof why),
	                 0);
	assert_string_equal(why, "GET /metrics: not an HTTP answer");
	/* No port to ask: nothing is tried. */
	fake_init(&f, "http:/metrics", 0);
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, srv, mono_ms() + 5000, why, sizeof why),
	                 0);
	assert_string_equal(why, "check \"http:/metrics\" needs a listen port");
	reap(srv);
}

/* tcp with send/expect: the wildcard address is asked on loopback; a silent server times out
 * at the deadline; a host that does not resolve is named. */
static void test_tcp_send_expect(void **state)
{
	(void)state;
	int port;
	char why[512];
	struct fake f;
	pid_t srv = tcp_server("+PONG\r\n", 0, &port);
	fake_init(&f, "tcp", port);
	f.svc.listen_host = "0.0.0.0";
	f.def.check_send = "PING\r\n";
	f.def.check_expect = "+PONG";
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, srv, mono_ms() + 5000, why, sizeof why),
	                 1);
	f.svc.listen_host = "no-such-host.invalid";
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, srv, mono_ms() + 5000, why, sizeof why),
	                 0);
	char want[64];
	snprintf(want, sizeof want, "no-such-host.invalid:%d: resolve: ", port);
	if (strncmp(why, want, strlen(want)) != 0)
		fail_msg("why: %s", why);
	reap(srv);
	srv = tcp_server("+PONG\r\n", 3000, &port);
	fake_init(&f, "tcp", port);
	f.def.check_send = "PING\r\n";
	f.def.check_expect = "+PONG";
	long t0 = mono_ms();
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, srv, t0 + 300, why, sizeof why), 0);
	assert_string_equal(why, "no answer in time");
	assert_true(mono_ms() >= t0 + 300); /* it waited for its deadline: a lower bound only */
	reap(srv);
}

/* The listener is a child of the supervised process, in its process group (a wrapper
 * script's server): that is the service being ready. No pid at all: not running. */
static void test_group_member_listens(void **state)
{
	(void)state;
	int port, ready[2];
	int fd = tl_bound(&port, true);
	assert_int_equal(pipe(ready), 0);
	pid_t leader = fork();
	assert_true(leader >= 0);
	if (leader == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pid_t kid = fork(); /* same group; holds the socket; the leader does not */
		if (kid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			(void)!write(ready[1], "x", 1);
			pause();
			_exit(0);
		}
		close(fd);
		pause();
		_exit(0);
	}
	setpgid(leader, leader);
	close(fd);
	char b, why[512];
	assert_int_equal(read(ready[0], &b, 1), 1);
	struct fake f;
	fake_init(&f, "tcp", port);
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, leader, mono_ms() + 5000, why, sizeof why),
	                 1);
	assert_int_equal(ready_check(&ctl, &f.a, &f.svc, 0, mono_ms() + 5000, why, sizeof why), 0);
	assert_string_equal(why, "not running");
	kill(-leader, SIGKILL);
	waitpid(leader, NULL, 0);
	close(ready[0]);
	close(ready[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_port_holder),      cmocka_unit_test(test_tcp_owner),
	    cmocka_unit_test(test_unix_send_expect), cmocka_unit_test(test_http_answers),
	    cmocka_unit_test(test_tcp_send_expect),  cmocka_unit_test(test_group_member_listens),
	};
	if (ctl_init(&ctl, NULL, "/nonexistent/gitlab.rb") == -1)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
