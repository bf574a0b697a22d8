/*
 * lib/quote: each format's quoting. A value either comes out in the format's syntax meaning
 * exactly itself, or is refused with a reason and nothing appended.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/quote.h"

/* What a quoting appended to b (which held "<"), or NULL when it refused, b unchanged. */
static char *result(struct buf *b, int rc, const char *why)
{
	static char res[512];
	if (rc == -1) {
		assert_non_null(why);
		assert_string_equal(buf_str(b), "<");
		buf_free(b);
		return NULL;
	}
	assert_int_equal(rc, 0);
	snprintf(res, sizeof res, "%s", buf_str(b) + 1);
	buf_free(b);
	return res;
}

/* fn(v) appended to "<": the output, or NULL when refused (then "<" must be unchanged). */
static char *run(quote_fn fn, const char *v)
{
	struct buf b;
	const char *why = NULL;
	buf_init(&b);
	buf_adds(&b, "<");
	int rc = fn(&b, v, &why);
	return result(&b, rc, why);
}

static char *run_void(void (*fn)(struct buf *, const char *), const char *v)
{
	static char res[512];
	struct buf b;
	buf_init(&b);
	fn(&b, v);
	snprintf(res, sizeof res, "%s", buf_str(&b));
	buf_free(&b);
	return res;
}

static void test_pg_string(void **state)
{
	(void)state;
	assert_string_equal(run(quote_pg_string, "128MB"), "'128MB'");
	assert_string_equal(run(quote_pg_string, "127.0.0.1' # rest"), "'127.0.0.1'' # rest'");
	assert_string_equal(run(quote_pg_string, "a\\b"), "'a\\\\b'");
	assert_string_equal(run(quote_pg_string, ""), "''");
	assert_null(run(quote_pg_string, "a\nb = 1"));
	assert_null(run(quote_pg_string, "a\tb"));
	assert_string_equal(run(quote_pg_part, "/srv/it's"), "/srv/it''s");
	assert_null(run(quote_pg_part, "x\n"));
}

static void test_pg_number(void **state)
{
	(void)state;
	const char *ok[] = {"128MB", "0", "-1", "0.5", "30s", "5min", "1TB", "8kB", "100"};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		assert_non_null(run(quote_pg_number, ok[i]));
	assert_string_equal(run(quote_pg_number, "128MB"), "'128MB'");
	const char *bad[] = {"128MB'", "",   "MB",  "128 MB", "128mb",
	                     "1.",     ".5", "1e3", "1MBB",   "--1"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(run(quote_pg_number, bad[i]));
}

static void test_pg_hosts(void **state)
{
	(void)state;
	assert_string_equal(run(quote_pg_hosts, ""), "''");
	assert_string_equal(run(quote_pg_hosts, "*"), "'*'");
	assert_string_equal(run(quote_pg_hosts, "127.0.0.1, ::1"), "'127.0.0.1, ::1'");
	assert_string_equal(run(quote_pg_hosts, "db.example.org"), "'db.example.org'");
	const char *bad[] = {"127.0.0.1' # rest", "a b", "1.2.3.4,", ",", "a,,b", "-x", "a;b", "'"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(run(quote_pg_hosts, bad[i]));
}

static void test_pg_token(void **state)
{
	(void)state;
	assert_string_equal(run(quote_pg_token, "gitlab"), "gitlab");
	assert_string_equal(run(quote_pg_token, "gitlab-psql"), "gitlab-psql");
	assert_string_equal(run(quote_pg_token, "_a.b-1"), "_a.b-1");
	const char *bad[] = {
	    "",         "all",
	    "ALL",      "sameuser",
	    "samerole", "replication",
	    "+gitlab",  "/^.*$",
	    "@file",    "a b",
	    "a,b",      "\"a\"",
	    "a#b",      "-a",
	    "a\\b",     "0123456789012345678901234567890123456789012345678901234567890123"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(run(quote_pg_token, bad[i]));
}

static void test_pg_md5(void **state)
{
	(void)state;
	assert_string_equal(run(quote_pg_md5, "88D48E65C030F0C3048331B34F40CA36"),
	                    "md588d48e65c030f0c3048331b34f40ca36");
	assert_string_equal(run(quote_pg_md5, "md588d48e65c030f0c3048331b34f40ca36"),
	                    "md588d48e65c030f0c3048331b34f40ca36");
	const char *bad[] = {"",
	                     "password",
	                     "88d48e65c030f0c3048331b34f40ca3",
	                     "88d48e65c030f0c3048331b34f40ca36'",
	                     "md5x8d48e65c030f0c3048331b34f40ca36",
	                     "88d48e65c030f0c3048331b34f40ca3g"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(run(quote_pg_md5, bad[i]));
}

static void test_conninfo(void **state)
{
	(void)state;
	assert_string_equal(run_void(quote_conninfo, "gitlab"), "gitlab");
	assert_string_equal(run_void(quote_conninfo, "/var/opt/gitlab/postgresql"),
	                    "/var/opt/gitlab/postgresql");
	assert_string_equal(run_void(quote_conninfo, ""), "''");
	assert_string_equal(run_void(quote_conninfo, "a b"), "'a b'");
	assert_string_equal(run_void(quote_conninfo, "it's"), "'it\\'s'");
	assert_string_equal(run_void(quote_conninfo, "a\\b"), "'a\\\\b'");
	assert_string_equal(run_void(quote_conninfo, "x host=evil"), "'x host=evil'");
}

static void test_redis_arg(void **state)
{
	(void)state;
	assert_string_equal(run_void(quote_redis_arg, "/var/opt/gitlab/redis"),
	                    "\"/var/opt/gitlab/redis\"");
	assert_string_equal(run_void(quote_redis_arg, "p\"a ss"), "\"p\\\"a ss\"");
	assert_string_equal(run_void(quote_redis_arg, "a\\b"), "\"a\\\\b\"");
	assert_string_equal(run_void(quote_redis_arg, "a\nb\r\t\x01"), "\"a\\nb\\r\\t\\x01\"");
	assert_string_equal(run_void(quote_redis_arg, ""), "\"\"");
	/* lower-case hex as always; bytes from 0x80 up as they are (Redis takes bytes) */
	assert_string_equal(run_void(quote_redis_arg, "\x1b\x7f\xc3\xa9\xff"),
	                    "\"\\x1b\\x7f\xc3\xa9\xff\"");
}

static void test_redis_memory(void **state)
{
	(void)state;
	const char *ok[] = {"0", "100mb", "1GB", "512k", "10b", "4g", "7Kb"};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		assert_string_equal(run(quote_redis_memory, ok[i]), ok[i]);
	const char *bad[] = {"0 1", "", "mb", "1tb", "-1", "1.5gb", "1 gb", "1gb\"", "1\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(run(quote_redis_memory, bad[i]));
}

static void test_redis_bind(void **state)
{
	(void)state;
	assert_string_equal(run(quote_redis_bind, "127.0.0.1"), "127.0.0.1");
	assert_string_equal(run(quote_redis_bind, " 0.0.0.0  -::1 "), "0.0.0.0 -::1");
	assert_string_equal(run(quote_redis_bind, "*"), "*");
	const char *bad[] = {"127.0.0.1 \"", "", "  ", "a\"b", "1.2.3.4;x", "--1", "# x"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(run(quote_redis_bind, bad[i]));
	const char *local[] = {"127.0.0.1", "127.1.2.3 ::1", "localhost", "-::1 127.0.0.1"};
	for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
		assert_non_null(run(quote_redis_bind_loopback, local[i]));
	const char *open[] = {"0.0.0.0", "127.0.0.1 10.0.0.1", "*",         "::",
	                      "::2",     "example.org",        "128.0.0.1", "-0.0.0.0"};
	for (size_t i = 0; i < sizeof open / sizeof open[0]; i++)
		assert_null(run(quote_redis_bind_loopback, open[i]));
}

static void test_redis_bool_and_obl(void **state)
{
	(void)state;
	assert_string_equal(run(quote_redis_bool, "true"), "yes");
	assert_string_equal(run(quote_redis_bool, "false"), "no");
	const char *notbool[] = {"yes", "", "1", "True"};
	for (size_t i = 0; i < sizeof notbool / sizeof notbool[0]; i++)
		assert_null(run(quote_redis_bool, notbool[i]));
	assert_string_equal(run(quote_redis_obl, "0 0 0"), "0 0 0");
	assert_string_equal(run(quote_redis_obl, " 256mb  64MB 60 "), "256mb 64MB 60");
	const char *bad[] = {"0 0",       "0 0 0 0", "1tb 0 0", "0 0 1m", "0 0 -1",
	                     "0 0 \"0\"", "0\t0 0",  "",        "0 0 0\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(run(quote_redis_obl, bad[i]));
}

/* A data quoting's output, or NULL when refused (then out must be unchanged). */
static char *run_data(quote_data_fn fn, const struct yval *v)
{
	struct buf b;
	const char *why = NULL;
	buf_init(&b);
	buf_adds(&b, "<");
	int rc = fn(&b, v, &why);
	return result(&b, rc, why);
}

static struct yval *strs(const char *const *v, size_t n)
{
	struct yval *seq = yval_seq();
	for (size_t i = 0; i < n; i++)
		yval_push(seq, yval_scalar(YV_STR, v[i]));
	return seq;
}

static void test_redis_save(void **state)
{
	(void)state;
	assert_string_equal(run_data(quote_redis_save, NULL), "");
	const char *omnibus[] = {"900 1", "300 10", " 60  10000 "};
	struct yval *v = strs(omnibus, 3);
	assert_string_equal(run_data(quote_redis_save, v),
	                    "save 900 1\nsave 300 10\nsave 60 10000");
	yval_free(v);
	const char *pairs[] = {"3600 1 300 100"};
	v = strs(pairs, 1);
	assert_string_equal(run_data(quote_redis_save, v), "save 3600 1 300 100");
	yval_free(v);
	const char *off[] = {"900 1", ""};
	v = strs(off, 2);
	assert_string_equal(run_data(quote_redis_save, v), "save \"\"");
	yval_free(v);
	v = yval_seq();
	assert_string_equal(run_data(quote_redis_save, v), "");
	yval_push(v, yval_scalar(YV_INT, "900"));
	assert_null(run_data(quote_redis_save, v));
	yval_free(v);
	const char *bad[] = {"900", "900 1 300", "900 x", "900 1\nsave 1 1", "-1 1", "900\t1"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *one[] = {"900 1", bad[i]};
		v = strs(one, 2);
		assert_null(run_data(quote_redis_save, v));
		yval_free(v);
	}
	v = yval_scalar(YV_STR, "900 1");
	assert_null(run_data(quote_redis_save, v));
	yval_free(v);
}

static void test_redis_renames(void **state)
{
	(void)state;
	assert_string_equal(run_data(quote_redis_renames, NULL), "");
	struct yval *m = yval_map();
	yval_put(m, "KEYS", yval_scalar(YV_STR, ""));
	yval_put(m, "FLUSHALL", yval_scalar(YV_STR, "a\"b\nc"));
	yval_put(m, "config", yval_null());
	assert_string_equal(run_data(quote_redis_renames, m),
	                    "rename-command KEYS \"\"\nrename-command FLUSHALL \"a\\\"b\\nc\"\n"
	                    "rename-command config \"\"");
	yval_free(m);
	const char *badkey[] = {"AUTH", "ping", "a b", "", "KEYS\n", "x\"y"};
	for (size_t i = 0; i < sizeof badkey / sizeof badkey[0]; i++) {
		m = yval_map();
		yval_put(m, "KEYS", yval_scalar(YV_STR, ""));
		yval_put(m, badkey[i], yval_scalar(YV_STR, "x"));
		assert_null(run_data(quote_redis_renames, m));
		yval_free(m);
	}
	m = yval_map();
	yval_put(m, "KEYS", yval_seq());
	assert_null(run_data(quote_redis_renames, m));
	yval_free(m);
	m = yval_seq();
	assert_null(run_data(quote_redis_renames, m));
	yval_free(m);
}

static void test_mode_private(void **state)
{
	(void)state;
	assert_string_equal(run(quote_mode_private, "770"), "770");
	assert_string_equal(run(quote_mode_private, "0700"), "0700");
	const char *bad[] = {"777", "0775", "771", "", "7", "07770", "1770", "8", "77a", "770 "};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(run(quote_mode_private, bad[i]));
}

static void test_url_auth_and_resp(void **state)
{
	(void)state;
	assert_string_equal(run_void(quote_url_auth, ""), "");
	assert_string_equal(run_void(quote_url_auth, "s3cret"), "//:s3cret@");
	assert_string_equal(run_void(quote_url_auth, "p\"a ss@:/%+~"),
	                    "//:p%22a%20ss%40%3A%2F%25%2B~@");
	assert_string_equal(run_void(quote_resp, ""), "$0\r\n\r\n");
	assert_string_equal(run_void(quote_resp, "a b\r\n"), "$5\r\na b\r\n\r\n");
}

static void test_sh_and_yaml(void **state)
{
	(void)state;
	assert_string_equal(run_void(quote_sh, "it's"), "'it'\\''s'");
	assert_string_equal(run_void(quote_sh, ""), "''");
	assert_string_equal(run_void(quote_yaml, "a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
	/* upper-case hex, as YAML output always was; invalid UTF-8 is U+FFFD */
	assert_string_equal(run_void(quote_yaml, "\x1b\x7f\xc3\xa9\xff"),
	                    "\"\\x1B\\x7F\xc3\xa9\\uFFFD\"");
	assert_string_equal(run_void(quote_yaml, "x: &y *z # c"), "\"x: &y *z # c\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pg_string),    cmocka_unit_test(test_pg_number),
	    cmocka_unit_test(test_pg_hosts),     cmocka_unit_test(test_pg_token),
	    cmocka_unit_test(test_pg_md5),       cmocka_unit_test(test_conninfo),
	    cmocka_unit_test(test_redis_arg),    cmocka_unit_test(test_redis_memory),
	    cmocka_unit_test(test_redis_bind),   cmocka_unit_test(test_redis_bool_and_obl),
	    cmocka_unit_test(test_redis_save),   cmocka_unit_test(test_redis_renames),
	    cmocka_unit_test(test_mode_private), cmocka_unit_test(test_url_auth_and_resp),
	    cmocka_unit_test(test_sh_and_yaml),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
