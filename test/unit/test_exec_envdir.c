/* envdir.c: values byte for byte, sorted, bad entries rejected by name. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "lib/envdir.h"
#include "lib/names.h"

struct fixture {
	char dir[64];
};

static void put(const struct fixture *f, const char *name, const char *data, size_t len)
{
	char path[256];
	tl_path(path, sizeof path, f->dir, name);
	tl_write(path, data, len, 0600);
}

static void put_s(const struct fixture *f, const char *name, const char *s)
{
	put(f, name, s, strlen(s));
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	if (tl_tmpdir(f->dir, sizeof f->dir, "test_envdir") == -1)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	DIR *d = opendir(f->dir);
	struct dirent *de;
	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			(void)unlinkat(dirfd(d), de->d_name, 0); /* the fixture is flat */
	closedir(d);
	int rc = rmdir(f->dir);
	free(f);
	return rc;
}

static void test_values_byte_for_byte(void **state)
{
	struct fixture *f = *state;
	struct envv e;
	char bad[64];
	put_s(f, "PATH", "/usr/bin:/bin");
	put_s(f, "MULTI", "a\nb 'c' \"d\"\n\n");
	put_s(f, "EMPTY", "");
	put_s(f, ".PATH.tmp", "skipped");
	envv_init(&e);
	assert_int_equal(envdir_read(f->dir, &e, bad, sizeof bad), 0);
	assert_int_equal(e.n, 3);
	/* sorted by name */
	assert_string_equal(e.v[0], "EMPTY=");
	assert_string_equal(e.v[1], "MULTI=a\nb 'c' \"d\"\n\n");
	assert_string_equal(e.v[2], "PATH=/usr/bin:/bin");
	assert_null(e.v[3]);
	assert_string_equal(envv_get(&e, "PATH"), "/usr/bin:/bin");
	assert_null(envv_get(&e, "PAT"));
	envv_free(&e);
}

static void test_bad_name(void **state)
{
	struct fixture *f = *state;
	struct envv e;
	char bad[64];
	put_s(f, "OK", "1");
	put_s(f, "BAD-NAME", "1");
	envv_init(&e);
	assert_int_equal(envdir_read(f->dir, &e, bad, sizeof bad), -1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(bad, "BAD-NAME");
	envv_free(&e);
}

static void test_nul_byte(void **state)
{
	struct fixture *f = *state;
	struct envv e;
	char bad[64];
	put(f, "NUL", "a\0b", 3);
	envv_init(&e);
	assert_int_equal(envdir_read(f->dir, &e, bad, sizeof bad), -1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(bad, "NUL");
	envv_free(&e);
}

static void test_not_regular(void **state)
{
	struct fixture *f = *state;
	struct envv e;
	char bad[64], path[256];
	snprintf(path, sizeof path, "%s/LINK", f->dir);
	assert_int_equal(symlink("/etc/hostname", path), 0);
	envv_init(&e);
	assert_int_equal(envdir_read(f->dir, &e, bad, sizeof bad), -1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(bad, "LINK");
	envv_free(&e);
}

static void test_too_big(void **state)
{
	struct fixture *f = *state;
	struct envv e;
	char bad[64];
	size_t len = ENVDIR_MAX_VALUE + 1;
	char *big = malloc(len);
	memset(big, 'x', len);
	put(f, "BIG", big, len);
	free(big);
	envv_init(&e);
	assert_int_equal(envdir_read(f->dir, &e, bad, sizeof bad), -1);
	assert_int_equal(errno, EFBIG);
	assert_string_equal(bad, "BIG");
	envv_free(&e);
}

static void test_missing_dir(void **state)
{
	(void)state;
	struct envv e;
	char bad[64];
	envv_init(&e);
	assert_int_equal(envdir_read("/nonexistent/env", &e, bad, sizeof bad), -1);
	assert_int_equal(errno, ENOENT);
	assert_string_equal(bad, "");
	envv_free(&e);
}

static void test_set_unset(void **state)
{
	(void)state;
	struct envv e;
	envv_init(&e);
	for (int i = 0; i < 100; i++) {
		char name[16];
		snprintf(name, sizeof name, "V%03d", 99 - i);
		envv_set(&e, name, "x");
	}
	envv_set(&e, "V050", "replaced");
	assert_int_equal(e.n, 100);
	envv_unset(&e, "V000");
	envv_unset(&e, "NOPE");
	assert_int_equal(e.n, 99);
	assert_null(e.v[99]);
	envv_sort(&e);
	assert_string_equal(e.v[0], "V001=x");
	assert_string_equal(envv_get(&e, "V050"), "replaced");
	envv_free(&e);
	assert_true(name_env_ok("_A1"));
	assert_false(name_env_ok("1A"));
	assert_false(name_env_ok("A=B"));
	assert_false(name_env_ok(""));
}

/* A FIFO is neither followed nor read: opening it must not block, and it is refused. */
static void test_fifo(void **state)
{
	struct fixture *f = *state;
	struct envv e;
	char bad[64], path[256];
	snprintf(path, sizeof path, "%s/FIFO", f->dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	envv_init(&e);
	assert_int_equal(envdir_read(f->dir, &e, bad, sizeof bad), -1);
	assert_int_equal(errno, EINVAL);
	assert_string_equal(bad, "FIFO");
	envv_free(&e);
}

static void test_too_many(void **state)
{
	struct fixture *f = *state;
	struct envv e;
	char bad[64];
	for (int i = 0; i <= ENVDIR_MAX_VARS; i++) {
		char name[16];
		snprintf(name, sizeof name, "V%05d", i);
		put_s(f, name, "1");
	}
	envv_init(&e);
	assert_int_equal(envdir_read(f->dir, &e, bad, sizeof bad), -1);
	assert_int_equal(errno, E2BIG);
	assert_int_equal(strncmp(bad, "V", 1), 0);
	assert_int_equal(e.n, ENVDIR_MAX_VARS);
	envv_free(&e);
}

/* The directory's values are added to what the vector holds, replacing same names. */
static void test_adds_to_existing(void **state)
{
	struct fixture *f = *state;
	struct envv e;
	char bad[64];
	put_s(f, "B", "from-dir");
	envv_init(&e);
	envv_set(&e, "C", "kept");
	envv_set(&e, "B", "replaced");
	assert_int_equal(envdir_read(f->dir, &e, bad, sizeof bad), 0);
	assert_int_equal(e.n, 2);
	assert_string_equal(e.v[0], "B=from-dir");
	assert_string_equal(e.v[1], "C=kept");
	envv_free(&e);
	assert_int_equal(e.n, 0);
	assert_null(e.v);
}

/* Only the name decides the order: "A=" sorts before "AB=" and "A_=". */
static void test_sort_by_name(void **state)
{
	(void)state;
	struct envv e;
	envv_init(&e);
	envv_sort(&e); /* empty: nothing to do */
	envv_set(&e, "AB", "1");
	envv_set(&e, "A_", "2");
	envv_set(&e, "A", "zzz");
	envv_sort(&e);
	assert_string_equal(e.v[0], "A=zzz");
	assert_string_equal(e.v[1], "AB=1");
	assert_string_equal(e.v[2], "A_=2");
	envv_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_values_byte_for_byte, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_name, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nul_byte, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_regular, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_too_big, setup, teardown),
	    cmocka_unit_test(test_missing_dir),
	    cmocka_unit_test(test_set_unset),
	    cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_too_many, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_adds_to_existing, setup, teardown),
	    cmocka_unit_test(test_sort_by_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
