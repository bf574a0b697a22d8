/* runit: sv's error wording, and the protocol helpers' error paths on a private temp dir. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/rmtree.h"
#include "lib/spawn.h"
#include "runit/runit.h"

static char top[64];

static int setup(void **state)
{
	(void)state;
	strlcpy(top, "/tmp/test_runit_errors.XXXXXX", sizeof top);
	return mkdtemp(top) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(top, NULL);
}

/* The wording of runit's error_str(), so that our lines read like sv's. */
static void test_strerror(void **state)
{
	(void)state;
	static const struct {
		int e;
		const char *s;
	} want[] = {
	    {ENOENT, "file does not exist"},
	    {EACCES, "access denied"},
	    {EPERM, "permission denied"},
	    {ENOTDIR, "not a directory"},
	    {EISDIR, "is a directory"},
	    {ELOOP, "symbolic link loop"},
	    {ENAMETOOLONG, "file name too long"},
	    {ENXIO, "device not configured"},
	    {EIO, "input/output error"},
	    {EINTR, "interrupted system call"},
	    {ENOMEM, "out of memory"},
	    {EAGAIN, "temporary failure"},
	    {EINVAL, "invalid argument"},
	    {EBUSY, "device busy"},
	    {EMFILE, "process cannot open more files"},
	    {ENFILE, "system cannot open more files"},
	    {EROFS, "read-only file system"},
	    {ENOSPC, "out of disk space"},
	    {EBADMSG, "bad format"},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		assert_string_equal(sv_strerror(want[i].e), want[i].s);
	/* Others: the C library's text. */
	assert_string_equal(sv_strerror(EXDEV), strerror(EXDEV));
}

static void sub(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", top, rel);
}

static void test_control_errors(void **state)
{
	(void)state;
	char d[256], p[300];
	sub(d, sizeof d, "svc");
	assert_int_equal(mkdir(d, 0755), 0);
	/* No supervise/: no runsv to talk to. */
	errno = 0;
	assert_int_equal(sv_control(d, 'u'), -1);
	assert_int_equal(errno, ENOENT);
	/* A control fifo nobody reads: ENXIO at once instead of blocking. */
	snprintf(p, sizeof p, "%s/supervise", d);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/supervise/control", d);
	assert_int_equal(mkfifo(p, 0600), 0);
	errno = 0;
	assert_int_equal(sv_control_str(d, "tcu"), -1);
	assert_int_equal(errno, ENXIO);
	/* With a reader the bytes arrive, all of them, in order. */
	int rfd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd != -1);
	assert_int_equal(sv_control_str(d, "tcu"), 0);
	assert_int_equal(sv_control(d, 'x'), 0);
	char got[8] = "";
	assert_int_equal(read(rfd, got, sizeof got - 1), 4);
	assert_string_equal(got, "tcux");
	close(rfd);

	/* A path too long for PATH_MAX is refused, not truncated. */
	char *longdir = malloc(PATH_MAX + 2);
	assert_non_null(longdir);
	memset(longdir, 'd', PATH_MAX + 1);
	longdir[0] = '/';
	longdir[PATH_MAX + 1] = '\0';
	errno = 0;
	assert_int_equal(sv_control(longdir, 'u'), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	errno = 0;
	struct sv_status st;
	assert_int_equal(sv_read_status(longdir, &st), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	errno = 0;
	assert_int_equal(sv_live(longdir), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	assert_false(sv_normally_down(longdir));
	errno = 0;
	assert_int_equal(sv_check_until(longdir, SPAWN_NULL, 0), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	free(longdir);
}

static void test_status_errors(void **state)
{
	(void)state;
	char d[256], p[300];
	sub(d, sizeof d, "st");
	assert_int_equal(mkdir(d, 0755), 0);
	snprintf(p, sizeof p, "%s/supervise", d);
	assert_int_equal(mkdir(p, 0700), 0);
	struct sv_status st;
	/* A status file that is not runsv's 20 bytes. */
	snprintf(p, sizeof p, "%s/supervise/status", d);
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd != -1);
	assert_int_equal(write(fd, "short", 5), 5);
	close(fd);
	errno = 0;
	assert_int_equal(sv_read_status(d, &st), -1);
	assert_int_equal(errno, EBADMSG);
	/* A directory where the file should be: the read fails with its own error. */
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkdir(p, 0700), 0);
	errno = 0;
	assert_int_equal(sv_read_status(d, &st), -1);
	assert_int_equal(errno, EISDIR);
	/* supervise/ok as a plain file: runsv is not there, and that is an error, not "down". */
	snprintf(p, sizeof p, "%s/supervise/ok", d);
	assert_int_equal(mkdir(p, 0700), 0);
	errno = 0;
	assert_int_equal(sv_live(d), -1);
	assert_int_equal(errno, EISDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_strerror),
	    cmocka_unit_test(test_control_errors),
	    cmocka_unit_test(test_status_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
