/*
 * owners: the one step before the tree is written that changes the system outside it: each
 * service's account is created (useradd and groupadd, retried while a parallel one holds
 * /etc/passwd's lock) so that the tree's owners have a uid and gid. Planning (render/) only
 * decides; this engine step acts, and reports through diags: "create user NAME" lines on
 * d->live, failures recorded in d.
 */
#ifndef GITLAB_CTL_OWNERS_H
#define GITLAB_CTL_OWNERS_H

#include <stdbool.h>

#include "lib/diag.h"
#include "render/plan.h"

/*
 * Create (or in a dry run, name) each service's account and look up its uid/gid into its
 * plan, once per account. Only as root: otherwise files are the invoking user's. 0, or -1
 * with the error in d (which may also hold a failed try that a retry mended).
 */
int owners_ensure(struct plans *ps, bool manage_accounts, bool dry_run, struct diags *d);

#endif
