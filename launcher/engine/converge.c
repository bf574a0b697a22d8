/*
 * Converging runit to the plan (see converge.h).
 *
 * Getting a new service picked up fast (runit 2.1.2's runsvdir scans every
 * 5 s, and sleeps 1 s first if the directory changed within the current
 * second; HUP would stop everything):
 *   - runsvdir not running yet: the service/ symlinks are written BEFORE
 *     runsvdir is started, whose first scan is immediate, and the
 *     directory's mtime is set one second back so that scan does not sleep;
 *   - runsvdir already running: the same backdating when it is provably safe
 *     (svdir_settle), then SIGUSR1 to our runsvdir wrapper every 100 ms until
 *     supervise/ok answers: the wrapper writes a NUL byte into runsvdir's
 *     readproctitle log pipe, which wakes runsvdir's poll; it rescans as soon
 *     as its previous check is 1 s old. So a new service is supervised within
 *     about 0-1 s instead of 0-6 s.
 * Starting `runsv` ourselves was rejected: runsvdir would still spawn its own
 * runsv for the directory on its next scan, which dies on supervise/lock and
 * is respawned every few seconds, and our runsv would escape runsvdir's
 * shutdown (HUP stops only its children).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/converge.h"
#include "engine/restartparams.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fnv.h"
#include "lib/keptout.h"
#include "lib/pathjoin.h"
#include "lib/proctree.h"
#include "lib/safetext.h"
#include "proc/ready.h"
#include "proc/setupstep.h"
#include "proc/svrun.h"
#include "proc/validate.h"
#include "runit/runit.h"
#include "runit/svdir.h"
#include "runit/svtail.h"
#include "runit/svwait.h"

/* Why a service is restarted: its run script, env or config changed. */
#define CV_WHY_RUN     0x1u
#define CV_WHY_ENV     0x2u
#define CV_WHY_CONFIG  0x4u
#define CV_WHY_LOGCONF 0x8u
#define CV_WHY_LOGRUN  0x10u
#define CV_WHY_RELOAD  0x20u /* a config it rereads on HUP; a restart makes it moot */
#define CV_WHY_START   0x40u /* held under reconfigure's down file (hold_new): start it */
#define CV_WHY_RESTART (CV_WHY_RUN | CV_WHY_ENV | CV_WHY_CONFIG)

#define CONTEXTS_WAIT_MS 10000 /* postgres --describe-config: a few ms */

void converge_init(struct converge *cv, const struct ctl *ctl, const struct attrs *a,
                   struct plans *ps, bool dry_run, long wait_ms, long t0, struct diags *d)
{
	memset(cv, 0, sizeof *cv);
	cv->ctl = ctl;
	cv->a = a;
	cv->ps = ps;
	cv->dry_run = dry_run;
	cv->wait_ms = wait_ms;
	cv->t0 = t0;
	cv->s = xcalloc(ps->np, sizeof *cv->s);
	cv->pd.dirfd = -1;
	cv->sr.dirfd = -1;
	cv->d = d;
	diags_init(&cv->late);
}

void converge_free(struct converge *cv)
{
	pending_close(&cv->pd);
	steprec_close(&cv->sr);
	free(cv->s);
	cv->s = NULL;
	diags_free(&cv->late);
}

static const char *name_of(const struct converge *cv, size_t k)
{
	return cv->ps->p[k].svc->def->name;
}

static unsigned why_of(enum tnode_role role)
{
	switch (role) {
	case TR_RUN:
		return CV_WHY_RUN;
	case TR_ENV:
		return CV_WHY_ENV;
	case TR_CONFIG:
		return CV_WHY_CONFIG;
	case TR_CONFIG_HUP:
		return CV_WHY_RELOAD;
	case TR_LOG_CONFIG:
		return CV_WHY_LOGCONF;
	case TR_LOG_RUN:
		return CV_WHY_LOGRUN;
	default:
		return 0;
	}
}

static const char *why_text(unsigned why, char *buf, size_t len)
{
	buf[0] = '\0';
	if (why & CV_WHY_RUN)
		strlcat(buf, ", run script", len);
	if (why & CV_WHY_ENV)
		strlcat(buf, ", env", len);
	if (why & CV_WHY_CONFIG)
		strlcat(buf, ", config", len);
	return buf[0] ? buf + 2 : buf;
}

int converge_ensure_wrapper(const struct ctl *ctl, struct diags *d)
{
	int rc = svdir_ensure(ctl, d);
	diags_report(d);
	return rc;
}

/* A -v line, reported as it happens. */
static void __attribute__((format(printf, 2, 3)))
verbose(const struct converge *cv, const char *fmt, ...)
{
	if (!cv->ctl->verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *line = xvasprintf(fmt, ap);
	va_end(ap);
	diag_text(cv->d, line, strlen(line));
	free(line);
	diags_report(cv->d);
}

/* The last lines of service k's log, after the problem they explain. */
static void log_tail(const struct converge *cv, size_t k)
{
	char *p = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&p, &n);
	if (m != NULL) {
		(void)svtail_last(cv->ps->p[k].svc->log_dir, SVTAIL_FAILED_LINES, m);
		if (fclose(m) == 0 && n > 0)
			diag_text(cv->d, p, n);
		free(p);
	} else {
		die_nomem(); /* open_memstream fails only for memory */
	}
}

/* ---- waits ------------------------------------------------------------------------------- */

/* Wait until runsv supervises service k. */
static int wait_supervised(const struct converge *cv, size_t k, bool nudge)
{
	const struct plan *p = &cv->ps->p[k];
	long t0 = mono_ms();
	int nudges;
	int rc = svwait_supervised(cv->ctl, p->sv_dir, p->link, name_of(cv, k), nudge, cv->deadline,
	                           &nudges, cv->d);
	diags_report(cv->d); /* as it happens (converge.h) */
	if (rc == -1)
		return -1;
	verbose(cv, "%s: supervised after %ld ms (%d nudges)\n", name_of(cv, k), mono_ms() - t0,
	        nudges);
	return 0;
}

/* Wait for a run state with a pid other than old (0: any). */
static int wait_run(const struct converge *cv, size_t k, pid_t old, const char *what)
{
	const struct plan *p = &cv->ps->p[k];
	pid_t pid;
	int rc = svwait_run(p->sv_dir, name_of(cv, k), p->svc->log_dir, old, cv->deadline, what,
	                    &pid, cv->d);
	if (rc == -1)
		log_tail(cv, k);
	diags_report(cv->d);
	if (rc == -1)
		return -1;
	verbose(cv, "%s: run: (pid %ld) %ld ms after reconfigure started\n", name_of(cv, k),
	        (long)pid, mono_ms() - cv->t0);
	return 0;
}

/* Someone else on the service's TCP port, for the message of a service that keeps exiting. */
static void port_note(const struct svc *s, char *buf, size_t len)
{
	pid_t pid;
	char cmd[160];
	buf[0] = '\0';
	if (s->listen_port > 0 && s->listen_host != NULL && s->listen_host[0] != '\0' &&
	    ready_port_holder(s->listen_port, &pid, cmd, sizeof cmd) == 1)
		snprintf(buf, len, "%s:%d is in use by pid %ld (%s); ", s->listen_host,
		         s->listen_port, (long)pid, cmd);
}

/*
 * The status of service k, kept as the last one seen: converge_one judges readiness by it
 * when nothing was done to the service since (a no-op run reads each status once). 0 or -1.
 */
static int read_status(struct converge *cv, size_t k, struct sv_status *st)
{
	struct cv_svc *v = &cv->s[k];
	v->seen = sv_read_status(cv->ps->p[k].sv_dir, st) == 0;
	if (v->seen)
		v->last = *st;
	return v->seen ? 0 : -1;
}

/* The run script exited since st0 (st: now, NULL when unreadable). */
static bool gone(const struct sv_status *st0, const struct sv_status *st)
{
	return st != NULL && !(st->pid == st0->pid && st->state == SV_RUN);
}

/* The run script exited since st0 (st: now, NULL when unreadable): say so with its log. */
static bool exited(const struct converge *cv, size_t k, const struct sv_status *st0,
                   const struct sv_status *st)
{
	const struct plan *p = &cv->ps->p[k];
	struct cv_svc *v = &cv->s[k];
	if (!gone(st0, st))
		return false;
	char buf[256], note[256];
	svwait_status_text(p->sv_dir, name_of(cv, k), buf, sizeof buf);
	port_note(p->svc, note, sizeof note);
	/* A long log path may cut the message short; the log's last lines follow anyway. */
	if (snprintf(v->notready, sizeof v->notready,
	             "%sit exits right after it starts (status: %s); see %s/current", note, buf,
	             p->svc->log_dir) >= (int)sizeof v->notready)
		memcpy(v->notready + sizeof v->notready - 4, "...", 4);
	diag_add(cv->d, DIAG_ERR, "%s: %s", name_of(cv, k), v->notready);
	log_tail(cv, k);
	diags_report(cv->d);
	return true;
}

/*
 * A service without a check is up only once it ran the same pid past
 * runit's one-second restart rule (st: its status now, NULL when unreadable).
 * 1 yes, 0 not yet, -1 out of time.
 */
static int wait_settled(const struct converge *cv, size_t k, pid_t pid, const struct sv_status *st)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	if (st != NULL && st->pid == pid && sv_up_settled(st, &now))
		return 1;
	if (mono_ms() <= cv->deadline)
		return 0;
	snprintf(cv->s[k].notready, sizeof cv->s[k].notready,
	         "has not run (pid %ld) for a second within SVWAIT", (long)pid);
	diag_add(cv->d, DIAG_ERR, "%s: %s", name_of(cv, k), cv->s[k].notready);
	diags_report(cv->d);
	return -1;
}

/*
 * After a start or restart: wait until the service passes its readiness check
 * (ready.h: this service's pid, its own protocol), so that "gitlab
 * Reconfigured!" means it answers. A run script that fails shows as a new pid
 * (runsv restarts it) or a down state: reported at once with the status, not
 * after SVWAIT. Why it is not ready is kept in notready for dependents.
 */
static int wait_ready(struct converge *cv, size_t k, const struct sv_status *known)
{
	const struct plan *p = &cv->ps->p[k];
	struct cv_svc *v = &cv->s[k];
	const char *name = name_of(cv, k);
	struct sv_status st0, now;
	long t0 = mono_ms();
	snprintf(v->notready, sizeof v->notready, "not running");
	if (known != NULL)
		st0 = *known;
	else if (read_status(cv, k, &st0) == -1)
		return 0;
	now = st0; /* just read: the first round looks at it */
	const struct sv_status *cur = &now;
	bool again = true;
	for (long ms = 10;; ms = ms < 200 ? ms * 2 : 250) {
		if (again && gone(&st0, cur)) {
			/*
			 * A restart queued behind ours (the control bytes of a run killed before
			 * runsv read them) ends the process runsv just started, and runsv starts
			 * the next within its one-second rule: only a second exit is the run
			 * script's own.
			 */
			again = false;
			pid_t pid;
			if (svwait_run(p->sv_dir, name, p->svc->log_dir, st0.pid, cv->deadline,
			               "did not come back up", &pid, cv->d) == -1) {
				log_tail(cv, k);
				diags_report(cv->d);
				return -1;
			}
			if (read_status(cv, k, &st0) == -1)
				return 0;
			now = st0;
			continue;
		}
		if (exited(cv, k, &st0, cur))
			return -1;
		if (!p->files[PF_CHECK].on) {
			int r = wait_settled(cv, k, st0.pid, cur);
			if (r != 0)
				return r == 1 ? 0 : -1;
		} else {
			long t = mono_ms(),
			     until = t + 2000 < cv->deadline ? t + 2000 : cv->deadline;
			if (ready_check(cv->ctl, cv->a, p->svc, st0.pid, until, v->notready,
			                sizeof v->notready) == 1) {
				verbose(cv, "%s: ready after %ld ms\n", name, mono_ms() - t0);
				return 0;
			}
			if (mono_ms() > cv->deadline) {
				diag_add(cv->d, DIAG_ERR,
				         "%s: runs (pid %ld) but is not ready within SVWAIT: %s",
				         name, (long)st0.pid, v->notready);
				diags_report(cv->d);
				return -1;
			}
		}
		sleep_ms(ms);
		cur = read_status(cv, k, &now) == 0 ? &now : NULL;
	}
}

/* ---- setup steps ------------------------------------------------------------------------ */

/*
 * A step's time is its own (its catalog timeout), not SVWAIT's: the waits
 * for services get the time it took added back.
 */
static void add_step_time(struct converge *cv, long t0)
{
	cv->deadline += mono_ms() - t0;
}

/* Run one after_ready step as the service user, with its own deadline. */
static int run_step(struct converge *cv, size_t k, const struct plan_step *st, struct buf *out,
                    struct buf *err)
{
	const char *name = name_of(cv, k);
	long t0 = mono_ms();
	int rc =
	    svrun(cv->ctl, cv->ps->p[k].svc, st->argv, t0 + st->def->timeout * 1000L, out, err);
	int e = errno;
	add_step_time(cv, t0);
	if (rc == 0)
		return 0;
	if (rc == -1)
		diag_add(cv->d, DIAG_ERR, "%s: setup step %s: %s", name, st->def->name,
		         e == ETIMEDOUT ? "not finished within its timeout" : strerror(e));
	else
		diag_add(cv->d, DIAG_ERR, "%s: setup step %s: %s exited with status %d", name,
		         st->def->name, st->argv[0], rc);
	diag_text_safe(cv->d, "", out->p, out->len);
	diag_text_safe(cv->d, "", err->p, err->len);
	diags_report(cv->d);
	return -1;
}

/* A before_start step is about to act: a running service is stopped first. */
static int stop_for_setup(struct converge *cv, size_t k)
{
	struct cv_svc *v = &cv->s[k];
	if (!v->was_live || v->setup_stop)
		return 0;
	v->setup_stop = true;
	const char *dir = cv->ps->p[k].sv_dir;
	if (sv_control(dir, 'd') == -1)
		return -1;
	int rc = svwait_down(dir, name_of(cv, k), cv->deadline, cv->d);
	diags_report(cv->d);
	return rc;
}

/*
 * `creates` is there but no record says a step made it (an older gitlab-ctl
 * did, or someone else): verify it; one that fails is moved aside. 1 kept,
 * 0 moved aside (run the step), -1 failed.
 */
static int step_adopt(struct converge *cv, size_t k, const struct setupstep *x)
{
	char moved[PATH_MAX];
	struct buf out;
	if (stop_for_setup(cv, k) == -1)
		return -1;
	buf_init(&out);
	long t0 = mono_ms();
	int r = setupstep_adopt(x, moved, sizeof moved, &out);
	diags_report(x->d);
	add_step_time(cv, t0);
	if (r == 0 && cv->ctl->verbose) {
		diag_text_safe(x->d, "", out.p, out.len);
		diags_report(x->d);
	}
	buf_free(&out);
	return r;
}

/* One before_start step that is not done; a running service is stopped first. */
static int step_before(struct converge *cv, size_t k, const struct setupstep *x, const char *why)
{
	const struct plan_step *st = x->st;
	diag_progress(cv->d, "run %s setup %s (%s %s)\n", name_of(cv, k), st->def->name,
	              st->creates, why);
	if (cv->dry_run) {
		cv->updated++;
		return 0;
	}
	if (stop_for_setup(cv, k) == -1)
		return -1;
	struct buf out;
	buf_init(&out);
	long t0 = mono_ms();
	int rc = setupstep_run(x, &out);
	add_step_time(cv, t0);
	if (rc == -1)
		diag_text_safe(x->d, "", out.p, out.len);
	else
		cv->updated++; /* counted once it is done, not when it starts */
	diags_report(x->d);
	buf_free(&out);
	return rc;
}

/* One before_start step: done (recorded), adopted after verify, or run. */
static int step_once(struct converge *cv, size_t k, const struct plan_step *st)
{
	const struct plan *p = &cv->ps->p[k];
	/* reported after each step call, where setupstep used to print */
	const struct setupstep x = {cv->ctl, p->svc, st, p->uid, p->gid, &cv->sr, cv->d};
	enum setupstep_need need;
	const char *why;
	int assessed = setupstep_assess(&x, cv->dry_run, &need, &why);
	diags_report(cv->d);
	if (assessed == -1)
		return -1;
	if (need == SETUP_DONE)
		return 0;
	if (need == SETUP_UNKNOWN) {
		if (cv->dry_run) {
			diag_out(cv->d,
			         "verify %s setup %s (%s exists, not recorded as made by it)\n",
			         name_of(cv, k), st->def->name, st->creates);
			return 0;
		}
		int r = step_adopt(cv, k, &x);
		if (r != 0)
			return r == 1 ? 0 : -1;
		why = "failed its verify command";
	}
	return step_before(cv, k, &x, why);
}

/* The setup records, opened (made, unless a dry run) on first use; false when there are none. */
static bool records_open(struct converge *cv)
{
	if (cv->sr.dirfd == -1 && steprec_open(cv->ctl, &cv->sr, !cv->dry_run) == -1)
		return false;
	return cv->sr.dirfd != -1;
}

/* The before_start steps not done yet (initdb once: never over a cluster). */
static int steps_before(struct converge *cv, size_t k)
{
	const struct plan *p = &cv->ps->p[k];
	if (p->nsteps > 0 && !records_open(cv) && !(cv->dry_run && errno == ENOENT)) {
		diag_file(&cv->late, DIAG_ERR, NULL, 0, "%s: cannot open the setup records %s: %s",
		          name_of(cv, k), cv->sr.dir, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct plan_step *st = &p->steps[i];
		if (st->def->when == STEP_BEFORE_START && step_once(cv, k, st) == -1)
			return -1;
	}
	return 0;
}

/* A step's output on one line, escaped: it is what the step changed. */
static void print_step_output(struct diags *d, const char *name, const char *step,
                              const struct buf *out)
{
	size_t n = out->len;
	while (n > 0 && out->p[n - 1] == '\n')
		n--;
	struct buf esc;
	buf_init(&esc);
	safetext_add(&esc, out->p, n, SAFETEXT_NL);
	for (size_t i = 0; i < esc.len; i++)
		if (esc.p[i] == '\n')
			esc.p[i] = ';';
	diag_out(d, "%s setup %s: %s\n", name, step, buf_str(&esc));
	buf_free(&esc);
}

/*
 * Whether record `what` of service k says it passed for the process st names (the same pid
 * and start time) and nothing of the service changed in this run: what that proved then
 * (its readiness, an after_ready step) still holds, and is not probed again.
 */
static bool passed_for(struct converge *cv, size_t k, const char *what, const char *digest,
                       const struct sv_status *st)
{
	const struct cv_svc *v = &cv->s[k];
	struct step_entry e;
	struct pstat ps;
	return v->why == 0 && !v->touched && !v->setup_stop && st->pid > 0 && records_open(cv) &&
	       steprec_get(&cv->sr, name_of(cv, k), what, &e) == 0 && e.state == STEP_PASSED &&
	       e.pid == st->pid && strcmp(e.path, digest) == 0 && proc_stat(e.pid, &ps) == 0 &&
	       ps.start == e.start;
}

/* Record that `what` passed for the process running now (failing to costs only a rerun). */
static void record_passed(struct converge *cv, size_t k, const char *what, const char *digest)
{
	const struct cv_svc *v = &cv->s[k];
	struct pstat ps;
	struct step_entry e = {.state = STEP_PASSED, .pid = v->last.pid};
	if (cv->dry_run || !v->seen || v->last.pid <= 0 || proc_stat(v->last.pid, &ps) == -1 ||
	    !records_open(cv))
		return;
	e.start = ps.start;
	strlcpy(e.path, digest, sizeof e.path);
	struct step_entry was;
	if (steprec_get(&cv->sr, name_of(cv, k), what, &was) == 0 && was.state == e.state &&
	    was.pid == e.pid && was.start == e.start && strcmp(was.path, e.path) == 0)
		return; /* a no-op proves what the record says already: no write, no fsync */
	if (steprec_put(&cv->sr, name_of(cv, k), what, &e) == -1)
		verbose(cv, "%s: cannot record %s: %s\n", name_of(cv, k), what, strerror(errno));
}

/* The record of a readiness proven for a process (no step is named so: a dot file). */
#define READY_RECORD ".ready"

/* An after_ready step's command as its record holds it: a changed command runs again. */
static void step_digest(const struct plan_step *st, char *out, size_t len)
{
	snprintf(out, len, "argv-%016llx", (unsigned long long)fnv_argv(st->argv));
}

/*
 * The service's settings as a readiness record holds them: its check may read gitlab.rb when
 * it runs (gitlab-ctl probe), so any setting changed proves nothing about it.
 */
static void settings_digest(const struct svc *s, char *out, size_t len)
{
	uint64_t h = FNV_OFFSET;
	for (size_t i = 0; i < s->vars.n; i++)
		h = fnv_str(fnv_str(h, s->vars.v[i].name),
		            s->vars.v[i].value ? s->vars.v[i].value : "");
	snprintf(out, len, "vars-%016llx", (unsigned long long)h);
}

static const char *settings_digest_of(const struct converge *cv, size_t k, char *buf, size_t len)
{
	settings_digest(cv->ps->p[k].svc, buf, len);
	return buf;
}

/*
 * The after_ready steps, every run: idempotent by contract. A step that
 * prints nothing on its standard output changed nothing (psql with \gexec prints
 * "CREATE ROLE" only when it created one), so only that output is shown as a change and
 * counted as an update; its error output (a NOTICE, a warning) is passed on, not counted.
 */
static int steps_after(struct converge *cv, size_t k)
{
	const struct plan *p = &cv->ps->p[k];
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct plan_step *st = &p->steps[i];
		char digest[64];
		if (st->def->when != STEP_AFTER_READY)
			continue;
		step_digest(st, digest, sizeof digest);
		if (cv->s[k].seen && passed_for(cv, k, st->def->name, digest, &cv->s[k].last)) {
			verbose(cv, "%s setup %s: passed for pid %ld already\n", name_of(cv, k),
			        st->def->name, (long)cv->s[k].last.pid);
			continue;
		}
		struct buf out, err;
		buf_init(&out);
		buf_init(&err);
		int rc = run_step(cv, k, st, &out, &err);
		if (rc == 0)
			record_passed(cv, k, st->def->name, digest);
		if (rc == 0 && out.len > 0) {
			print_step_output(cv->d, name_of(cv, k), st->def->name, &out);
			cv->updated++;
		} else if (rc == 0) {
			verbose(cv, "%s setup %s: nothing to do\n", name_of(cv, k), st->def->name);
		}
		if (rc == 0 && err.len > 0) {
			char prefix[256];
			snprintf(prefix, sizeof prefix, "%s setup %s said: ", name_of(cv, k),
			         st->def->name);
			diag_text_safe(cv->d, prefix, err.p, err.len);
			diags_report(cv->d);
		}
		buf_free(&out);
		buf_free(&err);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* ---- disabling ---------------------------------------------------------------------------- */

static int disable_one(struct converge *cv, const struct plan_disable *pd)
{
	const char *link = pd->link;
	const char *name = strrchr(link, '/') + 1;
	struct stat st;
	if (lstat(link, &st) == -1)
		return 0;
	if (!S_ISLNK(st.st_mode)) {
		diag_file(&cv->late, DIAG_WARN, NULL, 0,
		          "%s is not a symlink made by reconfigure; leaving it", link);
		return 0;
	}
	diag_out(cv->d, "disable %s\n", name);
	/* Omnibus never removes a database: say where it stays, so turning it off is not a loss. */
	if (pd->kept != NULL && lstat(pd->kept, &st) == 0)
		diag_out(
		    cv->d,
		    "%s's data is kept in %s (remove it yourself once you no longer need it)\n",
		    name, pd->kept);
	cv->updated++;
	if (cv->dry_run)
		return 0;
	char target[PATH_MAX];
	bool have = realpath(link, target) != NULL;
	/* Unlink first: runsvdir must not respawn the runsv that 'x' makes exit. */
	if (unlink(link) == -1) {
		diag_file(&cv->late, DIAG_ERR, NULL, 0, "cannot remove %s: %s", link,
		          strerror(errno));
		return -1;
	}
	if (!have || sv_live(target) != SV_LIVE_OK)
		return 0;
	if (sv_control_str(target, "dx") == -1) {
		diag_file(&cv->late, DIAG_ERR, NULL, 0, "%s: cannot control runsv: %s", name,
		          strerror(errno));
		return -1;
	}
	int rc = svwait_gone(target, name, cv->deadline, cv->d);
	diags_report(cv->d);
	return rc;
}

/* ---- bringing services up ----------------------------------------------------------------- */

/* Wait until it runs (a pid other than old, 0: any) and is ready. */
static int bring_up(struct converge *cv, size_t k, pid_t old, const char *what)
{
	if (wait_run(cv, k, old, what) == -1) {
		snprintf(cv->s[k].notready, sizeof cv->s[k].notready, "%s", what);
		return -1;
	}
	return wait_ready(cv, k, NULL);
}

/* Send cmds to the runsv of dir (the service's or its log's); log is "" or " log". */
static int control(struct converge *cv, const char *dir, const char *cmds, const char *name,
                   const char *log)
{
	if (sv_control_str(dir, cmds) == 0)
		return 0;
	diag_file(&cv->late, DIAG_ERR, NULL, 0, "%s%s: cannot control runsv: %s", name, log,
	          strerror(errno));
	return -1;
}

/* The service's files changed: (re)start it and wait until it runs and is ready. */
static int restart(struct converge *cv, size_t k, const struct sv_status *st)
{
	const char *name = name_of(cv, k);
	char text[64];
	const char *why = why_text(cv->s[k].why, text, sizeof text);
	if (st->pid == 0 || st->state != SV_RUN) {
		/* Between two attempts of a failing run script: runsv starts the new one. */
		diag_progress(cv->d, "start %s (%s changed)\n", name, why);
		return bring_up(cv, k, 0, "did not start");
	}
	diag_progress(cv->d, "restart %s (%s changed)\n", name, why);
	/* runsv restarts what it wants up: TERM (and CONT), then run again. */
	if (control(cv, cv->ps->p[k].sv_dir, "tc", name, "") == -1)
		return -1;
	return bring_up(cv, k, st->pid, "did not come back up");
}

/* The template behind a changed file of plan p, or NULL. */
static const struct plan_extra *extra_at(const struct plan *p, const char *path)
{
	for (size_t e = 0; e < p->nextra; e++)
		if (strcmp(p->extra[e].dest, path) == 0)
			return &p->extra[e];
	return NULL;
}

/*
 * The parameters of service k's changed HUP configs that only a restart takes up
 * (restartparams.h): written, named, and left to the operator's restart.
 */
static void restart_owed(struct converge *cv, size_t k)
{
	const struct plan *p = &cv->ps->p[k];
	struct buf names;
	buf_init(&names);
	for (size_t i = 0; i < cv->ps->t.nc; i++) {
		const struct tchange *c = &cv->ps->t.c[i];
		const struct tnode *n = &cv->ps->t.v[c->node];
		const struct plan_extra *e = NULL;
		if (c->kind != TC_UPDATE || c->old == NULL || n->svc != (int)k ||
		    n->role != TR_CONFIG_HUP || (e = extra_at(p, n->path)) == NULL ||
		    e->def->ncontexts == 0)
			continue;
		size_t bad;
		char **argv = attrs_expand_argv(cv->a, p->svc, e->def->contexts, e->def->ncontexts,
		                                NULL, NULL, &bad);
		struct buf out;
		buf_init(&out);
		/* The listing is the program's own: kept under its identity, asked once. */
		char key[256], var[PATH_MAX], kept[NAME_MAX + 1];
		bool keep =
		    argv != NULL && keptout_key(argv, key, sizeof key) == 0 &&
		    ctl_var_dir(cv->ctl, var, sizeof var) == 0 &&
		    snprintf(kept, sizeof kept, "contexts-%s", name_of(cv, k)) < (int)sizeof kept;
		int st = -1;
		if (keep && keptout_get(var, kept, key, &out) == 1) {
			st = 0;
		} else if (argv != NULL) {
			st = validate_run(argv, "", 0, p->svc->user, p->svc->group,
			                  mono_ms() + CONTEXTS_WAIT_MS, &out);
			if (st == 0 && keep)
				keptout_put(var, kept, key, out.p, out.len);
		}
		buf_addc(&out, '\0');
		if (st == 0)
			restartparams_changed(out.p, c->old, c->old_len, n->data, n->len, &names);
		else
			diag_add(cv->d, DIAG_WARN,
			         "%s: cannot tell which changed parameters need a restart (%s "
			         "failed): run gitlab-ctl restart %s if any does",
			         name_of(cv, k), e->def->contexts[0], name_of(cv, k));
		buf_free(&out);
		argv_free(argv);
	}
	if (names.len > 0)
		diag_add(cv->d, DIAG_WARN,
		         "%s: %s changed; %s only at a restart: run gitlab-ctl restart %s when "
		         "it suits you",
		         name_of(cv, k), names.p,
		         strchr(names.p, ',') ? "they take effect" : "it takes effect",
		         name_of(cv, k));
	buf_free(&names);
}

/*
 * A config the service rereads on HUP changed (Prometheus' rules): signal
 * it and see the same pid still run and pass its check. A reload the
 * service rejects shows in its own log and metrics, not here.
 */
static int reload(struct converge *cv, size_t k, const struct sv_status *st)
{
	const char *name = name_of(cv, k);
	diag_progress(cv->d, "reload %s (config changed)\n", name);
	restart_owed(cv, k);
	if (control(cv, cv->ps->p[k].sv_dir, "h", name, "") == -1)
		return -1;
	struct sv_status now;
	if (read_status(cv, k, &now) == 0 && now.pid != st->pid)
		return bring_up(cv, k, st->pid, "did not come back up after HUP");
	return wait_ready(cv, k, NULL);
}

/* Restart the log service when log/run changed; else HUP svlogd for a new config. */
static int refresh_log(struct converge *cv, size_t k)
{
	const char *name = name_of(cv, k), *log_sv = cv->ps->p[k].log_sv;
	unsigned why = cv->s[k].why;
	if (why & CV_WHY_LOGRUN) {
		diag_out(cv->d, "restart %s log (log/run changed)\n", name);
		return control(cv, log_sv, "t", name, " log");
	}
	if (why & CV_WHY_LOGCONF) {
		/* svlogd rereads <log_dir>/config on HUP: the service keeps running. */
		diag_out(cv->d, "reload %s log (log config changed)\n", name);
		return control(cv, log_sv, "h", name, " log");
	}
	return 0;
}

/* Stopped for a before_start step: start it again. */
static int start_after_setup(struct converge *cv, size_t k)
{
	const char *name = name_of(cv, k);
	diag_progress(cv->d, "start %s (after setup)\n", name);
	if (control(cv, cv->ps->p[k].sv_dir, "u", name, "") == -1)
		return -1;
	return bring_up(cv, k, 0, "did not start");
}

/*
 * Held (hold_new): the down file reconfigure made goes, then runsv is told to start it. A run
 * killed in between leaves PENDING_START, and the next one does this.
 */
static int release_held(struct converge *cv, size_t k)
{
	const struct plan *p = &cv->ps->p[k];
	char down[PATH_MAX];
	if (path_join(down, sizeof down, p->sv_dir, "down") == -1 ||
	    (unlink(down) == -1 && errno != ENOENT)) {
		diag_file(&cv->late, DIAG_ERR, NULL, 0, "%s: cannot remove %s/down: %s",
		          name_of(cv, k), p->sv_dir, strerror(errno));
		return -1;
	}
	cv->s[k].why &=
	    ~CV_WHY_START; /* asked once; the record goes when it is up (pending_done) */
	return control(cv, p->sv_dir, "u", name_of(cv, k), "");
}

static int start_held(struct converge *cv, size_t k)
{
	if (release_held(cv, k) == -1)
		return -1;
	return bring_up(cv, k, 0, "did not start");
}

/* Down on purpose: its changes apply at its next start. */
static int left_down(const struct converge *cv, size_t k)
{
	if (cv->s[k].why & CV_WHY_RESTART) {
		char text[64];
		diag_out(cv->d, "%s is down: the %s change applies at its next start\n",
		         name_of(cv, k), why_text(cv->s[k].why, text, sizeof text));
	}
	return 0;
}

/*
 * A supervised service: restart it (if up) when its files changed, and/or
 * reload its log; then make sure it is ready. A service down on purpose is
 * left alone, log included: its changes apply at its next start.
 */
/* Its readiness passed for this process with these settings (passed_for): no probe. */
static bool ready_proven(struct converge *cv, size_t k, const struct sv_status *st)
{
	char dg[64];
	return st->pid != 0 && st->state == SV_RUN &&
	       passed_for(cv, k, READY_RECORD, settings_digest_of(cv, k, dg, sizeof dg), st);
}

static int refresh(struct converge *cv, size_t k)
{
	const struct cv_svc *v = &cv->s[k];
	struct sv_status st;
	bool up = read_status(cv, k, &st) == 0 && st.want == 'u';
	int rc;
	if (v->why & CV_WHY_START) {
		rc = start_held(cv, k); /* an earlier run held it and did not get to start it */
	} else if (v->setup_stop) {
		rc = start_after_setup(cv, k);
	} else if (!up) {
		return left_down(cv, k); /* down on purpose: not ready, but nothing failed */
	} else if (v->why & CV_WHY_RESTART) {
		rc = restart(cv, k, &st);
	} else if ((v->why & CV_WHY_RELOAD) && st.pid != 0) {
		rc = reload(cv, k, &st);
	} else if (ready_proven(cv, k, &st)) {
		verbose(cv, "%s: ready, as proven for pid %ld\n", name_of(cv, k), (long)st.pid);
		rc = 0;
	} else {
		rc = st.pid == 0 ? bring_up(cv, k, 0, "did not start") : wait_ready(cv, k, &st);
	}
	return refresh_log(cv, k) == -1 ? -1 : rc;
}

/* A newly enabled service: wait for its runsv, then until it runs and is ready. */
static int bring_new(struct converge *cv, size_t k, bool nudge)
{
	const struct plan *p = &cv->ps->p[k];
	/* One held in this run was waited for, and released, with its wave (converge_wave). */
	if (!cv->s[k].held && wait_supervised(cv, k, nudge) == -1) {
		snprintf(cv->s[k].notready, sizeof cv->s[k].notready,
		         "runsv does not supervise it");
		return -1;
	}
	if (cv->s[k].why & CV_WHY_START)
		return start_held(cv, k); /* held by an earlier run that did not start it */
	if (sv_normally_down(p->sv_dir))
		return 0; /* a down file: runsv does not start it */
	return bring_up(cv, k, 0, "did not start");
}

/* An enabled dependency of service k that failed in this run, or SIZE_MAX. */
static size_t failed_dep(const struct converge *cv, size_t k)
{
	const struct cat_service *def = cv->ps->p[k].svc->def;
	for (size_t i = 0; i < def->nafter; i++)
		for (size_t j = 0; j < cv->ps->np; j++)
			if (cv->s[j].failed && strcmp(name_of(cv, j), def->after[i]) == 0)
				return j;
	return SIZE_MAX;
}

/* ---- pending work (pending.h) ---------------------------------------------------------- */

/* Each reason for a restart and its record on disk. */
static const struct {
	unsigned why, owed;
} reasons[] = {
    {CV_WHY_RUN, PENDING_RUN},
    {CV_WHY_ENV, PENDING_ENV},
    {CV_WHY_CONFIG, PENDING_CONFIG},
    {CV_WHY_LOGRUN, PENDING_LOG_RESTART},
    {CV_WHY_LOGCONF, PENDING_LOG_RELOAD},
    {CV_WHY_RELOAD, PENDING_RELOAD},
    {CV_WHY_START, PENDING_START},
};

/* The record of why: a restart with its reasons; a log restart supersedes a log reload. */
static unsigned owed_of(unsigned why)
{
	unsigned what = 0;
	if (why & CV_WHY_LOGRUN)
		why &= ~CV_WHY_LOGCONF;
	for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
		what |= (why & reasons[i].why) ? reasons[i].owed : 0;
	return what | ((why & CV_WHY_RESTART) ? PENDING_RESTART : 0);
}

static unsigned why_of_owed(unsigned what)
{
	unsigned why = 0;
	for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
		why |= (what & reasons[i].owed) ? reasons[i].why : 0;
	if ((what & PENDING_RESTART) && !(why & CV_WHY_RESTART))
		why |= CV_WHY_RESTART; /* a record without reasons */
	return why;
}

/*
 * Take over what an earlier run left owed for service k (recorded: the directory listing
 * showed a record); record what this run will owe.
 */
static int pending_take(struct converge *cv, size_t k, bool recorded, unsigned planned)
{
	const char *name = name_of(cv, k);
	unsigned owed = 0;
	if (recorded && pending_get(&cv->pd, name, &owed) == -1) {
		diag_file(&cv->late, DIAG_ERR, NULL, 0, "cannot read %s/%s: %s", cv->pd.dir, name,
		          strerror(errno));
		return -1;
	}
	if (owed != 0) {
		char text[64];
		diag_out(cv->d, "%s: an earlier run left a %s to do\n", name,
		         pending_text(owed, text, sizeof text));
		cv->s[k].why |= why_of_owed(owed);
	}
	cv->s[k].owes = recorded || owed_of(planned) != 0;
	if (owed_of(planned) != 0 && pending_add(&cv->pd, name, owed_of(planned)) == -1) {
		diag_file(&cv->late, DIAG_ERR, NULL, 0, "cannot record pending work in %s/%s: %s",
		          cv->pd.dir, name, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Before anything is published: take over what earlier runs left owed, and
 * record durably what this run's changes will owe, so that a kill or a failed
 * write later on leaves the next run knowing which restarts to do. Records are
 * written only under the root lock this run holds: one listing says which exist.
 */
static int pending_begin(struct converge *cv)
{
	const struct plans *ps = cv->ps;
	if (pending_open(cv->ctl, &cv->pd, true) == -1) {
		diag_file(&cv->late, DIAG_ERR, NULL, 0, "cannot open %s: %s", cv->pd.dir,
		          strerror(errno));
		return -1;
	}
	const char **names = xcalloc(ps->np, sizeof *names);
	unsigned *why = xcalloc(ps->np, sizeof *why);
	bool *present = xcalloc(ps->np, sizeof *present);
	for (size_t k = 0; k < ps->np; k++)
		names[k] = name_of(cv, k);
	if (pending_prune(&cv->pd, names, ps->np, present) == -1) {
		diag_file(&cv->late, DIAG_WARN, NULL, 0, "cannot clean %s: %s", cv->pd.dir,
		          strerror(errno));
		for (size_t k = 0; k < ps->np; k++)
			present[k] = true; /* not listed: read each */
	}
	for (size_t k = 0; k < ps->t.nc; k++) {
		const struct tnode *n = &ps->t.v[ps->t.c[k].node];
		if (n->svc >= 0) {
			why[n->svc] |= why_of(n->role);
			cv->s[n->svc].touched = true;
		}
	}
	int rc = 0;
	for (size_t k = 0; k < ps->np && rc == 0; k++)
		rc = pending_take(cv, k, present[k], why[k]);
	free(names);
	free(why);
	free(present);
	diags_live_flush(cv->d);
	return rc;
}

/* The service runs its new files (or is down and will at its start): nothing is owed. */
static void pending_done(struct converge *cv, size_t k)
{
	if (!cv->s[k].owes)
		return; /* no record was there, and this run wrote none */
	if (pending_clear(&cv->pd, name_of(cv, k), PENDING_ALL) == -1)
		diag_file(&cv->late, DIAG_WARN, NULL, 0, "cannot update %s/%s: %s", cv->pd.dir,
		          name_of(cv, k), strerror(errno));
	else
		cv->s[k].owes = false;
}

/* ---- waves ----------------------------------------------------------------------------- */

/* The links of the first wave's services that have no one-time step, before the steps run. */
#define WAVE_EARLY (-2)

static bool has_steps_before(const struct plan *p)
{
	for (size_t i = 0; i < p->nsteps; i++)
		if (p->steps[i].def->when == STEP_BEFORE_START)
			return true;
	return false;
}

/* Started before the one-time steps run (converge_all): needs nothing, waits for no step. */
static bool early(const struct converge *cv, int svc)
{
	return cv->early && svc >= 0 && cv->ps->p[svc].wave == 0 &&
	       !has_steps_before(&cv->ps->p[svc]);
}

/* Is change c one apply_changes writes for wave (-1: everything but enable links)? */
static bool in_wave(const struct converge *cv, const struct tnode *n, int wave)
{
	bool enable = n->role == TR_ENABLE;
	if (enable != (wave >= 0 || wave == WAVE_EARLY))
		return false;
	if (!enable)
		return true;
	bool first = n->svc >= 0 && (early(cv, n->svc) || cv->s[n->svc].held);
	if (wave == WAVE_EARLY ? !first : first)
		return false; /* linked early, or not early */
	/*
	 * A link whose dependency failed is reported by its wave, one whose setup failed by
	 * all_steps_before; the next run links it.
	 */
	return n->svc >= 0 && (wave == WAVE_EARLY || cv->ps->p[n->svc].wave == wave) &&
	       !cv->s[n->svc].failed && tree_failed(&cv->ps->t, n->svc) == NULL &&
	       failed_dep(cv, (size_t)n->svc) == SIZE_MAX;
}

/*
 * Services whose files could not be written in their account's directory (tree_failed): said
 * once, with the cause; each is failed (not started or restarted on old or half-new files, its
 * dependents wait) while the rest of the run goes on.
 */
static int files_failed(struct converge *cv)
{
	int rc = 0;
	for (size_t k = 0; k < cv->ps->np; k++) {
		const struct tree_fail *f = tree_failed(&cv->ps->t, (int)k);
		if (f == NULL)
			continue;
		rc = 1;
		if (cv->s[k].failed)
			continue;
		diag_file(
		    &cv->late, DIAG_ERR, NULL, 0,
		    "%s: cannot write %s: %s%s; its other files are left as they were and it is "
		    "not restarted",
		    name_of(cv, k), f->path, strerror(f->err), f->why);
		cv->s[k].failed = true;
		snprintf(cv->s[k].notready, sizeof cv->s[k].notready,
		         "its files could not be written");
	}
	return rc;
}

/*
 * Write the tree's changes; enable links only for `wave` (-1: everything but links). 0; 1 when
 * some services' files failed (files_failed: the rest is written); -1 when the batch failed.
 */
static int apply_changes(struct converge *cv, int wave, bool *linked)
{
	struct tree *t = &cv->ps->t;
	for (size_t k = 0; k < t->nc; k++) {
		const struct tchange *c = &t->c[k];
		if (!in_wave(cv, &t->v[c->node], wave))
			continue;
		if (tree_apply(t, c) == -1) {
			diag_file(&cv->late, DIAG_ERR, NULL, 0, "cannot write %s%s: %s", t->errpath,
			          t->errwhy, strerror(errno));
			return -1;
		}
		if (c->aside != NULL)
			diag_out(cv->d, "moved the directory at %s to %s\n", t->v[c->node].path,
			         c->aside);
	}
	/* Counted when published, not when planned or staged: a dropped service's are not. */
	for (size_t k = 0; k < t->nc; k++) {
		const struct tchange *c = &t->c[k];
		const struct tnode *n = &t->v[c->node];
		if (!c->published || !in_wave(cv, n, wave))
			continue;
		cv->updated++;
		if (n->svc >= 0)
			cv->s[n->svc].why |= why_of(n->role);
		*linked |= n->role == TR_ENABLE;
	}
	return files_failed(cv);
}

/* runsvdir up for this root, started the first time (after the first links exist). */
static int ensure_runsvdir(const struct converge *cv, int *running)
{
	if (*running == 1)
		return 0;
	if (*running == 0)
		diag_progress(cv->d, "start runsvdir for %s\n", cv->ps->service_dir);
	if (converge_ensure_wrapper(cv->ctl, cv->d) == -1)
		return -1;
	*running = 1;
	return 0;
}

/* Bring service k of the current wave up and ready, then its after_ready steps. */
static int converge_one(struct converge *cv, size_t k, bool nudge)
{
	struct cv_svc *v = &cv->s[k];
	if (tree_failed(&cv->ps->t, (int)k) != NULL)
		return -1; /* said by files_failed */
	size_t dep = failed_dep(cv, k);
	if (v->failed)
		return -1; /* its one-time setup is not done: it must not start */
	if (dep != SIZE_MAX) {
		diag_add(cv->d, DIAG_ERR, "%s: waiting for %s: %s", name_of(cv, k),
		         name_of(cv, dep), cv->s[dep].notready);
		diags_report(cv->d);
		v->failed = true;
		snprintf(v->notready, sizeof v->notready, "waiting for %s", name_of(cv, dep));
		return -1;
	}
	v->seen = false;
	int r1 = v->was_live ? refresh(cv, k) : bring_new(cv, k, nudge);
	struct sv_status st;
	if (r1 == 0 && !v->seen)
		(void)read_status(cv, k, &st);
	v->ready = r1 == 0 && v->seen && v->last.want == 'u' && v->last.pid != 0;
	if (v->ready && v->last.state == SV_RUN) {
		char dg[64];
		record_passed(cv, k, READY_RECORD, settings_digest_of(cv, k, dg, sizeof dg));
	}
	if (r1 == -1 || (v->ready && steps_after(cv, k) == -1)) {
		v->failed = true;
		return -1;
	}
	pending_done(cv, k); /* runs its new files, or is down and will at its start */
	return 0;
}

/*
 * One wave of services whose dependencies are up and ready: link the new
 * ones, start runsvdir the first time, then each service is brought up and
 * ready, and its after_ready steps run.
 */
/* Link a wave's new services and have runsvdir up; *nudge: runsvdir ran before. 0, 1, -1. */
static int link_wave(struct converge *cv, int wave, int *running, bool *nudge)
{
	time_t mtime_before = 0;
	bool linked = false;
	svdir_mtime(cv->ps->service_dir, &mtime_before);
	int applied = apply_changes(cv, wave, &linked);
	if (applied == -1)
		return -1;
	if (linked) {
		int b = svdir_settle(cv->ps->service_dir, mtime_before, *running == 1);
		verbose(cv, "service dir mtime %s\n", b == 1 ? "backdated by 1 s" : "left as is");
	}
	*nudge = *running == 1;
	if (ensure_runsvdir(cv, running) == -1)
		return -1;
	return applied;
}

static int converge_wave(struct converge *cv, int wave, int *running)
{
	bool nudge;
	int rc = link_wave(cv, wave, running, &nudge);
	if (rc == -1)
		return -1;
	rc = rc == 1 ? -1 : 0;
	/*
	 * The wave's held services start together, as new links do; then each is waited for.
	 * Each is supervised first: linked with an earlier wave, its runsv may not yet have made
	 * supervise/control when that wave was quick (a first run's runsvdir is seconds old).
	 */
	for (size_t k = 0; k < cv->ps->np; k++) {
		if (cv->ps->p[k].wave != wave || !cv->s[k].held || cv->s[k].failed ||
		    tree_failed(&cv->ps->t, (int)k) != NULL || failed_dep(cv, k) != SIZE_MAX)
			continue;
		const char *why = wait_supervised(cv, k, nudge) == -1
		                      ? "runsv does not supervise it"
		                  : release_held(cv, k) == -1 ? "it could not be started"
		                                              : NULL;
		if (why != NULL) {
			cv->s[k].failed = true;
			snprintf(cv->s[k].notready, sizeof cv->s[k].notready, "%s", why);
			rc = -1;
		}
	}
	for (size_t k = 0; k < cv->ps->np; k++)
		if (cv->ps->p[k].wave == wave && converge_one(cv, k, nudge) == -1)
			rc = -1;
	return rc;
}

/*
 * A one-time step will run (not recorded done): worth starting what needs nothing from it
 * first, so that initdb's second or so overlaps their start instead of preceding it.
 */
static bool steps_will_run(struct converge *cv)
{
	for (size_t k = 0; k < cv->ps->np; k++) {
		const struct plan *p = &cv->ps->p[k];
		for (size_t i = 0; i < p->nsteps; i++) {
			struct step_entry e;
			if (p->steps[i].def->when == STEP_BEFORE_START &&
			    (!records_open(cv) ||
			     steprec_get(&cv->sr, name_of(cv, k), p->steps[i].def->name, &e) != 0 ||
			     e.state != STEP_DONE))
				return true;
		}
	}
	return false;
}

/* Whether the tree links service k in this run (a new enable link). */
static bool links_new(const struct converge *cv, size_t k)
{
	const struct tree *t = &cv->ps->t;
	for (size_t c = 0; c < t->nc; c++)
		if (t->v[t->c[c].node].role == TR_ENABLE && t->v[t->c[c].node].svc == (int)k &&
		    t->c[c].kind == TC_CREATE)
			return true;
	return false;
}

/*
 * The services that wait for a one-time step or another service, linked with the early ones
 * under a `down` file of reconfigure's (recorded first as PENDING_START): runsvdir, which
 * looks at its directory once a second, supervises them all at its first look, and each is
 * started by `u` the moment its turn comes rather than up to a second after its link.
 * Not a service with a down file of its own: that one stays down.
 */
static int hold_new(struct converge *cv)
{
	for (size_t k = 0; k < cv->ps->np; k++) {
		const struct plan *p = &cv->ps->p[k];
		struct cv_svc *v = &cv->s[k];
		if (early(cv, (int)k) || v->was_live || v->failed ||
		    tree_failed(&cv->ps->t, (int)k) != NULL || !links_new(cv, k) ||
		    sv_normally_down(p->sv_dir))
			continue;
		char down[PATH_MAX];
		if (pending_add(&cv->pd, name_of(cv, k), PENDING_START) == -1) {
			diag_file(&cv->late, DIAG_ERR, NULL, 0,
			          "cannot record pending work in %s/%s: %s", cv->pd.dir,
			          name_of(cv, k), strerror(errno));
			return -1;
		}
		v->owes = true;
		int fd =
		    path_join(down, sizeof down, p->sv_dir, "down") == -1
		        ? -1
		        : open(down, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd == -1 || close(fd) == -1) {
			diag_file(&cv->late, DIAG_ERR, NULL, 0, "cannot create %s/down: %s",
			          p->sv_dir, strerror(errno));
			return -1;
		}
		v->held = true;
		v->why |= CV_WHY_START;
	}
	return 0;
}

/* One-time steps (initdb) before anything starts: their service must not run yet. */
static int all_steps_before(struct converge *cv)
{
	int rc = 0;
	for (size_t k = 0; k < cv->ps->np; k++)
		if (tree_failed(&cv->ps->t, (int)k) == NULL && steps_before(cv, k) == -1) {
			cv->s[k].failed = true;
			snprintf(cv->s[k].notready, sizeof cv->s[k].notready, "its setup failed");
			rc = -1;
		}
	return rc;
}

static int converge_all(struct converge *cv)
{
	int rc = 0, maxwave = 0;
	pid_t wpid;
	int running = svdir_running(cv->ctl, &wpid);
	bool linked = false;

	if (running == -1) {
		diag_add(cv->d, DIAG_WARN, "cannot check runsvdir: %s", strerror(errno));
		diags_report(cv->d);
	}
	/* A wrapper that is stopping supervises nothing for long: wait for it, start anew. */
	if (running == SVDIR_STOPPING && (converge_ensure_wrapper(cv->ctl, cv->d) == -1 ||
	                                  (running = svdir_running(cv->ctl, &wpid)) != 1))
		return -1;
	cv->deadline = mono_ms() + cv->wait_ms; /* one deadline for the whole run */
	for (size_t k = 0; k < cv->ps->np; k++) {
		cv->s[k].was_live = sv_live(cv->ps->p[k].sv_dir) == SV_LIVE_OK;
		maxwave = cv->ps->p[k].wave > maxwave ? cv->ps->p[k].wave : maxwave;
	}
	if (pending_begin(cv) == -1)
		return -1;
	for (size_t k = 0; k < cv->ps->ndisable; k++)
		if (disable_one(cv, &cv->ps->disable[k]) == -1)
			rc = -1;
	int applied = apply_changes(cv, -1, &linked);
	if (applied == -1)
		return -1;
	if (applied == 1)
		rc = -1; /* the other services go on */
	cv->early = steps_will_run(cv);
	bool nudge;
	if (cv->early) {
		if (hold_new(cv) == -1)
			return -1;
		int linked_early = link_wave(cv, WAVE_EARLY, &running, &nudge);
		if (linked_early == -1)
			return -1;
		if (linked_early == 1)
			rc = -1;
	}
	if (all_steps_before(cv) == -1)
		rc = -1;
	for (int w = 0; w <= maxwave; w++)
		if (converge_wave(cv, w, &running) == -1)
			rc = -1;
	return rc;
}

int converge_run(struct converge *cv)
{
	int rc = converge_all(cv);
	diags_move(cv->d, &cv->late); /* what the run went on past: the command prints it */
	return rc;
}

void converge_dry_run(struct converge *cv)
{
	for (size_t k = 0; k < cv->ps->ndisable; k++)
		(void)disable_one(cv, &cv->ps->disable[k]);
	for (size_t k = 0; k < cv->ps->np; k++) /* says the one-time steps it would run */
		(void)steps_before(cv, k);
	diags_move(cv->d, &cv->late);
}
