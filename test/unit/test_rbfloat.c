/* rb_float_to_s(): Ruby's Float#to_s, checked against what `ruby -e 'p x'` prints. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/rbfloat.h"

static void expect(double x, const char *want)
{
	char buf[64];
	rb_float_to_s(x, buf, sizeof buf);
	assert_string_equal(buf, want);
}

static void test_fixed(void **state)
{
	(void)state;
	expect(0.0, "0.0");
	expect(-0.0, "-0.0");
	expect(3.0, "3.0");
	expect(1.25, "1.25");
	expect(-7.5, "-7.5");
	expect(100.0, "100.0");
	expect(0.1 + 0.2, "0.30000000000000004");
	expect(0.0001, "0.0001");
	expect(100000000000000.0, "100000000000000.0");
	expect(999999999999999.9, "999999999999999.9");
}

static void test_exponent(void **state)
{
	(void)state;
	expect(1e15, "1.0e+15"); /* Ruby switches at 1e15 (decpt > DBL_DIG), not 1e16 */
	expect(-1e15, "-1.0e+15");
	expect(9999999999999998.0, "9.999999999999998e+15");
	expect(1e16, "1.0e+16");
	expect(1e20, "1.0e+20");
	expect(0.00001, "1.0e-05");
	expect(-2.5e-7, "-2.5e-07");
	expect(123456789012345680.0, "1.2345678901234568e+17");
	expect(1.7976931348623157e308, "1.7976931348623157e+308");
	expect(5e-324, "5.0e-324");
}

static void test_special(void **state)
{
	(void)state;
	expect(NAN, "NaN");
	expect(INFINITY, "Infinity");
	expect(-INFINITY, "-Infinity");
}

static void test_truncates(void **state)
{
	(void)state;
	char buf[6] = "xxxxx";
	rb_float_to_s(0.30000000000000004, buf, sizeof buf);
	assert_string_equal(buf, "0.300");
	rb_float_to_s(1.5, buf, 1);
	assert_string_equal(buf, "");
	rb_float_to_s(1.5, buf, 0); /* nothing written, no crash */
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixed),
	    cmocka_unit_test(test_exponent),
	    cmocka_unit_test(test_special),
	    cmocka_unit_test(test_truncates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
