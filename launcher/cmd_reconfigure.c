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

#include "accounts.h"
#include "attrs.h"
#include "build_config.h"
#include "catalog.h"
#include "clock.h"
#include "commands.h"
#include "runit.h"
#include "svdir.h"
#include "svtail.h"
#include "template.h"
#include "tree.h"

#define LOCK_WAIT_S 60
#define POLL_MS     5

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

struct plan {
	const struct svc *svc;
	char sv_dir[PATH_MAX];
	char log_sv[PATH_MAX];
	char link[PATH_MAX];
	struct tbuf run, logrun, logconf, check;
	bool has_check;
	struct extra *extra;
	size_t nextra;
	uid_t uid;
	gid_t gid;
	bool was_live; /* runsv supervised it before we changed anything */
	unsigned why;  /* WHY_* from the changes */
};

struct rctx {
	const struct ctl *ctl;
	const struct svc *svc;
	char port[16];
	char url[600];
	const char *http, *tcp;
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
	long wait_ms; /* SVWAIT */
	struct timespec t0;
};

/* ---- rendering ------------------------------------------------------------------------- */

static const char *rget(void *arg, const char *name)
{
	const struct rctx *c = arg;
	const struct svc *s = c->svc;
	if (strcmp(name, "gitlab_ctl") == 0)
		return c->ctl->self;
	if (strcmp(name, "root") == 0)
		return c->ctl->root;
	if (strcmp(name, "service") == 0)
		return s->def->name;
	if (strcmp(name, "user") == 0)
		return s->user;
	if (strcmp(name, "group") == 0)
		return s->group;
	if (strcmp(name, "home") == 0)
		return s->home;
	if (strcmp(name, "env_directory") == 0)
		return s->env_dir;
	if (strcmp(name, "log_directory") == 0)
		return s->log_dir;
	if (strcmp(name, "listen_host") == 0)
		return s->listen_host ? s->listen_host : "";
	if (strcmp(name, "listen_port") == 0)
		return c->port;
	if (strcmp(name, "check_url") == 0)
		return c->url;
	if (strcmp(name, "check_http") == 0)
		return c->http;
	if (strcmp(name, "check_tcp") == 0)
		return c->tcp;
	return svc_var(s, name);
}

static char *const *rlist(void *arg, const char *name)
{
	const struct rctx *c = arg;
	return strcmp(name, "argv") == 0 ? c->svc->argv : NULL;
}

/* The readiness URL: a wildcard listen address is checked on loopback. -1 if too long. */
static int check_url(struct rctx *c, const struct cat_service *def)
{
	const char *host = c->svc->listen_host ? c->svc->listen_host : "";
	c->http = c->tcp = "";
	c->url[0] = '\0';
	if (def->check == NULL || c->svc->listen_port == 0)
		return 0;
	if (*host == '\0' || strcmp(host, "0.0.0.0") == 0)
		host = "127.0.0.1";
	else if (strcmp(host, "::") == 0)
		host = "::1";
	bool v6 = strchr(host, ':') != NULL, http = strncmp(def->check, "http:", 5) == 0;
	int n = snprintf(c->url, sizeof c->url, "%s://%s%s%s:%d%s", http ? "http" : "telnet",
	                 v6 ? "[" : "", host, v6 ? "]" : "", c->svc->listen_port,
	                 http ? def->check + 5 : "");
	if (n < 0 || (size_t)n >= sizeof c->url) {
		c->url[0] = '\0'; /* a cut URL would probe something else */
		return -1;
	}
	if (http)
		c->http = "1";
	else
		c->tcp = "1";
	return 0;
}

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

static int plan_service(struct recon *r, struct plan *p)
{
	const struct svc *s = p->svc;
	const struct cat_service *def = s->def;
	struct rctx c = {.ctl = r->ctl, .svc = s};
	if (s->listen_port > 0)
		snprintf(c.port, sizeof c.port, "%d", s->listen_port);
	bool url_ok = check_url(&c, def) == 0;
	struct tpl_vars vars = {rget, rlist, &c};

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
	if (def->check != NULL) {
		if (!url_ok) {
			diag_file(&r->d, DIAG_ERR, def->file, def->line,
			          "%s: listen address \"%.40s...\" is too long for a check URL",
			          def->name, s->listen_host);
			rc = -1;
		} else if (c.url[0] == '\0') {
			diag_file(&r->d, DIAG_ERR, def->file, def->line,
			          "%s: check \"%s\" needs a listen address and port", def->name,
			          def->check);
			rc = -1;
		} else {
			p->has_check = true;
			rc |= render(r, "check", &vars, &p->check);
		}
	}
	p->extra = calloc(def->ntemplates ? def->ntemplates : 1, sizeof *p->extra);
	if (p->extra == NULL)
		err(1, NULL);
	for (size_t i = 0; i < def->ntemplates; i++) {
		const struct cat_template *ct = &def->templates[i];
		struct extra *e = &p->extra[p->nextra++];
		tbuf_init(&e->body);
		e->mode = ct->mode;
		e->service_owned = ct->service_owned;
		e->dest = svc_expand(s, ct->dest);
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
	tbuf_free(&p->run);
	tbuf_free(&p->logrun);
	tbuf_free(&p->logconf);
	tbuf_free(&p->check);
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
		CHK(tree_add_dir(t, s->home, 0750, p->uid, p->gid, i, TR_NONE, 0));
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
	if (create && tree_mkdirs(var, 0755) == -1) {
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
		sleep_ms(POLL_MS);
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
		sleep_ms(POLL_MS);
	}
}

/*
 * After a start or restart: wait until the service passes its readiness check, so that
 * "gitlab Reconfigured!" means it answers. A run script that fails shows as a new pid
 * (runsv restarts it) or a down state: reported at once with the status, not after SVWAIT.
 */
static int wait_ready(const struct recon *r, const struct plan *p, long deadline)
{
	struct sv_status st0;
	const char *name = p->svc->def->name;
	long t0 = mono_ms();
	if (sv_read_status(p->sv_dir, &st0) == -1)
		return 0;
	for (;;) {
		struct sv_status st;
		if (sv_read_status(p->sv_dir, &st) == 0 &&
		    (st.pid != st0.pid || st.state != SV_RUN)) {
			char buf[256];
			status_text(p->sv_dir, name, buf, sizeof buf);
			warnx("%s: its run script exits right after it starts (status: %s); see "
			      "%s/current",
			      name, buf, p->svc->log_dir);
			svtail_last(p->svc->log_dir, SVTAIL_FAILED_LINES, stderr);
			return -1;
		}
		if (!p->has_check)
			return 0;
		if (sv_check(p->sv_dir, true) == 1) {
			if (r->ctl->verbose)
				fprintf(stderr, "%s: check passed after %ld ms\n", name,
				        mono_ms() - t0);
			return 0;
		}
		if (mono_ms() > deadline) {
			warnx("%s: runs (pid %ld) but %s/check does not pass within SVWAIT", name,
			      (long)st0.pid, p->sv_dir);
			return -1;
		}
		sleep_ms(20);
	}
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
	long deadline = mono_ms() + r->wait_ms;
	while (sv_live(target) == SV_LIVE_OK) {
		if (mono_ms() > deadline) {
			char buf[256];
			status_text(target, name, buf, sizeof buf);
			warnx("%s: runsv did not exit within SVWAIT (%s)", name, buf);
			return -1;
		}
		sleep_ms(POLL_MS);
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

/* A supervised service whose files changed: restart it (if up) and/or reload its log. */
static int refresh(const struct recon *r, struct plan *p, long deadline)
{
	const char *name = p->svc->def->name;
	int rc = 0;
	if (p->why & (WHY_RUN | WHY_ENV | WHY_CONFIG)) {
		struct sv_status st;
		bool ok = sv_read_status(p->sv_dir, &st) == 0;
		if (!ok || st.want != 'u') {
			printf("%s is down: the %s change applies at its next start\n", name,
			       why_text(p->why));
		} else if (st.pid == 0 || st.state != SV_RUN) {
			/* Between two attempts of a failing run script: runsv starts the new one.
			 */
			printf("start %s (%s changed)\n", name, why_text(p->why));
			fflush(stdout);
			if (wait_run(r, p, 0, deadline, "did not start") == -1 ||
			    wait_ready(r, p, deadline) == -1)
				rc = -1;
		} else {
			printf("restart %s (%s changed)\n", name, why_text(p->why));
			fflush(stdout);
			/* runsv restarts what it wants up: TERM (and CONT), then run again. */
			if (sv_control_str(p->sv_dir, "tc") == -1) {
				warn("%s: cannot control runsv", name);
				rc = -1;
			} else if (wait_run(r, p, st.pid, deadline, "did not come back up") == -1 ||
			           wait_ready(r, p, deadline) == -1) {
				rc = -1;
			}
		}
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

static int converge(struct recon *r)
{
	int rc = 0;
	pid_t wpid;
	int running = svdir_running(r->ctl, &wpid);
	time_t mtime_before = 0;
	bool linked = false;

	if (running == -1)
		warn("cannot check runsvdir");
	svdir_mtime(r->service_dir, &mtime_before);
	for (size_t k = 0; k < r->np; k++)
		r->p[k].was_live = sv_live(r->p[k].sv_dir) == SV_LIVE_OK;

	for (size_t k = 0; k < r->ndisable; k++)
		if (disable_one(r, r->disable[k]) == -1)
			rc = -1;

	for (size_t k = 0; k < r->t.nc; k++) {
		const struct tchange *c = &r->t.c[k];
		const struct tnode *n = &r->t.v[c->node];
		if (tree_apply(&r->t, c) == -1) {
			warn("cannot write %s", r->t.errpath);
			return -1;
		}
		if (n->svc >= 0)
			r->p[n->svc].why |= why_of(n->role);
		if (n->role == TR_ENABLE)
			linked = true;
	}
	if (linked) {
		int b = svdir_settle(r->service_dir, mtime_before, running == 1);
		if (r->ctl->verbose)
			fprintf(stderr, "service dir mtime %s\n",
			        b == 1 ? "backdated by 1 s" : "left as is");
	}
	if (running == 0) {
		printf("start runsvdir for %s\n", r->service_dir);
		fflush(stdout);
	}
	if (svdir_ensure(r->ctl) == -1)
		return -1;

	long deadline = mono_ms() + r->wait_ms;
	for (size_t k = 0; k < r->np; k++) {
		struct plan *p = &r->p[k];
		if (p->was_live) {
			if (refresh(r, p, deadline) == -1)
				rc = -1;
			continue;
		}
		if (wait_supervised(r, p, running == 1, deadline) == -1) {
			rc = -1;
			continue;
		}
		/* Newly supervised: runsv starts it unless a down file says otherwise. */
		if (sv_normally_down(p->sv_dir))
			continue;
		if (wait_run(r, p, 0, deadline, "did not start") == -1 ||
		    wait_ready(r, p, deadline) == -1)
			rc = -1;
	}
	return rc;
}

/* ---- the command ----------------------------------------------------------------------- */

static int prepare(struct recon *r)
{
	if (attrs_load_all(r->ctl, &r->cat, &r->a, &r->d) == -1) {
		diags_print(&r->d, stderr);
		return -1;
	}
	if (ctl_service_dir(r->ctl, r->service_dir, sizeof r->service_dir) == -1)
		errx(1, "path too long");
	r->p = calloc(r->a.nsvcs ? r->a.nsvcs : 1, sizeof *r->p);
	if (r->p == NULL)
		err(1, NULL);
	int rc = 0;
	for (size_t i = 0; i < r->a.nsvcs; i++) {
		if (!r->a.svcs[i].enabled)
			continue;
		struct plan *p = &r->p[r->np++];
		p->svc = &r->a.svcs[i];
		p->uid = TREE_NO_OWNER;
		p->gid = (gid_t)TREE_NO_OWNER;
		if (plan_service(r, p) == -1)
			rc = -1;
	}
	diags_print(&r->d, stderr); /* warnings too */
	return rc;
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
		bool seen = false;
		for (size_t j = 0; j < k && !seen; j++)
			seen = strcmp(r->p[j].svc->user, s->user) == 0 &&
			       strcmp(r->p[j].svc->group, s->group) == 0;
		/* /etc/passwd is the machine's, not the root's: Omnibus' home, unprefixed. */
		if (!seen &&
		    accounts_ensure(s->user, s->group, GITLAB_CTL_DATA_DIR, r->a.manage_accounts,
		                    r->dry_run, stdout, &r->accounts) == -1)
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
		warn("cannot compare %s", r->t.errpath);
		goto out;
	}
	for (size_t k = 0; k < r->t.nc; k++) {
		tree_describe(&r->t, &r->t.c[k], stdout);
		if (r->dry_run || r->show_diff)
			tree_print_diff(&r->t, &r->t.c[k], stdout);
	}
	r->updated += r->accounts + (int)r->t.nc;
	fflush(stdout);
	if (r->dry_run) {
		for (size_t k = 0; k < r->ndisable; k++)
			disable_one(r, r->disable[k]);
		rc = 0;
	} else {
		rc = converge(r) == -1 ? 1 : 0;
	}
	size_t total = r->t.n + (size_t)r->accounts + r->ndisable;
	for (size_t k = 0; k < r->t.nc; k++)
		total += r->t.c[k].kind == TC_DELETE;
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
	diags_init(&r.d);
	tree_init(&r.t);
	int rc = run_reconfigure(&r);
	for (size_t k = 0; k < r.np; k++)
		plan_free(&r.p[k]);
	free(r.p);
	free(r.disable);
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
