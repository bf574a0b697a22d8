/*
 * pending: the restarts and log reloads reconfigure owes, kept on disk.
 *
 * Before reconfigure publishes a changed file of a service it records here
 * what that change requires (restart, log reload, log restart); it clears
 * the record only once the work is confirmed (a new pid runs and its check
 * passes, or the log got its signal). A run killed in between, or one that
 * fails half way, leaves the record, and the next run finishes the work
 * even when the tree shows no difference.
 *
 * Layout: <install>/var/pending/<service>, one file per service holding
 * words ("restart", "reload", "log-reload", "log-restart", "start", and the reasons
 * "run", "env", "config"), written to a temp file,
 * fsync'd, renamed, and the directory fsync'd. The directory is root's,
 * 0700: only whoever runs reconfigure can owe or forgive work.
 */
#ifndef GITLAB_CTL_PENDING_H
#define GITLAB_CTL_PENDING_H

#include <stdbool.h>
#include <limits.h>
#include <stddef.h>

#include "lib/ctl.h"

#define PENDING_RESTART     0x1u
#define PENDING_LOG_RELOAD  0x2u
#define PENDING_LOG_RESTART 0x4u
/* Why the restart is owed, so that the run that does it can say so. */
#define PENDING_RUN    0x8u
#define PENDING_ENV    0x10u
#define PENDING_CONFIG 0x20u
#define PENDING_RELOAD 0x40u /* HUP the service: it rereads its config */
/* Linked under reconfigure's own `down` file, not yet started: remove the file, start it. */
#define PENDING_START 0x80u
#define PENDING_ALL   0xffu

struct pending {
	int dirfd; /* <install>/var/pending, -1 when not open */
	char dir[PATH_MAX];
};

/* Open (create when create is set) the pending directory. 0, or -1 with errno. */
int pending_open(const struct ctl *ctl, struct pending *pd, bool create);
void pending_close(struct pending *pd);

/* What svc is owed (0 when nothing). -1 with errno when the record is unreadable. */
int pending_get(const struct pending *pd, const char *svc, unsigned *what);

/* Add bits to svc's record, durably, before the change is published. 0 or -1. */
int pending_add(const struct pending *pd, const char *svc, unsigned what);

/* Remove bits once done; the file goes when nothing is left. 0 or -1. */
int pending_clear(const struct pending *pd, const char *svc, unsigned what);

/*
 * Remove records whose service is not among names[0..n) (a disabled service
 * owes nothing) and temp files of killed runs; present[i] (when not NULL) says
 * whether names[i] has a record, so a caller reads only those. 0, or -1 with errno.
 */
int pending_prune(const struct pending *pd, const char *const *names, size_t n, bool *present);

/* "restart, log reload" for messages (the reasons are not named). */
const char *pending_text(unsigned what, char *buf, size_t len);

#endif
