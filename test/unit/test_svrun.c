/*
 * svrun: the argv it hands to `gitlab-ctl exec`, output capture (stderr apart when asked),
 * the child's own session and the deadline. ctl.self is
 * a stand-in script here, so what svrun itself does is tested apart from exec's user switch.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "lib/clock.h"
#include "lib/rmtree.h"
#include "proc/svrun.h"

static char top[64];
static struct ctl ctl;
static struct cat_service def = {.name = "h9svc"};
static struct svc svc = {
    .def = &def, .env_dir = "/x/env", .user = "u1", .group = "g1", .home = "/x/home"};

static void script(const char *body)
{
	snprintf(ctl.self, sizeof ctl.self, "%s/self", top);
	FILE *f = fopen(ctl.self, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	assert_int_equal(chmod(ctl.self, 0755), 0);
}

static int setup(void **state)
{
	(void)state;
	strlcpy(top, "/tmp/test_svrun.XXXXXX", sizeof top);
	return mkdtemp(top) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(top, NULL);
}

static void test_argv_and_output(void **state)
{
	(void)state;
	/* Prints its argv (one per line), an error line, and the environment's PATH. */
	script(
	    "for a in \"$@\"; do echo \"[$a]\"; done; echo oops >&2; echo \"PATH=$PATH\"; exit 7");
	struct buf out;
	buf_init(&out);
	char *const argv[] = {"cmd", "arg with space", NULL};
	assert_int_equal(svrun(&ctl, &svc, argv, mono_ms() + 30000, &out, NULL), 7);
	buf_addc(&out, '\0');
	assert_string_equal(out.p, "[exec]\n[--envdir]\n[/x/env]\n[--user]\n[u1]\n[--group]\n[g1]\n"
	                           "[--chdir]\n[/x/home]\n[h9svc]\n[--]\n[cmd]\n[arg with space]\n"
	                           "oops\nPATH=/usr/local/bin:/usr/bin:/bin\n");
	buf_free(&out);
}

static void test_output_capped(void **state)
{
	(void)state;
	/* 200 KiB of output: read to the end (no blocked writer), kept to 64 KiB and a read. */
	script("head -c 204800 /dev/zero | tr '\\0' x");
	struct buf out;
	buf_init(&out);
	char *const argv[] = {NULL};
	assert_int_equal(svrun(&ctl, &svc, argv, mono_ms() + 30000, &out, NULL), 0);
	assert_true(out.len >= 64 * 1024 && out.len < 64 * 1024 + 4096);
	buf_free(&out);
}

static void test_deadline(void **state)
{
	(void)state;
	script("echo started; exec sleep 60");
	struct buf out;
	buf_init(&out);
	char *const argv[] = {NULL};
	errno = 0;
	/* Long enough for the child to print under a loaded CI machine; what is
	 * checked is that the deadline, not the child, ends the run. */
	assert_int_equal(svrun(&ctl, &svc, argv, mono_ms() + 3000, &out, NULL), -1);
	assert_int_equal(errno, ETIMEDOUT);
	buf_addc(&out, '\0');
	assert_string_equal(out.p, "started\n");
	buf_free(&out);

	/* A self that cannot be executed: the child's 127. */
	snprintf(ctl.self, sizeof ctl.self, "%s/missing", top);
	buf_init(&out);
	assert_int_equal(svrun(&ctl, &svc, argv, mono_ms() + 30000, &out, NULL), 127);
	buf_free(&out);
}

static void test_session_and_stderr(void **state)
{
	(void)state;
	/* Leads its own session (pid = sid, field 6 of stat) without a terminal (tty_nr 0). */
	script("echo out; echo err >&2; set -- $(cat /proc/$$/stat); "
	       "[ \"$6\" = \"$1\" ] && [ \"$7\" = 0 ] && echo own-session");
	struct buf out, err;
	buf_init(&out);
	buf_init(&err);
	char *const argv[] = {NULL};
	assert_int_equal(svrun(&ctl, &svc, argv, mono_ms() + 30000, &out, &err), 0);
	assert_string_equal(buf_str(&out), "out\nown-session\n");
	assert_string_equal(buf_str(&err), "err\n");
	buf_free(&out);
	buf_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_argv_and_output),
	    cmocka_unit_test(test_output_capped),
	    cmocka_unit_test(test_deadline),
	    cmocka_unit_test(test_session_and_stderr),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
