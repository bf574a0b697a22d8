/*
 * Service control: status, start/stop/restart/once, signals, graceful-kill,
 * service-list, tail. runit's protocol is spoken directly (runit.h); the
 * output and the waiting follow runit's sv (sv -w), with the service name
 * where sv prints the directory, as Omnibus' gitlab-ctl does.
 *
 * `status` is as cheap as `sv status`: it reads only the service directory,
 * allocates only the name list and writes its output with one write(2).
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/catalog.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "cmd/commands.h"
#include "lib/proctree.h"
#include "runit/runit.h"
#include "lib/spawn.h"
#include "runit/svdir.h"
#include "runit/svsel.h"
#include "runit/svtail.h"
#include "runit/svwatch.h"

/*
 * Exit code contributions of `status`, summed as Omnibus does: 0 run, 1 runsv not running,
 * 3 down, 4 status unreadable. CODE_DEAD (down although runit wants it up) counts as down
 * in the sum; `status --lsb` tells them apart.
 */
enum { CODE_RUN = 0, CODE_FAIL = 1, CODE_DOWN = 3, CODE_UNKNOWN = 4, CODE_DEAD = 5 };

/*
 * stdout fully buffered in a static buffer: a whole `status` is one write(2), as sv's, and
 * nothing is allocated for it. Commands that wait flush before each wait. `status` hands
 * stdio one line per service: stdio's cost is per call.
 */
static void out_init(void)
{
	static char buf[8192];
	setvbuf(stdout, buf, _IOFBF, sizeof buf);
}

/*
 * sv's svstatus_get: 1 with st filled; 0 after printing "fail: ...: runsv not
 * running"; -1 after printing a warning. label is "NAME" or "NAME/log".
 */
static int get_status(int dfd, const char *dir, const char *label, struct sv_status *st)
{
	int live = sv_live_at(dfd, dir);
	if (live == SV_LIVE_NOT_RUNNING) {
		printf("fail: %s: runsv not running\n", label);
		return 0;
	}
	struct stat sb;
	if (live != SV_LIVE_OK && fstatat(dfd, dir, &sb, 0) == -1) {
		/* e.g. a symlink left behind after its sv directory was removed */
		printf("fail: %s: unable to change to service directory: %s\n", label,
		       sv_strerror(errno));
		return 0;
	}
	if (live != SV_LIVE_OK) {
		int e = live == SV_LIVE_NO_SUPERVISE ? ENOENT : errno;
		printf("warning: %s: unable to open supervise/ok: %s\n", label, sv_strerror(e));
		return -1;
	}
	if (sv_read_status_at(dfd, dir, st) == -1) {
		int e = errno;
		printf("warning: %s: unable to %s supervise/status: %s\n", label,
		       e == EBADMSG ? "read" : "open", sv_strerror(e));
		return -1;
	}
	return 1;
}

static void put_state(int dfd, const char *dir, const char *name, const struct sv_status *st,
                      time_t now)
{
	bool up = !sv_normally_down_at(dfd, dir);
	char line[512]; /* a name is at most NAME_MAX: a line fits, but need not */
	int n = sv_status_format(line, sizeof line, name, st, up, now);
	if (n < 0)
		return;
	if ((size_t)n < sizeof line) {
		fwrite(line, 1, (size_t)n, stdout);
		return;
	}
	char *big = xmalloc((size_t)n + 1);
	if (sv_status_format(big, (size_t)n + 1, name, st, up, now) == n)
		fwrite(big, 1, (size_t)n, stdout);
	free(big);
}

static int state_code(const struct sv_status *st)
{
	if (st->state == SV_RUN && st->pid != 0)
		return CODE_RUN;
	return st->want == 'u' ? CODE_DEAD : CODE_DOWN;
}

/* A service's (or log's) state at buf, as sv_status_format; a name is at most NAME_MAX,
 * so the line fits the callers' buffers. Returns the length written. */
static size_t state_at(char *buf, size_t len, int dfd, const char *dir, const char *name,
                       const struct sv_status *st, time_t now)
{
	int n = sv_status_format(buf, len, name, st, !sv_normally_down_at(dfd, dir), now);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* One line of `status` for a service and its log; returns its exit code share. */
static int status_one(const struct svsel *sel, const char *name, time_t now)
{
	char logdir[NAME_MAX + 8], line[2 * (NAME_MAX + 256)];
	/* relative to the open service directory, like sv after its chdir */
	const char *dir = name;
	struct sv_status st;

	if (svsel_relpath(name, true, logdir, sizeof logdir) == -1) {
		printf("fail: %s: %s\n", name, sv_strerror(errno));
		return CODE_FAIL;
	}
	int r = get_status(sel->fd, dir, name, &st);
	if (r <= 0)
		return r == 0 ? CODE_FAIL : CODE_UNKNOWN;
	size_t n = state_at(line, sizeof line - 2, sel->fd, dir, name, &st, now);
	int code = state_code(&st);

	struct stat sb;
	if (fstatat(sel->fd, logdir, &sb, 0) == -1) {
		if (errno == ENOENT) {
			line[n++] = '\n';
			fwrite(line, 1, n, stdout);
			return code;
		}
		fwrite(line, 1, n, stdout);
		printf("; warning: %s/log: unable to change directory: %s\n", name,
		       sv_strerror(errno));
		return code ? code : CODE_UNKNOWN;
	}
	memcpy(line + n, "; ", 2);
	fwrite(line, 1, n + 2, stdout);
	r = get_status(sel->fd, logdir, logdir, &st);
	int logcode = r == 0 ? CODE_FAIL : CODE_UNKNOWN;
	if (r == 1) {
		n = state_at(line, sizeof line - 1, sel->fd, logdir, "log", &st, now);
		line[n++] = '\n';
		fwrite(line, 1, n, stdout);
		logcode = state_code(&st);
	}
	/* The main service decides; a failing log only spoils an otherwise running one. */
	return code != CODE_RUN ? code : logcode;
}

static int no_options(int argc, char **argv)
{
	static const struct option opts[] = {{NULL, 0, NULL, 0}};
	if (command_getopt(argc, argv, "+", opts) != -1)
		return -1;
	return 0;
}

/* Select services through the one resolver. 0, 1 (reported) or 2 (usage). */
static int select_services(const struct ctl *ctl, int argc, char **argv, struct svsel *sel)
{
	const char *name;
	if (no_options(argc, argv) == -1 || command_one_arg(argc, argv, &name) == -1)
		return 2;
	return command_select(ctl, argv[0], name, sel, stderr);
}

/*
 * --lsb: the LSB init-script status codes for the whole selection, the worst one winning:
 * 4 unknown (status unreadable, runsv not running), then 1 dead (down although runit wants
 * it up: supervise/status is the pidfile), then 3 not running (down as wanted), else 0.
 */
static int lsb_rank(int code)
{
	switch (code) {
	case CODE_RUN:
		return 0;
	case CODE_DOWN:
		return 1;
	case CODE_DEAD:
		return 2;
	default:
		return 3;
	}
}

static int status_opts(int argc, char **argv, bool *lsb)
{
	static const struct option opts[] = {{"lsb", no_argument, NULL, 'l'}, {NULL, 0, NULL, 0}};
	int ch;
	while ((ch = command_getopt(argc, argv, "+", opts)) != -1) {
		if (ch != 'l')
			return -1;
		*lsb = true;
	}
	return 0;
}

int cmd_status(const struct ctl *ctl, int argc, char **argv)
{
	out_init();
	struct svsel sel;
	const char *name;
	bool lsb = false;
	if (status_opts(argc, argv, &lsb) == -1 || command_one_arg(argc, argv, &name) == -1)
		return 2;
	if (command_select(ctl, argv[0], name, &sel, stderr) != 0)
		return lsb ? 4 : 1;
	time_t now = time(NULL);
	static const int lsb_of_rank[] = {0, 3, 1, 4};
	int code = 0, worst = 0;
	bool orphans = false;
	for (size_t i = 0; i < sel.n; i++) {
		int c = status_one(&sel, sel.names[i], now);
		orphans |= c == CODE_FAIL;
		if (lsb_rank(c) > worst)
			worst = lsb_rank(c);
		code += c == CODE_DEAD ? CODE_DOWN : c;
		if (code > 255)
			code = 255; /* a sum past 255 would wrap to a false success */
	}
	fflush(stdout);
	svsel_free(&sel);
	if (orphans)
		command_hint_runsvdir(ctl, argv[0], stderr);
	return lsb ? lsb_of_rank[worst] : code;
}

/* --- start, stop, restart, once, signals ------------------------------------------------ */

struct op {
	const char *name;
	const char *acts; /* control bytes sent, and the states waited for (sv's acts) */
	bool kill_on_timeout;
	const char *signame; /* a plain signal: what happened to the pid is reported */
};

static const struct op ops[] = {
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
	int errfd;                     /* the last check's stderr (memfd), -1 if none */
};

static int svwait(long *out)
{
	const char *errstr;
	if (sv_wait_seconds(out, &errstr) == 0)
		return 0;
	warnx("SVWAIT=%s: %s (seconds, 0 to %d)", getenv("SVWAIT"), errstr, SV_WAIT_MAX);
	return -1;
}

/*
 * Polled many times while a service starts, each run bounded by the
 * command's deadline: its complaints (stderr, kept in a memfd) only matter
 * if it never passes, and are shown then (show_check_errors).
 */
static bool check_passes(struct job *j, long deadline)
{
	if (j->errfd == -1)
		j->errfd = memfd_create("check-stderr", MFD_CLOEXEC);
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
		warn("%s/check", j->dir);
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

static void show_check_errors(const struct job *j)
{
	char buf[4096];
	ssize_t n;
	if (j->errfd == -1 || lseek(j->errfd, 0, SEEK_SET) == -1)
		return;
	while ((n = read(j->errfd, buf, sizeof buf)) > 0)
		if (write(STDERR_FILENO, buf, (size_t)n) != n)
			break;
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

static bool starts(const struct op *op)
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
                              long *deadline, long wait_ms)
{
	bool missing = false;
	pid_t pid;
	int running = svdir_running(ctl, &pid);
	for (size_t i = 0; i < n; i++)
		missing |= jobs[i].dir[0] != '\0' && sv_live(jobs[i].dir) != SV_LIVE_OK;
	if (!missing && running != SVDIR_STOPPING)
		return *deadline;
	if (running != 1 && (running == SVDIR_STOPPING || !any_supervised(ctl)) &&
	    svdir_ensure(ctl) == -1)
		return 0;
	if (running == SVDIR_STOPPING) /* SVWAIT counts from the new wrapper */
		*deadline = mono_ms() + wait_ms;
	svdir_nudge(ctl);
	return *deadline;
}

/* sv's control(): send acts unless already wanted. 1 sent/skipped, 0 failed (reported). */
static int send_control(struct job *j, const struct op *op, long await)
{
	struct sv_status st;

	if (await > 0 && sv_live(j->dir) != SV_LIVE_OK)
		await_runsv(j->dir, await);
	if (get_status(AT_FDCWD, j->dir, j->name, &st) != 1)
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
			printf("fail: %s: runsv not running\n", j->name);
		else
			printf("warning: %s: unable to open supervise/control: %s\n", j->name,
			       sv_strerror(errno));
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
		printf("warning: %s: process group %ld now belongs to another process; not "
		       "killing it\n",
		       j->name, (long)j->pgrp);
		return;
	}
	printf("kill: %s: process group %ld still has processes, sending SIGKILL\n", j->name,
	       (long)j->pgrp);
	kill(-j->pgrp, SIGKILL);
}

/* After a plain signal: the pid now running, and whether it is still the one signalled. */
static bool signal_report(const struct job *j, const struct op *op, const struct sv_status *st,
                          time_t now)
{
	/* Down before the signal: nothing was signalled, and that is fine (as sv says). */
	bool ok = j->pid0 == 0 || (st->state == SV_RUN && st->pid != 0);
	fputs(ok ? "ok: " : "fail: ", stdout);
	put_state(AT_FDCWD, j->dir, j->name, st, now);
	if (st->pid != j->pid0 && j->pid0 != 0)
		printf(" (%s: pid %ld exited on %s)", ok ? "restarted" : "died", (long)j->pid0,
		       op->signame);
	fputs("\n", stdout);
	return ok;
}

/* One finished job: print sv's line, act on a timeout. 1 when it failed. */
static int finish_job(struct job *j, const struct op *op, const struct sv_status *st, bool ok,
                      time_t now)
{
	if (op->signame != NULL)
		return !signal_report(j, op, st, now);
	fputs(ok ? "ok: " : op->kill_on_timeout ? "kill: " : "timeout: ", stdout);
	put_state(AT_FDCWD, j->dir, j->name, st, now);
	fputs("\n", stdout);
	if (!ok) {
		if (op->kill_on_timeout)
			sv_control(j->dir, 'k');
		else if (strpbrk(op->acts, "utk") != NULL && st->state == SV_RUN && st->pid != 0 &&
		         !st->got_term) {
			/* running but not ready: what the check script said last time */
			fflush(stdout);
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
static int wait_jobs(struct job *jobs, size_t n, const struct op *op, long deadline,
                     const struct timespec *tstart)
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
			int r = get_status(AT_FDCWD, j->dir, j->name, &st);
			bool ok = r == 1 && reached(j, op->acts, &st, tstart, deadline);
			if (r == 1 && !ok && mono_ms() < deadline)
				continue;
			j->pending = false;
			pending--;
			failed += r != 1 ? 1 : finish_job(j, op, &st, ok, now);
		}
		fflush(stdout);
		long left = deadline - mono_ms();
		if (pending > 0 && left > 0)
			svwatch_wait(&w, ms < left ? ms : left);
	}
	svwatch_close(&w);
	return failed;
}

/* restart-except SVC...: every enabled service but those named, each of which must resolve. */
static int select_except(const struct ctl *ctl, int argc, char **argv, struct svsel *sel)
{
	if (no_options(argc, argv) == -1)
		return 2;
	if (optind >= argc) {
		warnx("name the services to leave running: restart-except SERVICE...");
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		struct svsel one;
		if (command_select(ctl, argv[0], argv[i], &one, stderr) != 0)
			return 1;
		svsel_free(&one);
	}
	if (command_select(ctl, argv[0], NULL, sel, stderr) != 0)
		return 1;
	size_t n = 0;
	for (size_t k = 0; k < sel->n; k++) {
		bool keep = true;
		for (int i = optind; i < argc && keep; i++)
			keep = strcmp(sel->names[k], argv[i]) != 0;
		if (keep)
			sel->names[n++] = sel->names[k];
		else
			free(sel->names[k]);
	}
	sel->n = n;
	return 0;
}

int cmd_control(const struct ctl *ctl, int argc, char **argv)
{
	out_init();
	const struct op *op = NULL;
	struct svsel sel;
	long wait;

	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strcmp(argv[0], ops[i].name) == 0)
			op = &ops[i];
	if (op == NULL) {
		warnx("%s: not a control command", argv[0]);
		return 2;
	}
	if (svwait(&wait) == -1)
		return 2;
	int r = strcmp(op->name, "restart-except") == 0 ? select_except(ctl, argc, argv, &sel)
	                                                : select_services(ctl, argc, argv, &sel);
	if (r != 0)
		return r;
	if (sel.n > 1 && svsel_order(&sel, strcmp(op->acts, "d") == 0) == -1)
		warn("%s: cannot read the service order; acting in name order", sel.dir);

	struct job *jobs = calloc(sel.n ? sel.n : 1, sizeof *jobs);
	if (jobs == NULL) {
		svsel_free(&sel);
		warn("out of memory");
		return 1;
	}
	struct timespec tstart;
	clock_gettime(CLOCK_REALTIME, &tstart);
	long deadline = mono_ms() + wait * 1000L; /* one deadline for the whole command */
	int failed = 0;
	for (size_t i = 0; i < sel.n; i++) {
		struct job *j = &jobs[i];
		j->name = sel.names[i];
		j->errfd = -1;
		if (svsel_path(&sel, j->name, false, j->dir, sizeof j->dir) == -1) {
			printf("fail: %s: %s\n", j->name, sv_strerror(errno));
			j->dir[0] = '\0';
			failed++;
		}
	}
	long await = starts(op) ? ensure_supervisor(ctl, jobs, sel.n, &deadline, wait * 1000L) : 0;
	bool *up = calloc(sel.n + 1, sizeof *up); /* per job: up and ready after its wave */
	/* Dependencies first (stop: dependents first), one wave at a time (svsel_order). */
	for (size_t w = 0, end; w < sel.n; w = end) {
		end = svsel_wave_end(&sel, w);
		for (size_t i = w; i < end; i++) {
			struct job *j = &jobs[i];
			const char *dep = starts(op) && up ? svsel_waiting_for(&sel, i, up) : NULL;
			if (dep != NULL) /* not started: what it needs is not ready */
				printf("fail: %s: waiting for %s: not ready\n", j->name, dep);
			if (j->dir[0] == '\0' || dep != NULL) {
				failed += dep != NULL;
				continue;
			}
			j->pending = send_control(j, op, await) == 1;
			failed += !j->pending;
		}
		fflush(stdout);
		failed += wait_jobs(jobs + w, end - w, op, deadline, &tstart);
		for (size_t i = w; up && i < end; i++)
			up[i] = ready_now(&jobs[i], deadline);
	}
	fflush(stdout);
	if (failed && starts(op))
		cmd_tail_failed(ctl, sel.names, sel.n, stderr);
	free(up);
	for (size_t i = 0; i < sel.n; i++)
		if (jobs[i].errfd != -1)
			close(jobs[i].errfd);
	free(jobs);
	svsel_free(&sel);
	return failed ? 1 : 0;
}

/* --- service-list ------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool enabled(const struct svsel *sel, const char *name)
{
	/* no <install>/service yet: names is NULL, which bsearch must not get */
	return sel->n > 0 &&
	       bsearch(&name, sel->names, sel->n, sizeof *sel->names, cmp_str) != NULL;
}

int cmd_service_list(const struct ctl *ctl, int argc, char **argv)
{
	struct catalog cat;
	struct diags d;
	struct svsel sel;
	char dir[PATH_MAX];

	if (no_options(argc, argv) == -1 || optind != argc) {
		warnx("%s: takes no arguments", argv[0]);
		return 2;
	}
	if (snprintf(dir, sizeof dir, "%s/sv", ctl->datadir) >= (int)sizeof dir) {
		warnx("%s/sv: %s", ctl->datadir, strerror(ENAMETOOLONG));
		return 1;
	}
	diags_init(&d);
	if (catalog_load(dir, &cat, &d) == -1) {
		diags_print(&d, stderr);
		diags_free(&d);
		return 1;
	}
	diags_print(&d, stderr);
	diags_free(&d);
	if (svsel_load(ctl, NULL, &sel) == -1 && errno != ENOENT) {
		warn("%s", sel.dir);
		catalog_free(&cat);
		return 1;
	}
	/* Catalog services, then enabled ones the catalog does not know (hand-made). */
	for (size_t i = 0; i < cat.n; i++)
		printf("%s%s\n", cat.v[i].name, enabled(&sel, cat.v[i].name) ? "*" : "");
	for (size_t i = 0; i < sel.n; i++)
		if (catalog_find(&cat, sel.names[i]) == NULL)
			printf("%s*\n", sel.names[i]);
	catalog_free(&cat);
	svsel_free(&sel);
	return fflush(stdout) == 0 ? 0 : 1;
}
