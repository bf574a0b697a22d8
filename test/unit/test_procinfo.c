/* Unit tests of the /proc parsers and the HTTP status line parser used by inspect. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/httpprobe.h"
#include "proc/procinfo.h"

static void test_mem(void **state)
{
	(void)state;
	static const char rollup[] =
	    "55d0c8a00000-7ffd4b7fe000 ---p 00000000 00:00 0                          [rollup]\n"
	    "Rss:               41236 kB\n"
	    "Pss:               38170 kB\n"
	    "Pss_Dirty:         30000 kB\n"
	    "Shared_Clean:       3100 kB\n"
	    "Shared_Dirty:          0 kB\n"
	    "Private_Clean:      1200 kB\n"
	    "Private_Dirty:     36936 kB\n"
	    "Swap:                  0 kB\n";
	struct pmem m;
	assert_int_equal(procinfo_parse_mem(rollup, &m), 0);
	assert_int_equal(m.rss_kb, 41236);
	assert_int_equal(m.pss_kb, 38170);
	assert_int_equal(m.uss_kb, 1200 + 36936);
	/* Pss_Dirty must not be taken for Pss, and missing fields are an error */
	assert_int_equal(procinfo_parse_mem("Rss: 1 kB\nPss_Dirty: 2 kB\n", &m), -1);
	assert_int_equal(procinfo_parse_mem("Rss: x kB\n", &m), -1);
}

static void test_maps(void **state)
{
	(void)state;
	static const char maps[] =
	    "5581c6a00000-5581c6a01000 r--p 00000000 08:01 1234   /usr/bin/ruby3.1\n"
	    "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
	    "7f1000000000-7f1000020000 r--p 00000000 08:01 99     "
	    "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1\n"
	    "7f2000000000-7f2000040000 r-xp 00002000 08:01 77     "
	    "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n"
	    "7ffd4b7dd000-7ffd4b7fe000 rw-p 00000000 00:00 0      [stack]\n";
	char path[PATH_MAX];
	assert_int_equal(procinfo_parse_maps(maps, "libjemalloc", path, sizeof path), 1);
	assert_string_equal(path, "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2");
	/* the basename must start with the prefix: a directory name does not count */
	assert_int_equal(procinfo_parse_maps("1-2 r--p 0 0:0 1 /opt/libjemalloc/lib/libc.so.6\n",
	                                     "libjemalloc", path, sizeof path),
	                 0);
	assert_int_equal(procinfo_parse_maps(maps, "libtcmalloc", path, sizeof path), 0);
	assert_int_equal(procinfo_parse_maps(maps, "libjemalloc", path, 8), -1);
	assert_int_equal(errno, ENAMETOOLONG);
}

static void test_environ(void **state)
{
	(void)state;
	static const char env[] = "PATH=/usr/bin:/bin\0LD_PRELOAD=/x/libjemalloc.so.2\0EMPTY=\0"
	                          "NOEQUALS\0=nameless\0MALLOC_CONF=a:1,b=2";
	struct envv e;
	envv_init(&e);
	procinfo_parse_environ(env, sizeof env - 1, &e);
	assert_int_equal(e.n, 4);
	assert_string_equal(envv_get(&e, "PATH"), "/usr/bin:/bin");
	assert_string_equal(envv_get(&e, "EMPTY"), "");
	assert_string_equal(envv_get(&e, "MALLOC_CONF"), "a:1,b=2");
	assert_null(envv_get(&e, "NOEQUALS"));
	envv_free(&e);
}

static void test_self(void **state)
{
	(void)state;
	struct pmem m;
	uid_t uid;
	struct envv e;
	assert_int_equal(proc_mem(getpid(), &m), 0);
	assert_true(m.rss_kb > 0 && m.uss_kb <= m.rss_kb);
	assert_int_equal(proc_uid(getpid(), &uid), 0);
	assert_int_equal(uid, getuid());
	envv_init(&e);
	setenv("TEST_PROCINFO_MARK", "not in the exec environ", 1);
	assert_int_equal(proc_environ(getpid(), &e), 0);
	/* /proc/PID/environ is what the process was exec'd with, not later setenv()s */
	assert_null(envv_get(&e, "TEST_PROCINFO_MARK"));
	envv_free(&e);
	assert_int_equal(proc_mem(0x7ffffff0, &m), -1);
}

static void test_http_status(void **state)
{
	(void)state;
	assert_int_equal(http_status_code("HTTP/1.1 200 OK\r\n", 17), 200);
	assert_int_equal(http_status_code("HTTP/1.0 404 Not Found\r\n", 24), 404);
	assert_int_equal(http_status_code("HTTP/1.0 503", 12), 503);
	assert_int_equal(http_status_code("HTTP/2 200 OK\r\n", 15), -1);
	assert_int_equal(http_status_code("HTTP/1.1 20x OK\r\n", 17), -1);
	assert_int_equal(http_status_code("HTTP/1.1 2000 OK", 16), -1);
	assert_int_equal(http_status_code("SSH-2.0-OpenSSH", 15), -1);
}

static void test_probe_refused(void **state)
{
	(void)state;
	char err[128];
	/* port 1 on loopback: nobody listens there in a test environment */
	assert_int_equal(http_probe("127.0.0.1", 1, "/metrics", NULL, 1000, err, sizeof err), -1);
	assert_non_null(strstr(err, "connect"));
	assert_int_equal(http_probe("no-such-host.invalid", 80, "/", NULL, 1000, err, sizeof err),
	                 -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mem),         cmocka_unit_test(test_maps),
	    cmocka_unit_test(test_environ),     cmocka_unit_test(test_self),
	    cmocka_unit_test(test_http_status), cmocka_unit_test(test_probe_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
