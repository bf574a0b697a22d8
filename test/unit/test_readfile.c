/*
 * lib/readfile: whole files through short reads and EINTR, bounded (EFBIG),
 * never through a final symlink, never blocking on a fifo.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/clock.h"
#include "lib/readfile.h"

static char dir[] = "/tmp/test_readfile.XXXXXX";
static int dfd = -1;

static int setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dfd == -1 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	const char *names[] = {"f", "exact", "link", "fifo", "sub"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		(void)unlinkat(dfd, names[i], strcmp(names[i], "sub") == 0 ? AT_REMOVEDIR : 0);
	close(dfd);
	return rmdir(dir);
}

static void put(const char *name, const char *text, size_t n)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd != -1);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
}

/* SOCK_SEQPACKET returns one record per read: every read but the last is short. */
static void test_short_reads(void **state)
{
	(void)state;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	const char *parts[] = {"ab", "cde", "f", "ghij"};
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(write(sv[1], parts[i], strlen(parts[i])),
		                 (ssize_t)strlen(parts[i]));
	shutdown(sv[1], SHUT_WR);
	struct buf b;
	buf_init(&b);
	buf_adds(&b, ">");
	assert_int_equal(readfile_fd(sv[0], &b, 100), 0);
	assert_string_equal(b.p, ">abcdefghij"); /* appended */
	buf_free(&b);
	close(sv[0]);
	close(sv[1]);
}

static volatile sig_atomic_t interrupted;

static void on_usr1(int sig)
{
	(void)sig;
	interrupted++;
}

/* State letter of /proc/PID/stat, or 0. */
static char proc_state(pid_t pid)
{
	char path[64], text[512];
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if (readfile_small_at(AT_FDCWD, path, text, sizeof text) == -1)
		return 0;
	const char *close = strrchr(text, ')');
	return close != NULL ? close[2] : 0;
}

/*
 * The child interrupts the parent once it sleeps in read(2) (no SA_RESTART,
 * so read fails with EINTR), then writes: the read must resume.
 */
static void test_eintr_resumes(void **state)
{
	(void)state;
	struct sigaction sa = {.sa_handler = on_usr1}, old;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t parent = getpid(), pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		close(p[0]);
		for (int i = 0; i < 10000 && proc_state(parent) != 'S'; i++)
			sleep_ms(1);
		kill(parent, SIGUSR1);
		for (int i = 0; i < 10000 && proc_state(parent) != 'S'; i++)
			sleep_ms(1);
		_exit(write(p[1], "late", 4) == 4 ? 0 : 1);
	}
	close(p[1]);
	struct buf b;
	buf_init(&b);
	assert_int_equal(readfile_fd(p[0], &b, 100), 0);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(st, 0);
	assert_int_equal(interrupted, 1);
	assert_string_equal(buf_str(&b), "late");
	buf_free(&b);
	close(p[0]);
	sigaction(SIGUSR1, &old, NULL);
}

static void test_limit(void **state)
{
	(void)state;
	char big[70000];
	memset(big, 'x', sizeof big);
	put("exact", big, sizeof big);
	struct buf b;
	buf_init(&b);
	assert_int_equal(readfile_at(dfd, "exact", &b, sizeof big), 0); /* across 64 KiB reads */
	assert_int_equal(b.len, sizeof big);
	assert_int_equal(b.p[b.len], '\0');
	buf_reset(&b);
	errno = 0;
	assert_int_equal(readfile_at(dfd, "exact", &b, sizeof big - 1), -1);
	assert_int_equal(errno, EFBIG);
	buf_reset(&b);
	put("f", "", 0);
	assert_int_equal(readfile_at(dfd, "f", &b, 0), 0);
	assert_int_equal(b.len, 0);
	buf_free(&b);
}

static void test_small(void **state)
{
	(void)state;
	put("f", "12345", 5);
	char out[6];
	assert_int_equal(readfile_small_at(dfd, "f", out, sizeof out), 5);
	assert_string_equal(out, "12345");
	char tiny[5];
	errno = 0;
	assert_int_equal(readfile_small_at(dfd, "f", tiny, sizeof tiny), -1);
	assert_int_equal(errno, EFBIG);
}

static void test_refuses_link_fifo_dir(void **state)
{
	(void)state;
	put("f", "secret", 6);
	assert_int_equal(symlinkat("f", dfd, "link"), 0);
	assert_int_equal(mkfifoat(dfd, "fifo", 0600),
	                 0); /* no writer: a blocking open would hang */
	assert_int_equal(mkdirat(dfd, "sub", 0700), 0);
	struct buf b;
	buf_init(&b);
	char out[64];
	errno = 0;
	assert_int_equal(readfile_at(dfd, "link", &b, 100), -1);
	assert_int_equal(errno, ELOOP);
	errno = 0;
	assert_int_equal(readfile_small_at(dfd, "link", out, sizeof out), -1);
	assert_int_equal(errno, ELOOP);
	errno = 0;
	assert_int_equal(readfile_at(dfd, "fifo", &b, 100), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(readfile_at(dfd, "sub", &b, 100), -1);
	assert_int_equal(errno, EISDIR);
	assert_int_equal(b.len, 0);
	char path[sizeof dir + 8];
	snprintf(path, sizeof path, "%s/f", dir);
	assert_int_equal(readfile(path, &b, 100), 0);
	assert_string_equal(b.p, "secret");
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_short_reads),
	    cmocka_unit_test(test_eintr_resumes),
	    cmocka_unit_test(test_limit),
	    cmocka_unit_test(test_small),
	    cmocka_unit_test(test_refuses_link_fifo_dir),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
