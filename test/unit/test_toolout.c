/* toolout: a validator's output redacted with the rendered file's secret spans. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/buf.h"
#include "render/toolout.h"

/* The file: a public job name, a secret URL (quoted, as {{yamlv}} of a secret writes it). */
static const char file[] = "job_name: \"pager\"\nurl: \"https://bob:Se%zzcret@h.example/x\"\n";

static char *redact(const char *out)
{
	const char *q = strstr(file, "\"https");
	struct tpl_span sp = {(size_t)(q - file), strlen("\"https://bob:Se%zzcret@h.example/x\"")};
	struct buf b;
	buf_init(&b);
	toolout_redact(out, strlen(out), file, strlen(file), &sp, 1, &b);
	return buf_take(&b);
}

static void test_quoted_back(void **state)
{
	(void)state;
	char *r = redact("FAILED: parse \"https://bob:Se%zzcret@h.example/x\": invalid URL escape "
	                 "\"%zz\"\n");
	assert_string_equal(r, "FAILED: parse \"[REDACTED]\": invalid URL escape \"[REDACTED]\"\n");
	free(r);
}

static void test_words(void **state)
{
	(void)state;
	/* unquoted pieces of the secret go; the tool's own words and the public name stay */
	char *r = redact("line 2: host h.example rejects user bob for job \"pager\"\n");
	assert_string_equal(r,
	                    "line 2: host [REDACTED] rejects user [REDACTED] for job \"pager\"\n");
	free(r);
}

static void test_no_spans(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b);
	toolout_redact("as is", 5, file, strlen(file), NULL, 0, &b);
	assert_int_equal(b.len, 5);
	assert_memory_equal(b.p, "as is", 5);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quoted_back),
	    cmocka_unit_test(test_words),
	    cmocka_unit_test(test_no_spans),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
