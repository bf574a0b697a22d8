/*
 * svwait: each wait ends at its deadline with a message that says what was
 * last seen, recorded for the caller to print (nothing on stderr); a runsv
 * that is not there counts as gone.
 */
#include <fcntl.h>
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

#include "lib/clock.h"
#include "lib/ctl.h"
#include "lib/diag.h"
#include "lib/rmtree.h"
#include "runit/svwait.h"
#include "runit/svwatch.h"

static char root[64], dir[PATH_MAX], errfile[PATH_MAX];
static int saved = -1;

static int setup(void **state)
{
	(void)state;
	strlcpy(root, "/tmp/test_svwait.XXXXXX", sizeof root);
	if (mkdtemp(root) == NULL)
		return -1;
	snprintf(dir, sizeof dir, "%s/sv/fake", root); /* never created: no runsv */
	snprintf(errfile, sizeof errfile, "%s/stderr", root);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(root, NULL);
}

static void capture(void)
{
	int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	close(fd);
}

/* What went to stderr since capture(). */
static const char *captured(void)
{
	static char buf[4096];
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	FILE *fp = fopen(errfile, "r");
	assert_non_null(fp);
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static void test_status_text_without_runsv(void **state)
{
	(void)state;
	char buf[256];
	svwait_status_text(dir, "fake", buf, sizeof buf);
	assert_true(strncmp(buf, "no status: ", 11) == 0);
}

static void test_gone_when_absent(void **state)
{
	(void)state;
	struct diags d;
	diags_init(&d);
	assert_int_equal(svwait_gone(dir, "fake", mono_ms() - 1, &d), 0);
	assert_int_equal(d.n, 0);
}

static void test_run_deadline(void **state)
{
	(void)state;
	char logdir[PATH_MAX];
	pid_t pid = 0;
	snprintf(logdir, sizeof logdir, "%s/log", root);
	struct diags d;
	diags_init(&d);
	capture();
	int rc = svwait_run(dir, "fake", logdir, 0, mono_ms() - 1, "did not start", &pid, &d);
	assert_string_equal(captured(), "");
	assert_int_equal(rc, -1);
	assert_int_equal(d.nerr, 1);
	assert_non_null(
	    strstr(d.v[0].msg, "fake: did not start within SVWAIT (last status: no status"));
	assert_non_null(strstr(d.v[0].msg, "see "));
	diags_free(&d);
}

static void test_down_deadline(void **state)
{
	(void)state;
	struct diags d;
	diags_init(&d);
	capture();
	int rc = svwait_down(dir, "fake", mono_ms() - 1, &d);
	assert_string_equal(captured(), "");
	assert_int_equal(rc, -1);
	assert_int_equal(d.nerr, 1);
	assert_non_null(strstr(d.v[0].msg, "fake: did not stop within SVWAIT (no status"));
	diags_free(&d);
}

static void test_supervised_without_runsvdir(void **state)
{
	(void)state;
	struct ctl ctl;
	int nudges = -1;
	assert_int_equal(ctl_init(&ctl, root, NULL), 0);
	struct diags d;
	diags_init(&d);
	capture();
	int rc =
	    svwait_supervised(&ctl, dir, "service/fake", "fake", false, mono_ms() - 1, &nudges, &d);
	assert_string_equal(captured(), "");
	assert_int_equal(rc, -1);
	assert_int_equal(nudges, 0);
	assert_int_equal(d.nerr, 1);
	assert_non_null(strstr(d.v[0].msg, "fake: runsvdir is not running for this root"));
	diags_free(&d);
}

/* touch DIR/NAME as a writer does: open for writing, close. */
static void open_write(const char *d, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", d, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
}

/*
 * A waiter's own writes to supervise/ok and supervise/control do not end its wait (they
 * made every wait spin); runsv's rename of a new status does, at once.
 */
static void test_watch_ignores_own_writes(void **state)
{
	(void)state;
	char sup[PATH_MAX - 16], tmp[PATH_MAX], st[PATH_MAX];
	snprintf(sup, sizeof sup, "%s/svc/supervise", root);
	snprintf(tmp, sizeof tmp, "%s/status.new", sup);
	snprintf(st, sizeof st, "%s/status", sup);
	char svc[PATH_MAX];
	snprintf(svc, sizeof svc, "%s/svc", root);
	assert_int_equal(mkdir(svc, 0755), 0);
	assert_int_equal(mkdir(sup, 0755), 0);
	open_write(sup, "ok"); /* runsv's, made before anyone waits */
	open_write(sup, "control");
	struct svwatch w;
	svwatch_open(&w);
	svwatch_add(&w, svc);
	if (w.fd == -1)
		skip(); /* no inotify here */
	open_write(sup, "ok");
	open_write(sup, "control");
	long t0 = mono_ms();
	svwatch_wait(&w, 300);
	assert_true(mono_ms() - t0 >= 290);
	open_write(sup, "status.new");
	assert_int_equal(rename(tmp, st), 0);
	t0 = mono_ms();
	svwatch_wait(&w, 5000);
	assert_true(mono_ms() - t0 < 2000);
	svwatch_close(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_status_text_without_runsv, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gone_when_absent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_run_deadline, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_down_deadline, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_supervised_without_runsvdir, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_watch_ignores_own_writes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
