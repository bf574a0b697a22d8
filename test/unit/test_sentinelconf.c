/* sentinelconf: the rendered sentinel.conf merged with the one Sentinel rewrote. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/sentinelconf.h"

static const char rendered[] = "port 26379\n"
                               "sentinel monitor gitlab-redis \"10.0.0.11\" 6379 2\n"
                               "sentinel auth-pass gitlab-redis \"pw\"\n";

static char *merge(const char *r, const char *live)
{
	struct buf b;
	buf_init(&b);
	sentinelconf_merge(r, strlen(r), live, live ? strlen(live) : 0, &b);
	return buf_take(&b);
}

static void test_no_live(void **state)
{
	(void)state;
	char *m = merge(rendered, NULL);
	assert_string_equal(m, rendered);
	free(m);
}

/* After a failover: the followed master and Sentinel's state stay, the rendered quorum wins. */
static void test_failover_kept(void **state)
{
	(void)state;
	const char *live = "port 26379\n"
	                   "sentinel monitor gitlab-redis 10.0.0.12 6379 1\n"
	                   "sentinel myid 0123456789012345678901234567890123456789\n"
	                   "sentinel config-epoch gitlab-redis 3\n"
	                   "sentinel known-replica gitlab-redis 10.0.0.11 6379\n"
	                   "sentinel known-sentinel gitlab-redis 10.0.0.13 26379 abc\n"
	                   "sentinel known-replica other 10.9.9.9 6379\n"
	                   "sentinel current-epoch 3\n"
	                   "requirepass \"old\"\n";
	char *m = merge(rendered, live);
	assert_non_null(strstr(m, "sentinel monitor gitlab-redis 10.0.0.12 6379 2\n"));
	assert_null(strstr(m, "10.0.0.11\" 6379"));
	assert_non_null(strstr(m, "sentinel auth-pass gitlab-redis \"pw\"\n"));
	assert_non_null(strstr(m, "sentinel myid 0123456789012345678901234567890123456789\n"));
	assert_non_null(strstr(m, "sentinel config-epoch gitlab-redis 3\n"));
	assert_non_null(strstr(m, "sentinel known-replica gitlab-redis 10.0.0.11 6379\n"));
	assert_non_null(strstr(m, "sentinel known-sentinel gitlab-redis 10.0.0.13 26379 abc\n"));
	assert_non_null(strstr(m, "sentinel current-epoch 3\n"));
	assert_null(strstr(m, "other"));   /* another master's state */
	assert_null(strstr(m, "\"old\"")); /* a rendered setting wins */
	free(m);
}

/* An address that is no address, another master name, a rendered myid: the rendered lines. */
static void test_refused(void **state)
{
	(void)state;
	char *m = merge(rendered, "sentinel monitor gitlab-redis \"1.2.3.4\\nport 1\" 6379 1\n");
	assert_non_null(strstr(m, "sentinel monitor gitlab-redis \"10.0.0.11\" 6379 2\n"));
	assert_null(strstr(m, "port 1\n"));
	free(m);
	m = merge(rendered, "sentinel monitor other 10.0.0.12 6379 1\n");
	assert_non_null(strstr(m, "\"10.0.0.11\" 6379 2"));
	free(m);
	m = merge("sentinel myid aaaa\nsentinel monitor m 1.1.1.1 1 1\n",
	          "sentinel myid bbbb\nsentinel monitor m 2.2.2.2 2 1\n");
	assert_non_null(strstr(m, "sentinel myid aaaa\n"));
	assert_null(strstr(m, "bbbb"));
	assert_non_null(strstr(m, "sentinel monitor m 2.2.2.2 2 1\n"));
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_no_live),
	    cmocka_unit_test(test_failover_kept),
	    cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
