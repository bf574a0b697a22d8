/* Waking on runsv's status changes (see svwatch.h). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/pathjoin.h"
#include "runit/svwatch.h"

#define SUPERVISE_EVENTS (IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE | IN_ATTRIB)

void svwatch_open(struct svwatch *w)
{
	w->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	w->nwatch = 0;
}

void svwatch_add(struct svwatch *w, const char *dir)
{
	char path[PATH_MAX];
	if (w->fd == -1)
		return;
	/* A failed watch only makes that service's waits timed: nothing to report. */
	if (inotify_add_watch(w->fd, dir, IN_CREATE | IN_MOVED_TO) != -1)
		w->nwatch++;
	if (path_join(path, sizeof path, dir, "supervise") == 0 &&
	    inotify_add_watch(w->fd, path, SUPERVISE_EVENTS) != -1)
		w->nwatch++;
}

/*
 * Read the queued events away: the next wait is for the next change. Whether one of them
 * was runsv's: a waiter's own probe of supervise/ok and its commands to supervise/control
 * (opened for writing, closed) are not, and waking on them made each wait spin.
 */
static bool drain(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool changed = false;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t off = 0; off + (ssize_t)sizeof(struct inotify_event) <= n;) {
			const struct inotify_event *ev = (const void *)(buf + off);
			bool ours =
			    (ev->mask & IN_CLOSE_WRITE) && ev->len > 0 &&
			    (strcmp(ev->name, "ok") == 0 || strcmp(ev->name, "control") == 0);
			changed = changed || !ours;
			off += (ssize_t)(sizeof *ev + ev->len);
		}
	return changed;
}

void svwatch_wait(struct svwatch *w, long timeout_ms)
{
	if (timeout_ms <= 0)
		return;
	if (w->fd == -1 || w->nwatch == 0) {
		sleep_ms(timeout_ms);
		return;
	}
	long end = mono_ms() + timeout_ms;
	for (long left = timeout_ms; left > 0; left = end - mono_ms()) {
		struct pollfd p = {.fd = w->fd, .events = POLLIN};
		int r = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (r == -1 && errno != EINTR)
			return;
		if (r > 0 && drain(w->fd))
			return;
	}
}

void svwatch_close(struct svwatch *w)
{
	if (w->fd != -1)
		close(w->fd);
	w->fd = -1;
}
