/*
 * svtail: follow the svlogd `current` files of services like `tail -F`:
 * the last lines first, then new lines as they come, reopening a file when
 * svlogd rotates it (its inode changes) or it appears, a "==> path <==" header
 * whenever the output switches between several files.
 *
 * svtail_files prints straight to stdout and stderr, its notices too ("PATH:
 * following new file", a file gone "waiting for it"), as tail -F does: it
 * runs until interrupted, so those notices are the tail command's own live
 * output, interleaved with the lines they explain; recorded they would come
 * out only when the user stops it.
 */
#ifndef GITLAB_CTL_SVTAIL_H
#define GITLAB_CTL_SVTAIL_H

#include <stdio.h>

#define SVTAIL_FAILED_LINES 10

/* Follow the given files; max_rounds > 0 stops after that many wakeups (tests). */
int svtail_files(char **paths, size_t n, long lines, long max_rounds);

/*
 * For a service that failed to start: print the last `lines` lines of
 * <log_dir>/current to fp (after letting svlogd catch up for at most 1 s),
 * so the cause ("exec: ...: No such file or directory") is on screen. The
 * file is opened without following links. Returns 0, or -1 if there is none.
 */
int svtail_last(const char *log_dir, long lines, FILE *fp);

#endif
