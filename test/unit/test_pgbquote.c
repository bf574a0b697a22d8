/* PgBouncer's formats (lib/pgbquote) and the re-pointing of a database (engine/pgbnotify). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/pgbnotify.h"
#include "lib/pgbquote.h"

static struct yval *str(const char *s)
{
	return yval_scalar(YV_STR, s);
}

static struct yval *db(const char *host, const char *k, const char *v)
{
	struct yval *m = yval_map();
	if (host != NULL)
		yval_put(m, "host", str(host));
	if (k != NULL)
		yval_put(m, k, str(v));
	return m;
}

/* fn(v) as text, or NULL when refused (the buffer then unchanged) */
static char *data(int (*fn)(struct buf *, const struct yval *, const char **), struct yval *v)
{
	static char res[1024];
	struct buf b;
	const char *why = NULL;
	buf_init(&b);
	buf_adds(&b, "<");
	int rc = fn(&b, v, &why);
	yval_free(v);
	if (rc == -1) {
		assert_non_null(why);
		assert_string_equal(buf_str(&b), "<");
		buf_free(&b);
		return NULL;
	}
	snprintf(res, sizeof res, "%s", buf_str(&b) + 1);
	buf_free(&b);
	return res;
}

static void test_value(void **state)
{
	(void)state;
	struct buf b;
	const char *why = NULL;
	const char *ok[] = {"0.0.0.0", "transaction", "/var/opt/gitlab/pgbouncer", "*", "::1"};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		buf_init(&b);
		assert_int_equal(quote_pgb_value(&b, ok[i], &why), 0);
		assert_string_equal(buf_str(&b), ok[i]);
		buf_free(&b);
	}
	const char *bad[] = {"", "a b", "x\n[pgbouncer]", "a;b", "a#b", "'q'", "a=b"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		buf_init(&b);
		assert_int_equal(quote_pgb_value(&b, bad[i], &why), -1);
		assert_int_equal(b.len, 0);
		buf_free(&b);
	}
}

static void test_databases(void **state)
{
	(void)state;
	struct yval *m = yval_map();
	yval_put(m, "gitlabhq_production", db("10.0.0.11", "password", "it's x"));
	assert_string_equal(data(quote_pgb_databases, m),
	                    "gitlabhq_production = host='10.0.0.11' password='it''s x'");
	m = yval_map();
	yval_put(m, "a b", db("h", NULL, NULL));
	assert_null(data(quote_pgb_databases, m));
	m = yval_map();
	yval_put(m, "d", db(NULL, "port", "5432"));
	assert_null(data(quote_pgb_databases, m)); /* no host */
	m = yval_map();
	yval_put(m, "d", db("h", "host2", "x"));
	assert_null(data(quote_pgb_databases, m)); /* not a connection-string key */
	m = yval_map();
	yval_put(m, "d", db("h", "password", "x\ny = host=evil"));
	assert_null(data(quote_pgb_databases, m)); /* a newline would start an entry */
}

static void test_users(void **state)
{
	(void)state;
	struct yval *m = yval_map(), *u = yval_map();
	yval_put(u, "password", str("88d48e65c030f0c3048331b34f40ca36"));
	yval_put(m, "gitlab", u);
	u = yval_map();
	yval_put(u, "password", str("SCRAM-SHA-256$4096:a\"b"));
	yval_put(m, "admin", u);
	assert_string_equal(data(quote_pgb_users, m),
	                    "\"gitlab\" \"md588d48e65c030f0c3048331b34f40ca36\"\n"
	                    "\"admin\" \"SCRAM-SHA-256$4096:a\"\"b\"");
	m = yval_map();
	yval_put(m, "x\"y", yval_map());
	assert_null(data(quote_pgb_users, m));
	struct yval *s = yval_seq();
	yval_push(s, str("pgbouncer"));
	yval_push(s, str("gitlab-consul"));
	assert_string_equal(data(quote_pgb_names, s), "pgbouncer,gitlab-consul");
	s = yval_seq();
	yval_push(s, str("a,b"));
	assert_null(data(quote_pgb_names, s));
}

static void test_repoint(void **state)
{
	(void)state;
	const char *ini = "; header\n"
	                  "other = host='10.0.0.11' port='5432'\n"
	                  "gitlabhq_production = host='10.0.0.11' port='5432' password='a''b c'\n";
	struct buf out;
	const char *why = NULL;
	buf_init(&out);
	assert_int_equal(pgb_databases_with(ini, "gitlabhq_production", "10.0.0.12", &out, &why),
	                 0);
	assert_string_equal(
	    buf_str(&out),
	    "; header\n"
	    "other = host='10.0.0.11' port='5432'\n"
	    "gitlabhq_production = host='10.0.0.12' port='5432' password='a''b c'\n");
	buf_free(&out);
	buf_init(&out);
	assert_int_equal(pgb_databases_with(ini, "gitlabhq", "h", &out, &why), -1);
	assert_non_null(why);
	buf_free(&out);
	/* a quote in the new host stays inside its value */
	buf_init(&out);
	assert_int_equal(pgb_databases_with(ini, "other", "x' dbname='y", &out, &why), 0);
	assert_non_null(strstr(buf_str(&out), "other = host='x'' dbname=''y' port='5432'\n"));
	buf_free(&out);
	buf_init(&out);
	assert_int_equal(pgb_databases_with(ini, "other", "h\nevil = host=x", &out, &why), -1);
	buf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_value),
	    cmocka_unit_test(test_databases),
	    cmocka_unit_test(test_users),
	    cmocka_unit_test(test_repoint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
