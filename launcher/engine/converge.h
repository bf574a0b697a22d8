/*
 * converge: bring runit to the plan (render/plan.h) of reconfigure. Writes
 * the tree's changes, starts the one runsvdir, and then, wave by wave so a
 * service starts only after what it needs is up and ready: waits until runsv
 * supervises each new service, restarts the ones whose run script, env or
 * config changed (a log-only change only HUPs svlogd), waits for readiness,
 * runs setup steps, and stops and unlinks disabled services. Every wait ends
 * at one deadline (SVWAIT for the whole run); none is a fixed sleep.
 *
 * It prints nothing itself: what it does ("restart NAME (env changed)") goes to the command's
 * d->live as it happens, flushed before each wait, so an operator watches a long initdb. What
 * goes wrong in a step (a service that does not get ready, with its log's last lines; a setup
 * step that fails, with its output; -v timings) is recorded in d and reported (diags_report) as
 * that step ends; a problem the run goes on past (a file it could not write, a record it could
 * not update) is recorded for the end: converge_run and converge_dry_run leave it in d.
 *
 * The restarts a run owes are recorded (render/pending.h) before any file is
 * published and cleared once the service runs its new files, so a run killed
 * in between is finished by the next one.
 *
 * It is the engine/ stage because it needs the plan (render/), readiness and
 * setup steps (proc/) and runsv's protocol (runit/) at once.
 */
#ifndef GITLAB_CTL_CONVERGE_H
#define GITLAB_CTL_CONVERGE_H

#include <stdbool.h>

#include "config/attrs.h"
#include "lib/ctl.h"
#include "lib/diag.h"
#include "render/pending.h"
#include "render/plan.h"
#include "render/steprec.h"
#include "runit/runit.h"

/* What converge learns of one planned service (parallel to plans.p). */
struct cv_svc {
	bool was_live;   /* runsv supervised it before anything changed */
	bool ready;      /* up and ready in this run (or has nothing to wait for) */
	bool failed;     /* did not come up ready: its dependents are not started */
	bool setup_stop; /* stopped for a before_start step: start it again */
	bool held;       /* linked early under this run's down file: released with its wave */
	unsigned why;    /* CV_WHY_* of the changes written, and of owed restarts */
	bool owes;       /* a pending record may name it: cleared on disk once it is done */
	bool seen;       /* last holds the status read since converge_one last acted on it */
	bool touched;    /* a file of it changes in this run (its check script too) */
	struct sv_status last;
	char notready[512]; /* why it is not ready, for its dependents' messages */
};

struct converge {
	const struct ctl *ctl;
	const struct attrs *a;
	struct plans *ps;
	bool dry_run;
	long wait_ms;  /* SVWAIT */
	long t0;       /* mono_ms() when the command started, for -v timings */
	long deadline; /* mono_ms() by which every wait ends: one SVWAIT in all */
	struct cv_svc *s;
	struct pending pd; /* restarts owed, on disk */
	struct steprec sr; /* one-time setup steps done or running, on disk */
	int updated;       /* resources changed (files when written, steps, disables) */
	bool early;        /* the first wave's services without one-time steps linked before them */
	struct diags *d;   /* the command's: its streams, and what is left for it to print */
	struct diags late; /* what failed to be written, controlled or recorded: moved to d */
};

void converge_init(struct converge *cv, const struct ctl *ctl, const struct attrs *a,
                   struct plans *ps, bool dry_run, long wait_ms, long t0, struct diags *d);
void converge_free(struct converge *cv);

/*
 * svdir_ensure for a command: its wait for a stopping wrapper goes out on d->live, its error is
 * reported (diags_report) when it returns (control starts services through the same wrapper).
 */
int converge_ensure_wrapper(const struct ctl *ctl, struct diags *d);

/* Apply the plan's tree changes (ps->t after tree_diff) and converge runit. 0 or -1. */
int converge_run(struct converge *cv);

/* A dry run: say on d->live the disables and one-time setup steps converge_run would do. */
void converge_dry_run(struct converge *cv);

#endif
