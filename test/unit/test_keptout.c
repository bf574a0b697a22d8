/* keptout: a program's output kept under its words and its file's identity. */
#include <fcntl.h>
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

#include "lib/keptout.h"
#include "lib/rmtree.h"

static char top[64], var[96], prog[96], file[160], aside[128];

static int setup(void **state)
{
	(void)state;
	strlcpy(top, "/tmp/test_keptout.XXXXXX", sizeof top);
	if (mkdtemp(top) == NULL)
		return -1;
	snprintf(var, sizeof var, "%s/var", top);
	snprintf(prog, sizeof prog, "%s/prog", top);
	snprintf(file, sizeof file, "%s/cache/contexts-x", var);
	snprintf(aside, sizeof aside, "%s/aside", top);
	FILE *fp = fopen(prog, "w");
	if (fp == NULL || fputs("#!/bin/sh\n", fp) == EOF || fclose(fp) != 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(top, NULL);
}

/* What is kept for argv now: its text, or NULL. */
static char *got(char *const *argv)
{
	static char text[256];
	char key[256];
	struct buf b;
	buf_init(&b);
	assert_int_equal(keptout_key(argv, key, sizeof key), 0);
	int r = keptout_get(var, "contexts-x", key, &b);
	snprintf(text, sizeof text, "%.*s", (int)b.len, b.p ? b.p : "");
	buf_free(&b);
	return r == 1 ? text : NULL;
}

static void put(char *const *argv, const char *data)
{
	char key[256];
	assert_int_equal(keptout_key(argv, key, sizeof key), 0);
	keptout_put(var, "contexts-x", key, data, strlen(data));
}

static void test_kept(void **state)
{
	(void)state;
	char *argv[] = {prog, "--describe-config", NULL};
	char *other[] = {prog, "--other", NULL};
	assert_null(got(argv));
	put(argv, "name\tpostmaster\n");
	assert_string_equal(got(argv), "name\tpostmaster\n");
	struct stat st;
	assert_int_equal(lstat(file, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	assert_null(got(other)); /* other words */
	char *missing[] = {"/nonexistent/postgres", NULL};
	char key[256];
	assert_int_equal(keptout_key(missing, key, sizeof key), -1);

	/* the program rewritten (its mtime put back: the ctime still moves) */
	assert_int_equal(stat(prog, &st), 0);
	FILE *fp = fopen(prog, "a");
	assert_non_null(fp);
	assert_int_equal(fputs("exit 0\n", fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
	const struct timespec times[2] = {st.st_atim, st.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, prog, times, 0), 0);
	assert_null(got(argv));
	put(argv, "v2\n");
	assert_string_equal(got(argv), "v2\n");

	/* not the user's own 0600 regular file, or through a link: not used */
	assert_int_equal(chmod(file, 0644), 0);
	assert_null(got(argv));
	assert_int_equal(chmod(file, 0600), 0);
	assert_string_equal(got(argv), "v2\n");
	if (geteuid() == 0) {
		assert_int_equal(chown(file, 1, (gid_t)-1), 0);
		assert_null(got(argv));
		assert_int_equal(chown(file, 0, (gid_t)-1), 0);
	}
	assert_int_equal(rename(file, aside), 0);
	assert_int_equal(symlink(aside, file), 0);
	assert_null(got(argv));
	put(argv, "v3\n"); /* replaces the link with a file of its own */
	assert_int_equal(lstat(file, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(got(argv), "v3\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_kept, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
