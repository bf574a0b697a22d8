/*
 * Service control: start/stop/restart/once, signals, graceful-kill (their job
 * engine is engine/control.h), service-list. The output follows runit's sv,
 * with the service name where sv prints the directory, as Omnibus' gitlab-ctl
 * does. `status` is cmd_status.c.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config/catalog.h"
#include "lib/alloc.h"
#include "cmd/commands.h"
#include "cmd/load.h"
#include "engine/control.h"
#include "runit/runit.h"
#include "runit/svdir.h"
#include "runit/svsel.h"
#include "runit/svtail.h"

/*
 * stdout fully buffered: each wave's lines in one write(2); commands that wait flush first.
 * The buffer is given (stdio would fstat stdout to size one) and is stdout's until exit
 * flushes it, so it is never freed.
 */
static void out_init(void)
{
	enum { OUT_BUF = 8192 };
	setvbuf(stdout, xmalloc(OUT_BUF), _IOFBF, OUT_BUF);
}

static int svwait(long *out)
{
	const char *errstr;
	if (sv_wait_seconds(out, &errstr) == 0)
		return 0;
	warnx("SVWAIT=%s: %s (seconds, 0 to %d)", getenv("SVWAIT"), errstr, SV_WAIT_MAX);
	return -1;
}

static int no_options(int argc, char **argv)
{
	static const struct option opts[] = {{NULL, 0, NULL, 0}};
	if (command_getopt(argc, argv, "+", opts) != -1)
		return -1;
	return 0;
}

/* Select services through the one resolver. 0, 1 (reported) or 2 (usage). */
static int select_services(const struct ctl *ctl, int argc, char **argv, struct svsel *sel)
{
	const char *name;
	if (no_options(argc, argv) == -1 || command_one_arg(argc, argv, &name) == -1)
		return 2;
	return command_select(ctl, argv[0], name, sel, stderr);
}

/* restart-except SVC...: every enabled service but those named, each of which must resolve. */
static int select_except(const struct ctl *ctl, int argc, char **argv, struct svsel *sel)
{
	if (no_options(argc, argv) == -1)
		return 2;
	if (optind >= argc) {
		warnx("name the services to leave running: restart-except SERVICE...");
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		struct svsel one;
		if (command_select(ctl, argv[0], argv[i], &one, stderr) != 0)
			return 1;
		svsel_free(&one);
	}
	if (command_select(ctl, argv[0], NULL, sel, stderr) != 0)
		return 1;
	size_t n = 0;
	for (size_t k = 0; k < sel->n; k++) {
		bool keep = true;
		for (int i = optind; i < argc && keep; i++)
			keep = strcmp(sel->names[k], argv[i]) != 0;
		if (keep)
			sel->names[n++] = sel->names[k];
		else
			free(sel->names[k]);
	}
	sel->n = n;
	return 0;
}

int cmd_control(const struct ctl *ctl, int argc, char **argv)
{
	out_init();
	const struct control_op *op = control_op(argv[0]);
	struct svsel sel;
	long wait;

	if (op == NULL) {
		warnx("%s: not a control command", argv[0]);
		return 2;
	}
	if (svwait(&wait) == -1)
		return 2;
	int r = strcmp(op->name, "restart-except") == 0 ? select_except(ctl, argc, argv, &sel)
	                                                : select_services(ctl, argc, argv, &sel);
	if (r != 0)
		return r;
	int failed = command_control(ctl, op, &sel, wait);
	svsel_free(&sel);
	return failed ? 1 : 0;
}

int command_control(const struct ctl *ctl, const struct control_op *op, struct svsel *sel,
                    long wait_s)
{
	if (sel->n > 1 && svsel_order(sel, strcmp(op->acts, "d") == 0) == -1)
		warn("%s: cannot read the service order; acting in name order", sel->dir);

	struct diags d; /* result lines on stdout; what a timed-out check said on stderr */
	diags_init(&d);
	d.live = stdout;
	d.report = stderr;
	int failed = control_run(ctl, op, sel, wait_s * 1000L, &d);
	diags_report(&d);
	diags_free(&d);
	if (failed && control_starts(op))
		cmd_tail_failed(ctl, sel->names, sel->n, stderr);
	return failed;
}

/* --- service-list ------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool enabled(const struct svsel *sel, const char *name)
{
	/* no <install>/service yet: names is NULL, which bsearch must not get */
	return sel->n > 0 &&
	       bsearch(&name, sel->names, sel->n, sizeof *sel->names, cmp_str) != NULL;
}

int cmd_service_list(const struct ctl *ctl, int argc, char **argv)
{
	struct catalog cat;
	struct svsel sel;

	if (no_options(argc, argv) == -1 || optind != argc) {
		warnx("%s: takes no arguments", argv[0]);
		return 2;
	}
	if (cmd_load_catalog(ctl, &cat, CMD_REPORT_FULL, argv[0], stderr) == -1)
		return 1;
	if (svsel_load(ctl, NULL, &sel) == -1 && errno != ENOENT) {
		warn("%s", sel.dir);
		catalog_free(&cat);
		return 1;
	}
	/* Catalog services, then enabled ones the catalog does not know (hand-made). */
	for (size_t i = 0; i < cat.n; i++)
		printf("%s%s\n", cat.v[i].name, enabled(&sel, cat.v[i].name) ? "*" : "");
	for (size_t i = 0; i < sel.n; i++)
		if (catalog_find(&cat, sel.names[i]) == NULL)
			printf("%s*\n", sel.names[i]);
	catalog_free(&cat);
	svsel_free(&sel);
	return fflush(stdout) == 0 ? 0 : 1;
}
