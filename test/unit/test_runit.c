/*
 * Unit tests of the runit protocol module against status files captured from
 * the real runsv in every state (test/fixtures/gen-runit-status.sh): decoding,
 * and formatting compared byte for byte with what runit's sv printed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/clock.h"
#include "runit/runit.h"
#include "lib/spawn.h"

#define FIXTURES SRCDIR "/test/fixtures/runit-status"

static const char *const states[] = {
    "run",       "down",     "normally-down", "normally-down-run",  "paused",
    "want-down", "got-term", "want-up",       "want-down-got-term", "finish",
};

struct expect {
	long state, pid, paused, got_term, normally_up;
	char want;
	long long now;
	char sv[256];
};

static void read_expect(const char *name, struct expect *e)
{
	char path[PATH_MAX], line[512];
	snprintf(path, sizeof path, "%s/%s.txt", FIXTURES, name);
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	memset(e, 0, sizeof *e);
	while (fgets(line, sizeof line, fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		char *v = strchr(line, '=');
		assert_non_null(v);
		*v++ = '\0';
		if (strcmp(line, "state") == 0)
			e->state = atol(v);
		else if (strcmp(line, "pid") == 0)
			e->pid = atol(v);
		else if (strcmp(line, "paused") == 0)
			e->paused = atol(v);
		else if (strcmp(line, "got_term") == 0)
			e->got_term = atol(v);
		else if (strcmp(line, "normally_up") == 0)
			e->normally_up = atol(v);
		else if (strcmp(line, "want") == 0)
			e->want = v[0];
		else if (strcmp(line, "now") == 0)
			e->now = atoll(v);
		else if (strcmp(line, "sv") == 0)
			strlcpy(e->sv, v, sizeof e->sv);
	}
	fclose(fp);
}

static void read_bin(const char *name, unsigned char buf[SV_STATUS_LEN])
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s.bin", FIXTURES, name);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, SV_STATUS_LEN), SV_STATUS_LEN);
	close(fd);
}

static void test_fixtures_decode_and_format(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
		unsigned char buf[SV_STATUS_LEN];
		struct expect e;
		struct sv_status st;
		char line[256];

		read_expect(states[i], &e);
		read_bin(states[i], buf);
		assert_int_equal(sv_status_decode(buf, &st), 0);
		assert_int_equal(st.state, e.state);
		assert_int_equal(st.pid, e.pid);
		assert_int_equal(st.paused, e.paused);
		assert_int_equal(st.got_term, e.got_term);
		assert_int_equal(st.want, e.want);
		/* runit's TAI64 label: 2^62 + 10 + Unix seconds, within a minute of capture */
		assert_true(st.tai > (1ULL << 62));
		assert_true(sv_status_age(&st, (time_t)e.now) < 60);
		sv_status_format(line, sizeof line, states[i], &st, e.normally_up != 0,
		                 (time_t)e.now);
		if (strcmp(line, e.sv) != 0)
			fail_msg("%s: ours \"%s\", sv \"%s\"", states[i], line, e.sv);
	}
}

static void test_specific_states(void **state)
{
	(void)state;
	unsigned char buf[SV_STATUS_LEN];
	struct sv_status st;

	read_bin("finish", buf);
	assert_int_equal(sv_status_decode(buf, &st), 0);
	assert_int_equal(st.state, SV_FINISH);
	assert_true(st.pid != 0);

	read_bin("want-down-got-term", buf);
	assert_int_equal(sv_status_decode(buf, &st), 0);
	assert_int_equal(st.want, 'd');
	assert_true(st.got_term);
	assert_int_equal(st.state, SV_RUN);

	read_bin("want-up", buf);
	assert_int_equal(sv_status_decode(buf, &st), 0);
	assert_int_equal(st.pid, 0);
	assert_int_equal(st.want, 'u');
	assert_int_equal(st.state, SV_DOWN);
}

static void test_decode_rejects(void **state)
{
	(void)state;
	unsigned char buf[SV_STATUS_LEN];
	struct sv_status st;

	read_bin("run", buf);
	buf[19] = 3; /* no such state */
	assert_int_equal(sv_status_decode(buf, &st), -1);
	read_bin("run", buf);
	buf[17] = 'x'; /* want is u, d (or 0 from daemontools) */
	assert_int_equal(sv_status_decode(buf, &st), -1);
	read_bin("run", buf);
	buf[8] = 0xff; /* nanoseconds >= 10^9 */
	assert_int_equal(sv_status_decode(buf, &st), -1);
}

static void test_pid_little_endian(void **state)
{
	(void)state;
	unsigned char buf[SV_STATUS_LEN] = {0x40, 0, 0, 0, 0, 0, 0, 10};
	struct sv_status st;
	buf[12] = 0x78;
	buf[13] = 0x56;
	buf[14] = 0x34;
	buf[15] = 0x02;
	buf[17] = 'u';
	buf[19] = SV_RUN;
	assert_int_equal(sv_status_decode(buf, &st), 0);
	assert_int_equal(st.pid, 0x02345678);
	/* TAI64 0x400000000000000a is the Unix epoch for runit */
	assert_int_equal(sv_status_age(&st, 100), 100);
	/* a stamp in the future (clock stepped back) is age 0, as in sv */
	assert_int_equal(sv_status_age(&st, 0), 0);
	struct timespec t = {0, 0};
	assert_true(sv_status_since(&st, &t));
	t.tv_sec = 1;
	assert_false(sv_status_since(&st, &t));
}

/* Up without a check: the same pid for a second since runsv's stamp, never less. */
static void test_up_settled(void **state)
{
	(void)state;
	unsigned char buf[SV_STATUS_LEN] = {0x40, 0, 0, 0, 0, 0, 0, 10 + 100};
	struct sv_status st;
	buf[12] = 7;
	buf[19] = SV_RUN;
	assert_int_equal(sv_status_decode(buf, &st), 0); /* started at Unix time 100.0 */
	struct timespec now = {100, 999999999};
	assert_false(sv_up_settled(&st, &now));
	now = (struct timespec){101, 1};
	assert_true(sv_up_settled(&st, &now));
	buf[19] = SV_DOWN; /* down since then: never up */
	buf[12] = 0;
	assert_int_equal(sv_status_decode(buf, &st), 0);
	assert_false(sv_up_settled(&st, &now));
}

static void test_format_flags(void **state)
{
	(void)state;
	struct sv_status st = {.tai = (1ULL << 62) + 10 + 1000, .pid = 42, .state = SV_RUN};
	char line[256];

	st.want = 'd';
	st.paused = true;
	st.got_term = true;
	sv_status_format(line, sizeof line, "svc", &st, false, 1005);
	assert_string_equal(line,
	                    "run: svc: (pid 42) 5s, normally down, paused, want down, got TERM");
	/* flags that need a pid are not shown for a down service, and vice versa */
	st.pid = 0;
	st.state = SV_DOWN;
	st.want = 'u';
	sv_status_format(line, sizeof line, "svc", &st, true, 1000);
	assert_string_equal(line, "down: svc: 0s, normally up, want up");
}

/* Decimals at their extremes, as sv's fmt_ulong writes them (the pid unsigned). */
static void test_format_numbers(void **state)
{
	(void)state;
	struct sv_status st = {
	    .tai = (1ULL << 62) + 10, .pid = (pid_t)4294967295U, .state = SV_FINISH};
	char line[256];

	sv_status_format(line, sizeof line, "a", &st, true, 1234567890);
	assert_string_equal(line, "finish: a: (pid 4294967295) 1234567890s");
	st.pid = 0;
	st.state = SV_RUN;
	sv_status_format(line, sizeof line, "a", &st, true, 0);
	assert_string_equal(line, "run: a: (pid 0) 0s, normally up");
}

/* Bounded like snprintf: what fits plus a NUL, and the full length returned. */
static void test_format_truncates(void **state)
{
	(void)state;
	struct sv_status st = {.tai = (1ULL << 62) + 10 + 1000, .pid = 42, .state = SV_RUN};
	const char *full = "run: svc: (pid 42) 5s, normally down";
	char line[64];

	for (size_t len = 0; len <= strlen(full) + 1; len++) {
		memset(line, 'X', sizeof line);
		int n = sv_status_format(line, len, "svc", &st, false, 1005);
		assert_int_equal(n, (int)strlen(full));
		if (len > 0) {
			assert_int_equal(strlen(line), len - 1);
			assert_memory_equal(line, full, len - 1);
		}
		assert_int_equal(line[len], 'X'); /* nothing past the buffer */
	}
}

/* A path that would not fit fails with ENAMETOOLONG instead of being cut short. */
static void test_path_too_long(void **state)
{
	(void)state;
	static char dir[PATH_MAX];
	struct sv_status st;

	memset(dir, 'a', sizeof dir - 1);
	dir[sizeof dir - 1] = '\0';
	errno = 0;
	assert_int_equal(sv_read_status_at(AT_FDCWD, dir, &st), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	assert_int_equal(sv_live_at(AT_FDCWD, dir), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	assert_false(sv_normally_down_at(AT_FDCWD, dir));
}

static char tmpdir[] = "/tmp/test_runit.XXXXXX";

static void test_live_read_control(void **state)
{
	(void)state;
	char path[PATH_MAX + 32];
	struct sv_status st;

	assert_non_null(mkdtemp(tmpdir));
	assert_int_equal(sv_live(tmpdir), SV_LIVE_NO_SUPERVISE);
	assert_int_equal(sv_read_status(tmpdir, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_false(sv_normally_down(tmpdir));

	snprintf(path, sizeof path, "%s/supervise", tmpdir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/supervise/ok", tmpdir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(sv_live(tmpdir), SV_LIVE_NOT_RUNNING);
	int okfd = open(path, O_RDONLY | O_NONBLOCK); /* what runsv holds */
	assert_true(okfd >= 0);
	assert_int_equal(sv_live(tmpdir), SV_LIVE_OK);
	close(okfd);

	snprintf(path, sizeof path, "%s/supervise/control", tmpdir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(sv_control(tmpdir, 'u'), -1);
	assert_int_equal(errno, ENXIO);
	int cfd = open(path, O_RDONLY | O_NONBLOCK);
	assert_true(cfd >= 0);
	assert_int_equal(sv_control_str(tmpdir, "tcu"), 0);
	char got[8] = "";
	assert_int_equal(read(cfd, got, sizeof got), 3);
	assert_memory_equal(got, "tcu", 3);
	close(cfd);

	/* a short status file is not runsv's */
	snprintf(path, sizeof path, "%s/supervise/status", tmpdir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(write(fd, "0123456789012345678", 19), 19);
	close(fd);
	assert_int_equal(sv_read_status(tmpdir, &st), -1);
	assert_int_equal(errno, EBADMSG);

	snprintf(path, sizeof path, "%s/down", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	close(fd);
	assert_true(sv_normally_down(tmpdir));

	const char *const files[] = {"down", "supervise/status", "supervise/control",
	                             "supervise/ok", "supervise"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", tmpdir, files[i]);
		remove(path);
	}
	rmdir(tmpdir);
}

/*
 * A service directory longer than a name (status joins short paths in a small buffer): the
 * same answers through the full-length join, absolute and relative to a directory fd.
 */
static void test_long_dir(void **state)
{
	(void)state;
	char top[] = "/tmp/test_runit_long.XXXXXX", dir[PATH_MAX], path[PATH_MAX + 32];
	char part[101];
	struct sv_status st;
	memset(part, 'd', sizeof part - 1);
	part[sizeof part - 1] = '\0';
	assert_non_null(mkdtemp(top));
	snprintf(dir, sizeof dir, "%s", top);
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(dir);
		snprintf(dir + n, sizeof dir - n, "/%s", part);
		assert_int_equal(mkdir(dir, 0700), 0);
	}
	const char *rel = dir + strlen(top) + 1;
	assert_true(strlen(rel) > NAME_MAX + 32);
	snprintf(path, sizeof path, "%s/supervise", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/supervise/ok", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	int okfd = open(path, O_RDONLY | O_NONBLOCK);
	assert_true(okfd >= 0);
	unsigned char rec[SV_STATUS_LEN] = {0x40, 0, 0, 0, 0, 0, 0, 1};
	rec[12] = 42; /* pid, little-endian */
	rec[17] = 'u';
	rec[19] = SV_RUN;
	snprintf(path, sizeof path, "%s/supervise/status", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(write(fd, rec, sizeof rec), (ssize_t)sizeof rec);
	close(fd);
	snprintf(path, sizeof path, "%s/down", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	close(fd);

	int dfd = open(top, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(sv_live(dir), SV_LIVE_OK);
	assert_int_equal(sv_live_at(dfd, rel), SV_LIVE_OK);
	memset(&st, 0, sizeof st);
	assert_int_equal(sv_read_status_at(dfd, rel, &st), 0);
	assert_int_equal(st.pid, 42);
	assert_int_equal(st.state, SV_RUN);
	assert_true(sv_normally_down(dir));
	assert_true(sv_normally_down_at(dfd, rel));
	close(dfd);
	close(okfd);

	const char *const files[] = {"down", "supervise/status", "supervise/ok", "supervise"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		remove(path);
	}
	for (int i = 0; i < 3; i++) {
		rmdir(dir);
		*strrchr(dir, '/') = '\0';
	}
	rmdir(top);
}

/* A check that hangs is killed at the deadline, with what it started; a past deadline runs none. */
/* Not running: no such process, or a zombie (state Z in /proc/PID/stat). */
static bool gone(pid_t pid)
{
	if (kill(pid, 0) == -1)
		return true;
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	FILE *fp = fopen(path, "r");
	if (fp == NULL)
		return true;
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	const char *rp = strrchr(buf, ')');
	return rp != NULL && rp[1] == ' ' && rp[2] == 'Z';
}

static void test_check_deadline(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_runit_check.XXXXXX", path[PATH_MAX], pidf[PATH_MAX];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/check", dir);
	snprintf(pidf, sizeof pidf, "%s/child", dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "#!/bin/sh\nsleep 1000 &\necho $! >%s\nwait\n", pidf);
	fclose(fp);
	assert_int_equal(chmod(path, 0755), 0);

	long t0 = mono_ms();
	errno = 0;
	assert_int_equal(sv_check_until(dir, SPAWN_NULL, t0 + 300), -1);
	assert_int_equal(errno, ETIMEDOUT);
	/* It gave up at its deadline (a lower bound only); that it did not wait for the
	 * sleep's 1000 s shows below: the sleep is killed, not finished. */
	assert_true(mono_ms() >= t0 + 300);
	fp = fopen(pidf, "r");
	assert_non_null(fp);
	long child = 0;
	assert_int_equal(fscanf(fp, "%ld", &child), 1);
	fclose(fp);
	/* the check's own child went with it (its process group); killed, it may linger as a
	 * zombie until whoever adopted it reaps it: that counts as gone */
	for (int i = 0; i < 100 && !gone((pid_t)child); i++)
		sleep_ms(20);
	assert_true(gone((pid_t)child));

	unlink(pidf);
	assert_int_equal(sv_check_until(dir, SPAWN_NULL, mono_ms() - 1), 0);
	assert_int_equal(access(pidf, F_OK), -1); /* nothing was run */

	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "#!/bin/sh\nexit 0\n");
	fclose(fp);
	assert_int_equal(sv_check_until(dir, SPAWN_NULL, mono_ms() + 10000), 1);
	unlink(path);
	rmdir(dir);
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(sv_strerror(ENOENT), "file does not exist");
	assert_string_equal(sv_strerror(EACCES), "access denied");
	assert_string_equal(sv_strerror(ENXIO), "device not configured");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixtures_decode_and_format),
	    cmocka_unit_test(test_specific_states),
	    cmocka_unit_test(test_decode_rejects),
	    cmocka_unit_test(test_pid_little_endian),
	    cmocka_unit_test(test_up_settled),
	    cmocka_unit_test(test_format_numbers),
	    cmocka_unit_test(test_format_truncates),
	    cmocka_unit_test(test_path_too_long),
	    cmocka_unit_test(test_format_flags),
	    cmocka_unit_test(test_live_read_control),
	    cmocka_unit_test(test_long_dir),
	    cmocka_unit_test(test_strerror),
	    cmocka_unit_test(test_check_deadline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
