/* Waiting on one runsv (see svwait.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/diag.h"
#include "runit/runit.h"
#include "runit/svdir.h"
#include "runit/svwait.h"
#include "runit/svwatch.h"

#define POLL_MS  100 /* at most, between looks: waits wake on supervise/ changes */
#define NUDGE_MS 100

void svwait_status_text(const char *dir, const char *name, char *buf, size_t len)
{
	struct sv_status st;
	if (sv_read_status(dir, &st) == -1) {
		snprintf(buf, len, "no status: %s", sv_strerror(errno));
		return;
	}
	sv_status_format(buf, len, name, &st, !sv_normally_down(dir), time(NULL));
}

/* Why runsv does not supervise dir, at the deadline. */
static void explain_unsupervised(const struct ctl *ctl, const char *dir, const char *link,
                                 const char *name, int live, struct diags *d)
{
	pid_t pid;
	if (svdir_running(ctl, &pid) != 1)
		diag_add(d, DIAG_ERR, "%s: runsvdir is not running for this root", name);
	else if (live == SV_LIVE_NO_SUPERVISE)
		diag_add(
		    d, DIAG_ERR,
		    "%s: runsv was not started: runsvdir (wrapper pid %ld) has not picked up %s",
		    name, (long)pid, link);
	else
		diag_add(d, DIAG_ERR, "%s: runsv is not running for %s", name, dir);
}

int svwait_supervised(const struct ctl *ctl, const char *dir, const char *link, const char *name,
                      bool nudge, long deadline, int *nudges, struct diags *d)
{
	long next_nudge = 0;
	struct svwatch w;
	int rc = 1;
	*nudges = 0;
	svwatch_open(&w);
	svwatch_add(&w, dir);
	while (rc == 1) {
		int live = sv_live(dir);
		long now = mono_ms();
		if (live == SV_LIVE_OK) {
			rc = 0;
		} else if (now > deadline) {
			explain_unsupervised(ctl, dir, link, name, live, d);
			rc = -1;
		} else {
			if (nudge && now >= next_nudge) {
				(*nudges)++;
				svdir_nudge(ctl);
				next_nudge = now + NUDGE_MS;
			}
			/* supervise/ may be new since the watch was made: watch it too */
			svwatch_add(&w, dir);
			svwatch_wait(&w, POLL_MS);
		}
	}
	svwatch_close(&w);
	return rc;
}

int svwait_run(const char *dir, const char *name, const char *log_dir, pid_t old, long deadline,
               const char *what, pid_t *pid, struct diags *d)
{
	struct svwatch w;
	int rc = 1;
	svwatch_open(&w);
	svwatch_add(&w, dir);
	while (rc == 1) {
		struct sv_status st;
		if (sv_read_status(dir, &st) == 0 && st.state == SV_RUN && st.pid != 0 &&
		    st.pid != old) {
			*pid = st.pid;
			rc = 0;
		} else if (mono_ms() > deadline) {
			char buf[256];
			svwait_status_text(dir, name, buf, sizeof buf);
			diag_add(d, DIAG_ERR,
			         "%s: %s within SVWAIT (last status: %s); see %s/current", name,
			         what, buf, log_dir);
			rc = -1;
		} else {
			svwatch_wait(&w, POLL_MS);
		}
	}
	svwatch_close(&w);
	return rc;
}

int svwait_down(const char *dir, const char *name, long deadline, struct diags *d)
{
	for (long ms = 10;; ms = ms < 200 ? ms * 2 : 250) {
		struct sv_status st;
		if (sv_read_status(dir, &st) == 0 && st.pid == 0 && st.state == SV_DOWN)
			return 0;
		if (mono_ms() > deadline) {
			char buf[256];
			svwait_status_text(dir, name, buf, sizeof buf);
			diag_add(d, DIAG_ERR, "%s: did not stop within SVWAIT (%s)", name, buf);
			return -1;
		}
		sleep_ms(ms);
	}
}

int svwait_gone(const char *dir, const char *name, long deadline, struct diags *d)
{
	struct svwatch w;
	int rc = 0;
	svwatch_open(&w);
	svwatch_add(&w, dir);
	while (rc == 0 && sv_live(dir) == SV_LIVE_OK) {
		if (mono_ms() > deadline) {
			char buf[256];
			svwait_status_text(dir, name, buf, sizeof buf);
			diag_add(d, DIAG_ERR, "%s: runsv did not exit within SVWAIT (%s)", name,
			         buf);
			rc = -1;
		} else {
			svwatch_wait(&w, POLL_MS);
		}
	}
	svwatch_close(&w);
	return rc;
}
