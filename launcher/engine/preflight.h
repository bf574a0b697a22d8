/*
 * preflight: what must hold before reconfigure writes or stops anything:
 * every enabled service's command exists and its account can execute it
 * (check-config checks this too), and each service's TCP port is free or
 * already held by that same service (its supervised process or group).
 * Each problem is an error at the gitlab.rb line of the setting that chose
 * the command's path (postgresql['bin_dir']) or the port, else at the one that
 * enabled the service (the catalog's line when gitlab.rb says nothing), with
 * the fix: the Debian package to install or that setting to correct, the
 * process holding the port.
 *
 * A stage of its own between loading and planning; it sits in engine/ because it reads the
 * live services (runsv's status, the processes holding ports).
 */
#ifndef GITLAB_CTL_PREFLIGHT_H
#define GITLAB_CTL_PREFLIGHT_H

#include "config/attrs.h"
#include "lib/ctl.h"
#include "lib/diag.h"

void preflight_commands(const struct ctl *ctl, const struct attrs *a, struct diags *d);
void preflight_ports(const struct ctl *ctl, const struct attrs *a, struct diags *d);

#endif
