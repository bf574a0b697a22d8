/*
 * svdir: exactly one runsvdir per root, found by a lock, never by process name.
 *
 * `gitlab-ctl runsvdir` (svdir_run) is the foreground wrapper that init
 * systems run: it holds <var>/runsvdir.pid locked with its own pid, runs
 * `runsvdir -P <install>/service 'log: ...'` as its child and, on TERM, INT
 * or HUP, marks the pidfile "stopping", sends HUP to runsvdir (which TERMs
 * every runsv) and waits, as a child subreaper, until every runsv has
 * stopped its service and exited; after SVWAIT (default 30 s) it kills what
 * is left of its tree (a service ignoring TERM, its svlogd), by pid, and logs
 * each kill to <var>/runsvdir.log (bounded: svdirlog.h). While running, it looks once a second for
 * orphans a dead runsv left (adopted by it as subreaper; an old exporter
 * would hold the port and the log lock): TERM, then KILL after SVWAIT.
 *
 * Rescans: runit 2.1.2's runsvdir looks at the service directory only every
 * 5 s, sleeps 1 s more before a scan when the directory changed within the
 * current second, and cannot be signalled to rescan (HUP stops everything).
 * It does however wake up whenever a byte arrives on its readproctitle log
 * pipe (its stderr when started with a log argument), ignoring NUL bytes,
 * and rescans then if its last check is at least 1 s old. So SIGUSR1 to the
 * wrapper makes it write one NUL byte into that pipe (svdir_nudge), and
 * svdir_settle() backdates the directory's mtime by a second when that is
 * provably safe, which removes the 1 s sleep. See cmd_reconfigure.c.
 *
 * Messages: svdir_ensure, run by other commands, records its problems in
 * their diags. svdir_run is the `gitlab-ctl runsvdir` command itself, a
 * daemon whose stderr is <var>/runsvdir.log: it is its own command layer and
 * prints its log lines (start failures, kills, exit status) there as they
 * happen, with nobody above it to hand records to.
 */
#ifndef GITLAB_CTL_SVDIR_H
#define GITLAB_CTL_SVDIR_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "lib/ctl.h"
#include "lib/diag.h"

/*
 * Is the wrapper running for this root? 1 (its pid in *pid, 0 if not yet
 * written), SVDIR_STOPPING (it is stopping its services and will exit: not a
 * supervisor to rely on), 0, or -1.
 */
#define SVDIR_STOPPING 2
int svdir_running(const struct ctl *ctl, pid_t *pid);

/*
 * Start the wrapper detached (new session, output appended to
 * <var>/runsvdir.log, the system's resource limits) unless it runs, and wait
 * until it holds its pidfile. A wrapper that is stopping is first waited for
 * until it exits (announced through diag_progress on d, which callers point
 * at stdout; like the reconfigure lock, a wait of its own, at most 150 s: the
 * stopping wrapper kills what is left after its SVWAIT), then a new one is
 * started: callers count their SVWAIT from then. Returns 0, or -1 with the
 * error in d.
 */
int svdir_ensure(const struct ctl *ctl, struct diags *d);

/* Ask runsvdir to rescan now instead of within 5 s. 0, or -1 with errno (ESRCH: not running). */
int svdir_nudge(const struct ctl *ctl);

/*
 * Before a change to the service directory: remember its mtime (seconds).
 * After it: svdir_settle() sets the mtime to now - 1 s when that is still
 * newer than the remembered one (so runsvdir, which compares mtimes for
 * inequality, still sees a change), or when no runsvdir runs (its first scan
 * is unconditional). Returns 1 if backdated, 0 if not, -1 with errno.
 */
int svdir_mtime(const char *service_dir, time_t *mtime);
int svdir_settle(const char *service_dir, time_t before, bool running);

/* The foreground wrapper: `gitlab-ctl runsvdir`. Returns the exit status. */
int svdir_run(const struct ctl *ctl);

#endif
