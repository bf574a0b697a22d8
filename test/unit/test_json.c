/* json: the one JSON string escaper; what passes as it is and what becomes \u00XX. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/json.h"

static void expect(const char *in, size_t n, const char *want)
{
	struct buf b;
	buf_init(&b);
	json_str_add(&b, in, n);
	assert_string_equal(buf_str(&b), want);
	buf_free(&b);
}

#define EXPECT(in, want) expect(in, sizeof in - 1, want)

static void test_quotes_and_c0(void **state)
{
	(void)state;
	EXPECT("", "\"\"");
	EXPECT("plain ~ text", "\"plain ~ text\"");
	EXPECT("a\"b\\c", "\"a\\\"b\\\\c\"");
	EXPECT("\033]0;t\a\r\n\t", "\"\\u001b]0;t\\u0007\\u000d\\u000a\\u0009\"");
	/* A NUL inside the given length is data, not the end. */
	EXPECT("a\0b", "\"a\\u0000b\"");
}

static void test_del_and_c1(void **state)
{
	(void)state;
	EXPECT("x\177y", "\"x\\u007fy\"");
	/* C1 raw (8-bit CSI, OSC, ST) and encoded as UTF-8 (U+009B, U+0085). */
	EXPECT("\x9b"
	       "2J\x9d\x9c",
	       "\"\\u009b2J\\u009d\\u009c\"");
	EXPECT("\xc2\x9b\xc2\x85", "\"\\u009b\\u0085\"");
	EXPECT("\xc2\x80\xc2\x9f", "\"\\u0080\\u009f\"");
}

static void test_utf8(void **state)
{
	(void)state;
	/* Valid UTF-8 passes, U+00A0 (the first after C1) included. */
	EXPECT("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0",
	       "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0\"");
	/* Invalid sequences: each byte as \u00XX, so the document stays valid UTF-8. */
	EXPECT("\xc0\xaf", "\"\\u00c0\\u00af\"");
	EXPECT("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"");
	EXPECT("\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"");
	EXPECT("\xe2\x82", "\"\\u00e2\\u0082\"");
	EXPECT("\xff", "\"\\u00ff\"");
}

static void test_put(void **state)
{
	(void)state;
	char *p = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&p, &n);
	assert_non_null(fp);
	json_str_put(fp, NULL);
	fputc(' ', fp);
	json_str_put(fp, "a\177");
	fputc(' ', fp);
	json_strn_put(fp, "q\"\x9bzz", 3);
	assert_int_equal(fclose(fp), 0);
	assert_string_equal(p, "null \"a\\u007f\" \"q\\\"\\u009b\"");
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quotes_and_c0),
	    cmocka_unit_test(test_del_and_c1),
	    cmocka_unit_test(test_utf8),
	    cmocka_unit_test(test_put),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
