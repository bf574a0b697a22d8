/* diag_hint and diags_print_json: the fix clause of a message, the JSON array with it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/diag.h"

static void expect_hint(const char *msg, const char *want)
{
	size_t n = 0;
	const char *h = diag_hint(msg, &n);
	if (want == NULL) {
		assert_null(h);
		return;
	}
	assert_non_null(h);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(h, want, n);
}

static void test_hints(void **state)
{
	(void)state;
	expect_hint("x['listen_prot'] is not a setting gitlab-ctl knows; ignored (did you mean "
	            "'listen_port'?)",
	            "did you mean 'listen_port'?");
	expect_hint(
	    "postgres is not a name gitlab-ctl or Omnibus knows; did you mean 'postgresql'?",
	    "did you mean 'postgresql'?");
	expect_hint("memory: 512mb is not a number: quote it: '512mb'", "quote it: '512mb'");
	expect_hint("use '=' to assign; '=>' is for hash entries",
	            "use '=' to assign; '=>' is for hash entries");
	expect_hint("postgresql: command postgres not found: install the Debian package "
	            "postgresql (apt-get install postgresql)",
	            "install the Debian package postgresql (apt-get install postgresql)");
	expect_hint(
	    "gitlab-ctl does not evaluate conditions: gitlab_exporter['listen_port'] (line 4) "
	    "is set inside 'if': write the value this host needs as a plain assignment, "
	    "outside any condition",
	    "write the value this host needs as a plain assignment, outside any condition");
	expect_hint("'if' has no matching 'end': add 'end' after its last statement",
	            "add 'end' after its last statement");
	/* a marker inside a phrase is not a fix: "reset " is no "set " */
	expect_hint("ignoring 2 Omnibus settings this build does not manage: nginx, reset x", NULL);
	expect_hint("a plain message", NULL);
}

static void test_json(void **state)
{
	(void)state;
	struct diags d;
	diags_init(&d);
	diag_file(&d, DIAG_ERR, "g.rb", 3, "postgres is unknown; did you mean 'postgresql'?");
	diag_file(&d, DIAG_WARN, NULL, 0, "a \"quoted\"\tword");
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	assert_non_null(fp);
	diags_print_json(&d, fp);
	assert_int_equal(fclose(fp), 0);
	assert_string_equal(
	    buf,
	    "[\n  {\"file\": \"g.rb\", \"line\": 3, \"col\": 0, \"severity\": \"error\", "
	    "\"message\": \"postgres is unknown; did you mean 'postgresql'?\", \"hint\": \"did "
	    "you mean 'postgresql'?\"},\n  {\"file\": null, \"line\": 0, \"col\": 0, "
	    "\"severity\": \"warning\", \"message\": \"a \\\"quoted\\\"\\u0009word\", \"hint\": "
	    "null}]");
	free(buf);
	diags_free(&d);
}

/* A stage's own message reads as its warnx did: the command's name, then the words. */
static void test_plain_flush(void **state)
{
	(void)state;
	struct diags d;
	diags_init(&d);
	diag_add(&d, DIAG_ERR, "useradd %s failed (status %d)", "git", 9);
	diag_add(&d, DIAG_WARN, "path too long");
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	assert_non_null(fp);
	diags_flush(&d, fp);
	assert_int_equal(fclose(fp), 0);
	char want[256];
	snprintf(want, sizeof want, "%s: useradd git failed (status 9)\n%s: path too long\n",
	         program_invocation_short_name, program_invocation_short_name);
	assert_string_equal(text, want);
	assert_int_equal(d.n, 0); /* flushed: printed once */
	assert_int_equal(d.nerr, 0);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hints),
	    cmocka_unit_test(test_json),
	    cmocka_unit_test(test_plain_flush),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
