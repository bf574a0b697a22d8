/* fdio_write_all: every byte arrives through a pipe that takes only part of each write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fdio.h"

#define LEN (1 << 20) /* far more than a pipe holds: the writes are short */

static void test_short_writes(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0) { /* reader: count bytes and check the pattern */
		close(p[1]);
		size_t got = 0;
		unsigned char buf[4096];
		ssize_t n;
		int bad = 0;
		while ((n = read(p[0], buf, sizeof buf)) > 0)
			for (ssize_t i = 0; i < n; i++, got++)
				bad |= buf[i] != (unsigned char)(got % 251);
		_exit(got == LEN && !bad ? 0 : 1);
	}
	close(p[0]);
	unsigned char *data = malloc(LEN);
	assert_non_null(data);
	for (size_t i = 0; i < LEN; i++)
		data[i] = (unsigned char)(i % 251);
	assert_int_equal(fdio_write_all(p[1], data, LEN), 0);
	close(p[1]);
	free(data);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_error(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	struct sigaction sa = {.sa_handler = SIG_IGN}, old;
	sigaction(SIGPIPE, &sa, &old);
	errno = 0;
	assert_int_equal(fdio_write_all(p[1], "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	sigaction(SIGPIPE, &old, NULL);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_short_writes),
	    cmocka_unit_test(test_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
