/*
 * svwait: waiting on one runsv until it supervises its directory, runs a
 * (new) pid, is down, or has exited. Each wait wakes on supervise/ changes
 * (svwatch), never sleeps a fixed time, and ends at a deadline
 * (mono_ms()) with a message in the caller's diags that says what was last
 * seen, so a caller needs only print them (converge does at once: its
 * waits are reported as they end).
 */
#ifndef GITLAB_CTL_SVWAIT_H
#define GITLAB_CTL_SVWAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/ctl.h"
#include "lib/diag.h"

/* dir's status as `sv status` words it for name, or "no status: why". */
void svwait_status_text(const char *dir, const char *name, char *buf, size_t len);

/*
 * Until runsv supervises dir (supervise/ok has a reader), which runsvdir
 * starts on finding link. nudge: wake this root's runsvdir every 100 ms
 * (svdir_nudge) instead of waiting for its 5 s scan; *nudges counts them.
 * 0, or -1 with why in d (runsvdir not running, link not picked up, no runsv).
 */
int svwait_supervised(const struct ctl *ctl, const char *dir, const char *link, const char *name,
                      bool nudge, long deadline, int *nudges, struct diags *d);

/*
 * Until the service runs a pid other than old (0: any): 0 with it in *pid,
 * or -1 with "name: what within SVWAIT (last status: ...); see log_dir/current"
 * in d (the caller shows those last lines: svtail_last).
 */
int svwait_run(const char *dir, const char *name, const char *log_dir, pid_t old, long deadline,
               const char *what, pid_t *pid, struct diags *d);

/* Until runsv reports it down with no process. 0, or -1 with a message in d. */
int svwait_down(const char *dir, const char *name, long deadline, struct diags *d);

/* Until dir's runsv has exited (after an 'x'). 0, or -1 with a message in d. */
int svwait_gone(const char *dir, const char *name, long deadline, struct diags *d);

#endif
