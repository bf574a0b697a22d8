/* svtail: the last lines of a failed service's log, and following files across rotation. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

#include "lib/clock.h"
#include "lib/ctl.h"
#include "lib/rmtree.h"
#include "runit/runit.h"
#include "cmd/commands.h"
#include "runit/svtail.h"

static char top[64];

static void path(char *out, size_t len, const char *rel)
{
	tl_path(out, len, top, rel);
}

static void put(const char *rel, const char *data, int flags)
{
	char p[256];
	path(p, sizeof p, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
	assert_true(fd != -1);
	size_t len = strlen(data);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void mkdir_rel(const char *rel)
{
	char p[256];
	path(p, sizeof p, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static int setup(void **state)
{
	(void)state;
	return tl_tmpdir(top, sizeof top, "test_svtail");
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(top, NULL);
}

/* svtail_last into a memory stream; returns its rc, the text in *out (free it). */
static int last(const char *rel, long lines, char **out)
{
	char dir[256];
	size_t len = 0;
	path(dir, sizeof dir, rel);
	FILE *fp = open_memstream(out, &len);
	assert_non_null(fp);
	int rc = svtail_last(dir, lines, fp);
	fclose(fp);
	return rc;
}

static void expect_last(const char *rel, long lines, const char *body)
{
	char *out = NULL, want[4096];
	assert_int_equal(last(rel, lines, &out), 0);
	snprintf(want, sizeof want, "  last lines of %s/%s/current:\n%s", top, rel, body);
	assert_string_equal(out, want);
	free(out);
}

static void expect_none(const char *rel)
{
	char *out = NULL;
	assert_int_equal(last(rel, 10, &out), -1);
	assert_string_equal(out, "");
	free(out);
}

static void test_last_lines(void **state)
{
	(void)state;
	mkdir_rel("l1");
	put("l1/current", "1\n2\n3\n4\n5\n", 0);
	expect_last("l1", 2, "    4\n    5\n");
	/* Fewer lines than asked for: all of them. */
	expect_last("l1", 10, "    1\n    2\n    3\n    4\n    5\n");
	/* No final newline: the partial last line is the last line. */
	mkdir_rel("l2");
	put("l2/current", "a\nb\nc", 0);
	expect_last("l2", 2, "    b\n    c\n");
	/* Service output is untrusted: control bytes (an escape sequence, CR) are shown escaped. */
	mkdir_rel("l3");
	put("l3/current", "ok\tfine\n\033[2Jclear\r\n", 0);
	expect_last("l3", 5, "    ok\tfine\n    \\x1b[2Jclear\\x0d\n");
}

/* A log larger than the window: only its end is read, the cut first line included. */
static void test_last_long(void **state)
{
	(void)state;
	mkdir_rel("big");
	char *line = malloc(100 * 1024 + 2);
	assert_non_null(line);
	memset(line, 'x', 100 * 1024);
	strlcpy(line + 100 * 1024, "\n", 2);
	put("big/current", line, 0);
	put("big/current", "tail-1\ntail-2\n", O_APPEND);
	free(line);
	expect_last("big", 2, "    tail-1\n    tail-2\n");

	/* Asking for more than the window holds: the window, starting mid-line. */
	char *out = NULL;
	assert_int_equal(last("big", 100, &out), 0);
	const char *first = strchr(out, '\n') + 1;
	assert_string_equal(first + strlen(first) - strlen("tail-1\n    tail-2\n"),
	                    "tail-1\n    tail-2\n");
	/* 64 KiB of it: the x run is shorter than the 100 KiB line. */
	size_t xs = strspn(first + 4, "x");
	assert_true(xs > 60 * 1024 && xs < 64 * 1024);
	free(out);
}

static void test_last_unsafe_or_missing(void **state)
{
	(void)state;
	char p[256], t[256];
	/* No directory, no file, an empty file. */
	expect_none("nodir");
	mkdir_rel("empty");
	expect_none("empty");
	put("empty/current", "", 0);
	expect_none("empty");
	/* current is a link (to a readable secret): never followed. */
	mkdir_rel("link");
	put("secret", "password\n", 0);
	path(p, sizeof p, "link/current");
	path(t, sizeof t, "secret");
	assert_int_equal(symlink(t, p), 0);
	expect_none("link");
	/* The log directory itself is a link: not followed either. */
	mkdir_rel("real");
	put("real/current", "hidden\n", 0);
	path(p, sizeof p, "dirlink");
	path(t, sizeof t, "real");
	assert_int_equal(symlink(t, p), 0);
	expect_none("dirlink");
	expect_last("real", 1, "    hidden\n");
	/* Not a regular file: a fifo would block a read, a directory cannot be read. */
	mkdir_rel("fifo");
	path(p, sizeof p, "fifo/current");
	assert_int_equal(mkfifo(p, 0600), 0);
	expect_none("fifo");
	mkdir_rel("dir");
	mkdir_rel("dir/current");
	expect_none("dir");
}

static void write_status(const char *svdir, enum sv_state state, time_t since)
{
	unsigned char b[SV_STATUS_LEN] = {0};
	uint64_t tai = (uint64_t)since + (1ULL << 62) + 10ULL;
	for (int i = 7; i >= 0; i--, tai >>= 8)
		b[i] = (unsigned char)(tai & 0xff);
	b[12] = 0x39; /* pid 12345, little-endian */
	b[13] = 0x30;
	b[17] = 'u';
	b[19] = (unsigned char)state;
	char p[512];
	snprintf(p, sizeof p, "%s/supervise", svdir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/supervise/status", svdir);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd != -1);
	assert_int_equal(write(fd, b, sizeof b), (ssize_t)sizeof b);
	close(fd);
}

/* Services not running steadily get their last lines shown; a steady one does not. */
static void test_failed(void **state)
{
	(void)state;
	char root[256], d[512];
	path(root, sizeof root, "root");
	assert_int_equal(mkdir(root, 0755), 0);
	struct ctl ctl;
	assert_int_equal(ctl_init(&ctl, root, NULL), 0);
	/* Names outside the catalog: the default log directory under the root. */
	const char *svcs[] = {"h9down", "h9steady", "h9flap", "h9nolog"};
	mkdir_rel("root/opt");
	mkdir_rel("root/opt/gitlab");
	mkdir_rel("root/opt/gitlab/sv");
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(ctl_sv_dir(&ctl, d, sizeof d, svcs[i]), 0);
		assert_int_equal(mkdir(d, 0755), 0);
	}
	assert_int_equal(ctl_sv_dir(&ctl, d, sizeof d, "h9steady"), 0);
	write_status(d, SV_RUN, time(NULL) - 100);
	assert_int_equal(ctl_sv_dir(&ctl, d, sizeof d, "h9flap"), 0);
	write_status(d, SV_RUN, time(NULL) + 5); /* (re)started just now */
	assert_int_equal(ctl_sv_dir(&ctl, d, sizeof d, "h9down"), 0);
	write_status(d, SV_DOWN, time(NULL) - 100);

	const char *logdirs[] = {"var", "var/log", "var/log/gitlab"};
	for (size_t i = 0; i < 3; i++) {
		char rel[64];
		snprintf(rel, sizeof rel, "root/%s", logdirs[i]);
		mkdir_rel(rel);
	}
	for (size_t i = 0; i < 3; i++) {
		char rel[128], body[64];
		snprintf(rel, sizeof rel, "root/var/log/gitlab/%s", svcs[i]);
		mkdir_rel(rel);
		snprintf(rel, sizeof rel, "root/var/log/gitlab/%s/current", svcs[i]);
		snprintf(body, sizeof body, "%s said goodbye\n", svcs[i]);
		put(rel, body, 0);
	}

	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);
	assert_non_null(fp);
	cmd_tail_failed(&ctl, (char **)svcs, 4, fp);
	fclose(fp);
	assert_non_null(strstr(out, "    h9down said goodbye\n"));
	assert_non_null(strstr(out, "    h9flap said goodbye\n"));
	assert_null(strstr(out, "h9steady"));
	assert_null(strstr(out, "h9nolog"));
	free(out);
}

/* Run fn with stdout and stderr going to files; returns fn's result. */
static int redirected(int out, int err, int (*fn)(void *), void *arg)
{
	fflush(stdout);
	fflush(stderr);
	int so = dup(STDOUT_FILENO), se = dup(STDERR_FILENO);
	assert_true(so != -1 && se != -1);
	assert_true(dup2(out, STDOUT_FILENO) != -1 && dup2(err, STDERR_FILENO) != -1);
	int rc = fn(arg);
	fflush(stderr);
	dup2(so, STDOUT_FILENO);
	dup2(se, STDERR_FILENO);
	close(so);
	close(se);
	return rc;
}

static char *slurp(const char *rel)
{
	char p[256];
	path(p, sizeof p, rel);
	return tl_slurp(p);
}

static int open_capture(const char *rel)
{
	char p[256];
	path(p, sizeof p, rel);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd != -1);
	return fd;
}

struct files_args {
	char **paths;
	size_t n;
	long lines, rounds;
};

static int run_files(void *arg)
{
	const struct files_args *a = arg;
	return svtail_files(a->paths, a->n, a->lines, a->rounds);
}

/* Several files: the last lines of each under a header; a missing one is waited for. */
static void test_files_headers(void **state)
{
	(void)state;
	char a[256], b[256], c[256];
	mkdir_rel("h");
	put("h/a", "a1\na2\na3\n", 0);
	put("h/b", "b1\n", 0);
	path(a, sizeof a, "h/a");
	path(b, sizeof b, "h/b");
	path(c, sizeof c, "h/missing");
	char *paths[] = {a, b, c};
	struct files_args args = {paths, 3, 2, 1};
	int out = open_capture("h.out"), err = open_capture("h.err");
	assert_int_equal(redirected(out, err, run_files, &args), 0);
	close(out);
	close(err);
	char want[1024];
	snprintf(want, sizeof want, "==> %s <==\na2\na3\n\n==> %s <==\nb1\n", a, b);
	char *got = slurp("h.out");
	assert_string_equal(got, want);
	free(got);
	got = slurp("h.err");
	assert_non_null(strstr(got, "h/missing: No such file or directory; waiting for it"));
	free(got);

	/* lines == 0: nothing old, only what comes later. */
	struct files_args zero = {paths, 1, 0, 1};
	out = open_capture("h.out");
	err = open_capture("h.err");
	assert_int_equal(redirected(out, err, run_files, &zero), 0);
	close(out);
	close(err);
	got = slurp("h.out");
	assert_string_equal(got, "");
	free(got);
}

/* Poll (bounded) until the captured output contains s. */
static bool wait_output(const char *rel, const char *s)
{
	for (int i = 0; i < 1000; i++) {
		char *got = slurp(rel);
		bool found = strstr(got, s) != NULL;
		free(got);
		if (found)
			return true;
		sleep_ms(10);
	}
	return false;
}

/*
 * Following one file in a child while it grows, is rotated the way svlogd does it,
 * truncated, removed and created again. The child stops after a number of wakeups,
 * which the test causes at the end by writing another file in the watched directory.
 */
static void test_follow_rotation(void **state)
{
	(void)state;
	char cur[256], old[256];
	mkdir_rel("f");
	put("f/current", "one\ntwo\nthree\n", 0);
	path(cur, sizeof cur, "f/current");
	path(old, sizeof old, "f/@old.s");
	int out = open_capture("f.out"), err = open_capture("f.err");
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		char *paths[] = {cur};
		if (dup2(out, STDOUT_FILENO) == -1 || dup2(err, STDERR_FILENO) == -1)
			_exit(99);
		exit(svtail_files(paths, 1, 2, 200));
	}
	close(out);
	close(err);
	bool ok = wait_output("f.out", "two\nthree\n");
	put("f/current", "four\n", O_APPEND);
	ok = ok && wait_output("f.out", "three\nfour\n");
	/* Rotation: current is renamed, its writer finishes there, a new current appears. */
	int ofd = open(cur, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_true(ofd != -1);
	assert_int_equal(rename(cur, old), 0);
	assert_int_equal(write(ofd, "late\n", 5), 5);
	close(ofd);
	put("f/current", "five\n", O_EXCL);
	ok = ok && wait_output("f.out", "four\nlate\nfive\n");
	ok = ok && wait_output("f.err", "following new file");
	/* Truncated in place: read from the start again. */
	put("f/current", "six\n", O_TRUNC);
	ok = ok && wait_output("f.out", "five\nsix\n");
	/* Removed and created again: the new file from its start. */
	assert_int_equal(unlink(cur), 0);
	put("f/current", "seven\n", O_EXCL);
	ok = ok && wait_output("f.out", "six\nseven\n");

	int st = 0;
	pid_t w = 0;
	for (int i = 0; i < 5000 && (w = waitpid(pid, &st, WNOHANG)) == 0; i++) {
		put("f/poke", "x", O_APPEND);
		sleep_ms(2);
	}
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	assert_true(ok);
	assert_int_equal(w, pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_last_lines),
	    cmocka_unit_test(test_last_long),
	    cmocka_unit_test(test_last_unsafe_or_missing),
	    cmocka_unit_test(test_failed),
	    cmocka_unit_test(test_files_headers),
	    cmocka_unit_test(test_follow_rotation),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
