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

#include "lib/ctl.h"

struct svsel {
	int fd;       /* dir, open: names resolve against it (-1 if not open) */
	char **names; /* sorted; by svsel_order: in dependency order */
	size_t n;
	size_t cap;
	int *wave;  /* svsel_order: 0 needs nothing selected, k after wave k-1; NULL before */
	bool *deps; /* svsel_order: deps[i * n + j] when names[i] needs names[j] */
	/* <install>/service */
	char dir[PATH_MAX];
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

/*
 * Order the selection by dependencies, from the <name>/after files
 * reconfigure writes (the enabled services each one needs, one per line): a
 * service comes in a later wave than every selected service it needs (so
 * start and restart bring dependencies up first), or, with reverse, an
 * earlier one (stop takes dependents down first). Names sort within a wave.
 * A missing after file means no dependencies. Returns 0, or -1 with errno.
 */
int svsel_order(struct svsel *sel, bool reverse);

/*
 * After svsel_order: the first service of an earlier wave that names[i]
 * needs and that up[] (indexed like names) says is not up, or NULL.
 */
const char *svsel_waiting_for(const struct svsel *sel, size_t i, const bool *up);

/* The end of the wave starting at names[i] (sel->n when not ordered). */
size_t svsel_wave_end(const struct svsel *sel, size_t i);

/* Is `name` a usable service name (no '/', not "." or "..", not empty)? */
bool svsel_valid_name(const char *name);

#endif
