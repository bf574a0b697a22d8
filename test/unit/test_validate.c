/* proc/validate: the bytes on stdin, the account, the deadline, the output filtered. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/clock.h"
#include "proc/validate.h"

#ifdef GITLAB_CTL_COVERAGE
/*
 * A coverage build's child dumps its counters before the execve, as nobody,
 * into files only root may write: drop libgcov's "profiling:" complaints so
 * the output compared is the validator's.
 */
static void drop_gcov_lines(struct buf *out)
{
	char *w = out->p;
	for (char *r = out->p; *r != '\0';) {
		char *nl = strchr(r, '\n');
		size_t n = nl ? (size_t)(nl - r) + 1 : strlen(r);
		if (strncmp(r, "profiling:", 10) != 0) {
			memmove(w, r, n);
			w += n;
		}
		r += n;
	}
	*w = '\0';
	out->len = (size_t)(w - out->p) + 1;
}
#endif

static int run(char *const *argv, const char *data, struct buf *out, long ms)
{
	buf_init(out);
	int rc = validate_run(argv, data, strlen(data), NULL, NULL, mono_ms() + ms, out);
	buf_addc(out, '\0');
#ifdef GITLAB_CTL_COVERAGE
	drop_gcov_lines(out);
#endif
	return rc;
}

static void test_stdin_and_status(void **state)
{
	(void)state;
	struct buf out;
	char *cat[] = {"/bin/cat", "/dev/stdin", NULL};
	assert_int_equal(run(cat, "line 1\nline 2\n", &out, 10000), 0);
	assert_string_equal(out.p, "line 1\nline 2\n");
	buf_free(&out);
	char *grep[] = {"/bin/grep", "-q", "needle", NULL};
	assert_int_equal(run(grep, "hay\n", &out, 10000), 1);
	buf_free(&out);
}

/* A validator cannot paint on root's terminal: escapes and carriage returns become '?'. */
static void test_output_filtered(void **state)
{
	(void)state;
	struct buf out;
	char *cat[] = {"/bin/cat", NULL};
	assert_int_equal(run(cat, "a\033]0;title\007b\rc\td\n", &out, 10000), 0);
	assert_string_equal(out.p, "a?]0;title?b?c\td\n");
	buf_free(&out);
}

static void test_deadline(void **state)
{
	(void)state;
	struct buf out;
	char *sh[] = {"/bin/sh", "-c", "sleep 30 & sleep 30", NULL};
	long t0 = mono_ms();
	assert_int_equal(run(sh, "", &out, 300), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_true(mono_ms() - t0 < 10000);
	buf_free(&out);
	char *rel[] = {"cat", NULL};
	assert_int_equal(run(rel, "", &out, 1000), -1); /* only an absolute path */
	assert_int_equal(errno, EINVAL);
	buf_free(&out);
}

/* As root it runs as the account (nobody when there is none), in a session of its own. */
static void test_account(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	struct buf out;
	char *id[] = {"/bin/sh", "-c", "id -u; id -G; ps -o sid= -p $$ | tr -d ' '; echo $$", NULL};
	assert_int_equal(run(id, "", &out, 10000), 0);
	unsigned uid, gid, sid, pid;
	assert_int_equal(sscanf(out.p, "%u\n%u\n%u\n%u", &uid, &gid, &sid, &pid), 4);
	assert_int_equal(uid, 65534);
	assert_int_equal(gid, 65534);
	assert_int_equal(sid, pid);
	buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stdin_and_status),
	    cmocka_unit_test(test_output_filtered),
	    cmocka_unit_test(test_deadline),
	    cmocka_unit_test(test_account),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
