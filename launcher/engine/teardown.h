/*
 * teardown: stop everything of a root, for uninstall and cleanse: the systemd unit that
 * starts its runsvdir (if any), the runsvdir wrapper (found by its lock, never by name; TERM,
 * then waited for until it has ended, which stops every service), and each runsv that
 * outlived a killed wrapper (told to stop and exit, waited for as SVWAIT says).
 */
#ifndef GITLAB_CTL_TEARDOWN_H
#define GITLAB_CTL_TEARDOWN_H

#include "lib/ctl.h"
#include "lib/diag.h"

/* 0 when nothing of the root runs any more; -1 with the problem in d. What it stops is said
 * on d->live as it goes. */
int teardown_stop_all(const struct ctl *ctl, struct diags *d);

#endif
