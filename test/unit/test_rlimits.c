/*
 * rlimits: a caller's low limits are replaced by the system's (pid 1's), as root and, as
 * close as allowed, without privilege. Each case runs in a child so ours stay as they are.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/diag.h"
#include "lib/rlimits.h"

/* Runs fn in a child; its exit status (0: all its checks held, else the failed one). */
static int in_child(int (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0)
		exit(fn()); /* exit, not _exit: a coverage build writes the child's counters */
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static int lower_nofile(void)
{
	struct rlimit low = {100, 200};
	return setrlimit(RLIMIT_NOFILE, &low);
}

/* rlimits_nofile_low, its message printed as the runsvdir wrapper prints it. */
static int nofile_low(void)
{
	struct diags d;
	diags_init(&d);
	int rc = rlimits_nofile_low(&d);
	bool said = d.nerr == 1 && strstr(d.v[0].msg, "the open-file limit is") != NULL;
	diags_flush(&d, stderr);
	return rc == -1 && !said ? 0 : rc; /* refused without its reason: not refused */
}

static int as_root(void)
{
	struct rlimit sys, now;
	if (prlimit(1, RLIMIT_NOFILE, NULL, &sys) == -1)
		return 1;
	if (sys.rlim_cur < RLIMITS_NOFILE_MIN)
		return 0; /* a system below the floor: nothing this case can show */
	if (lower_nofile() == -1)
		return 2;
	if (nofile_low() != -1) /* 100 < 1024: refused, with a message */
		return 3;
	/* Raising a hard limit needs CAP_SYS_RESOURCE, which a container's root may lack. */
	struct rlimit probe = {100, 300};
	bool cap = setrlimit(RLIMIT_NOFILE, &probe) == 0;
	if (lower_nofile() == -1)
		return 4;
	if (rlimits_reset() != 0)
		return 5;
	if (getrlimit(RLIMIT_NOFILE, &now) == -1)
		return 6;
	if (cap) /* the system's limits, the hard one included */
		return now.rlim_cur == sys.rlim_cur && now.rlim_max == sys.rlim_max ? 0 : 7;
	/* Without it: as close as allowed, the soft limit up to the hard one. */
	if (now.rlim_cur != 200 || now.rlim_max != 200)
		return 8;
	return nofile_low() == -1 ? 0 : 9;
}

static int unprivileged(void)
{
	struct rlimit now;
	if (lower_nofile() == -1)
		return 1;
	if (setgid(65534) == -1 || setuid(65534) == -1)
		return 2;
	/* pid 1's limits cannot be read now: open files go up to the hard limit, no further. */
	if (rlimits_reset() != 0)
		return 3;
	if (getrlimit(RLIMIT_NOFILE, &now) == -1 || now.rlim_cur != 200 || now.rlim_max != 200)
		return 4;
	if (nofile_low() != -1)
		return 5;
	return 0;
}

static void test_root(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(in_child(as_root), 0);
}

static void test_unprivileged(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(in_child(unprivileged), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_root),
	    cmocka_unit_test(test_unprivileged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
