/*
 * svexec: turn this process into a service's, as `gitlab-ctl exec` and so every run script
 * does: exactly the given environment, umask 077, the service user and group when root
 * (supplementary groups only the --groups names, as chpst -u user:group:extra sets them),
 * the service home as cwd, no fd above 2, every signal at its default and none blocked.
 *
 * An account never shares root's session or terminal: it leads a session of its own without
 * a controlling terminal; when one of stdin, stdout and stderr is a terminal (exec typed by
 * hand), it runs on a fresh pty that this process relays (lib/ptyrelay.h). Without a
 * terminal (runsv, a container's PID 1) nothing is forked: the program replaces this process.
 *
 * Two steps, so that the command prints what the first recorded (a dropped LD_PRELOAD file)
 * before the second replaces the process.
 */
#ifndef GITLAB_CTL_SVEXEC_H
#define GITLAB_CTL_SVEXEC_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/diag.h"
#include "lib/envdir.h"

/* Exit statuses of a failed exec, as POSIX shells use them. */
#define SVEXEC_NOTEXEC  126
#define SVEXEC_NOTFOUND 127

/* What the process becomes; the strings are the caller's. */
struct svexec {
	struct envv env; /* sorted; an LD_PRELOAD file the user cannot read is dropped */
	const char *user, *group, *groups, *home; /* NULL or "": unchanged */
	char **argv;   /* argv[0] looked up in env's PATH, as a shell would */
	bool own_pgrp; /* under runsv: lead a session and group, as Omnibus's `chpst -P` does */
	/* a name in groups with no group here is left out, with a warning, not a failure */
	bool groups_if_present;
};

/*
 * Away from the terminal, the credentials, umask, cwd, LD_PRELOAD checked as the user, the
 * program's path into path. -1 to go on with svexec_replace; else the status to exit with
 * (a failure, recorded in d, or in the parent of a pty relay, the program's own status).
 */
int svexec_prepare(struct svexec *t, char *path, size_t len, struct diags *d);

/* Signals reset, fds above 2 closed, execve. Returns only on failure: SVEXEC_NOTFOUND or
 * SVEXEC_NOTEXEC, recorded in d. */
int svexec_replace(struct svexec *t, const char *path, struct diags *d);

#endif
