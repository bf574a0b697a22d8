/*
 * The streams a command sets on its diags: diag_out/diag_progress on d->live, diags_report on
 * d->report as a step ends, text records printed as they are, diags_move for the end of a run.
 */
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

struct mem {
	char *p;
	size_t n;
	FILE *fp;
};

static void mem_open(struct mem *m)
{
	m->p = NULL;
	m->n = 0;
	m->fp = open_memstream(&m->p, &m->n);
	assert_non_null(m->fp);
}

static void mem_close(struct mem *m)
{
	assert_int_equal(fclose(m->fp), 0);
	m->fp = NULL;
}

/* A step's problem, then its log's last lines (a NUL byte kept), on report; lines on live. */
static void test_report_at_step_end(void **state)
{
	(void)state;
	struct mem live, report;
	mem_open(&live);
	mem_open(&report);
	struct diags d;
	diags_init(&d);
	d.live = live.fp;
	d.report = report.fp;
	diag_progress(&d, "restart %s (env changed)\n", "redis");
	diag_out(&d, "reload %s log\n", "redis");
	diag_add(&d, DIAG_ERR, "redis: did not come back up");
	static const char tail[] = "  last lines:\n  a\0b\n";
	diag_text(&d, tail, sizeof tail - 1);
	diags_report(&d);
	assert_int_equal(d.n, 0);
	assert_int_equal(d.nerr, 0);
	assert_int_equal(d.nnote, 0);
	assert_ptr_equal(d.live, live.fp); /* the streams stay for the next step */
	assert_ptr_equal(d.report, report.fp);
	diags_live_flush(&d);
	mem_close(&live);
	mem_close(&report);
	assert_string_equal(live.p, "restart redis (env changed)\nreload redis log\n");
	char want[256];
	int n = snprintf(want, sizeof want, "%s: redis: did not come back up\n",
	                 program_invocation_short_name);
	memcpy(want + n, tail, sizeof tail - 1);
	assert_int_equal(report.n, (size_t)n + sizeof tail - 1);
	assert_memory_equal(report.p, want, report.n);
	free(live.p);
	free(report.p);
}

/* Without a report stream the records stay for the command; without live, lines go nowhere. */
static void test_no_streams(void **state)
{
	(void)state;
	struct diags d;
	diags_init(&d);
	diag_out(&d, "nowhere\n");
	diag_progress(&d, "nowhere either\n");
	diags_live_flush(&d);
	diag_add(&d, DIAG_WARN, "kept");
	diags_report(&d);
	assert_int_equal(d.n, 1);
	diags_free(&d);
}

/* What a run went on past follows what the command already had, in the order recorded. */
static void test_move(void **state)
{
	(void)state;
	struct diags d, late;
	diags_init(&d);
	diags_init(&late);
	struct mem report;
	mem_open(&report);
	late.report = report.fp;
	diag_add(&d, DIAG_WARN, "first");
	diag_file(&late, DIAG_ERR, NULL, 0, "cannot write x");
	diag_text(&late, "  detail\n", 9);
	diags_move(&d, &late);
	assert_int_equal(late.n, 0);
	assert_null(late.v);
	assert_ptr_equal(late.report, report.fp);
	assert_int_equal(d.n, 3);
	assert_int_equal(d.nerr, 1);
	assert_int_equal(d.nnote, 1);
	diags_move(&d, &late); /* nothing to move */
	assert_int_equal(d.n, 3);
	diags_print(&d, report.fp);
	mem_close(&report);
	char want[256];
	snprintf(want, sizeof want, "%s: first\ngitlab-ctl: error: cannot write x\n  detail\n",
	         program_invocation_short_name);
	assert_string_equal(report.p, want);
	free(report.p);
	diags_free(&d);
	diags_free(&late);
}

/* A text record is a note: the quiet summary neither shows nor counts it. */
static void test_text_is_note(void **state)
{
	(void)state;
	struct diags d;
	diags_init(&d);
	diag_text(&d, "  out\n", 6);
	diag_file(&d, DIAG_WARN, "g.rb", 2, "odd");
	struct mem m;
	mem_open(&m);
	diags_print_quiet(&d, "tail", m.fp);
	mem_close(&m);
	assert_string_equal(m.p,
	                    "gitlab-ctl tail: 1 config warning: run gitlab-ctl check-config\n");
	free(m.p);
	diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_report_at_step_end),
	    cmocka_unit_test(test_no_streams),
	    cmocka_unit_test(test_move),
	    cmocka_unit_test(test_text_is_note),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
