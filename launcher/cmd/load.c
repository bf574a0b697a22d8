#include <string.h>

#include "cmd/load.h"

static void report(const struct diags *d, bool failed, enum cmd_report how, const char *verb,
                   FILE *fp)
{
	if (fp == NULL)
		return;
	switch (how) {
	case CMD_REPORT_NONE:
		break;
	case CMD_REPORT_FULL:
		diags_print(d, fp);
		break;
	case CMD_REPORT_QUIET:
		diags_print_quiet(d, verb, fp);
		break;
	case CMD_REPORT_FAILED:
		if (failed)
			diags_print(d, fp);
		break;
	}
}

int cmd_load(const struct ctl *ctl, struct loaded *l, enum cmd_report how, const char *verb,
             FILE *fp)
{
	diags_init(&l->d);
	int rc = attrs_load_all(ctl, &l->cat, &l->a, &l->d);
	l->ok = rc == 0;
	if (rc == 0 && l->d.nerr > 0) {
		attrs_free(&l->a);
		catalog_free(&l->cat);
		l->ok = false;
	}
	report(&l->d, !l->ok, how, verb, fp);
	return l->ok ? 0 : -1;
}

int cmd_load_catalog(const struct ctl *ctl, struct catalog *cat, enum cmd_report how,
                     const char *verb, FILE *fp)
{
	struct diags d;
	diags_init(&d);
	memset(cat, 0, sizeof *cat);
	/* the one way attrs_load_all reads it too: through the cache */
	int rc = catalog_load_ctl(ctl, cat, &d);
	if (rc == 0 && d.nerr > 0) {
		catalog_free(cat);
		rc = -1;
	}
	report(&d, rc == -1, how, verb, fp);
	diags_free(&d);
	return rc;
}

void cmd_unload(struct loaded *l)
{
	if (l->ok) {
		attrs_free(&l->a);
		catalog_free(&l->cat);
	}
	l->ok = false;
	diags_free(&l->d);
}
