/*
 * exporterlink: the bundled exporter's managed link, the catalog's default exporter command.
 * <install>/embedded/bin/gitlab-exporter -> <datadir>/exporter/gitlab-exporter: reconfigure
 * makes it (render/plan.h), pre-flight judges the program behind it (engine/preflight.h),
 * cleanse removes it. A link there (or nothing yet) is ours and follows the data dir of the
 * gitlab-ctl that reconfigures; a real file there is the operator's own exporter, left alone.
 */
#ifndef GITLAB_CTL_EXPORTERLINK_H
#define GITLAB_CTL_EXPORTERLINK_H

#include <limits.h>
#include <stdbool.h>

#include "lib/ctl.h"

struct exporter_link {
	char path[PATH_MAX];    /* the link, under the install dir */
	char bundled[PATH_MAX]; /* what it points to: this gitlab-ctl's bundled exporter */
};

/* Both paths for ctl's root and data dir. 0, or -1 when one is too long. */
int exporter_link_paths(const struct ctl *ctl, struct exporter_link *x);

/* Is x->path ours to manage: nothing there yet, or a symlink? */
bool exporter_link_managed(const struct exporter_link *x);

/* What cmd runs: for the managed link (x->path, nothing there yet or a symlink), the bundled
 * exporter itself, so that a root without the link (exec --from-config before any
 * reconfigure) runs what the link would name; else cmd. */
const char *exporter_link_target(const struct exporter_link *x, const char *cmd);

/* Remove the link when it points at x->bundled (an older data dir's is not ours to judge). 1
 * removed, 0 not there or not ours. */
int exporter_link_remove(const struct exporter_link *x);

#endif
