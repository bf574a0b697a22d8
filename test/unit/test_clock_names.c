/* lib/clock's deadline and boot-time helpers; lib/names' one-line value check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "lib/clock.h"
#include "lib/names.h"

static void test_ms_until(void **state)
{
	(void)state;
	long now = mono_ms();
	long left = ms_until(now + 60000);
	assert_true(left > 0 && left <= 60000);
	assert_int_equal(ms_until(now - 5), 0);
	assert_int_equal(ms_until(now), 0);
}

/* Boot time plus time since boot is now, to well within the 1 s /proc/stat's btime allows. */
static void test_boot_epoch(void **state)
{
	(void)state;
	long long boot = boot_epoch_ns();
	struct timespec rt, bt;
	assert_int_equal(clock_gettime(CLOCK_BOOTTIME, &bt), 0);
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &rt), 0);
	long long since = bt.tv_sec * 1000000000LL + bt.tv_nsec;
	long long now = rt.tv_sec * 1000000000LL + rt.tv_nsec;
	assert_true(boot > 0 && boot < now);
	long long off = boot + since - now;
	assert_true(off > -100000000LL && off < 100000000LL);
}

static void test_text_has_control(void **state)
{
	(void)state;
	assert_false(text_has_control(""));
	assert_true(text_has_control("tab\there"));
	assert_true(text_has_control("line\nbreak"));
	assert_true(text_has_control("cr\r"));
	assert_true(text_has_control("del\x7f"));
	assert_true(text_has_control("\x1b[31m"));
	assert_false(text_has_control("caf\xc3\xa9 ~!@#$%^&*()"));
}

/* Only what the tree writer leaves behind is a temp: the marker, then 6 alnum or a pid. */
static void test_name_temp(void **state)
{
	(void)state;
	size_t n = 0;
	assert_true(name_temp(".gitlab-exporter.yml.gitlab-ctl-tmp.Ab12Cd", &n));
	assert_int_equal(n, strlen("gitlab-exporter.yml"));
	assert_true(name_temp(".gitlab-exporter.gitlab-ctl-tmp.4242", &n));
	assert_int_equal(n, strlen("gitlab-exporter"));
	assert_false(name_temp(".gitlab-exporter.yml.Ab12Cd", &n)); /* a service's own */
	assert_false(name_temp(".gitlab-ctl-tmp.Ab12Cd", &n));      /* no base */
	assert_false(name_temp(".x.gitlab-ctl-tmp.Ab12C", &n));     /* five */
	assert_false(name_temp(".x.gitlab-ctl-tmp.Ab12Cd-", &n));   /* not alnum */
	assert_false(name_temp("x.gitlab-ctl-tmp.Ab12Cd", &n));     /* not a dotfile */
	assert_false(name_temp(".x.gitlab-ctl-tmp.", &n));          /* no suffix */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ms_until),
	    cmocka_unit_test(test_boot_epoch),
	    cmocka_unit_test(test_text_has_control),
	    cmocka_unit_test(test_name_temp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
