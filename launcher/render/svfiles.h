/*
 * svfiles: a service's own files outside the runit tree, written the way
 * reconfigure writes them: its home (owned by the service account) and the
 * config files the catalog renders there (`templates = (...)`, e.g.
 * gitlab-exporter.yml). For `exec --from-config`, so that a container needs
 * gitlab.rb alone and the listen address lives in one place.
 *
 * Files go through the tree writer (directory fds, O_NOFOLLOW, atomic
 * replace), so a link the service account planted in its home is never
 * followed. Only what differs is written.
 */
#ifndef GITLAB_CTL_SVFILES_H
#define GITLAB_CTL_SVFILES_H

#include <stdio.h>

#include "config/attrs.h"
#include "lib/ctl.h"
#include "lib/diag.h"

/*
 * Render s's catalog templates (with the variables reconfigure uses, svvars.h) and write them and
 * s's home. As root, the home and service-owned files belong to s's user and group (which must
 * exist); otherwise to the caller, and an existing home is left as it is.
 * Each change is described on out. Returns 0, or -1 with why in d
 * (nothing is written when a template fails).
 */
int svfiles_write(const struct ctl *ctl, const struct attrs *a, const struct svc *s, FILE *out,
                  struct diags *d);

#endif
