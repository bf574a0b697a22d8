/*
 * svsel: which services a control command acts on. Enabled services are the
 * entries of <install>/service/ (symlinks made by reconfigure), in sorted
 * order, like runsvdir sees them; no configuration is parsed, so that
 * `status` costs what `sv status` costs.
 */
#ifndef GITLAB_CTL_SVSEL_H
#define GITLAB_CTL_SVSEL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "ctl.h"

struct svsel {
	char dir[PATH_MAX]; /* <install>/service */
	int fd;             /* dir, open: names resolve against it (-1 if not open) */
	char **names;       /* sorted */
	size_t n;
};

/*
 * Fill sel with every enabled service, or with just `name` when it is not
 * NULL. Returns 0; -1 with errno (ENOENT: name is not enabled, or the service
 * directory is missing).
 */
int svsel_load(const struct ctl *ctl, const char *name, struct svsel *sel);
void svsel_free(struct svsel *sel);

/* <install>/service/<name> (and "/log" when log). 0, or -1 with errno. */
int svsel_path(const struct svsel *sel, const char *name, bool log, char *out, size_t len);
/* The same relative to sel->fd: "<name>" or "<name>/log". */
int svsel_relpath(const char *name, bool log, char *out, size_t len);

/* Is `name` a usable service name (no '/', not "." or "..", not empty)? */
bool svsel_valid_name(const char *name);

#endif
