/* ctl: root prefixing, the derived paths, the data dir lookup and the hints. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "build_config.h"
#include "lib/ctl.h"

static char top[64];

static int setup(void **state)
{
	(void)state;
	strlcpy(top, "/tmp/test_ctl.XXXXXX", sizeof top);
	return mkdtemp(top) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	char p[128];
	snprintf(p, sizeof p, "%s/data/sv", top);
	rmdir(p);
	snprintf(p, sizeof p, "%s/data", top);
	rmdir(p);
	return rmdir(top);
}

static void test_paths_no_root(void **state)
{
	(void)state;
	struct ctl ctl;
	char buf[PATH_MAX];
	assert_int_equal(ctl_init(&ctl, NULL, NULL), 0);
	assert_string_equal(ctl.root, "");
	assert_string_equal(ctl.config, GITLAB_CTL_CONFIG_FILE);
	assert_int_equal(ctl_sv_dir(&ctl, buf, sizeof buf, "redis"), 0);
	assert_string_equal(buf, GITLAB_CTL_INSTALL_DIR "/sv/redis");
	assert_int_equal(ctl_service_dir(&ctl, buf, sizeof buf), 0);
	assert_string_equal(buf, GITLAB_CTL_INSTALL_DIR "/service");
	assert_int_equal(ctl_var_dir(&ctl, buf, sizeof buf), 0);
	assert_string_equal(buf, GITLAB_CTL_INSTALL_DIR "/var");
	/* "/" as the root is no root at all. */
	assert_int_equal(ctl_init(&ctl, "/", NULL), 0);
	assert_string_equal(ctl.root, "");
	assert_int_equal(ctl_init(&ctl, "", NULL), 0);
	assert_string_equal(ctl.root, "");
	/* self is this binary, absolute. */
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_string_equal(ctl.self, exe);
}

static void test_paths_root(void **state)
{
	(void)state;
	struct ctl ctl;
	char buf[PATH_MAX], want[PATH_MAX + 64], real[PATH_MAX];
	assert_non_null(realpath(top, real));
	/* A relative root with a trailing slash and a dot-dot: canonical and absolute. */
	char cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir("/tmp"), 0);
	char rel[128];
	snprintf(rel, sizeof rel, "../tmp/%s/", top + strlen("/tmp/"));
	assert_int_equal(ctl_init(&ctl, rel, NULL), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_string_equal(ctl.root, real);
	snprintf(want, sizeof want, "%s%s", real, GITLAB_CTL_CONFIG_FILE);
	assert_string_equal(ctl.config, want);
	assert_int_equal(ctl_sv_dir(&ctl, buf, sizeof buf, "sidekiq"), 0);
	snprintf(want, sizeof want, "%s%s/sv/sidekiq", real, GITLAB_CTL_INSTALL_DIR);
	assert_string_equal(buf, want);
	/* Further components are joined with exactly one '/'. */
	assert_int_equal(
	    ctl_path(&ctl, buf, sizeof buf, "/var/log", "a", "/b", "c/", "d", (char *)NULL), 0);
	snprintf(want, sizeof want, "%s/var/log/a/b/c/d", real);
	assert_string_equal(buf, want);
	/* -c FILE is taken as given, not prefixed. */
	assert_int_equal(ctl_init(&ctl, top, "rel/gitlab.rb"), 0);
	assert_string_equal(ctl.config, "rel/gitlab.rb");
	/* A root that does not exist is an error, not an empty root. */
	char missing[128];
	snprintf(missing, sizeof missing, "%s/no-such-root", top);
	errno = 0;
	assert_int_equal(ctl_init(&ctl, missing, NULL), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_too_long(void **state)
{
	(void)state;
	struct ctl ctl;
	assert_int_equal(ctl_init(&ctl, top, NULL), 0);
	char small[16];
	errno = 0;
	assert_int_equal(ctl_path(&ctl, small, sizeof small, "/opt", (char *)NULL), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	/* Fits the root, not the separator or the component. */
	size_t rl = strlen(ctl.root);
	char *buf = malloc(rl + 8);
	assert_non_null(buf);
	errno = 0;
	assert_int_equal(ctl_path(&ctl, buf, rl + 1, "x", (char *)NULL), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	errno = 0;
	assert_int_equal(ctl_path(&ctl, buf, rl + 3, "/abc", (char *)NULL), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	assert_int_equal(ctl_path(&ctl, buf, rl + 5, "/abc", (char *)NULL), 0);
	free(buf);
	/* A -c path longer than PATH_MAX. */
	char *longcfg = malloc(PATH_MAX + 10);
	assert_non_null(longcfg);
	memset(longcfg, 'c', PATH_MAX + 9);
	longcfg[PATH_MAX + 9] = '\0';
	errno = 0;
	assert_int_equal(ctl_init(&ctl, NULL, longcfg), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	free(longcfg);
}

static void test_datadir(void **state)
{
	(void)state;
	struct ctl ctl;
	char data[128], sv[128];
	snprintf(data, sizeof data, "%s/data", top);
	snprintf(sv, sizeof sv, "%s/data/sv", top);
	assert_int_equal(mkdir(data, 0755), 0);

	const char *saved = getenv("GITLAB_CTL_DATADIR");
	char *keep = saved ? strdup(saved) : NULL;
	/* The environment wins, found or not; the hint names where it looked. */
	setenv("GITLAB_CTL_DATADIR", data, 1);
	assert_int_equal(ctl_init(&ctl, NULL, NULL), 0);
	assert_string_equal(ctl.datadir, data);
	assert_false(ctl_catalog_found(&ctl));
	char *hint = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&hint, &len);
	assert_non_null(fp);
	ctl_catalog_hint(&ctl, fp);
	fclose(fp);
	char want[256];
	snprintf(want, sizeof want, "no service catalog at %s/sv:", data);
	assert_non_null(strstr(hint, want));
	free(hint);
	assert_int_equal(mkdir(sv, 0755), 0);
	assert_true(ctl_catalog_found(&ctl));

	/*
	 * Unset (or empty): next to the binary. The unit tests are built beside gitlab-ctl,
	 * where CMake makes the gitlab-ctl-data link; without one, the compiled-in path.
	 */
	setenv("GITLAB_CTL_DATADIR", "", 1);
	assert_int_equal(ctl_init(&ctl, NULL, NULL), 0);
	char link[PATH_MAX];
	char self[PATH_MAX];
	strlcpy(self, ctl.self, sizeof self);
	snprintf(link, sizeof link, "%s/gitlab-ctl-data", dirname(self));
	char svd[PATH_MAX + 8];
	struct stat st;
	snprintf(svd, sizeof svd, "%s/sv", link);
	if (stat(svd, &st) == 0) {
		char real[PATH_MAX];
		assert_non_null(realpath(link, real));
		assert_string_equal(ctl.datadir, real);
		assert_true(ctl_catalog_found(&ctl));
	} else {
		assert_string_equal(ctl.datadir, GITLAB_CTL_PKGDATADIR);
	}
	if (keep != NULL) {
		setenv("GITLAB_CTL_DATADIR", keep, 1);
		free(keep);
	} else {
		unsetenv("GITLAB_CTL_DATADIR");
	}
}

/* status's init: the root (canonical) and a given config only; the rest stays "". */
static void test_init_root(void **state)
{
	(void)state;
	static struct ctl ctl; /* zeroed, as main's */
	char real[PATH_MAX], rel[128];
	assert_non_null(realpath(top, real));
	snprintf(rel, sizeof rel, "%s/./", top);
	assert_int_equal(ctl_init_root(&ctl, rel, NULL), 0);
	assert_string_equal(ctl.root, real);
	assert_string_equal(ctl.config, "");
	assert_string_equal(ctl.datadir, "");
	assert_string_equal(ctl.self, "");
	char buf[PATH_MAX], want[PATH_MAX + 64];
	assert_int_equal(ctl_service_dir(&ctl, buf, sizeof buf), 0);
	snprintf(want, sizeof want, "%s" GITLAB_CTL_INSTALL_DIR "/service", real);
	assert_string_equal(buf, want);
	assert_int_equal(ctl_init_root(&ctl, "/", "/x/gitlab.rb"), 0);
	assert_string_equal(ctl.root, "");
	assert_string_equal(ctl.config, "/x/gitlab.rb");
	snprintf(rel, sizeof rel, "%s/nosuch", top);
	assert_int_equal(ctl_init_root(&ctl, rel, NULL), -1);
	assert_int_equal(errno, ENOENT);
	assert_string_equal(ctl.root, "");
}

static void test_root_hint(void **state)
{
	(void)state;
	struct ctl ctl;
	assert_int_equal(ctl_init(&ctl, NULL, NULL), 0);
	const char *hint = " (run as root or use --root DIR)";
	/* Only for permission errors on the system paths, by someone who is not root. */
	assert_string_equal(ctl_root_hint(&ctl, EACCES), geteuid() != 0 ? hint : "");
	assert_string_equal(ctl_root_hint(&ctl, EROFS), geteuid() != 0 ? hint : "");
	assert_string_equal(ctl_root_hint(&ctl, ENOENT), "");
	assert_int_equal(ctl_init(&ctl, top, NULL), 0);
	assert_string_equal(ctl_root_hint(&ctl, EACCES), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_paths_no_root), cmocka_unit_test(test_paths_root),
	    cmocka_unit_test(test_too_long),      cmocka_unit_test(test_datadir),
	    cmocka_unit_test(test_root_hint),     cmocka_unit_test(test_init_root),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
