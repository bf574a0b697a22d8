/* lcload: libconfig's functions reached through the table beside a config_t, and a library
 * that cannot be loaded reported in words, not by a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "build_config.h"
#include "config/lcload.h"

static void every_function_through_the_table(void **state)
{
	(void)state;
	struct lcconfig lc;
	char why[256] = "";
	assert_int_equal(lcload_init(&lc, GITLAB_CTL_LIBCONFIG_SONAME, why, sizeof why), 0);
	config_t *cfg = &lc.c;
	assert_int_equal(config_read_string(cfg, "i = 7; big = 5000000000L; f = 0.5; b = true;\n"
	                                         "s = \"x\"; l = [1, 2, 3];"),
	                 CONFIG_TRUE);
	const config_setting_t *root = config_root_setting(cfg);
	assert_int_equal(config_setting_length(root), 6);
	assert_int_equal(config_setting_get_int(config_setting_get_elem(root, 0)), 7);
	assert_true(config_setting_get_int64(config_setting_get_elem(root, 1)) == 5000000000LL);
	assert_true(config_setting_get_float(config_setting_get_elem(root, 2)) == 0.5);
	assert_int_equal(config_setting_get_bool(config_setting_get_elem(root, 3)), 1);
	assert_string_equal(config_setting_get_string(config_setting_get_elem(root, 4)), "x");
	const config_setting_t *l = config_setting_get_elem(root, 5);
	assert_int_equal(config_setting_length(l), 3);
	assert_int_equal(config_setting_get_int(config_setting_get_elem(l, 2)), 3);
	config_destroy(cfg);

	/* A syntax error: libconfig's own words and line, through the same table. */
	assert_int_equal(lcload_init(&lc, GITLAB_CTL_LIBCONFIG_SONAME, why, sizeof why), 0);
	assert_int_equal(config_read_string(&lc.c, "a = 1;\nb = ;\n"), CONFIG_FALSE);
	assert_int_equal(config_error_line(&lc.c), 2);
	config_destroy(&lc.c);

	/* From a file. */
	char path[] = "/tmp/test_lcload.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "n = 3;\n", 7), 7);
	close(fd);
	assert_int_equal(lcload_init(&lc, GITLAB_CTL_LIBCONFIG_SONAME, why, sizeof why), 0);
	assert_int_equal(config_read_file(&lc.c, path), CONFIG_TRUE);
	assert_int_equal(
	    config_setting_get_int(config_setting_get_elem(config_root_setting(&lc.c), 0)), 3);
	config_destroy(&lc.c);
	unlink(path);
}

static void a_library_that_cannot_be_loaded(void **state)
{
	(void)state;
#if GITLAB_CTL_LIBCONFIG_DLOPEN
	struct lcconfig lc;
	char why[256] = "";
	assert_int_equal(lcload_init(&lc, "libgitlab-ctl-no-such-library.so.0", why, sizeof why),
	                 -1);
	assert_non_null(strstr(why, "libgitlab-ctl-no-such-library.so.0"));
#else
	skip(); /* linked from its archive: nothing is loaded */
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_function_through_the_table),
	    cmocka_unit_test(a_library_that_cannot_be_loaded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
