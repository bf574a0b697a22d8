/*
 * control: the job engine of start, stop, restart, once, the signal verbs and
 * graceful-kill. runit's protocol is spoken directly (runit/runit.h); the
 * waiting and the result lines follow runit's sv -w, with the service name
 * where sv prints the directory, as Omnibus' gitlab-ctl does. It prints
 * nothing itself: the result lines ("ok: run: ...", "timeout: ...", "kill:
 * ...", and sv's "fail:"/"warning:" lines, which sv prints among them on its
 * standard output) go to the command's d->live, flushed before each wait.
 * Starting a service no runsv supervises first makes sure the root's one
 * runsvdir runs (runit/svdir.h).
 */
#ifndef GITLAB_CTL_CONTROL_H
#define GITLAB_CTL_CONTROL_H

#include <stdbool.h>

#include "lib/ctl.h"
#include "lib/diag.h"
#include "runit/runit.h"
#include "runit/svsel.h"

struct control_op {
	const char *name;
	const char *acts; /* control bytes sent, and the states waited for (sv's acts) */
	bool kill_on_timeout;
	const char *signame; /* a plain signal: what happened to the pid is reported */
};

/* The verb's operation ("start", "hup", "restart-except", ...); NULL: not a control verb. */
const struct control_op *control_op(const char *name);
/* Whether op brings services up (and so waits for their dependencies first). */
bool control_starts(const struct control_op *op);

/*
 * Apply op to sel's services, wave by wave in sel's order (svsel_order), all waits ending
 * wait_ms after the call. sv's line per service goes to d->live; what the check script of a
 * service that timed out said is recorded in d and reported (diags_report) right after that
 * line; a check script that could not run is left recorded in d for the command. Returns the
 * number of services that failed.
 */
int control_run(const struct ctl *ctl, const struct control_op *op, const struct svsel *sel,
                long wait_ms, struct diags *d);

/*
 * sv's svstatus_get for dir below dfd: 1 with st filled; 0 after "fail: LABEL: runsv not
 * running" on d->live; -1 after a warning there (sv prints both on its standard output).
 * label is "NAME" or "NAME/log". Only d->live is used: a status needs no records.
 */
int control_status_get(int dfd, const char *dir, const char *label, struct sv_status *st,
                       struct diags *d);

#endif
