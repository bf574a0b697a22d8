/* md5: RFC 1321's test suite, and lengths around the padding boundary (55, 56, 63, 64 bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "lib/md5.h"

static void check(const char *in, const char *want)
{
	char hex[33];
	md5_hex(in, strlen(in), hex);
	assert_string_equal(hex, want);
}

static void test_rfc1321(void **state)
{
	(void)state;
	check("", "d41d8cd98f00b204e9800998ecf8427e");
	check("a", "0cc175b9c0f1b6a831c399e269772661");
	check("abc", "900150983cd24fb0d6963f7d28e17f72");
	check("message digest", "f96b697d7cb7938d525a2f31aaf161d0");
	check("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b");
	check("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	      "d174ab98d277d9f5a5611c2c9f419d9f");
	check("12345678901234567890123456789012345678901234567890123456789012345678901234567890",
	      "57edf4a22be3c955ac49da2e2107b67a");
}

/* PostgreSQL's md5 password hash of "secret" for "gitlab", and the block-boundary lengths. */
static void test_boundaries(void **state)
{
	(void)state;
	check("secretgitlab", "63d52d8660eb1da2ae2ccfbd1a0f455d");
	static const struct {
		size_t n;
		const char *want;
	} v[] = {{55, "04364420e25c512fd958a70738aa8f72"},
	         {56, "668a72d5ba17f08e62dabcafad6db14b"},
	         {63, "7dc2ca208106a2f703567bdff99d8981"},
	         {64, "c1bb4f81d892b2d57947682aeb252456"},
	         {65, "1bc932052302d074bdec39795fe00cf6"}};
	char x[65], hex[33];
	memset(x, 'x', sizeof x);
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		md5_hex(x, v[i].n, hex);
		assert_string_equal(hex, v[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc1321),
	    cmocka_unit_test(test_boundaries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
