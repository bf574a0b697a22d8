/*
 * The control job engine (see control.h): sv -w's loop, one deadline for the
 * whole command, services in their dependency waves.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/control.h"
#include "engine/converge.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/proctree.h"
#include "lib/readfile.h"
#include "lib/spawn.h"
#include "runit/svdir.h"
#include "runit/svwatch.h"

int control_status_get(int dfd, const char *dir, const char *label, struct sv_status *st,
                       struct diags *d)
{
	char msg[SV_STATUS_LINE_MAX];
	int r = sv_status_get(dfd, dir, label, st, msg, sizeof msg);
	if (r != 1)
		diag_out(d, "%s\n", msg);
	return r;
}

static void put_state(struct diags *d, const char *dir, const char *name,
                      const struct sv_status *st, time_t now)
{
	char line[SV_STATUS_LINE_MAX]; /* name is a service's, at most NAME_MAX */
	if (sv_status_format(line, sizeof line, name, st, !sv_normally_down_at(AT_FDCWD, dir),
	                     now) >= 0)
		diag_out(d, "%s", line);
}

static const struct control_op ops[] = {
    {"start", "u", false, NULL},        {"stop", "d", false, NULL},
    {"restart", "tcu", false, NULL},    {"once", "o", false, NULL},
    {"kill", "k", false, NULL},         {"term", "t", false, NULL},
    {"hup", "h", false, "SIGHUP"},      {"int", "i", false, "SIGINT"},
    {"usr1", "1", false, "SIGUSR1"},    {"usr2", "2", false, "SIGUSR2"},
    {"graceful-kill", "d", true, NULL}, {"restart-except", "tcu", false, NULL},
};

/* After a plain signal: how long a pid that dies of it has to show (bounded by SVWAIT). */
#define SIGNAL_SETTLE_MS 500

struct job {
	const char *name;
	char dir[PATH_MAX];
	bool pending;
	pid_t pgrp; /* graceful-kill: the service's own process group, 0 if none */
	unsigned long long pgrp_start; /* its leader's start time: the group is still the same */
	pid_t pid0;                    /* the pid before a signal was sent */
	long settle;                   /* signals: report at this mono_ms() at the latest */
	int errfd;                     /* the last check's error output (memfd), -1 if none */
	struct diags *d;               /* the command's: result lines, what a timeout shows */
	struct diags *late;            /* a check that could not run: for the end */
};

/*
 * Polled many times while a service starts, each run bounded by the
 * command's deadline: its complaints (its error output, kept in a memfd) only matter
 * if it never passes, and are shown then (show_check_errors).
 */
static bool check_passes(struct job *j, long deadline)
{
	if (j->errfd == -1)
		j->errfd = memfd_create("check-errors", MFD_CLOEXEC);
	if (j->errfd != -1 &&
	    (ftruncate(j->errfd, 0) == -1 || lseek(j->errfd, 0, SEEK_SET) == -1)) {
		close(j->errfd);
		j->errfd = -1;
	}
	int rc = sv_check_until(j->dir, j->errfd != -1 ? j->errfd : SPAWN_NULL, deadline);
	if (rc == -1 && errno == ETIMEDOUT) {
		if (j->errfd != -1)
			dprintf(j->errfd, "%s/check: killed at the SVWAIT deadline\n", j->dir);
		return false;
	}
	if (rc == -1)
		diag_file(j->late, DIAG_ERR, j->dir, 0, "check: %s", strerror(errno));
	return rc == 1;
}

/*
 * Up, as a dependent would need it: its check passes, or, without a check,
 * it has run the same pid past runit's one-second rule (an exit at once is
 * never "ok").
 */
static bool up_proven(struct job *j, const struct sv_status *st, long deadline)
{
	struct timespec now;
	if (sv_has_check(j->dir))
		return check_passes(j, deadline);
	clock_gettime(CLOCK_REALTIME, &now);
	return sv_up_settled(st, &now);
}

/* Running, and its check passes by the deadline: what a dependent waits for. */
static bool ready_now(struct job *j, long deadline)
{
	struct sv_status st;
	return j->dir[0] != '\0' && sv_read_status(j->dir, &st) == 0 && st.state == SV_RUN &&
	       st.pid != 0 && up_proven(j, &st, deadline);
}

/*
 * What the check script said last time, reported after the line of its timeout, through
 * safetext: a check is root's script, but what it says may quote the service.
 */
static void show_check_errors(const struct job *j)
{
	struct buf b;
	if (j->errfd == -1 || lseek(j->errfd, 0, SEEK_SET) == -1)
		return;
	buf_init(&b);
	if (readfile_fd(j->errfd, &b, SIZE_MAX / 2) == 0)
		diag_text_safe(j->d, "", b.p, b.len);
	buf_free(&b);
	diags_report(j->d);
}

/* sv's check(): has every state asked for by acts been reached? */
static bool reached(struct job *j, const char *acts, const struct sv_status *st,
                    const struct timespec *tstart, long deadline)
{
	bool changed = sv_status_since(st, tstart);
	for (const char *a = acts; *a; a++) {
		switch (*a) {
		/*
		 * Unlike sv, also wait until runsv has taken the byte (want is
		 * updated): a service caught between two restarts looks down
		 * before it has read our 'd'.
		 */
		case 'u':
			if (st->pid == 0 || st->state != SV_RUN || st->want != 'u' ||
			    !up_proven(j, st, deadline))
				return false;
			break;
		case 'd':
			if (st->pid != 0 || st->state != SV_DOWN || st->want != 'd')
				return false;
			break;
		case 't':
		case 'k':
			/* Restarted since we asked, unless it is meant to stay down. */
			if (st->pid == 0 && st->want == 'd')
				break;
			if (!changed || st->pid == 0 || st->got_term || !up_proven(j, st, deadline))
				return false;
			break;
		case 'o':
			if ((st->pid == 0 && !changed) || (st->pid != 0 && st->want != 'd'))
				return false;
			break;
		case 'c':
			if (st->pid != 0 && st->paused)
				return false;
			break;
		default: /* plain signals: until the pid changes or the settle time is over */
			if (st->pid == j->pid0 && st->state == SV_RUN && mono_ms() < j->settle)
				return false;
			if (st->pid != j->pid0 && (st->state != SV_RUN || st->pid == 0) &&
			    mono_ms() < j->settle)
				return false; /* it died: wait for runsv to start the next one */
			break;
		}
	}
	return true;
}

/* Wait for runsv to appear (runsvdir scans every few seconds). true when live. */
static bool await_runsv(const char *dir, long deadline)
{
	for (long ms = 10;; ms = ms < 200 ? ms * 2 : 200) {
		if (sv_live(dir) == SV_LIVE_OK)
			return true;
		long left = deadline - mono_ms();
		if (left <= 0)
			return false;
		sleep_ms(ms < left ? ms : left);
	}
}

bool control_starts(const struct control_op *op)
{
	return strchr(op->acts, 'u') != NULL || op->acts[0] == 'o';
}

/*
 * Is some runsvdir at work on the service directory, even one not started by
 * our wrapper (an init system's, a test's)? Then a second one must not be
 * started: waiting for its next scan is enough.
 */
static bool any_supervised(const struct ctl *ctl)
{
	struct svsel all;
	bool any = false;
	if (svsel_load(ctl, NULL, &all) == -1)
		return false;
	for (size_t i = 0; i < all.n && !any; i++)
		any = sv_live_at(all.fd, all.names[i]) == SV_LIVE_OK;
	svsel_free(&all);
	return any;
}

/*
 * Starting a service that no runsv supervises: make sure runsvdir runs for
 * this root (the `gitlab-ctl runsvdir` wrapper, svdir.h; one that is
 * stopping is waited for and replaced) and ask it to rescan now. Returns
 * the deadline until which a job may wait for its runsv: 0 when nothing is
 * coming.
 */
static long ensure_supervisor(const struct ctl *ctl, const struct job *jobs, size_t n,
                              long *deadline, long wait_ms, struct diags *d)
{
	bool missing = false;
	pid_t pid;
	int running = svdir_running(ctl, &pid);
	for (size_t i = 0; i < n; i++)
		missing |= jobs[i].dir[0] != '\0' && sv_live(jobs[i].dir) != SV_LIVE_OK;
	if (!missing && running != SVDIR_STOPPING)
		return *deadline;
	if (running != 1 && (running == SVDIR_STOPPING || !any_supervised(ctl)) &&
	    converge_ensure_wrapper(ctl, d) == -1)
		return 0;
	if (running == SVDIR_STOPPING) /* SVWAIT counts from the new wrapper */
		*deadline = mono_ms() + wait_ms;
	svdir_nudge(ctl);
	return *deadline;
}

/* sv's control(): send acts unless already wanted. 1 sent/skipped, 0 failed (reported). */
static int send_control(struct job *j, const struct control_op *op, long await)
{
	struct sv_status st;

	int live = sv_live(j->dir);
	if (live == -1 && (errno == EACCES || errno == EPERM)) {
		/* No runsv will ever let this user in: waiting for one would only delay saying so.
		 */
		diag_out(
		    j->d,
		    "fail: %s: unable to open supervise/ok: %s (the service tree is root's: run "
		    "gitlab-ctl as root)\n",
		    j->name, sv_strerror(errno));
		return 0;
	}
	if (await > 0 && live != SV_LIVE_OK)
		await_runsv(j->dir, await);
	if (control_status_get(AT_FDCWD, j->dir, j->name, &st, j->d) != 1)
		return 0;
	struct pstat leader;
	if (op->kill_on_timeout && st.pid != 0 && getpgid(st.pid) == st.pid &&
	    proc_stat(st.pid, &leader) == 0) {
		j->pgrp = st.pid;
		j->pgrp_start = leader.start;
	}
	j->pid0 = st.pid;
	j->settle = mono_ms() + SIGNAL_SETTLE_MS;
	/* Like sv: do not repeat an "up" or a "down" already asked for (and acted upon). */
	if (st.want == op->acts[0] && (op->acts[0] != 'd' || st.got_term))
		return 1;
	if (sv_control_str(j->dir, op->acts) == -1) {
		if (errno == ENXIO)
			diag_out(j->d, "fail: %s: runsv not running\n", j->name);
		else
			diag_out(j->d, "warning: %s: unable to open supervise/control: %s\n",
			         j->name, sv_strerror(errno));
		return 0;
	}
	return 1;
}

/*
 * What graceful-kill adds to stop: SIGKILL to what is left of the service's
 * process group, if that id still names the group we saw (its leader may
 * have died and its pid been reused by another group's leader).
 */
static void kill_group(const struct job *j)
{
	if (j->pgrp <= 1 || j->pgrp == getpgrp() || kill(-j->pgrp, 0) == -1)
		return;
	if (!proc_group_is(j->pgrp, j->pgrp_start)) {
		diag_out(j->d,
		         "warning: %s: process group %ld now belongs to another process; not "
		         "killing it\n",
		         j->name, (long)j->pgrp);
		return;
	}
	diag_out(j->d, "kill: %s: process group %ld still has processes, sending SIGKILL\n",
	         j->name, (long)j->pgrp);
	kill(-j->pgrp, SIGKILL);
}

/* After a plain signal: the pid now running, and whether it is still the one signalled. */
static bool signal_report(const struct job *j, const struct control_op *op,
                          const struct sv_status *st, time_t now)
{
	/* Down before the signal: nothing was signalled, and that is fine (as sv says). */
	bool ok = j->pid0 == 0 || (st->state == SV_RUN && st->pid != 0);
	diag_out(j->d, "%s", ok ? "ok: " : "fail: ");
	put_state(j->d, j->dir, j->name, st, now);
	if (st->pid != j->pid0 && j->pid0 != 0)
		diag_out(j->d, " (%s: pid %ld exited on %s)", ok ? "restarted" : "died",
		         (long)j->pid0, op->signame);
	diag_out(j->d, "\n");
	return ok;
}

/* One finished job: print sv's line, act on a timeout. 1 when it failed. */
static int finish_job(struct job *j, const struct control_op *op, const struct sv_status *st,
                      bool ok, time_t now)
{
	if (op->signame != NULL)
		return !signal_report(j, op, st, now);
	diag_out(j->d, "%s", ok ? "ok: " : op->kill_on_timeout ? "kill: " : "timeout: ");
	put_state(j->d, j->dir, j->name, st, now);
	diag_out(j->d, "\n");
	if (!ok) {
		if (op->kill_on_timeout)
			sv_control(j->dir, 'k');
		else if (strpbrk(op->acts, "utk") != NULL && st->state == SV_RUN && st->pid != 0 &&
		         !st->got_term) {
			/* running but not ready: what the check script said last time */
			diags_live_flush(j->d);
			show_check_errors(j);
		}
	}
	if (op->kill_on_timeout)
		kill_group(j);
	return !ok;
}

/*
 * Look at every pending job until done or the deadline (SVWAIT from the start
 * of the command, checks included). Each look follows a change of any job's
 * supervise/ (watched before the first look, so none is missed) or at most
 * 10 ms to 250 ms, backing off: checks and runit's one-second rule change
 * nothing on disk. 0 or #failed.
 */
static int wait_jobs(struct job *jobs, size_t n, const struct control_op *op, long deadline,
                     const struct timespec *tstart, struct diags *d)
{
	int failed = 0;
	size_t pending = 0;
	struct svwatch w;
	svwatch_open(&w);
	for (size_t i = 0; i < n; i++) {
		pending += jobs[i].pending;
		if (jobs[i].pending)
			svwatch_add(&w, jobs[i].dir);
	}
	for (long ms = 10; pending > 0; ms = ms < 250 ? ms * 2 : 250) {
		time_t now = time(NULL);
		for (size_t i = 0; i < n; i++) {
			struct job *j = &jobs[i];
			struct sv_status st;
			if (!j->pending)
				continue;
			int r = control_status_get(AT_FDCWD, j->dir, j->name, &st, j->d);
			bool ok = r == 1 && reached(j, op->acts, &st, tstart, deadline);
			if (r == 1 && !ok && mono_ms() < deadline)
				continue;
			j->pending = false;
			pending--;
			failed += r != 1 ? 1 : finish_job(j, op, &st, ok, now);
		}
		diags_live_flush(d);
		long left = deadline - mono_ms();
		if (pending > 0 && left > 0)
			svwatch_wait(&w, ms < left ? ms : left);
	}
	svwatch_close(&w);
	return failed;
}

const struct control_op *control_op(const char *name)
{
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strcmp(name, ops[i].name) == 0)
			return &ops[i];
	return NULL;
}

/* One job per selected service; a name without a path fails at once. */
static struct job *jobs_new(const struct svsel *sel, struct diags *d, struct diags *late,
                            int *failed)
{
	struct job *jobs = xcalloc(sel->n, sizeof *jobs);
	for (size_t i = 0; i < sel->n; i++) {
		struct job *j = &jobs[i];
		j->name = sel->names[i];
		j->errfd = -1;
		j->d = d;
		j->late = late;
		if (svsel_path(sel, j->name, false, j->dir, sizeof j->dir) == -1) {
			diag_out(d, "fail: %s: %s\n", j->name, sv_strerror(errno));
			j->dir[0] = '\0';
			(*failed)++;
		}
	}
	return jobs;
}

static void jobs_free(struct job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (jobs[i].errfd != -1)
			close(jobs[i].errfd);
	free(jobs);
}

/* Send op to one wave's jobs whose dependencies are up; 0 or #failed. */
static int send_wave(const struct svsel *sel, struct job *jobs, size_t w, size_t end,
                     const struct control_op *op, const bool *up, long await)
{
	int failed = 0;
	for (size_t i = w; i < end; i++) {
		struct job *j = &jobs[i];
		const char *dep = control_starts(op) ? svsel_waiting_for(sel, i, up) : NULL;
		if (dep != NULL) /* not started: what it needs is not ready */
			diag_out(j->d, "fail: %s: waiting for %s: not ready\n", j->name, dep);
		if (j->dir[0] == '\0' || dep != NULL) {
			failed += dep != NULL;
			continue;
		}
		j->pending = send_control(j, op, await) == 1;
		failed += !j->pending;
	}
	return failed;
}

int control_run(const struct ctl *ctl, const struct control_op *op, const struct svsel *sel,
                long wait_ms, struct diags *d)
{
	struct timespec tstart;
	clock_gettime(CLOCK_REALTIME, &tstart);
	long deadline = mono_ms() + wait_ms; /* one deadline for the whole command */
	int failed = 0;
	struct diags late;
	diags_init(&late);
	struct job *jobs = jobs_new(sel, d, &late, &failed);
	long await =
	    control_starts(op) ? ensure_supervisor(ctl, jobs, sel->n, &deadline, wait_ms, d) : 0;
	bool *up = xcalloc(sel->n + 1, sizeof *up); /* per job: up and ready after its wave */
	/* Dependencies first (stop: dependents first), one wave at a time (svsel_order). */
	for (size_t w = 0, end; w < sel->n; w = end) {
		end = svsel_wave_end(sel, w);
		failed += send_wave(sel, jobs, w, end, op, up, await);
		diags_live_flush(d);
		failed += wait_jobs(jobs + w, end - w, op, deadline, &tstart, d);
		for (size_t i = w; i < end; i++)
			up[i] = ready_now(&jobs[i], deadline);
	}
	diags_live_flush(d);
	diags_move(d, &late); /* for the command to print after the run */
	free(up);
	jobs_free(jobs, sel->n);
	return failed;
}
