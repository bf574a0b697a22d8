/*
 * steprec: what gitlab-ctl knows of each one-time setup step (initdb), kept
 * on disk where only root writes: <install>/var/setup/<service>+<step>, 0700
 * directory, each record replaced atomically (temp file, fsync, rename).
 *
 * A step is "done" only when this record says so, written after gitlab-ctl
 * saw the step exit 0 (and its result renamed into place), never inferred
 * from a file the step writes early, and never from anything in the
 * service's home, where the account could forge it. While a step runs the
 * record names its process (pid and start time from /proc, so a reused pid
 * is not mistaken for it) and its staging directory, so a run that follows
 * a killed one can stop the orphan and clear what it left.
 */
#ifndef GITLAB_CTL_STEPREC_H
#define GITLAB_CTL_STEPREC_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "lib/ctl.h"

struct steprec {
	int dirfd; /* <install>/var/setup, -1 when not open */
	char dir[PATH_MAX];
};

/* STEP_PASSED: an after_ready step passed for the process pid/start; path its command's digest */
enum step_state { STEP_NONE, STEP_RUNNING, STEP_DONE, STEP_PASSED };

struct step_entry {
	enum step_state state;
	pid_t pid;                /* RUNNING: 0 until the process exists */
	unsigned long long start; /* its start time in clock ticks after boot (/proc/PID/stat) */
	char path[PATH_MAX];      /* RUNNING: the staging directory ("" if none); DONE: creates */
};

/* Open (create when create is set) the record directory. 0, or -1 with errno. */
int steprec_open(const struct ctl *ctl, struct steprec *r, bool create);
void steprec_close(struct steprec *r);

/* The record of svc's step (STEP_NONE when there is none). 0, or -1 with errno. */
int steprec_get(const struct steprec *r, const char *svc, const char *step, struct step_entry *e);

/* Replace it durably (STEP_NONE removes it). 0, or -1 with errno. */
int steprec_put(const struct steprec *r, const char *svc, const char *step,
                const struct step_entry *e);

#endif
