/*
 * svsel: the enabled services of a root (the links in service/), ordered in waves by the
 * after files reconfigure writes; a name not selected in an after file is ignored, and an
 * after file that is a symlink is not followed: ordering fails and says so.
 */
#include <errno.h>
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
#include "runit/svsel.h"

static char root[] = "/tmp/test_svsel.XXXXXX";
static struct ctl ctl;

static void path_of(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/opt/gitlab/%s", root, rel);
}

/* sv/<name> with an after file holding `after` (NULL: none), linked from service/. */
static void service(const char *name, const char *after)
{
	char p[PATH_MAX], link[PATH_MAX];
	snprintf(p, sizeof p, "%s/opt/gitlab/sv/%s", root, name);
	assert_int_equal(mkdir(p, 0755), 0);
	if (after != NULL) {
		char f[PATH_MAX + 8];
		snprintf(f, sizeof f, "%s/after", p);
		FILE *fp = fopen(f, "w");
		assert_non_null(fp);
		fputs(after, fp);
		assert_int_equal(fclose(fp), 0);
	}
	snprintf(link, sizeof link, "%s/opt/gitlab/service/%s", root, name);
	assert_int_equal(symlink(p, link), 0);
}

static int setup(void **state)
{
	(void)state;
	char p[PATH_MAX];
	if (mkdtemp(root) == NULL)
		return -1;
	const char *dirs[] = {"", "sv", "service"};
	snprintf(p, sizeof p, "%s/opt", root);
	if (mkdir(p, 0755) == -1)
		return -1;
	for (size_t i = 0; i < 3; i++) {
		path_of(p, sizeof p, dirs[i]);
		if (mkdir(p, 0755) == -1)
			return -1;
	}
	return ctl_init(&ctl, root, NULL);
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(root, stderr);
}

/* One named service: itself when enabled, ENOENT when not. */
static void test_one(void **state)
{
	(void)state;
	struct svsel one;
	service("one-a-rather-long-service-name", NULL);
	assert_int_equal(svsel_load(&ctl, "one-a-rather-long-service-name", &one), 0);
	assert_int_equal(one.n, 1);
	assert_string_equal(one.names[0], "one-a-rather-long-service-name");
	svsel_free(&one);
	assert_int_equal(svsel_load(&ctl, "nosuch", &one), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_waves(void **state)
{
	(void)state;
	/* db needs nothing; app needs db and a service nobody enabled; web needs app. */
	service("db", NULL);
	service("app", "db\nnot-enabled\n");
	service("web", "app");
	struct svsel sel;
	assert_int_equal(svsel_load(&ctl, NULL, &sel), 0);
	assert_int_equal(sel.n, 3);
	assert_string_equal(sel.names[0], "app"); /* sorted by name before ordering */
	assert_int_equal(svsel_order(&sel, false), 0);
	assert_string_equal(sel.names[0], "db");
	assert_string_equal(sel.names[1], "app");
	assert_string_equal(sel.names[2], "web");
	assert_int_equal(svsel_wave_end(&sel, 0), 1);
	bool up[3] = {false, true, true};
	assert_string_equal(svsel_waiting_for(&sel, 1, up), "db");
	assert_null(svsel_waiting_for(&sel, 0, up));
	svsel_free(&sel);

	/* stop takes dependents down first */
	assert_int_equal(svsel_load(&ctl, NULL, &sel), 0);
	assert_int_equal(svsel_order(&sel, true), 0);
	assert_string_equal(sel.names[0], "web");
	assert_string_equal(sel.names[2], "db");
	svsel_free(&sel);

	/* one service by name; a name not enabled is ENOENT */
	assert_int_equal(svsel_load(&ctl, "web", &sel), 0);
	assert_int_equal(sel.n, 1);
	char out[PATH_MAX];
	assert_int_equal(svsel_path(&sel, "web", true, out, sizeof out), 0);
	assert_non_null(strstr(out, "/opt/gitlab/service/web/log"));
	char small[8];
	assert_int_equal(svsel_path(&sel, "web", false, small, sizeof small), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	svsel_free(&sel);
	errno = 0;
	assert_int_equal(svsel_load(&ctl, "nosuch", &sel), -1);
	assert_int_equal(errno, ENOENT);
	svsel_free(&sel);
}

/* An after file replaced by a symlink is never followed: ordering fails with ELOOP. */
static void test_after_symlink(void **state)
{
	(void)state;
	char p[PATH_MAX], target[PATH_MAX];
	service("zz", NULL);
	path_of(p, sizeof p, "sv/zz/after");
	path_of(target, sizeof target, "sv/db/after-elsewhere");
	assert_int_equal(symlink(target, p), 0);
	struct svsel sel;
	assert_int_equal(svsel_load(&ctl, NULL, &sel), 0);
	errno = 0;
	assert_int_equal(svsel_order(&sel, false), -1);
	assert_int_equal(errno, ELOOP);
	svsel_free(&sel);
	assert_int_equal(unlink(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_waves),
	    cmocka_unit_test(test_after_symlink),
	    cmocka_unit_test(test_one),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
