/*
 * control: the job engine of start, stop, restart, once, the signal verbs and
 * graceful-kill. runit's protocol is spoken directly (runit/runit.h); the
 * waiting and the lines printed on stdout follow runit's sv -w, with the
 * service name where sv prints the directory, as Omnibus' gitlab-ctl does.
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
 * wait_ms after the call. Prints sv's line per service on stdout; a check script that could
 * not run is recorded in d. Returns the number of services that failed.
 */
int control_run(const struct ctl *ctl, const struct control_op *op, const struct svsel *sel,
                long wait_ms, struct diags *d);

/*
 * sv's svstatus_get for dir below dfd: 1 with st filled; 0 after printing "fail: LABEL: runsv
 * not running"; -1 after printing a warning (on stdout, as sv). label is "NAME" or "NAME/log".
 */
int control_status_get(int dfd, const char *dir, const char *label, struct sv_status *st);

#endif
