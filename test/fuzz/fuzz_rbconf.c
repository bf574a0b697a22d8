/*
 * libFuzzer harness for the gitlab.rb parser: any bytes must give either a
 * parse or located errors, with no crash, leak or undefined behaviour.
 * Build and run: see README.md in this directory.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config/rbconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const struct rb_value *v)
{
	const struct rb_value *where = NULL;
	if (rb_has_opaque(v, &where) && where->kind != RB_OPAQUE)
		__builtin_trap();
	(void)rb_kind_name(v->kind);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rb_file f;
	struct diags d;
	diags_init(&d);
	int rc = rb_parse("fuzz.rb", (const char *)data, size, &f, &d);
	/* The contract: -1 exactly when an error is recorded, and it has a location. */
	if ((rc == -1) != (d.nerr > 0))
		__builtin_trap();
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].line < 1 || d.v[i].col < 1)
			__builtin_trap();
	for (size_t i = 0; i < f.n; i++) {
		if (f.v[i].value == NULL || f.v[i].value->loc.line < 1)
			__builtin_trap();
		/* A statement inside a condition names its keyword, and where it is. */
		if (f.v[i].cond.word != NULL &&
		    (f.v[i].cond.loc.line < 1 || f.v[i].cond.loc.col < 1 ||
		     (strcmp(f.v[i].cond.word, "if") != 0 &&
		      strcmp(f.v[i].cond.word, "unless") != 0 &&
		      strcmp(f.v[i].cond.word, "case") != 0)))
			__builtin_trap();
		walk(f.v[i].value);
	}
	FILE *null = fopen("/dev/null", "w");
	if (null != NULL) {
		diags_print(&d, null);
		fclose(null);
	}
	rb_free(&f);
	diags_free(&d);
	return 0;
}
