/*
 * proctree: a real process tree below this test (a child subreaper, like the runsvdir
 * wrapper): children, group members, adopted orphans and a live service's daemon.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/clock.h"
#include "lib/proctree.h"

struct rec {
	char tag;
	pid_t pid;
};

static int rep[2];
static pid_t p[128]; /* by tag letter */
static const char tags[] = "AGBDRSY";

static void report(char tag)
{
	struct rec r = {tag, getpid()};
	if (write(rep[1], &r, sizeof r) != (ssize_t)sizeof r)
		_exit(2);
}

static void park(char tag)
{
	report(tag);
	for (;;)
		pause();
}

/*
 * A (group A) with child G; B (group B); D, whose group leader C has exited (an adopted
 * orphan); R (a runsv stand-in) with child S (a service, group S) whose daemon Y was
 * double-forked and so adopted by us while its group leader S still runs.
 */
static pid_t fork_or_fail(void)
{
	pid_t pid = fork();
	if (pid == -1)
		_exit(3);
	return pid;
}

static void make_tree(pid_t pids[128])
{
	if (fork_or_fail() == 0) {
		setpgid(0, 0);
		if (fork_or_fail() == 0)
			park('G');
		park('A');
	}
	if (fork_or_fail() == 0) {
		setpgid(0, 0);
		park('B');
	}
	pid_t c = fork_or_fail();
	if (c == 0) {
		setpgid(0, 0);
		if (fork_or_fail() == 0)
			park('D');
		_exit(0);
	}
	if (fork_or_fail() == 0) {
		setpgid(0, 0);
		if (fork_or_fail() == 0) {
			setpgid(0, 0);
			pid_t y1 = fork_or_fail();
			if (y1 == 0) {
				if (fork_or_fail() == 0)
					park('Y');
				_exit(0);
			}
			waitpid(y1, NULL, 0);
			park('S');
		}
		park('R');
	}
	for (int i = 0; i < 7; i++) {
		struct rec r;
		assert_int_equal(read(rep[0], &r, sizeof r), (ssize_t)sizeof r);
		pids[(unsigned char)r.tag] = r.pid;
	}
	/* D reports before C may have exited: reap C, so D is ours. */
	int st;
	assert_int_equal(waitpid(c, &st, 0), c);
}

/* Stop all of them by pid; each ends up our child (subreaper) and is reaped. */
static void stop_all(void)
{
	for (const char *t = tags; *t; t++)
		if (p[(unsigned char)*t] > 0)
			kill(p[(unsigned char)*t], SIGKILL);
	for (const char *t = tags; *t; t++) {
		pid_t pid = p[(unsigned char)*t];
		/* An orphan is reparented to us just after its parent dies. */
		for (int i = 0; pid > 0 && i < 1000 && waitpid(pid, NULL, 0) != pid; i++)
			usleep(1000);
		p[(unsigned char)*t] = 0; /* never signal a pid that may be reused */
	}
}

static int teardown(void **state)
{
	(void)state;
	stop_all(); /* after a failed assertion; a no-op (ECHILD) after success */
	return 0;
}

static bool has(const struct pstat *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].pid == pid)
			return true;
	return false;
}

static void test_tree(void **state)
{
	(void)state;
	pid_t me = getpid();
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	assert_int_equal(pipe(rep), 0);
	make_tree(p);

	/* Direct children: A, B, R, and the adopted D and Y. */
	pid_t kids[16];
	int nk = proc_children(me, kids, 16);
	assert_int_equal(nk, 5);
	const char direct[] = "ABRDY";
	for (const char *t = direct; *t; t++) {
		bool found = false;
		for (int i = 0; i < nk; i++)
			found = found || kids[i] == p[(unsigned char)*t];
		assert_true(found);
	}
	/* Counted beyond the room given, stored within it. */
	assert_int_equal(proc_children(me, kids, 2), 5);

	struct pstat a;
	assert_int_equal(proc_stat(p['A'], &a), 0);
	assert_int_equal(a.pid, p['A']);
	assert_int_equal(a.ppid, me);
	assert_int_equal(a.pgrp, p['A']);
	assert_string_equal(a.comm, "test_proctree");
	assert_int_equal(a.state, 'S'); /* parked in pause() */
	assert_int_equal(proc_group_is(p['A'], a.start), 1);
	assert_int_equal(proc_group_is(p['A'], a.start + 1), 0);

	/* Everything but R (skipped) and us: children, their descendants and group members. */
	struct pstat *v;
	size_t n;
	assert_int_equal(proc_descendants(me, &p['R'], 1, PROC_GROUPS, &v, &n), 0);
	assert_int_equal(n, 6);
	for (const char *t = "AGBDSY"; *t; t++)
		assert_true(has(v, n, p[(unsigned char)*t]));
	assert_false(has(v, n, p['R']));
	free(v);

	/* Descendants alone: S is only in Y's group. */
	assert_int_equal(proc_descendants(me, &p['R'], 1, 0, &v, &n), 0);
	assert_int_equal(n, 5);
	for (const char *t = "AGBDY"; *t; t++)
		assert_true(has(v, n, p[(unsigned char)*t]));
	assert_false(has(v, n, p['S']));
	free(v);

	/* Orphans only: Y's group leader S is alive below R, so Y (and S) are left alone. */
	assert_int_equal(proc_descendants(me, &p['R'], 1, PROC_GROUPS | PROC_ORPHANS, &v, &n), 0);
	assert_int_equal(n, 4);
	for (const char *t = "AGBD"; *t; t++)
		assert_true(has(v, n, p[(unsigned char)*t]));
	assert_false(has(v, n, p['Y']));
	assert_false(has(v, n, p['S']));
	free(v);

	stop_all();

	/* Gone: no stat; a group whose leader is gone is still "the same" (no reuse seen). */
	errno = 0;
	assert_int_equal(proc_stat(p['D'], &a), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(proc_group_is(p['D'], 1), 1);
	assert_int_equal(proc_children(p['D'], kids, 16), -1);
	assert_int_equal(proc_children(me, kids, 16), 0);
}

/* An exited, unreaped child reads as a zombie (what `ended()` in cmd_lifecycle relies on). */
static void test_zombie_state(void **state)
{
	(void)state;
	pid_t pid = fork_or_fail();
	if (pid == 0)
		_exit(0);
	struct pstat ps = {0};
	for (int i = 0; i < 10000 && ps.state != 'Z'; i++) {
		if (proc_stat(pid, &ps) == -1 || ps.state != 'Z')
			sleep_ms(1);
	}
	assert_int_equal(ps.state, 'Z');
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_tree, teardown),
	    cmocka_unit_test(test_zombie_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
