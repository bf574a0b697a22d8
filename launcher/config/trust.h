/*
 * trust: the path policy (pathsafe.h) applied to a loaded
 * configuration, before reconfigure writes anything and in check-config.
 *
 * Root executes or interprets what lies in the run script directories, the
 * log directory (svlogd's config names a processor it runs), the env
 * directory and an absolute svlogd processor: each must sit below
 * directories only root can write (StrictModes) and outside every service's
 * home, which that service's account owns (even before it exists). A home's
 * parent must be root's too, or another account could swap the home.
 */
#ifndef GITLAB_CTL_TRUST_H
#define GITLAB_CTL_TRUST_H

#include "config/attrs.h"
#include "lib/ctl.h"
#include "lib/diag.h"

/* Errors go to d at the setting's FILE:LINE:COL (the catalog line for defaults). 0 or -1. */
int trust_check(const struct ctl *ctl, const struct attrs *a, struct diags *d);

#endif
