/*
 * rootlock: the reconfigure lock of a root. A root never reconfigured has
 * nothing to lock; the holder's pid is written for waiters; a second taker
 * waits (naming the holder) until the holder is gone, as the kernel drops an
 * flock when its holder exits.
 */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/ctl.h"
#include "lib/diag.h"
#include "lib/rmtree.h"
#include "lib/rootlock.h"

static char root[PATH_MAX];
static struct ctl ctl;

static int setup(void **state)
{
	(void)state;
	strlcpy(root, "/tmp/test_rootlock.XXXXXX", sizeof root);
	if (mkdtemp(root) == NULL || ctl_init(&ctl, root, NULL) == -1)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(root, NULL);
}

/* rootlock_take as a command calls it: the wait shown live on stderr, problems printed after. */
static int take(bool create, int *fd)
{
	struct diags d;
	diags_init(&d);
	d.live = stderr;
	int rc = rootlock_take(&ctl, create, fd, &d);
	diags_flush(&d, stderr);
	return rc;
}

static void lock_path(char *path, size_t len)
{
	assert_int_equal(ctl_var_dir(&ctl, path, len), 0);
	strlcat(path, "/reconfigure.lock", len);
}

static void test_absent_without_create(void **state)
{
	(void)state;
	int fd = 42;
	assert_int_equal(take(false, &fd), 0);
	assert_int_equal(fd, -1); /* never reconfigured: nothing to keep out */
	rootlock_release(fd);
}

static void test_create_writes_pid(void **state)
{
	(void)state;
	int fd;
	char path[PATH_MAX], buf[32] = "";
	assert_int_equal(take(true, &fd), 0);
	assert_true(fd >= 0);
	lock_path(path, sizeof path);
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof buf, fp));
	fclose(fp);
	assert_int_equal(strtol(buf, NULL, 10), (long)getpid());
	/* Held: another open file description cannot take it. */
	int other = open(path, O_RDWR | O_CLOEXEC);
	assert_true(other >= 0);
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), -1);
	rootlock_release(fd);
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), 0);
	close(other);
}

/* A child holds the lock until told to go; the parent waits for it, naming its pid. */
static void test_waits_for_holder(void **state)
{
	(void)state;
	int ready[2], go[2];
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int fd;
		char c;
		close(go[1]); /* else its own end keeps the pipe from reaching EOF */
		close(ready[0]);
		if (take(true, &fd) == -1)
			_exit(1);
		(void)!write(ready[1], "r", 1);
		(void)!read(go[0], &c, 1); /* EOF when the parent closes its end */
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	/* Let the holder go once we are waiting: stderr shows the wait began. */
	char errfile[] = "/tmp/test_rootlock.err.XXXXXX";
	int errfd = mkstemp(errfile);
	assert_true(errfd >= 0);
	int saved = dup(2);
	dup2(errfd, 2);
	pid_t releaser = fork();
	if (releaser == 0) {
		/* Polls the file for the message, then releases the holder. */
		for (int i = 0; i < 6000; i++) {
			char buf[256] = "";
			int f = open(errfile, O_RDONLY);
			ssize_t n = f >= 0 ? read(f, buf, sizeof buf - 1) : -1;
			if (f >= 0)
				close(f);
			if (n > 0 && strstr(buf, "waiting for another reconfigure") != NULL)
				break;
			usleep(10000);
		}
		close(go[1]);
		_exit(0);
	}
	close(go[1]);
	int fd;
	int rc = take(true, &fd);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	assert_int_equal(rc, 0);
	rootlock_release(fd);
	waitpid(releaser, NULL, 0);
	int st;
	waitpid(child, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char buf[256] = "", want[64];
	lseek(errfd, 0, SEEK_SET);
	assert_true(read(errfd, buf, sizeof buf - 1) > 0);
	close(errfd);
	unlink(errfile);
	snprintf(want, sizeof want, "waiting for another reconfigure (pid %ld)", (long)child);
	assert_non_null(strstr(buf, want));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_absent_without_create, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_create_writes_pid, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_waits_for_holder, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
