/*
 * rootlock: the reconfigure lock of a root, <install>/var/reconfigure.lock.
 * One writer of the tree at a time: reconfigure holds it for its whole run,
 * and the lifecycle verbs take it so no reconfigure runs in between. It is
 * an flock (released by the kernel when the holder dies, so a killed run
 * never leaves the root locked); the file holds the holder's pid, only to
 * name it to whoever waits.
 */
#ifndef GITLAB_CTL_ROOTLOCK_H
#define GITLAB_CTL_ROOTLOCK_H

#include <stdbool.h>

#include "lib/ctl.h"
#include "lib/diag.h"

/* How long a second run waits for the holder before giving up. */
#define ROOTLOCK_WAIT_S 60

/*
 * Take the lock, waiting up to ROOTLOCK_WAIT_S (announced with the holder's
 * pid through diag_progress on d). create: make <install>/var and the file if
 * needed and write our pid; without it a root never reconfigured has nothing
 * to lock: 0 with *fdp = -1. Returns 0 with the lock held on *fdp (d may hold
 * a warning: the pid not written), or -1 with the error in d.
 */
int rootlock_take(const struct ctl *ctl, bool create, int *fdp, struct diags *d);

/* Release a lock rootlock_take gave (fd -1: nothing to do). */
void rootlock_release(int fd);

#endif
