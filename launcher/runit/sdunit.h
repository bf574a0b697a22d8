/*
 * sdunit: the runsvdir of the default tree under systemd. Where systemd runs
 * the machine, the wrapper must be the unit's main process (so it comes back
 * after a reboot and systemd restarts it), not a detached child of whoever ran
 * reconfigure. The unit's wrapper takes the same pidfile lock, so svdir finds
 * it like any other.
 *
 * The unit is used when all hold: no --root (a private tree is never the
 * unit's), /run/systemd/system exists (sd_booted), GITLAB_CTL_SYSTEMD is not
 * "0", the unit file is installed, and its ExecStart runs this very binary
 * (a build tree's gitlab-ctl keeps its own detached runsvdir).
 */
#ifndef GITLAB_CTL_SDUNIT_H
#define GITLAB_CTL_SDUNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/ctl.h"
#include "lib/diag.h"

#define SDUNIT_NAME "gitlab-runsvdir.service"

/* Exit statuses of `gitlab-ctl runsvdir` the unit tells apart (see the unit file). */
#define SDUNIT_EXIT_RUNNING 75 /* another wrapper holds the lock: not a failure, no restart */
#define SDUNIT_EXIT_CONFIG  78 /* runit missing or paths unusable: restarting cannot help */

/* What the decision looks at, gathered by sdunit_probe(); separate for tests. */
struct sdunit_facts {
	bool root_given; /* --root or GITLAB_CTL_ROOT */
	bool booted;     /* /run/systemd/system is a directory */
	const char *env; /* GITLAB_CTL_SYSTEMD, or NULL */
	bool unit_found; /* the unit file exists */
	bool runs_self;  /* its ExecStart is this binary */
};

bool sdunit_decide(const struct sdunit_facts *f);

/* The program of the first ExecStart= line of a unit file's text ("-", "@"... prefixes
 * dropped). 0, or -1 when there is none or it does not fit. */
int sdunit_exec_path(const char *text, char *out, size_t len);

/* Fill the facts from this machine. */
void sdunit_probe(const struct ctl *ctl, struct sdunit_facts *f);

/*
 * If the unit is to be used: enable it, start it, and wait until a wrapper
 * holds the lock (running() says so). Returns 1 then, 0 when the unit is not
 * to be used (the caller starts runsvdir itself), -1 with why not in d.
 */
int sdunit_start(const struct ctl *ctl, int (*running)(const struct ctl *, pid_t *),
                 struct diags *d);

/* If the unit is to be used: stop and disable it. 1 done, 0 not used, -1 with why in d. */
int sdunit_stop(const struct ctl *ctl, struct diags *d);

#endif
