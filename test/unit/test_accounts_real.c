/*
 * accounts: creating and removing a real system account and group (unique names, as root),
 * and the accounts remove keeps. Parallel tests may hold /etc/passwd's lock for a moment:
 * a failed useradd/userdel is retried a few times rather than failing the test.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "render/accounts.h"
#include "lib/diag.h"
#include "lib/clock.h"

static char name[32], gname[32], home[64];

static FILE *sink(char **buf, size_t *len)
{
	FILE *fp = open_memstream(buf, len);
	assert_non_null(fp);
	return fp;
}

static int remove_account(char **text)
{
	int rc = -1;
	for (int i = 0; i < 10 && rc != 0; i++) {
		size_t len = 0;
		free(*text);
		*text = NULL;
		FILE *fp = sink(text, &len);
		int removed = 0;
		struct diags d;
		diags_init(&d);
		rc = accounts_remove(name, gname, home, fp, &removed, &d);
		diags_flush(&d, stderr);
		fclose(fp);
		if (rc != 0)
			sleep_ms(200);
	}
	return rc;
}

static int setup(void **state)
{
	(void)state;
	snprintf(name, sizeof name, "h9acct%ld", (long)getpid());
	/* Not the user's name: userdel would take a same-named group along (USERGROUPS_ENAB). */
	snprintf(gname, sizeof gname, "h9grp%ld", (long)getpid());
	snprintf(home, sizeof home, "/nonexistent/h9acct%ld", (long)getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char *text = NULL;
	if (getpwnam(name) != NULL || getgrnam(gname) != NULL)
		remove_account(&text);
	free(text);
	return 0;
}

static void test_create_and_remove(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	assert_null(getpwnam(name));
	assert_null(getgrnam(gname));
	int rc = -1, created = 0;
	char *text = NULL;
	for (int i = 0; i < 10 && rc != 0; i++) {
		size_t len = 0;
		free(text);
		text = NULL;
		FILE *fp = sink(&text, &len);
		created = 0;
		struct diags d;
		diags_init(&d);
		d.live = fp;
		rc = accounts_ensure(name, gname, home, true, false, &created, &d);
		diags_flush(&d, stderr);
		fclose(fp);
		if (rc != 0)
			sleep_ms(200);
	}
	assert_int_equal(rc, 0);
	const struct passwd *pw = getpwnam(name);
	assert_non_null(pw);
	assert_string_equal(pw->pw_dir, home);
	assert_true(pw->pw_uid > 0 && pw->pw_uid < 1000); /* a system account */
	const struct group *gr = getgrnam(gname);
	assert_non_null(gr);
	assert_int_equal(pw->pw_gid, gr->gr_gid);
	uid_t uid;
	gid_t gid;
	assert_int_equal(accounts_lookup(name, gname, &uid, &gid), 0);
	assert_int_equal(gid, gr->gr_gid);
	/* Both were new, unless a retry found the group made by an earlier attempt. */
	assert_non_null(strstr(text, "create user "));
	assert_true(created >= 1);
	free(text);
	text = NULL;

	/* Present now: nothing to do. */
	struct diags nod; /* stays empty: nothing fails */
	diags_init(&nod);
	size_t len = 0;
	FILE *fp = sink(&text, &len);
	created = 0;
	nod.live = fp;
	assert_int_equal(accounts_ensure(name, gname, home, true, false, &created, &nod), 0);
	fclose(fp);
	assert_int_equal(created, 0);
	assert_string_equal(text, "");
	free(text);
	text = NULL;

	/* Another home than reconfigure gave it: not reconfigure's to remove. */
	fp = sink(&text, &len);
	int removed = 0;
	assert_int_equal(accounts_remove(name, gname, "/elsewhere", fp, &removed, &nod), 0);
	fclose(fp);
	assert_int_equal(removed, 0);
	assert_non_null(strstr(text, "keep user "));
	assert_non_null(getpwnam(name));
	free(text);
	text = NULL;

	assert_int_equal(remove_account(&text), 0);
	char want[128];
	snprintf(want, sizeof want, "remove user %s\nremove group %s\n", name, gname);
	assert_string_equal(text, want);
	free(text);
	assert_null(getpwnam(name));
	assert_null(getgrnam(gname));
	assert_int_equal(nod.n, 0);
}

static void test_remove_keeps(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	int removed = 0;
	struct diags nod;
	diags_init(&nod);
	FILE *fp = sink(&text, &len);
	/* root is never removed; an account that does not exist is not an error. */
	assert_int_equal(accounts_remove("root", "root", "/root", fp, &removed, &nod), 0);
	assert_int_equal(accounts_remove(name, gname, home, fp, &removed, &nod), 0);
	fclose(fp);
	assert_int_equal(removed, 0);
	assert_string_equal(text,
	                    "keep user root: not created by reconfigure (uid 0, home /root)\n");
	free(text);
	assert_int_equal(nod.n, 0);
	assert_non_null(getpwnam("root"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_and_remove),
	    cmocka_unit_test(test_remove_keeps),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
