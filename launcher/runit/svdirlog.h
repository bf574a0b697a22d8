/*
 * svdirlog: the runsvdir wrapper's log (<var>/runsvdir.log, its stderr)
 * stays small whatever the services do. A service account can make orphans
 * at will, and each one the wrapper stops or kills is worth a line: per
 * SVDIRLOG_WINDOW_MS the first SVDIRLOG_BURST such lines are written, the
 * rest only counted and then summed up in one line. And the file is capped:
 * past SVDIRLOG_MAX bytes its content moves to runsvdir.log.1 (replacing the
 * previous one) and it starts empty. The open file is shared with runsvdir
 * and every runsv, all O_APPEND, so each of them goes on at the new end.
 * Its lines are written here directly (warnx): they are the wrapper's log,
 * and the wrapper is the runsvdir command itself (svdir.h).
 */
#ifndef GITLAB_CTL_SVDIRLOG_H
#define GITLAB_CTL_SVDIRLOG_H

#include <limits.h>
#include <stdbool.h>

#define SVDIRLOG_WINDOW_MS 10000
#define SVDIRLOG_BURST     10
#define SVDIRLOG_MAX       (1024L * 1024L)

struct svdirlog {
	bool ours;           /* stderr is <var>/runsvdir.log (not a terminal, not the journal) */
	char path[PATH_MAX]; /* <var>/runsvdir.log */
	long window;         /* mono_ms() when the current window began */
	unsigned listed;     /* orphan lines written in this window */
	unsigned stopped;    /* and those only counted */
	unsigned killed;
};

/* For the wrapper whose var directory is var. */
void svdirlog_init(struct svdirlog *l, const char *var);

/* A line about an orphan stopped (or, with kill, killed): written while few, else counted. */
void svdirlog_orphan(struct svdirlog *l, bool kill, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Once a second or so: the summary of a window that ended, and the size cap. */
void svdirlog_tick(struct svdirlog *l);

#endif
