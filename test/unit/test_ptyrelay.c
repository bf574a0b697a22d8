/*
 * ptyrelay: run from a process whose stdio is a terminal (the outer pty here, standing in
 * for root's), the child gets another terminal; what it prints reaches ours escaped; its
 * exit status (or 128 + signal) comes back.
 */
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/ptyrelay.h"

/* In the relayed child: name its terminal, try a terminal title, end as asked. */
static void relayed(int how)
{
	char name[64] = "none";
	(void)ttyname_r(STDIN_FILENO, name, sizeof name);
	/* its controlling terminal is that pty: /dev/tty opens */
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY);
	printf("inner %s%s\n\033]0;x\007 done\n", name, fd != -1 ? " ctty" : "");
	fflush(stdout);
	if (how == 0)
		_exit(7);
	raise(SIGTERM);
	_exit(1);
}

/* A process on the outer terminal (its session leader) that relays; exits with the status. */
static void outer(int master, int slave, int how)
{
	close(master);
	if (setsid() == -1 || ioctl(slave, TIOCSCTTY, 0) == -1 || dup2(slave, 0) == -1 ||
	    dup2(slave, 1) == -1 || dup2(slave, 2) == -1)
		_exit(99);
	close(slave);
	int status;
	pid_t pid = ptyrelay_fork(&status);
	if (pid == 0)
		relayed(how);
	_exit(pid > 0 ? status : 98);
}

/* Everything the outer terminal showed, and the relaying process's exit status. */
static int run(int how, char *seen, size_t len, char *outer_name, size_t namelen)
{
	int master, slave;
	assert_int_equal(openpty(&master, &slave, NULL, NULL, NULL), 0);
	assert_int_equal(ttyname_r(slave, outer_name, namelen), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0)
		outer(master, slave, how);
	close(slave);
	size_t got = 0;
	ssize_t n;
	/* EIO once the last holder of the outer terminal is gone */
	while (got + 1 < len && (n = read(master, seen + got, len - 1 - got)) > 0)
		got += (size_t)n;
	seen[got] = '\0';
	close(master);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_own_terminal_escaped(void **state)
{
	(void)state;
	char seen[4096], outer_name[64], want[128];
	assert_int_equal(run(0, seen, sizeof seen, outer_name, sizeof outer_name), 7);
	assert_non_null(strstr(seen, "inner /dev/pts/"));
	assert_non_null(strstr(seen, " ctty\r\n"));
	snprintf(want, sizeof want, "inner %s ", outer_name);
	assert_null(strstr(seen, want)); /* another terminal than ours */
	assert_non_null(strstr(seen, "\\x1b]0;x\\x07 done"));
	assert_null(strchr(seen, '\033'));
}

static void test_signal_status(void **state)
{
	(void)state;
	char seen[4096], outer_name[64];
	assert_int_equal(run(1, seen, sizeof seen, outer_name, sizeof outer_name), 128 + SIGTERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_own_terminal_escaped),
	    cmocka_unit_test(test_signal_status),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
