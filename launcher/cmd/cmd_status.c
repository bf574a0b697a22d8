/*
 * status: runit's `sv status` line for every enabled service and its log, with the service
 * name where sv prints the directory, as Omnibus' gitlab-ctl does.
 *
 * It reads only the service directory (no configuration) and gathers its lines in a buffer
 * on the stack written with write(2).
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd/commands.h"
#include "lib/alloc.h"
#include "lib/ctl.h"
#include "lib/fdio.h"
#include "runit/runit.h"
#include "runit/svsel.h"

/*
 * Exit code contributions, summed as Omnibus does: 0 run, 1 runsv not running, 3 down,
 * 4 status unreadable. CODE_DEAD (down although runit wants it up) counts as down in the
 * sum; --lsb tells them apart.
 */
enum { CODE_RUN = 0, CODE_FAIL = 1, CODE_DOWN = 3, CODE_UNKNOWN = 4, CODE_DEAD = 5 };

/*
 * The output buffer holds a few states (each at most SV_STATUS_LINE_MAX). Small: it lies on
 * status's deepest frames, where each 4 KiB more of stack is a page fault.
 */
#define OUT_LEN 512
_Static_assert(OUT_LEN >= SV_STATUS_LINE_MAX, "a state fits the output buffer");

struct out {
	size_t n;
	bool failed; /* a write(2) failed: status exits 1 */
	char b[OUT_LEN];
};

static void out_flush(struct out *o)
{
	if (o->n > 0 && fdio_write_all(STDOUT_FILENO, o->b, o->n) == -1)
		o->failed = true;
	o->n = 0;
}

/* Room for len more bytes at o->b + o->n, writing out what is gathered when needed. */
static char *out_room(struct out *o, size_t len)
{
	if (OUT_LEN - o->n < len)
		out_flush(o);
	return o->b + o->n;
}

static void out_put(struct out *o, const char *s)
{
	size_t len = strlen(s);
	if (len > OUT_LEN) {
		out_flush(o);
		if (fdio_write_all(STDOUT_FILENO, s, len) == -1)
			o->failed = true;
		return;
	}
	memcpy(out_room(o, len), s, len);
	o->n += len;
}

static int state_code(const struct sv_status *st)
{
	if (st->state == SV_RUN && st->pid != 0)
		return CODE_RUN;
	return st->want == 'u' ? CODE_DEAD : CODE_DOWN;
}

/* sv's state line for dir (without newline) into o. */
static void put_state(struct out *o, int dfd, const char *dir, const char *name,
                      const struct sv_status *st, time_t now)
{
	int n = sv_status_format(out_room(o, SV_STATUS_LINE_MAX), SV_STATUS_LINE_MAX, name, st,
	                         !sv_normally_down_at(dfd, dir), now);
	if (n > 0)
		o->n += (size_t)n < SV_STATUS_LINE_MAX ? (size_t)n : SV_STATUS_LINE_MAX - 1;
}

/*
 * The state of dir ("NAME" or "NAME/log", which sv's messages name) into o, its state line
 * naming it `name`: the exit code share, or CODE_FAIL / CODE_UNKNOWN.
 */
static int put_one(struct out *o, int dfd, const char *dir, const char *name, time_t now)
{
	struct sv_status st;
	char msg[SV_STATUS_LINE_MAX];
	int r = sv_status_get(dfd, dir, dir, &st, msg, sizeof msg);
	if (r != 1) {
		out_put(o, msg);
		return r == 0 ? CODE_FAIL : CODE_UNKNOWN;
	}
	put_state(o, dfd, dir, name, &st, now);
	return state_code(&st);
}

/* One line of `status` for a service and its log; returns its exit code share. */
static int status_one(struct out *o, const struct svsel *sel, const char *name, time_t now)
{
	char logdir[NAME_MAX + 8];
	if (svsel_relpath(name, true, logdir, sizeof logdir) == -1) {
		out_put(o, "fail: ");
		out_put(o, name);
		out_put(o, ": ");
		out_put(o, sv_strerror(errno));
		out_put(o, "\n");
		return CODE_FAIL;
	}
	/* names are relative to the open service directory, like sv's after its chdir */
	int code = put_one(o, sel->fd, name, name, now);
	struct stat sb;
	int logcode = CODE_RUN;
	if (code == CODE_FAIL || code == CODE_UNKNOWN) {
		/* sv says no more of a service it cannot read */
	} else if (fstatat(sel->fd, logdir, &sb, 0) == 0) {
		out_put(o, "; ");
		logcode = put_one(o, sel->fd, logdir, "log", now);
	} else if (errno != ENOENT) {
		out_put(o, "; warning: ");
		out_put(o, name);
		out_put(o, "/log: unable to change directory: ");
		out_put(o, sv_strerror(errno));
		logcode = CODE_UNKNOWN;
	}
	out_put(o, "\n");
	/* The main service decides; a failing log only spoils an otherwise running one. */
	return code != CODE_RUN ? code : logcode;
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

/* Every selected service's line; the exit code, summed as Omnibus does or as --lsb ranks. */
static int status_all(const struct ctl *ctl, const char *verb, const struct svsel *sel, bool lsb)
{
	static const int lsb_of_rank[] = {0, 3, 1, 4};
	struct out o = {.n = 0, .failed = false};
	time_t now = time(NULL);
	int code = 0, worst = 0;
	bool orphans = false;
	for (size_t i = 0; i < sel->n; i++) {
		int c = status_one(&o, sel, sel->names[i], now);
		orphans |= c == CODE_FAIL;
		if (lsb_rank(c) > worst)
			worst = lsb_rank(c);
		code += c == CODE_DEAD ? CODE_DOWN : c;
		if (code > 255)
			code = 255; /* a sum past 255 would wrap to a false success */
	}
	out_flush(&o);
	if (o.failed) {
		warn("standard output");
		return lsb ? 4 : 1;
	}
	if (orphans)
		command_hint_runsvdir(ctl, verb, stderr);
	return lsb ? lsb_of_rank[worst] : code;
}

int cmd_status(const struct ctl *ctl, int argc, char **argv)
{
	const char *name;
	bool lsb = false;
	if (status_opts(argc, argv, &lsb) == -1 || command_one_arg(argc, argv, &name) == -1)
		return 2;
	struct svsel sel;
	int rc = lsb ? 4 : 1;
	if (svsel_load(ctl, name, &sel) == 0 || status_unselected(ctl, argv[0], name, &sel) == 0) {
		rc = status_all(ctl, argv[0], &sel, lsb);
		svsel_free(&sel);
	}
	return rc;
}
