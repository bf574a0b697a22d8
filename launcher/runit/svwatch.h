/*
 * svwatch: one inotify descriptor on the supervise/ directories of the
 * services a command waits for (runsv rewrites supervise/status on every
 * change of state). A waiter makes it before its first status read, so a
 * change between that read and the wait wakes the wait at once instead of
 * being missed until the next poll step. Without inotify, or for a service
 * not supervised yet, waits fall back to sleeping their timeout.
 */
#ifndef GITLAB_CTL_SVWATCH_H
#define GITLAB_CTL_SVWATCH_H

struct svwatch {
	int fd; /* -1: no inotify, waits only sleep */
	int nwatch;
};

void svwatch_open(struct svwatch *w);
/* Watch dir/supervise, and dir itself for a supervise/ that runsv creates later. */
void svwatch_add(struct svwatch *w, const char *dir);
/* Until something changed since the last wait (or since svwatch_add), or timeout_ms. */
void svwatch_wait(struct svwatch *w, long timeout_ms);
void svwatch_close(struct svwatch *w);

#endif
