/*
 * setupstep: a one-time setup step (initdb) run so that it is either done,
 * as gitlab-ctl saw it succeed, or not done at all.
 *
 * A staged step builds its result in a fresh directory beside `creates`,
 * named by root at random and made by root with the account as owner; only
 * after the command exited 0 is it renamed into place, and then the step is
 * recorded done (render/steprec.h). While it runs, the record names its
 * process, so the next run, after gitlab-ctl was killed, stops that orphan
 * (by pid and start time, never by name) and removes its staging directory
 * (rmtree: no link followed) before anything starts the service.
 *
 * A `creates` found without a record (made before steps were recorded, or
 * by somebody else) is checked with the step's `verify` command: accepted
 * and recorded when it exits 0, else moved aside under a random name beside
 * it (kept, never deleted) and the step runs again.
 */
#ifndef GITLAB_CTL_SETUPSTEP_H
#define GITLAB_CTL_SETUPSTEP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/diag.h"
#include "config/attrs.h"
#include "lib/buf.h"
#include "lib/ctl.h"
#include "render/plan.h"
#include "render/steprec.h"

struct setupstep {
	const struct ctl *ctl;
	const struct svc *svc;
	const struct plan_step *st;
	uid_t uid; /* the staging directory's owner: the service account */
	gid_t gid;
	const struct steprec *rec;
	struct diags *d; /* its problems; its progress lines through diag_progress (d->live) */
};

enum setupstep_need {
	SETUP_DONE,    /* recorded done and `creates` is there */
	SETUP_RUN,     /* run it */
	SETUP_UNKNOWN, /* `creates` is there but no record says how it got there: verify it */
};

/*
 * What the step needs. Unless dry_run, first finishes what an interrupted
 * run left: its process is killed and its staging directory removed. *why
 * says why it runs ("is missing", ...). 0, or -1 after a message.
 */
int setupstep_assess(const struct setupstep *x, bool dry_run, enum setupstep_need *need,
                     const char **why);

/*
 * Run it (the service must not run): staging directory, record, command
 * with the step's own deadline, rename into place, record done. The
 * command's output is appended to out. 0, or -1 after a message.
 */
int setupstep_run(const struct setupstep *x, struct buf *out);

/*
 * SETUP_UNKNOWN: run verify. 1 accepted (recorded done), 0 moved aside to
 * `moved` (the step must run), -1 after a message.
 */
int setupstep_adopt(const struct setupstep *x, char *moved, size_t len, struct buf *out);

#endif
