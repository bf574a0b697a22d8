/*
 * svtail: follow the svlogd `current` files of services like `tail -F`:
 * the last lines first, then new lines as they come, reopening a file when
 * svlogd rotates it (its inode changes) or it appears, a "==> path <==" header
 * whenever the output switches between several files.
 */
#ifndef GITLAB_CTL_SVTAIL_H
#define GITLAB_CTL_SVTAIL_H

#include "ctl.h"

/* Follow one service (name) or every enabled one (NULL). Returns only on error: exit status. */
int svtail_run(const struct ctl *ctl, const char *name, long lines);

/* Follow the given files; max_rounds > 0 stops after that many wakeups (tests). */
int svtail_files(char **paths, size_t n, long lines, long max_rounds);

#endif
