/* accounts: lookups, and what accounts_ensure decides before it would run useradd (dry runs). */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"

#include "render/accounts.h"
#include "lib/diag.h"
#include "lib/names.h"

/* Names no system has: the tests never create anything (dry runs or refusals only). */
#define MISSING "gitlabctl-no-such-acct"

struct capture {
	char *buf;
	size_t len;
	FILE *fp;
};

static void capture_open(struct capture *c)
{
	memset(c, 0, sizeof *c);
	c->fp = open_memstream(&c->buf, &c->len);
	assert_non_null(c->fp);
}

static void capture_close(struct capture *c)
{
	assert_int_equal(fclose(c->fp), 0);
}

static void test_existing_accounts(void **state)
{
	(void)state;
	struct capture c;
	struct diags d;
	int created = 0;
	diags_init(&d);
	capture_open(&c);
	d.live = c.fp;
	assert_int_equal(accounts_ensure("root", "root", "/root", true, false, &created, &d), 0);
	capture_close(&c);
	assert_int_equal(created, 0);
	assert_string_equal(c.buf, "");
	free(c.buf);
	diags_free(&d);
}

static void test_missing_not_managed(void **state)
{
	(void)state;
	struct capture c;
	struct diags d;
	int created = 0;
	diags_init(&d);
	capture_open(&c);
	d.live = c.fp;
	assert_int_equal(
	    accounts_ensure(MISSING, "root", "/nonexistent", false, false, &created, &d), -1);
	assert_int_equal(
	    accounts_ensure("root", MISSING, "/nonexistent", false, false, &created, &d), -1);
	capture_close(&c);
	assert_int_equal(created, 0);
	assert_string_equal(c.buf, "");
	assert_int_equal(d.nerr, 2); /* recorded for the command to print, not printed */
	assert_non_null(
	    strstr(d.v[0].msg, "user '" MISSING "' does not exist and manage_accounts"));
	free(c.buf);
	diags_free(&d);
}

/* As root a dry run says what it would create; not root, it refuses. */
static void test_dry_run(void **state)
{
	(void)state;
	struct capture c;
	struct diags d;
	int created = 0;
	diags_init(&d);
	capture_open(&c);
	d.live = c.fp;
	int rc = accounts_ensure(MISSING, MISSING, "/nonexistent", true, true, &created, &d);
	capture_close(&c);
	if (geteuid() == 0) {
		assert_int_equal(rc, 0);
		assert_int_equal(created, 2);
		assert_string_equal(c.buf, "create group " MISSING "\ncreate user " MISSING "\n");
	} else {
		assert_int_equal(rc, -1);
		assert_int_equal(created, 0);
	}
	free(c.buf);
	/* Only the user missing: one line. */
	created = 0;
	capture_open(&c);
	d.live = c.fp;
	rc = accounts_ensure(MISSING, "root", "/nonexistent", true, true, &created, &d);
	capture_close(&c);
	if (geteuid() == 0) {
		assert_int_equal(rc, 0);
		assert_int_equal(created, 1);
		assert_string_equal(c.buf, "create user " MISSING "\n");
	}
	free(c.buf);
	diags_free(&d);
}

/* A name that could pass for an option is refused before any tool runs. */
static void test_unusual_names_refused(void **state)
{
	(void)state;
	struct capture c;
	struct diags d;
	int created = 0;
	diags_init(&d);
	capture_open(&c);
	d.live = c.fp;
	assert_int_equal(accounts_ensure("-o", "root", "/nonexistent", true, true, &created, &d),
	                 -1);
	assert_int_equal(accounts_ensure(MISSING, "a b", "/nonexistent", true, true, &created, &d),
	                 -1);
	capture_close(&c);
	assert_int_equal(created, 0);
	assert_string_equal(c.buf, "");
	free(c.buf);
	diags_free(&d);
}

static void test_lookup_and_names(void **state)
{
	(void)state;
	uid_t uid = 1;
	gid_t gid = 1;
	assert_int_equal(accounts_lookup("root", "root", &uid, &gid), 0);
	assert_int_equal(uid, 0);
	assert_int_equal(gid, 0);
	errno = 0;
	assert_int_equal(accounts_lookup(MISSING, "root", &uid, &gid), -1);
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_int_equal(accounts_lookup("root", MISSING, &uid, &gid), -1);
	assert_int_equal(errno, ENOENT);
	assert_true(name_account_ok("git_lab-1.x"));
	assert_false(name_account_ok(""));
	assert_false(name_account_ok("-x"));
	assert_false(name_account_ok("a/b"));
	assert_false(name_account_ok("a234567890123456789012345678901234"));
}

static int ensure_user_as_nobody(void *arg)
{
	(void)arg;
	int created = 0;
	struct diags d;
	diags_init(&d);
	if (setresgid(65534, 65534, 65534) == -1 || setresuid(65534, 65534, 65534) == -1)
		return 100;
	int rc = accounts_ensure(MISSING, "root", "/nonexistent", true, false, &created, &d);
	diags_flush(&d, stderr); /* where the command prints them */
	return rc == -1 && created == 0 ? 0 : 1;
}

/* Without groupadd (masked in a private mount namespace): refused, nothing created. */
static int ensure_without_groupadd(void *arg)
{
	(void)arg;
	int created = 0;
	struct diags d;
	diags_init(&d);
	if (unshare(CLONE_NEWNS) == -1 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
	    mount("/dev/null", "/usr/sbin/groupadd", NULL, MS_BIND, NULL) == -1)
		return 100;
	int rc = accounts_ensure(MISSING, MISSING, "/nonexistent", true, false, &created, &d);
	diags_flush(&d, stderr); /* where the command prints them */
	return rc == -1 && created == 1 ? 0 : 1;
}

/* useradd refusing (a relative home): its failure is reported, nothing created. */
static int ensure_useradd_fails(void *arg)
{
	(void)arg;
	int created = 0;
	struct diags d;
	diags_init(&d);
	int rc = accounts_ensure(MISSING, "root", "relative/home", true, false, &created, &d);
	diags_flush(&d, stderr); /* where the command prints them */
	return rc == -1 ? 0 : 1;
}

static void test_tool_failures(void **state)
{
	(void)state;
	char err[1024];
	if (geteuid() != 0)
		skip();
	assert_int_equal(in_child(ensure_user_as_nobody, NULL, err, sizeof err), 0);
	assert_non_null(
	    strstr(err, "user '" MISSING "' does not exist (only root creates accounts)"));
	assert_int_equal(in_child(ensure_without_groupadd, NULL, err, sizeof err), 0);
	assert_non_null(strstr(err, "groupadd " MISSING " failed (status -1)"));
	assert_int_equal(in_child(ensure_useradd_fails, NULL, err, sizeof err), 0);
	assert_non_null(strstr(err, "useradd " MISSING " failed (status "));
	assert_null(getpwnam(MISSING));
	assert_null(getgrnam(MISSING));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_existing_accounts), cmocka_unit_test(test_missing_not_managed),
	    cmocka_unit_test(test_dry_run),           cmocka_unit_test(test_unusual_names_refused),
	    cmocka_unit_test(test_lookup_and_names),  cmocka_unit_test(test_tool_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
