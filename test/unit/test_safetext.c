/* safetext: which bytes of an account's output reach a terminal as they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/safetext.h"

static void expect(const char *in, size_t n, unsigned flags, const char *want, size_t consumed)
{
	struct buf b;
	buf_init(&b);
	assert_int_equal(safetext_add(&b, in, n, flags), consumed);
	assert_string_equal(buf_str(&b), want);
	buf_free(&b);
}

#define EXPECT(in, flags, want) expect(in, sizeof in - 1, flags, want, sizeof in - 1)

static void test_controls(void **state)
{
	(void)state;
	EXPECT("plain text, 100%", 0, "plain text, 100%");
	/* OSC title/clipboard, CSI, CR overwriting, BEL, DEL: all shown as text. */
	EXPECT("\033]0;pwned\a\033[2J\rok\177", 0, "\\x1b]0;pwned\\x07\\x1b[2J\\x0dok\\x7f");
	EXPECT("a\tb\nc", 0, "a\\x09b\\x0ac");
	EXPECT("a\tb\nc\r", SAFETEXT_NL, "a\tb\nc\\x0d");
	EXPECT("a\r\nb\b", SAFETEXT_NL | SAFETEXT_TTY, "a\r\nb\b");
	EXPECT("\033[1m", SAFETEXT_NL | SAFETEXT_TTY, "\\x1b[1m");
	/* C1 raw (8-bit CSI, OSC) and encoded as UTF-8 (U+009B). */
	EXPECT("\x9b"
	       "2J\x9d",
	       0, "\\x9b2J\\x9d");
	EXPECT("\xc2\x9b", 0, "\\xc2\\x9b");
}

static void test_utf8(void **state)
{
	(void)state;
	EXPECT("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0,
	       "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* Overlong, surrogate, above U+10FFFF, stray continuation: escaped. */
	EXPECT("\xc0\xaf", 0, "\\xc0\\xaf");
	EXPECT("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");
	EXPECT("\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80");
	EXPECT("\x80", 0, "\\x80");
	/* An unfinished sequence at the end: left for the next chunk with MORE, else escaped. */
	expect("ab\xe2\x82", 4, SAFETEXT_MORE, "ab", 2);
	expect("ab\xe2\x82", 4, 0, "ab\\xe2\\x82", 4);
	expect("ab\xe2(", 4, SAFETEXT_MORE, "ab\\xe2(", 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_controls),
	    cmocka_unit_test(test_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
