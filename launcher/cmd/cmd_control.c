/*
 * Service control: status, start/stop/restart/once, signals, graceful-kill
 * (their job engine is engine/control.h), service-list. The output follows
 * runit's sv, with the service name where sv prints the directory, as
 * Omnibus' gitlab-ctl does.
 *
 * `status` is as cheap as `sv status`: it reads only the service directory,
 * allocates only the name list and writes its output with one write(2).
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
 * Exit code contributions of `status`, summed as Omnibus does: 0 run, 1 runsv not running,
 * 3 down, 4 status unreadable. CODE_DEAD (down although runit wants it up) counts as down
 * in the sum; `status --lsb` tells them apart.
 */
enum { CODE_RUN = 0, CODE_FAIL = 1, CODE_DOWN = 3, CODE_UNKNOWN = 4, CODE_DEAD = 5 };

/*
 * stdout fully buffered in a static buffer: a whole `status` is one write(2), as sv's, and
 * nothing is allocated for it. Commands that wait flush before each wait. `status` hands
 * stdio one line per service: stdio's cost is per call.
 */
static void out_init(void)
{
	static char buf[8192];
	setvbuf(stdout, buf, _IOFBF, sizeof buf);
}

static int state_code(const struct sv_status *st)
{
	if (st->state == SV_RUN && st->pid != 0)
		return CODE_RUN;
	return st->want == 'u' ? CODE_DEAD : CODE_DOWN;
}

/* A service's (or log's) state at buf, as sv_status_format; a name is at most NAME_MAX,
 * so the line fits the callers' buffers. Returns the length written. */
static size_t state_at(char *buf, size_t len, int dfd, const char *dir, const char *name,
                       const struct sv_status *st, time_t now)
{
	int n = sv_status_format(buf, len, name, st, !sv_normally_down_at(dfd, dir), now);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* One line of `status` for a service and its log (out: stdout); returns its exit code share. */
static int status_one(const struct svsel *sel, const char *name, time_t now, struct diags *out)
{
	char logdir[NAME_MAX + 8], line[2 * (NAME_MAX + 256)];
	/* relative to the open service directory, like sv after its chdir */
	const char *dir = name;
	struct sv_status st;

	if (svsel_relpath(name, true, logdir, sizeof logdir) == -1) {
		printf("fail: %s: %s\n", name, sv_strerror(errno));
		return CODE_FAIL;
	}
	int r = control_status_get(sel->fd, dir, name, &st, out);
	if (r <= 0)
		return r == 0 ? CODE_FAIL : CODE_UNKNOWN;
	size_t n = state_at(line, sizeof line - 2, sel->fd, dir, name, &st, now);
	int code = state_code(&st);

	struct stat sb;
	if (fstatat(sel->fd, logdir, &sb, 0) == -1) {
		if (errno == ENOENT) {
			line[n++] = '\n';
			fwrite(line, 1, n, stdout);
			return code;
		}
		fwrite(line, 1, n, stdout);
		printf("; warning: %s/log: unable to change directory: %s\n", name,
		       sv_strerror(errno));
		return code ? code : CODE_UNKNOWN;
	}
	memcpy(line + n, "; ", 2);
	fwrite(line, 1, n + 2, stdout);
	r = control_status_get(sel->fd, logdir, logdir, &st, out);
	int logcode = r == 0 ? CODE_FAIL : CODE_UNKNOWN;
	if (r == 1) {
		n = state_at(line, sizeof line - 1, sel->fd, logdir, "log", &st, now);
		line[n++] = '\n';
		fwrite(line, 1, n, stdout);
		logcode = state_code(&st);
	}
	/* The main service decides; a failing log only spoils an otherwise running one. */
	return code != CODE_RUN ? code : logcode;
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

/*
 * --lsb: the LSB init-script status codes for the whole selection, the worst one winning:
 * 4 unknown (status unreadable, runsv not running), then 1 dead (down although runit wants
 * it up: supervise/status is the pidfile), then 3 not running (down as wanted), else 0.
 */
static int lsb_rank(int code)
{
	switch (code) {
	case CODE_RUN:
		return 0;
	case CODE_DOWN:
		return 1;
	case CODE_DEAD:
		return 2;
	default:
		return 3;
	}
}

static int status_opts(int argc, char **argv, bool *lsb)
{
	static const struct option opts[] = {{"lsb", no_argument, NULL, 'l'}, {NULL, 0, NULL, 0}};
	int ch;
	while ((ch = command_getopt(argc, argv, "+", opts)) != -1) {
		if (ch != 'l')
			return -1;
		*lsb = true;
	}
	return 0;
}

/*
 * The selection did not load: command_select says why, and may name the catalog's services,
 * which needs the paths main skipped for status (ctl_init_root). Called only then, so that
 * neither its frame nor a full ctl is on the stack of every `status`. 0 when a second
 * attempt loads after all.
 */
static __attribute__((noinline)) int status_unselected(const struct ctl *ctl, const char *verb,
                                                       const char *name, struct svsel *sel)
{
	struct ctl *full = xmalloc(sizeof *full);
	const struct ctl *use = full;
	if (ctl_init(full, ctl->root[0] != '\0' ? ctl->root : NULL,
	             ctl->config[0] != '\0' ? ctl->config : NULL) == -1)
		use = ctl; /* the message then names no catalog service */
	else
		full->verbose = ctl->verbose;
	int r = command_select(use, verb, name, sel, stderr);
	free(full);
	return r;
}

int cmd_status(const struct ctl *ctl, int argc, char **argv)
{
	out_init();
	struct svsel sel;
	const char *name;
	bool lsb = false;
	if (status_opts(argc, argv, &lsb) == -1 || command_one_arg(argc, argv, &name) == -1)
		return 2;
	if (svsel_load(ctl, name, &sel) == -1 && status_unselected(ctl, argv[0], name, &sel) != 0)
		return lsb ? 4 : 1;
	time_t now = time(NULL);
	static const int lsb_of_rank[] = {0, 3, 1, 4};
	int code = 0, worst = 0;
	bool orphans = false;
	struct diags out; /* only its stream: control_status_get's "fail:" lines */
	diags_init(&out);
	out.live = stdout;
	for (size_t i = 0; i < sel.n; i++) {
		int c = status_one(&sel, sel.names[i], now, &out);
		orphans |= c == CODE_FAIL;
		if (lsb_rank(c) > worst)
			worst = lsb_rank(c);
		code += c == CODE_DEAD ? CODE_DOWN : c;
		if (code > 255)
			code = 255; /* a sum past 255 would wrap to a false success */
	}
	fflush(stdout);
	svsel_free(&sel);
	if (orphans)
		command_hint_runsvdir(ctl, argv[0], stderr);
	return lsb ? lsb_of_rank[worst] : code;
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
	if (sel.n > 1 && svsel_order(&sel, strcmp(op->acts, "d") == 0) == -1)
		warn("%s: cannot read the service order; acting in name order", sel.dir);

	struct diags d; /* result lines on stdout; what a timed-out check said on stderr */
	diags_init(&d);
	d.live = stdout;
	d.report = stderr;
	int failed = control_run(ctl, op, &sel, wait * 1000L, &d);
	diags_report(&d);
	diags_free(&d);
	if (failed && control_starts(op))
		cmd_tail_failed(ctl, sel.names, sel.n, stderr);
	svsel_free(&sel);
	return failed ? 1 : 0;
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
