/*
 * reconfigure (SPEC section 6) and runsvdir.
 *
 * reconfigure: lock the root; parse and validate; render every template and
 * build the desired tree in memory; only then touch the disk: accounts, the
 * differences of the tree (each file atomically), runsvdir, and finally the
 * services: new ones waited for until runsv supervises them, they run and
 * pass their readiness check (a run script that keeps exiting is reported
 * at once, with its status), changed ones restarted and waited for likewise
 * (log config changes only HUP svlogd), disabled ones stopped and unlinked.
 * Every wait has a deadline (SVWAIT, default 30 s); none is a fixed sleep.
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
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "render/accounts.h"
#include "config/attrs.h"
#include "build_config.h"
#include "config/catalog.h"
#include "lib/clock.h"
#include "cmd/commands.h"
#include "render/pending.h"
#include "proc/ready.h"
#include "runit/runit.h"
#include "runit/svdir.h"
#include "proc/svrun.h"
#include "runit/svtail.h"
#include "render/svvars.h"
#include "render/template.h"
#include "render/tree.h"
#include "config/trust.h"
#include "lib/pathsafe.h"

#define LOCK_WAIT_S 60
#define POLL_MS     100 /* at most, between looks: waits wake on supervise/ changes */

/* Why a service is restarted: its run script, env or config changed. */
#define WHY_RUN     0x1u
#define WHY_ENV     0x2u
#define WHY_CONFIG  0x4u
#define WHY_LOGCONF 0x8u
#define WHY_LOGRUN  0x10u

struct extra {
	char *dest;
	struct tbuf body;
	mode_t mode;
	bool service_owned;
};

/* A setup step with its placeholders expanded (catalog: setup). */
struct step {
	const struct cat_step *def;
	char *creates;
	char **argv;
};

struct plan {
	const struct svc *svc;
	struct step *steps;
	size_t nsteps;
	struct tbuf after;  /* sv/<svc>/after: the enabled services it needs, one per line */
	int wave;           /* 0: needs nothing; else 1 + the highest wave it needs */
	bool ready;         /* up and ready in this run (or has nothing to wait for) */
	bool failed;        /* did not come up ready: its dependents are not started */
	bool setup_stop;    /* stopped for a before_start step: start it again */
	char notready[512]; /* why it is not ready, for its dependents' messages */
	char sv_dir[PATH_MAX];
	char log_sv[PATH_MAX];
	char link[PATH_MAX];
	struct tbuf run, logrun, logconf, check, control_t;
	bool has_check;
	struct extra *extra;
	size_t nextra;
	uid_t uid;
	gid_t gid;
	bool was_live; /* runsv supervised it before we changed anything */
	unsigned why;  /* WHY_* from the changes */
};

struct recon {
	const struct ctl *ctl;
	bool dry_run, show_diff;
	struct catalog cat;
	struct attrs a;
	struct diags d;
	struct plan *p;
	size_t np;
	struct tree t;
	char service_dir[PATH_MAX];
	char (*disable)[PATH_MAX]; /* service/<name> entries to disable */
	size_t ndisable;
	int accounts;
	int updated;
	long wait_ms;  /* SVWAIT */
	long deadline; /* mono_ms() by which every wait of converge ends: one SVWAIT in all */
	struct timespec t0;
	struct pending pd; /* restarts owed, on disk (pending.h) */
};

/* ---- rendering ------------------------------------------------------------------------- */

static int render(struct recon *r, const char *tpl, const struct tpl_vars *vars, struct tbuf *out)
{
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof path, "%s/templates/%s", r->ctl->datadir, tpl) >=
	    sizeof path) {
		diag_file(&r->d, DIAG_ERR, tpl, 0, "template path too long");
		return -1;
	}
	return tpl_render_file(path, vars, out, &r->d);
}

/* Expand every step now: a bad placeholder must fail before anything changes. */
static int plan_steps(struct recon *r, struct plan *p)
{
	const struct cat_service *def = p->svc->def;
	p->steps = calloc(def->nsetup + 1, sizeof *p->steps);
	if (p->steps == NULL)
		err(1, NULL);
	for (size_t i = 0; i < def->nsetup; i++) {
		const struct cat_step *cs = &def->setup[i];
		struct step *st = &p->steps[p->nsteps++];
		st->def = cs;
		st->argv = calloc(cs->argc + 1, sizeof *st->argv);
		if (st->argv == NULL)
			err(1, NULL);
		bool ok = true;
		for (size_t k = 0; k < cs->argc && ok; k++)
			ok = (st->argv[k] = attrs_expand(&r->a, p->svc, cs->argv[k])) != NULL;
		if (ok && cs->creates != NULL) {
			st->creates = attrs_expand(&r->a, p->svc, cs->creates);
			ok = st->creates != NULL && st->creates[0] == '/';
		}
		if (!ok) {
			diag_file(
			    &r->d, DIAG_ERR, def->file, cs->line,
			    "%s: setup step %s: an unknown placeholder, or 'creates' is not an "
			    "absolute path",
			    def->name, cs->name);
			return -1;
		}
	}
	return 0;
}

static int plan_service(struct recon *r, struct plan *p)
{
	const struct svc *s = p->svc;
	const struct cat_service *def = s->def;
	struct svvars c;
	struct tpl_vars vars = svvars_init(&c, r->ctl, &r->a, s);

	if (ctl_sv_dir(r->ctl, p->sv_dir, sizeof p->sv_dir, def->name) == -1 ||
	    (size_t)snprintf(p->log_sv, sizeof p->log_sv, "%s/log", p->sv_dir) >=
	        sizeof p->log_sv ||
	    (size_t)snprintf(p->link, sizeof p->link, "%s/%s", r->service_dir, def->name) >=
	        sizeof p->link) {
		diag_file(&r->d, DIAG_ERR, def->file, 0, "path too long for %s", def->name);
		return -1;
	}
	int rc = 0;
	rc |= render(r, "run", &vars, &p->run);
	rc |= render(r, "log-run", &vars, &p->logrun);
	rc |= render(r, "log-config", &vars, &p->logconf);
	bool tcp = def->check != NULL && strncmp(def->check, "unix:", 5) != 0;
	if (tcp && s->listen_host != NULL && strlen(s->listen_host) > 253) {
		/* DNS names end at 253: the check could only probe a truncated name. */
		diag_file(&r->d, DIAG_ERR, def->file, def->check_line,
		          "%s: listen address \"%.40s...\" is too long for a check URL", def->name,
		          s->listen_host);
		rc = -1;
	} else if (tcp && s->listen_port == 0) {
		diag_file(&r->d, DIAG_ERR, def->file, def->check_line,
		          "%s: check \"%s\" needs a listen address and port", def->name,
		          def->check);
		rc = -1;
	} else if (ready_has_check(def)) {
		p->has_check = true;
		rc |= render(r, "check", &vars, &p->check);
	}
	if (def->stop_signal != NULL && strcmp(def->stop_signal, "TERM") != 0)
		rc |= render(r, "control-t", &vars, &p->control_t);
	rc |= plan_steps(r, p);
	p->extra = calloc(def->ntemplates ? def->ntemplates : 1, sizeof *p->extra);
	if (p->extra == NULL)
		err(1, NULL);
	for (size_t i = 0; i < def->ntemplates; i++) {
		const struct cat_template *ct = &def->templates[i];
		struct extra *e = &p->extra[p->nextra++];
		tbuf_init(&e->body);
		e->mode = ct->mode;
		e->service_owned = ct->service_owned;
		e->dest = attrs_expand(&r->a, s, ct->dest);
		if (e->dest == NULL || e->dest[0] != '/') {
			diag_file(&r->d, DIAG_ERR, def->file, ct->line,
			          "template %s: destination \"%s\" is not an absolute path",
			          ct->src, ct->dest);
			rc = -1;
			continue;
		}
		rc |= render(r, ct->src, &vars, &e->body);
	}
	return rc ? -1 : 0;
}

static void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->nsteps; i++) {
		for (size_t k = 0; p->steps[i].argv && p->steps[i].argv[k]; k++)
			free(p->steps[i].argv[k]);
		free(p->steps[i].argv);
		free(p->steps[i].creates);
	}
	free(p->steps);
	tbuf_free(&p->after);
	tbuf_free(&p->run);
	tbuf_free(&p->logrun);
	tbuf_free(&p->logconf);
	tbuf_free(&p->check);
	tbuf_free(&p->control_t);
	for (size_t i = 0; i < p->nextra; i++) {
		free(p->extra[i].dest);
		tbuf_free(&p->extra[i].body);
	}
	free(p->extra);
}

/* ---- the desired tree ------------------------------------------------------------------ */

#define CHK(x)                                                                                     \
	do {                                                                                       \
		if ((x) < 0)                                                                       \
			err(1, "out of memory");                                                   \
	} while (0)

static void join(char *out, size_t len, const char *a, const char *b)
{
	if ((size_t)snprintf(out, len, "%s/%s", a, b) >= len)
		errx(1, "path too long: %s/%s", a, b);
}

static void add_env(struct tree *t, const struct plan *p, int i, uid_t ruid, gid_t rgid)
{
	const struct svc *s = p->svc;
	char path[PATH_MAX];
	CHK(tree_add_dir(t, s->env_dir, 0700, ruid, rgid, i, TR_ENV, TN_EXCLUSIVE));
	/* The complete environment: base env, then the service env over it. */
	for (size_t k = 0; k < s->base_env.n; k++) {
		const struct kv *kv = &s->base_env.v[k];
		if (kv_get(&s->env, kv->name) != NULL)
			continue;
		join(path, sizeof path, s->env_dir, kv->name);
		CHK(tree_add_file(t, path, kv->value, strlen(kv->value), 0600, ruid, rgid, i,
		                  TR_ENV, env_is_secret(kv->name) ? TN_SECRET : 0));
	}
	for (size_t k = 0; k < s->env.n; k++) {
		const struct kv *kv = &s->env.v[k];
		join(path, sizeof path, s->env_dir, kv->name);
		CHK(tree_add_file(t, path, kv->value, strlen(kv->value), 0600, ruid, rgid, i,
		                  TR_ENV, env_is_secret(kv->name) ? TN_SECRET : 0));
	}
}

static void build_tree(struct recon *r)
{
	struct tree *t = &r->t;
	bool root = geteuid() == 0;
	uid_t ruid = root ? 0 : TREE_NO_OWNER;
	gid_t rgid = root ? 0 : (gid_t)TREE_NO_OWNER;
	char path[PATH_MAX];

	/* Below the root nothing is followed; secret settings never show in a diff. */
	if (tree_set_anchor(t, r->ctl->root) == -1)
		errx(1, "%s: not a usable root", r->ctl->root);
	for (size_t k = 0; k < r->np; k++)
		for (size_t j = 0; j < r->p[k].svc->def->nsettings; j++)
			if (r->p[k].svc->def->settings[j].secret)
				CHK(tree_add_secret(
				    t, svc_var(r->p[k].svc, r->p[k].svc->def->settings[j].name)));
	if (ctl_path(r->ctl, path, sizeof path, GITLAB_CTL_INSTALL_DIR, "sv", (char *)NULL) == -1)
		errx(1, "path too long");
	CHK(tree_add_dir(t, path, 0755, ruid, rgid, -1, TR_NONE, 0));
	CHK(tree_add_dir(t, r->service_dir, 0755, ruid, rgid, -1, TR_NONE, 0));

	for (size_t k = 0; k < r->np; k++) {
		struct plan *p = &r->p[k];
		const struct svc *s = p->svc;
		int i = (int)k;
		CHK(tree_add_dir(t, p->sv_dir, 0755, ruid, rgid, i, TR_NONE, 0));
		join(path, sizeof path, p->sv_dir, "run");
		CHK(tree_add_file(t, path, p->run.p, p->run.len, 0755, ruid, rgid, i, TR_RUN, 0));
		if (p->has_check) {
			join(path, sizeof path, p->sv_dir, "check");
			CHK(tree_add_file(t, path, p->check.p, p->check.len, 0755, ruid, rgid, i,
			                  TR_NONE, 0));
		}
		if (p->control_t.len > 0) {
			/* runsv runs control/t instead of sending TERM, for stop and restart. */
			join(path, sizeof path, p->sv_dir, "control");
			CHK(tree_add_dir(t, path, 0755, ruid, rgid, i, TR_NONE, 0));
			join(path, sizeof path, p->sv_dir, "control/t");
			CHK(tree_add_file(t, path, p->control_t.p, p->control_t.len, 0755, ruid,
			                  rgid, i, TR_NONE, 0));
		}
		/* What start/stop order by (svsel.h): no config is parsed there. */
		join(path, sizeof path, p->sv_dir, "after");
		CHK(tree_add_file(t, path, p->after.p ? p->after.p : "", p->after.len, 0644, ruid,
		                  rgid, i, TR_NONE, 0));
		CHK(tree_add_dir(t, p->log_sv, 0755, ruid, rgid, i, TR_NONE, 0));
		join(path, sizeof path, p->log_sv, "run");
		CHK(tree_add_file(t, path, p->logrun.p, p->logrun.len, 0755, ruid, rgid, i,
		                  TR_LOG_RUN, 0));
		add_env(t, p, i, ruid, rgid);
		/*
		 * svlogd runs as root and runs the `!` processor named in <log_dir>/config:
		 * the log dir is root's, unlike Omnibus, so the service user cannot swap that
		 * file. The service writes only to svlogd's pipe. Home is the service user's.
		 */
		CHK(tree_add_dir(t, s->log_dir, 0700, ruid, rgid, i, TR_NONE, 0));
		join(path, sizeof path, s->log_dir, "config");
		CHK(tree_add_file(t, path, p->logconf.p, p->logconf.len, 0644, ruid, rgid, i,
		                  TR_LOG_CONFIG, 0));
		/*
		 * 0750 keeps other service accounts out; a catalog says 0755 where
		 * another account must reach a socket in it (the exporter, as git,
		 * connects to PostgreSQL's and Redis' sockets in their homes).
		 */
		CHK(tree_add_dir(t, s->home, s->def->home_mode, p->uid, p->gid, i, TR_NONE, 0));
		for (size_t e = 0; e < p->nextra; e++) {
			const struct extra *x = &p->extra[e];
			CHK(tree_add_file(t, x->dest, x->body.p, x->body.len, x->mode,
			                  x->service_owned ? p->uid : ruid,
			                  x->service_owned ? p->gid : rgid, i, TR_CONFIG, 0));
		}
	}

	/*
	 * The bundled exporter as the default command, unless an exporter is installed there: our
	 * link is managed (follows this binary's data dir), a real file is the operator's.
	 */
	char bundled[PATH_MAX];
	struct stat lst;
	join(bundled, sizeof bundled, r->ctl->datadir, "exporter/gitlab-exporter");
	if (ctl_path(r->ctl, path, sizeof path, GITLAB_CTL_INSTALL_DIR,
	             "embedded/bin/gitlab-exporter", (char *)NULL) == -1)
		errx(1, "path too long");
	if (access(bundled, X_OK) == 0 && bundled[0] == '/' &&
	    (lstat(path, &lst) == -1 || S_ISLNK(lst.st_mode)))
		CHK(tree_add_link(t, path, bundled, -1, TR_NONE, 0));

	/* Enabling comes last: runsv must find a complete service directory. */
	for (size_t k = 0; k < r->np; k++)
		CHK(tree_add_link(t, r->p[k].link, r->p[k].sv_dir, (int)k, TR_ENABLE, 0));
}

/*
 * Entries of service/ for catalog services that are not enabled: to be
 * disabled. Like Omnibus, services gitlab-ctl does not know (an operator's
 * own) are left alone.
 */
static int find_disabled(struct recon *r)
{
	DIR *dir = opendir(r->service_dir);
	if (dir == NULL)
		return errno == ENOENT ? 0 : -1;
	struct dirent *de;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		bool wanted = false;
		for (size_t k = 0; k < r->np && !wanted; k++)
			wanted = strcmp(r->p[k].svc->def->name, de->d_name) == 0;
		if (wanted)
			continue;
		if (catalog_find(&r->cat, de->d_name) == NULL) {
			if (r->ctl->verbose)
				fprintf(stderr, "leaving %s/%s alone: not a catalog service\n",
				        r->service_dir, de->d_name);
			continue;
		}
		char(*v)[PATH_MAX] = reallocarray(r->disable, r->ndisable + 1, sizeof *v);
		if (v == NULL)
			err(1, NULL);
		r->disable = v;
		join(r->disable[r->ndisable++], PATH_MAX, r->service_dir, de->d_name);
	}
	closedir(dir);
	return 0;
}

/* ---- the lock -------------------------------------------------------------------------- */

static int take_lock(const struct ctl *ctl, bool create, int *fdp)
{
	char var[PATH_MAX], path[PATH_MAX];
	*fdp = -1;
	if (ctl_var_dir(ctl, var, sizeof var) == -1)
		return -1;
	join(path, sizeof path, var, "reconfigure.lock");
	if (create && pathsafe_mkdirs(var, 0755) == -1) {
		warnx("cannot create %s: %s%s", var, strerror(errno), ctl_root_hint(ctl, errno));
		return -1;
	}
	int fd = open(path, O_RDWR | (create ? O_CREAT : 0) | O_CLOEXEC, 0644);
	if (fd == -1) {
		if (!create && errno == ENOENT)
			return 0;
		warn("cannot open %s", path);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK) {
			warn("cannot lock %s", path);
			close(fd);
			return -1;
		}
		/* The holder writes its pid right after locking: give it a moment. */
		char pid[32] = "?";
		for (int i = 0; i < 20; i++) {
			ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
			if (n > 0) {
				pid[n] = '\0';
				pid[strcspn(pid, "\n")] = '\0';
				break;
			}
			strlcpy(pid, "?", sizeof pid);
			sleep_ms(5);
		}
		fprintf(stderr, "waiting for another reconfigure (pid %s)...\n", pid);
		long deadline = mono_ms() + LOCK_WAIT_S * 1000L;
		while (flock(fd, LOCK_EX | LOCK_NB) == -1) {
			if (errno != EWOULDBLOCK || mono_ms() > deadline) {
				warnx("another reconfigure (pid %s) still holds %s after %d s", pid,
				      path, LOCK_WAIT_S);
				close(fd);
				return -1;
			}
			sleep_ms(20);
		}
	}
	if (create && (ftruncate(fd, 0) == -1 || dprintf(fd, "%ld\n", (long)getpid()) < 0))
		warn("cannot write %s", path);
	*fdp = fd;
	return 0;
}

/* ---- converge -------------------------------------------------------------------------- */

static unsigned why_of(enum tnode_role role)
{
	switch (role) {
	case TR_RUN:
		return WHY_RUN;
	case TR_ENV:
		return WHY_ENV;
	case TR_CONFIG:
		return WHY_CONFIG;
	case TR_LOG_CONFIG:
		return WHY_LOGCONF;
	case TR_LOG_RUN:
		return WHY_LOGRUN;
	default:
		return 0;
	}
}

static void status_text(const char *dir, const char *name, char *buf, size_t len)
{
	struct sv_status st;
	if (sv_read_status(dir, &st) == -1) {
		snprintf(buf, len, "no status: %s", sv_strerror(errno));
		return;
	}
	sv_status_format(buf, len, name, &st, !sv_normally_down(dir), time(NULL));
}

/* Wait until runsv supervises p (supervise/ok has a reader); explain a timeout. */
static int wait_supervised(struct recon *r, const struct plan *p, bool nudge, long deadline)
{
	long next_nudge = 0, t0 = mono_ms();
	int nudges = 0;
	for (;;) {
		int live = sv_live(p->sv_dir);
		if (live == SV_LIVE_OK) {
			if (r->ctl->verbose)
				fprintf(stderr, "%s: supervised after %ld ms (%d nudges)\n",
				        p->svc->def->name, mono_ms() - t0, nudges);
			return 0;
		}
		long now = mono_ms();
		if (now > deadline) {
			pid_t pid;
			const char *name = p->svc->def->name;
			if (svdir_running(r->ctl, &pid) != 1)
				warnx("%s: runsvdir is not running for this root", name);
			else if (live == SV_LIVE_NO_SUPERVISE)
				warnx("%s: runsv was not started: runsvdir (wrapper pid %ld) has "
				      "not picked up %s",
				      name, (long)pid, p->link);
			else
				warnx("%s: runsv is not running for %s", name, p->sv_dir);
			return -1;
		}
		if (nudge && now >= next_nudge) {
			nudges++;
			svdir_nudge(r->ctl);
			next_nudge = now + 100;
		}
		sv_wait_change(p->sv_dir, POLL_MS);
	}
}

/* Wait for a run state with a pid other than old (0: any). */
static int wait_run(const struct recon *r, const struct plan *p, pid_t old, long deadline,
                    const char *what)
{
	for (;;) {
		struct sv_status st;
		if (sv_read_status(p->sv_dir, &st) == 0 && st.state == SV_RUN && st.pid != 0 &&
		    st.pid != old) {
			if (r->ctl->verbose) {
				struct timespec t;
				clock_gettime(CLOCK_MONOTONIC, &t);
				fprintf(stderr,
				        "%s: run: (pid %ld) %ld ms after reconfigure started\n",
				        p->svc->def->name, (long)st.pid,
				        (t.tv_sec - r->t0.tv_sec) * 1000L +
				            (t.tv_nsec - r->t0.tv_nsec) / 1000000L);
			}
			return 0;
		}
		if (mono_ms() > deadline) {
			char buf[256];
			status_text(p->sv_dir, p->svc->def->name, buf, sizeof buf);
			warnx("%s: %s within SVWAIT (last status: %s); see %s/current",
			      p->svc->def->name, what, buf, p->svc->log_dir);
			svtail_last(p->svc->log_dir, SVTAIL_FAILED_LINES, stderr);
			return -1;
		}
		sv_wait_change(p->sv_dir, POLL_MS);
	}
}

/* Someone else on the service's TCP port, for the message of a service that keeps exiting. */
static void port_note(const struct svc *s, char *buf, size_t len)
{
	pid_t pid;
	char cmd[160];
	buf[0] = '\0';
	if (s->listen_port > 0 && s->listen_host != NULL && s->listen_host[0] != '\0' &&
	    ready_port_holder(s->listen_port, &pid, cmd, sizeof cmd) == 1)
		snprintf(buf, len, "%s:%d is in use by pid %ld (%s); ",
		         s->listen_host ? s->listen_host : "", s->listen_port, (long)pid, cmd);
}

/*
 * After a start or restart: wait until the service passes its readiness check
 * (ready.h: this service's pid, its own protocol), so that "gitlab
 * Reconfigured!" means it answers. A run script that fails shows as a new pid
 * (runsv restarts it) or a down state: reported at once with the status, not
 * after SVWAIT. The reason it is not ready is kept in why for dependents.
 */
static int wait_ready(const struct recon *r, struct plan *p, long deadline, char *why, size_t len)
{
	struct sv_status st0;
	const char *name = p->svc->def->name;
	long t0 = mono_ms();
	snprintf(why, len, "not running");
	if (sv_read_status(p->sv_dir, &st0) == -1)
		return 0;
	for (long ms = 10;; ms = ms < 200 ? ms * 2 : 250) {
		struct sv_status st;
		if (sv_read_status(p->sv_dir, &st) == 0 &&
		    (st.pid != st0.pid || st.state != SV_RUN)) {
			char buf[256], note[256];
			status_text(p->sv_dir, name, buf, sizeof buf);
			port_note(p->svc, note, sizeof note);
			snprintf(why, len,
			         "%sit exits right after it starts (status: %s); see %s/current",
			         note, buf, p->svc->log_dir);
			warnx("%s: %s", name, why);
			svtail_last(p->svc->log_dir, SVTAIL_FAILED_LINES, stderr);
			return -1;
		}
		if (!p->has_check)
			return 0;
		long now = mono_ms(), until = now + 2000 < deadline ? now + 2000 : deadline;
		if (ready_check(r->ctl, &r->a, p->svc, st0.pid, until, why, len) == 1) {
			if (r->ctl->verbose)
				fprintf(stderr, "%s: ready after %ld ms\n", name, mono_ms() - t0);
			return 0;
		}
		if (mono_ms() > deadline) {
			warnx("%s: runs (pid %ld) but is not ready within SVWAIT: %s", name,
			      (long)st0.pid, why);
			return -1;
		}
		sleep_ms(ms);
	}
}

/* Wait for runsv to report the service down (before a before_start step). */
static int wait_down(const struct plan *p, long deadline)
{
	for (long ms = 10;; ms = ms < 200 ? ms * 2 : 250) {
		struct sv_status st;
		if (sv_read_status(p->sv_dir, &st) == 0 && st.pid == 0 && st.state == SV_DOWN)
			return 0;
		if (mono_ms() > deadline) {
			char buf[256];
			status_text(p->sv_dir, p->svc->def->name, buf, sizeof buf);
			warnx("%s: did not stop within SVWAIT (%s)", p->svc->def->name, buf);
			return -1;
		}
		sleep_ms(ms);
	}
}

/* ---- setup steps ------------------------------------------------------------------------ */

/*
 * Does path exist? Walked from / with O_NOFOLLOW: a link a service account
 * placed in its own directories is never followed by root. 1 yes, 0 no, -1
 * with errno (ELOOP or ENOTDIR: a symlink on the way).
 */
static int exists_nofollow(const char *path)
{
	char buf[PATH_MAX], *save = NULL;
	if (strlcpy(buf, path, sizeof buf) >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *comp = strtok_r(buf, "/", &save);
	while (fd != -1 && comp != NULL) {
		char *next = strtok_r(NULL, "/", &save);
		struct stat sb;
		if (next == NULL) {
			int r = fstatat(fd, comp, &sb, AT_SYMLINK_NOFOLLOW);
			int e = errno;
			close(fd);
			errno = e;
			return r == 0 ? 1 : errno == ENOENT ? 0 : -1;
		}
		int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		if (nfd == -1 && e == ENOENT)
			return 0;
		errno = e;
		fd = nfd;
		comp = next;
	}
	if (fd != -1)
		close(fd);
	return fd == -1 ? -1 : 1;
}

/* Run one step as the service user; its output is shown when it fails. */
static int run_step(struct recon *r, const struct plan *p, const struct step *st, long deadline,
                    struct tbuf *out)
{
	const char *name = p->svc->def->name;
	int rc = svrun(r->ctl, p->svc, st->argv, deadline, out);
	if (rc == 0)
		return 0;
	if (rc == -1)
		warnx("%s: setup step %s: %s", name, st->def->name,
		      errno == ETIMEDOUT ? "not finished within SVWAIT" : strerror(errno));
	else
		warnx("%s: setup step %s: %s exited with status %d", name, st->def->name,
		      st->argv[0], rc);
	if (out->len > 0)
		fprintf(stderr, "%s%s", out->p, out->p[out->len - 1] == '\n' ? "" : "\n");
	return -1;
}

/*
 * The before_start steps whose `creates` is missing (initdb once: an existing
 * cluster is never touched). A running service is stopped for them first.
 */
static int steps_before(struct recon *r, struct plan *p, long deadline)
{
	const char *name = p->svc->def->name;
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct step *st = &p->steps[i];
		if (st->def->when != STEP_BEFORE_START)
			continue;
		int e = exists_nofollow(st->creates);
		if (e == 1)
			continue;
		if (e == -1) {
			warn("%s: setup step %s: %s", name, st->def->name, st->creates);
			return -1;
		}
		printf("run %s setup %s (%s is missing)\n", name, st->def->name, st->creates);
		fflush(stdout);
		r->updated++;
		if (r->dry_run)
			continue;
		if (p->was_live && !p->setup_stop) {
			p->setup_stop = true;
			if (sv_control(p->sv_dir, 'd') == -1 || wait_down(p, deadline) == -1)
				return -1;
		}
		struct tbuf out;
		tbuf_init(&out);
		int rc = run_step(r, p, st, deadline, &out);
		tbuf_free(&out);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/*
 * The after_ready steps, every run: idempotent by contract. A step that
 * prints nothing changed nothing (psql with \gexec prints "CREATE ROLE" only
 * when it created one), so only output is shown, and counted as an update.
 */
static int steps_after(struct recon *r, const struct plan *p, long deadline)
{
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct step *st = &p->steps[i];
		if (st->def->when != STEP_AFTER_READY)
			continue;
		struct tbuf out;
		tbuf_init(&out);
		int rc = run_step(r, p, st, deadline, &out);
		if (rc == 0 && out.len > 0) {
			for (char *c = out.p; *c; c++)
				if (*c == '\n' && c[1] != '\0')
					*c = ';';
			printf("%s setup %s: %s%s", p->svc->def->name, st->def->name, out.p,
			       out.p[out.len - 1] == '\n' ? "" : "\n");
			r->updated++;
		} else if (rc == 0 && r->ctl->verbose) {
			fprintf(stderr, "%s setup %s: nothing to do\n", p->svc->def->name,
			        st->def->name);
		}
		tbuf_free(&out);
		if (rc == -1)
			return -1;
	}
	return 0;
}

static int disable_one(struct recon *r, const char *link)
{
	const char *name = strrchr(link, '/') + 1;
	struct stat st;
	if (lstat(link, &st) == -1)
		return 0;
	if (!S_ISLNK(st.st_mode)) {
		warnx("%s is not a symlink made by reconfigure; leaving it", link);
		return 0;
	}
	printf("disable %s\n", name);
	r->updated++;
	if (r->dry_run)
		return 0;
	char target[PATH_MAX];
	bool have = realpath(link, target) != NULL;
	/* Unlink first: runsvdir must not respawn the runsv that 'x' makes exit. */
	if (unlink(link) == -1) {
		warn("cannot remove %s", link);
		return -1;
	}
	if (!have || sv_live(target) != SV_LIVE_OK)
		return 0;
	if (sv_control_str(target, "dx") == -1) {
		warn("%s: cannot control runsv", name);
		return -1;
	}
	long deadline = r->deadline;
	while (sv_live(target) == SV_LIVE_OK) {
		if (mono_ms() > deadline) {
			char buf[256];
			status_text(target, name, buf, sizeof buf);
			warnx("%s: runsv did not exit within SVWAIT (%s)", name, buf);
			return -1;
		}
		sv_wait_change(target, POLL_MS);
	}
	return 0;
}

static const char *why_text(unsigned why)
{
	static char buf[64];
	buf[0] = '\0';
	if (why & WHY_RUN)
		strlcat(buf, ", run script", sizeof buf);
	if (why & WHY_ENV)
		strlcat(buf, ", env", sizeof buf);
	if (why & WHY_CONFIG)
		strlcat(buf, ", config", sizeof buf);
	return buf + 2;
}

/* Start (or restart, when old != 0) and wait until it runs and is ready. */
static int bring_up(struct recon *r, struct plan *p, pid_t old, long deadline, const char *what)
{
	if (wait_run(r, p, old, deadline, what) == -1) {
		snprintf(p->notready, sizeof p->notready, "%s", what);
		return -1;
	}
	return wait_ready(r, p, deadline, p->notready, sizeof p->notready);
}

/*
 * A supervised service: restart it (if up) when its files changed, and/or
 * reload its log; then make sure it is ready. Sets p->ready.
 */
static int refresh(struct recon *r, struct plan *p, long deadline)
{
	const char *name = p->svc->def->name;
	struct sv_status st;
	bool ok = sv_read_status(p->sv_dir, &st) == 0;
	int rc = 0;
	if (p->setup_stop) {
		printf("start %s (after setup)\n", name);
		fflush(stdout);
		if (sv_control(p->sv_dir, 'u') == -1)
			warn("%s: cannot control runsv", name), rc = -1;
		else
			rc = bring_up(r, p, 0, deadline, "did not start");
	} else if (!ok || st.want != 'u') {
		if (p->why & (WHY_RUN | WHY_ENV | WHY_CONFIG))
			printf("%s is down: the %s change applies at its next start\n", name,
			       why_text(p->why));
		return 0; /* down on purpose: not ready, but nothing failed */
	} else if (!(p->why & (WHY_RUN | WHY_ENV | WHY_CONFIG))) {
		rc = st.pid == 0 ? bring_up(r, p, 0, deadline, "did not start")
		                 : wait_ready(r, p, deadline, p->notready, sizeof p->notready);
	} else if (st.pid == 0 || st.state != SV_RUN) {
		/* Between two attempts of a failing run script: runsv starts the new one. */
		printf("start %s (%s changed)\n", name, why_text(p->why));
		fflush(stdout);
		rc = bring_up(r, p, 0, deadline, "did not start");
	} else {
		printf("restart %s (%s changed)\n", name, why_text(p->why));
		fflush(stdout);
		/* runsv restarts what it wants up: TERM (and CONT), then run again. */
		if (sv_control_str(p->sv_dir, "tc") == -1)
			warn("%s: cannot control runsv", name), rc = -1;
		else
			rc = bring_up(r, p, st.pid, deadline, "did not come back up");
	}
	if (p->why & WHY_LOGRUN) {
		printf("restart %s log (log/run changed)\n", name);
		if (sv_control(p->log_sv, 't') == -1)
			warn("%s log: cannot control runsv", name), rc = -1;
	} else if (p->why & WHY_LOGCONF) {
		/* svlogd rereads <log_dir>/config on HUP: the service keeps running. */
		printf("reload %s log (log config changed)\n", name);
		if (sv_control(p->log_sv, 'h') == -1)
			warn("%s log: cannot control runsv", name), rc = -1;
	}
	return rc;
}

/* A newly enabled service: wait for its runsv, then until it runs and is ready. */
static int bring_new(struct recon *r, struct plan *p, bool nudge, long deadline)
{
	if (wait_supervised(r, p, nudge, deadline) == -1) {
		snprintf(p->notready, sizeof p->notready, "runsv does not supervise it");
		return -1;
	}
	if (sv_normally_down(p->sv_dir))
		return 0; /* a down file: runsv does not start it */
	return bring_up(r, p, 0, deadline, "did not start");
}

/* An enabled dependency of p that failed in this run, or NULL. */
static const struct plan *failed_dep(const struct recon *r, const struct plan *p)
{
	const struct cat_service *def = p->svc->def;
	for (size_t i = 0; i < def->nafter; i++)
		for (size_t k = 0; k < r->np; k++)
			if (strcmp(r->p[k].svc->def->name, def->after[i]) == 0 && r->p[k].failed)
				return &r->p[k];
	return NULL;
}

/* ---- pending work (pending.h) ---------------------------------------------------------- */

static unsigned owed_of(unsigned why)
{
	unsigned what = (why & WHY_RUN ? PENDING_RUN : 0) | (why & WHY_ENV ? PENDING_ENV : 0) |
	                (why & WHY_CONFIG ? PENDING_CONFIG : 0);
	if (what != 0)
		what |= PENDING_RESTART;
	if (why & WHY_LOGRUN)
		what |= PENDING_LOG_RESTART;
	else if (why & WHY_LOGCONF)
		what |= PENDING_LOG_RELOAD;
	return what;
}

static unsigned why_of_owed(unsigned what)
{
	unsigned why = (what & PENDING_RUN ? WHY_RUN : 0) | (what & PENDING_ENV ? WHY_ENV : 0) |
	               (what & PENDING_CONFIG ? WHY_CONFIG : 0);
	if ((what & PENDING_RESTART) && why == 0)
		why = WHY_RUN | WHY_ENV | WHY_CONFIG; /* a record without reasons */
	return why | (what & PENDING_LOG_RESTART ? WHY_LOGRUN : 0) |
	       (what & PENDING_LOG_RELOAD ? WHY_LOGCONF : 0);
}

/*
 * Before anything is published: take over what earlier runs left owed, and
 * record durably what this run's changes will owe, so that a kill or a failed
 * write later on leaves the next run knowing which restarts to do.
 */
static int pending_begin(struct recon *r)
{
	if (pending_open(r->ctl, &r->pd, true) == -1) {
		warn("cannot open %s", r->pd.dir);
		return -1;
	}
	const char **names = calloc(r->np ? r->np : 1, sizeof *names);
	unsigned *why = calloc(r->np ? r->np : 1, sizeof *why);
	if (names == NULL || why == NULL)
		err(1, NULL);
	for (size_t k = 0; k < r->np; k++)
		names[k] = r->p[k].svc->def->name;
	if (pending_prune(&r->pd, names, r->np) == -1)
		warn("cannot clean %s", r->pd.dir);
	for (size_t k = 0; k < r->t.nc; k++) {
		const struct tnode *n = &r->t.v[r->t.c[k].node];
		if (n->svc >= 0)
			why[n->svc] |= why_of(n->role);
	}
	int rc = 0;
	for (size_t k = 0; k < r->np && rc == 0; k++) {
		struct plan *p = &r->p[k];
		unsigned owed;
		char text[64];
		if (pending_get(&r->pd, names[k], &owed) == -1) {
			warn("cannot read %s/%s", r->pd.dir, names[k]);
			rc = -1;
		} else if (owed != 0) {
			printf("%s: an earlier run left a %s to do\n", names[k],
			       pending_text(owed, text, sizeof text));
			p->why |= why_of_owed(owed);
		}
		if (rc == 0 && owed_of(why[k]) != 0 &&
		    pending_add(&r->pd, names[k], owed_of(why[k])) == -1) {
			warn("cannot record pending work in %s/%s", r->pd.dir, names[k]);
			rc = -1;
		}
	}
	free(names);
	free(why);
	fflush(stdout);
	return rc;
}

/* The service runs its new files (or is down and will at its start): nothing is owed. */
static void pending_done(struct recon *r, const struct plan *p)
{
	if (pending_clear(&r->pd, p->svc->def->name, PENDING_ALL) == -1)
		warn("cannot update %s/%s", r->pd.dir, p->svc->def->name);
}

/* Write the tree's changes; enable links only for `wave` (-1: everything but links). */
static int apply_changes(struct recon *r, int wave, bool *linked)
{
	for (size_t k = 0; k < r->t.nc; k++) {
		const struct tchange *c = &r->t.c[k];
		const struct tnode *n = &r->t.v[c->node];
		bool enable = n->role == TR_ENABLE;
		if (enable != (wave >= 0) || (enable && (n->svc < 0 || r->p[n->svc].wave != wave)))
			continue;
		if (enable && failed_dep(r, &r->p[n->svc]) != NULL)
			continue; /* reported by its wave; the next run links it */
		if (tree_apply(&r->t, c) == -1) {
			warn("cannot write %s%s", r->t.errpath, r->t.errwhy);
			return -1;
		}
		r->updated++; /* counted when written, not when planned */
		if (n->svc >= 0)
			r->p[n->svc].why |= why_of(n->role);
		*linked |= enable;
	}
	return 0;
}

/*
 * One wave of services whose dependencies are up and ready: link the new
 * ones, start runsvdir the first time, then each service is brought up and
 * ready, and its after_ready steps run.
 */
static int converge_wave(struct recon *r, int wave, int *running, long deadline)
{
	time_t mtime_before = 0;
	bool linked = false;
	int rc = 0;
	svdir_mtime(r->service_dir, &mtime_before);
	if (apply_changes(r, wave, &linked) == -1)
		return -1;
	if (linked) {
		int b = svdir_settle(r->service_dir, mtime_before, *running == 1);
		if (r->ctl->verbose)
			fprintf(stderr, "service dir mtime %s\n",
			        b == 1 ? "backdated by 1 s" : "left as is");
	}
	bool nudge = *running == 1;
	if (*running != 1) {
		if (*running == 0) {
			printf("start runsvdir for %s\n", r->service_dir);
			fflush(stdout);
		}
		if (svdir_ensure(r->ctl) == -1)
			return -1;
		*running = 1;
	}
	for (size_t k = 0; k < r->np; k++) {
		struct plan *p = &r->p[k];
		if (p->wave != wave)
			continue;
		const struct plan *dep = failed_dep(r, p);
		if (dep != NULL) {
			warnx("%s: waiting for %s: %s", p->svc->def->name, dep->svc->def->name,
			      dep->notready);
			p->failed = true;
			snprintf(p->notready, sizeof p->notready, "waiting for %s",
			         dep->svc->def->name);
			rc = -1;
			continue;
		}
		int r1 = p->was_live ? refresh(r, p, deadline) : bring_new(r, p, nudge, deadline);
		struct sv_status st;
		p->ready =
		    r1 == 0 && sv_read_status(p->sv_dir, &st) == 0 && st.want == 'u' && st.pid != 0;
		if (r1 == -1 || (p->ready && steps_after(r, p, deadline) == -1)) {
			p->failed = true;
			rc = -1;
		} else {
			pending_done(r,
			             p); /* runs its new files, or is down and will at its start */
		}
	}
	return rc;
}

static int converge(struct recon *r)
{
	int rc = 0, maxwave = 0;
	pid_t wpid;
	int running = svdir_running(r->ctl, &wpid);
	bool linked = false;

	if (running == -1)
		warn("cannot check runsvdir");
	/* A wrapper that is stopping supervises nothing for long: wait for it, start anew. */
	if (running == SVDIR_STOPPING &&
	    (svdir_ensure(r->ctl) == -1 || (running = svdir_running(r->ctl, &wpid)) != 1))
		return -1;
	r->deadline = mono_ms() + r->wait_ms; /* one deadline for the whole run */
	long deadline = r->deadline;
	for (size_t k = 0; k < r->np; k++) {
		r->p[k].was_live = sv_live(r->p[k].sv_dir) == SV_LIVE_OK;
		maxwave = r->p[k].wave > maxwave ? r->p[k].wave : maxwave;
	}
	if (pending_begin(r) == -1)
		return -1;
	for (size_t k = 0; k < r->ndisable; k++)
		if (disable_one(r, r->disable[k]) == -1)
			rc = -1;
	if (apply_changes(r, -1, &linked) == -1)
		return -1;
	/* One-time steps (initdb) before anything starts: their service must not run yet. */
	for (size_t k = 0; k < r->np; k++)
		if (steps_before(r, &r->p[k], deadline) == -1) {
			r->p[k].failed = true;
			snprintf(r->p[k].notready, sizeof r->p[k].notready, "its setup failed");
			rc = -1;
		}
	for (int w = 0; w <= maxwave; w++)
		if (converge_wave(r, w, &running, deadline) == -1)
			rc = -1;
	return rc;
}

/* ---- the command ----------------------------------------------------------------------- */

/* The enabled services p needs (plans before it are in dependency order) and its wave. */
static void plan_after(struct recon *r, struct plan *p)
{
	const struct cat_service *def = p->svc->def;
	tbuf_init(&p->after);
	for (size_t i = 0; i < def->nafter; i++)
		for (size_t k = 0; k + 1 < r->np; k++) {
			const struct plan *d = &r->p[k];
			if (strcmp(d->svc->def->name, def->after[i]) != 0)
				continue;
			tbuf_adds(&p->after, d->svc->def->name);
			tbuf_addc(&p->after, '\n');
			if (d->wave + 1 > p->wave)
				p->wave = d->wave + 1;
		}
	if (p->after.oom)
		errx(1, "out of memory");
}

static int prepare(struct recon *r)
{
	if (attrs_load_all(r->ctl, &r->cat, &r->a, &r->d) == -1 ||
	    trust_check(r->ctl, &r->a, &r->d) == -1) {
		diags_print(&r->d, stderr);
		return -1;
	}
	if (ctl_service_dir(r->ctl, r->service_dir, sizeof r->service_dir) == -1)
		errx(1, "path too long");
	r->p = calloc(r->a.nsvcs ? r->a.nsvcs : 1, sizeof *r->p);
	if (r->p == NULL)
		err(1, NULL);
	int rc = 0;
	size_t *order = calloc(r->cat.n + 1, sizeof *order);
	if (order == NULL)
		err(1, NULL);
	catalog_order(&r->cat, order); /* attrs keeps catalog order: svcs[i].def == &cat.v[i] */
	for (size_t o = 0; o < r->a.nsvcs; o++) {
		size_t i = order[o];
		if (!r->a.svcs[i].enabled)
			continue;
		struct plan *p = &r->p[r->np++];
		p->svc = &r->a.svcs[i];
		plan_after(r, p);
		p->uid = TREE_NO_OWNER;
		p->gid = (gid_t)TREE_NO_OWNER;
		if (plan_service(r, p) == -1)
			rc = -1;
	}
	free(order);
	diags_print(&r->d, stderr); /* warnings too */
	return rc;
}

/* useradd fails while a parallel one holds /etc/passwd's lock: try again a few times. */
static int ensure_account(struct recon *r, const struct svc *s, const char *home)
{
	for (int attempt = 0;; attempt++) {
		uid_t u;
		gid_t g;
		int rc = accounts_ensure(s->user, s->group, home, r->a.manage_accounts, r->dry_run,
		                         stdout, &r->accounts);
		if (rc == 0 || attempt == 4 || accounts_lookup(s->user, s->group, &u, &g) == 0)
			return rc == 0 || accounts_lookup(s->user, s->group, &u, &g) == 0 ? 0 : -1;
		sleep_ms(200L << attempt);
	}
}

/* Accounts come after validation (nothing is created for a bad config), before the tree. */
static int owners(struct recon *r)
{
	bool root = geteuid() == 0;
	for (size_t k = 0; k < r->np; k++) {
		struct plan *p = &r->p[k];
		const struct svc *s = p->svc;
		if (!root)
			continue; /* files are ours; the service runs as the invoking user */
		const struct plan *same = NULL; /* an earlier service of the same account */
		for (size_t j = 0; j < k && same == NULL; j++)
			if (strcmp(r->p[j].svc->user, s->user) == 0 &&
			    strcmp(r->p[j].svc->group, s->group) == 0)
				same = &r->p[j];
		if (same != NULL) { /* each account is looked up once (NSS is not cheap) */
			p->uid = same->uid;
			p->gid = same->gid;
			continue;
		}
		/*
		 * /etc/passwd is the machine's, not the root's: Omnibus' homes,
		 * unprefixed; a service's own account (gitlab-psql) gets its own.
		 */
		char home[PATH_MAX];
		bool own = cat_setting_find(s->def, "username") != NULL;
		join(home, sizeof home, GITLAB_CTL_DATA_DIR, own ? s->def->name : "");
		if (!own)
			strlcpy(home, GITLAB_CTL_DATA_DIR, sizeof home);
		if (ensure_account(r, s, home) == -1)
			return -1;
		if (accounts_lookup(s->user, s->group, &p->uid, &p->gid) == -1 && !r->dry_run) {
			warnx("cannot find user '%s' or group '%s'", s->user, s->group);
			return -1;
		}
	}
	return 0;
}

static int run_reconfigure(struct recon *r)
{
	int lockfd;
	if (take_lock(r->ctl, !r->dry_run, &lockfd) == -1)
		return 1;
	int rc = 1;
	if (prepare(r) == -1)
		goto out;
	if (find_disabled(r) == -1) {
		warn("cannot read %s", r->service_dir);
		goto out;
	}
	if (owners(r) == -1)
		goto out;
	build_tree(r);
	if (tree_diff(&r->t) == -1) {
		warn("cannot compare %s%s", r->t.errpath, r->t.errwhy);
		goto out;
	}
	for (size_t k = 0; k < r->t.nc; k++) {
		tree_describe(&r->t, &r->t.c[k], stdout);
		if (r->dry_run || r->show_diff)
			tree_print_diff(&r->t, &r->t.c[k], stdout);
	}
	/* Files count when written (converge), not when planned. */
	r->updated += r->accounts + (r->dry_run ? (int)r->t.nc : 0);
	fflush(stdout);
	if (r->dry_run) {
		for (size_t k = 0; k < r->ndisable; k++)
			disable_one(r, r->disable[k]);
		for (size_t k = 0; k < r->np; k++) /* prints the one-time steps it would run */
			(void)steps_before(r, &r->p[k], 0);
		rc = 0;
	} else {
		rc = converge(r) == -1 ? 1 : 0;
	}
	size_t total = r->t.n + (size_t)r->accounts + r->ndisable;
	for (size_t k = 0; k < r->t.nc; k++)
		total += r->t.c[k].kind == TC_DELETE;
	for (size_t k = 0; k < r->np; k++)
		total += r->p[k].nsteps;
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - r->t0.tv_sec) * 1000L + (t1.tv_nsec - r->t0.tv_nsec) / 1000000L;
	if (rc == 0 && !r->dry_run)
		printf("gitlab Reconfigured!\n");
	printf("%d/%zu resources %s in %ld ms\n", r->updated, total,
	       r->dry_run ? "would be updated (dry run)" : "updated", ms);
out:
	if (lockfd != -1)
		close(lockfd);
	return rc;
}

int cmd_reconfigure(const struct ctl *ctl, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"dry-run", no_argument, NULL, 'n'},
	    {"diff", no_argument, NULL, 'd'},
	    {NULL, 0, NULL, 0},
	};
	struct recon r;
	memset(&r, 0, sizeof r);
	clock_gettime(CLOCK_MONOTONIC, &r.t0);
	r.ctl = ctl;
	umask(022); /* modes are set explicitly; directories made on the way stay traversable */
	int ch;
	while ((ch = getopt_long(argc, argv, "nd", opts, NULL)) != -1) {
		switch (ch) {
		case 'n':
			r.dry_run = true;
			break;
		case 'd':
			r.show_diff = true;
			break;
		default:
			fprintf(stderr, "usage: gitlab-ctl reconfigure [--dry-run] [--diff]\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "usage: gitlab-ctl reconfigure [--dry-run] [--diff]\n");
		return 2;
	}
	long wait_s;
	const char *errstr;
	if (sv_wait_seconds(&wait_s, &errstr) == -1) {
		warnx("SVWAIT=%s: %s (seconds, 0 to %d)", getenv("SVWAIT"), errstr, SV_WAIT_MAX);
		return 2;
	}
	r.wait_ms = wait_s * 1000L;
	r.pd.dirfd = -1;
	diags_init(&r.d);
	tree_init(&r.t);
	int rc = run_reconfigure(&r);
	for (size_t k = 0; k < r.np; k++)
		plan_free(&r.p[k]);
	free(r.p);
	free(r.disable);
	pending_close(&r.pd);
	tree_free(&r.t);
	attrs_free(&r.a);
	catalog_free(&r.cat);
	diags_free(&r.d);
	return rc;
}

int cmd_runsvdir(const struct ctl *ctl, int argc, char **argv)
{
	if (argc > 1) {
		fprintf(stderr, "usage: gitlab-ctl runsvdir\n");
		return 2;
	}
	(void)argv;
	return svdir_run(ctl);
}
