/* The desired state of reconfigure (see plan.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_config.h"
#include "lib/alloc.h"
#include "lib/diag.h"
#include "lib/grow.h"
#include "lib/pathjoin.h"
#include "render/exporterlink.h"
#include "render/plan.h"
#include "render/svvars.h"

/* The planning context of one service. */
struct pctx {
	const struct ctl *ctl;
	const struct attrs *a;
	struct diags *d;
	struct tpl_cache *tpl; /* every service renders the same few templates */
};

void plans_init(struct plans *ps)
{
	memset(ps, 0, sizeof *ps);
	tree_init(&ps->t);
}

static void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->nsteps; i++) {
		argv_free(p->steps[i].argv);
		argv_free(p->steps[i].verify);
		free(p->steps[i].creates);
		free(p->steps[i].staging);
	}
	free(p->steps);
	buf_free(&p->after);
	for (int k = 0; k < PF_NKINDS; k++) {
		buf_free(&p->files[k].body);
		tpl_spans_free(&p->files[k].sec);
	}
	for (size_t i = 0; i < p->nextra; i++) {
		free(p->extra[i].dest);
		buf_free(&p->extra[i].body);
		tpl_spans_free(&p->extra[i].sec);
		free(p->extra[i].srcmap.v);
	}
	free(p->extra);
}

void plans_free(struct plans *ps)
{
	for (size_t k = 0; k < ps->np; k++)
		plan_free(&ps->p[k]);
	free(ps->p);
	free(ps->disable);
	tree_free(&ps->t);
	memset(ps, 0, sizeof *ps);
	tree_init(&ps->t);
}

/* ---- rendering ------------------------------------------------------------------------- */

/* Render into out, recording in sec where secret values landed. */
static int render(const struct pctx *x, const char *tpl, const struct tpl_vars *vars,
                  struct buf *out, struct tpl_spans *sec)
{
	struct tpl_vars v = *vars;
	v.spans = sec;
	return tpl_cache_render(x->tpl, tpl, &v, out, x->d);
}

/* Where each runit file of a service goes: the one description of them (plan.h). */
enum plan_where { IN_SV, IN_CONTROL, IN_LOG_SV, IN_LOG_DIR };
static const struct {
	const char *tpl; /* the template, templates/<tpl> */
	enum plan_where where;
	const char *name;
	mode_t mode;
	enum tnode_role role;
} file_defs[PF_NKINDS] = {
    [PF_RUN] = {"run", IN_SV, "run", 0755, TR_RUN},
    [PF_LOG_RUN] = {"log-run", IN_LOG_SV, "run", 0755, TR_LOG_RUN},
    [PF_LOG_CONFIG] = {"log-config", IN_LOG_DIR, "config", 0644, TR_LOG_CONFIG},
    [PF_CHECK] = {"check", IN_SV, "check", 0755, TR_NONE},
    [PF_CONTROL_T] = {"control-t", IN_CONTROL, "t", 0755, TR_NONE},
};

static int render_file(const struct pctx *x, struct plan *p, enum plan_kind k,
                       const struct tpl_vars *vars)
{
	struct plan_file *f = &p->files[k];
	int rc = render(x, file_defs[k].tpl, vars, &f->body, &f->sec);
	f->on = k != PF_CONTROL_T || f->body.len > 0; /* an empty control/t: runsv sends TERM */
	return rc;
}

/*
 * Beside `creates`, a name the account cannot guess: ".<base>.setup-<random>". The account
 * owns the directory and sees the name once it exists, but cannot plant it beforehand.
 */
static char *staging_name(const char *creates)
{
	const char *slash = strrchr(creates, '/');
	unsigned char rnd[8];
	char hex[17];
	arc4random_buf(rnd, sizeof rnd);
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
	size_t len = strlen(creates) + sizeof hex + 16;
	char *s = xmalloc(len);
	snprintf(s, len, "%.*s/.%s.setup-%s", (int)(slash - creates), creates, slash + 1, hex);
	return s;
}

/* One step's argv, verify and `creates`, expanded; false for an unknown placeholder. */
static bool expand_step(const struct pctx *x, const struct svc *s, const struct cat_step *cs,
                        struct plan_step *st)
{
	st->def = cs;
	if (cs->creates != NULL) {
		st->creates = attrs_expand(x->a, s, cs->creates);
		if (st->creates == NULL || st->creates[0] != '/' || strcmp(st->creates, "/") == 0)
			return false;
	}
	if (cs->staged)
		st->staging = staging_name(st->creates);
	size_t bad; /* {{staging_dir}} outside a staged step's command is unknown too */
	st->argv = attrs_expand_argv(x->a, s, cs->argv, cs->argc, "staging_dir", st->staging, &bad);
	if (st->argv == NULL || cs->verify == NULL)
		return st->argv != NULL;
	st->verify = attrs_expand_argv(x->a, s, cs->verify, cs->nverify, NULL, NULL, &bad);
	return st->verify != NULL;
}

/* Expand every step now: a bad placeholder must fail before anything changes. */
static int plan_steps(const struct pctx *x, struct plan *p)
{
	const struct cat_service *def = p->svc->def;
	p->steps = xcalloc(def->nsetup + 1, sizeof *p->steps);
	for (size_t i = 0; i < def->nsetup; i++) {
		const struct cat_step *cs = &def->setup[i];
		if (!expand_step(x, p->svc, cs, &p->steps[p->nsteps++])) {
			diag_file(
			    x->d, DIAG_ERR, def->file, cs->line,
			    "%s: setup step %s: an unknown placeholder, or 'creates' is not an "
			    "absolute path",
			    def->name, cs->name);
			return -1;
		}
	}
	return 0;
}

/* The readiness check script, when the catalog's check can be probed. */
static int plan_check(const struct pctx *x, struct plan *p, const struct tpl_vars *vars)
{
	const struct svc *s = p->svc;
	const struct cat_service *def = s->def;
	bool tcp = def->check != NULL && strncmp(def->check, "unix:", 5) != 0;
	if (tcp && s->listen_host != NULL && strlen(s->listen_host) > 253) {
		/* DNS names end at 253: the check could only probe a truncated name. */
		diag_file(x->d, DIAG_ERR, def->file, def->check_line,
		          "%s: listen address \"%.40s...\" is too long for a check URL", def->name,
		          s->listen_host);
		return -1;
	}
	if (tcp && s->listen_port == 0) {
		diag_file(x->d, DIAG_ERR, def->file, def->check_line,
		          "%s: check \"%s\" needs a listen address and port", def->name,
		          def->check);
		return -1;
	}
	if (!catalog_has_check(def))
		return 0;
	return render_file(x, p, PF_CHECK, vars);
}

/* The catalog's own templates, each to its (absolute) destination. */
static int plan_extras(const struct pctx *x, struct plan *p, const struct tpl_vars *vars,
                       struct svvars *c)
{
	const struct cat_service *def = p->svc->def;
	int rc = 0;
	p->extra = xcalloc(def->ntemplates, sizeof *p->extra);
	for (size_t i = 0; i < def->ntemplates; i++) {
		const struct cat_template *ct = &def->templates[i];
		struct plan_extra *e = &p->extra[p->nextra++];
		e->def = ct;
		buf_init(&e->body);
		e->mode = ct->mode;
		e->service_owned = ct->service_owned;
		e->is_dir = ct->src == NULL;
		e->group_owned = ct->group_owned;
		e->dest = attrs_expand(x->a, p->svc, ct->dest);
		if (e->dest == NULL || e->dest[0] != '/') {
			diag_file(x->d, DIAG_ERR, def->file, ct->line,
			          "template %s: destination \"%s\" is not an absolute path",
			          ct->src ? ct->src : "(directory)", ct->dest);
			rc = -1;
			continue;
		}
		if (!e->is_dir) {
			c->map = &e->srcmap;
			rc |= render(x, ct->src, vars, &e->body, &e->sec);
			c->map = NULL;
		}
	}
	return rc;
}

static int plan_paths(const struct pctx *x, const struct plans *ps, struct plan *p)
{
	const char *name = p->svc->def->name;
	if (ctl_sv_dir(x->ctl, p->sv_dir, sizeof p->sv_dir, name) == -1 ||
	    path_join(p->log_sv, sizeof p->log_sv, p->sv_dir, "log") == -1 ||
	    path_join(p->link, sizeof p->link, ps->service_dir, name) == -1) {
		diag_file(x->d, DIAG_ERR, p->svc->def->file, 0, "path too long for %s", name);
		return -1;
	}
	return 0;
}

/* Every error of a service is reported, not only its first. */
static int plan_service(const struct pctx *x, const struct plans *ps, struct plan *p)
{
	const struct cat_service *def = p->svc->def;
	struct svvars c;
	struct tpl_vars vars = svvars_init(&c, x->ctl, x->a, p->svc);
	if (plan_paths(x, ps, p) == -1)
		return -1;
	int rc = 0;
	rc |= render_file(x, p, PF_RUN, &vars);
	rc |= render_file(x, p, PF_LOG_RUN, &vars);
	rc |= render_file(x, p, PF_LOG_CONFIG, &vars);
	rc |= plan_check(x, p, &vars);
	if (def->stop_signal != NULL && strcmp(def->stop_signal, "TERM") != 0)
		rc |= render_file(x, p, PF_CONTROL_T, &vars);
	rc |= plan_steps(x, p);
	rc |= plan_extras(x, p, &vars, &c);
	return rc ? -1 : 0;
}

/* The enabled services p needs (plans before it are in dependency order) and its wave. */
static void plan_after(struct plans *ps, struct plan *p)
{
	const struct cat_service *def = p->svc->def;
	buf_init(&p->after);
	for (size_t i = 0; i < def->nafter; i++)
		for (size_t k = 0; k + 1 < ps->np; k++) {
			const struct plan *d = &ps->p[k];
			if (strcmp(d->svc->def->name, def->after[i]) != 0)
				continue;
			buf_adds(&p->after, d->svc->def->name);
			buf_addc(&p->after, '\n');
			if (d->wave + 1 > p->wave)
				p->wave = d->wave + 1;
		}
}

int plan_services(const struct ctl *ctl, const struct catalog *cat, const struct attrs *a,
                  struct plans *ps, struct diags *d)
{
	char *tpl_dir = xasprintf("%s/templates", ctl->datadir);
	struct pctx x = {ctl, a, d, tpl_cache_new(tpl_dir)};
	free(tpl_dir);
	if (ctl_service_dir(ctl, ps->service_dir, sizeof ps->service_dir) == -1) {
		diag_file(d, DIAG_ERR, ctl->root, 0, "path of the service directory too long");
		tpl_cache_free(x.tpl);
		return -1;
	}
	ps->p = xcalloc(a->nsvcs, sizeof *ps->p);
	size_t *order = xcalloc(cat->n + 1, sizeof *order);
	catalog_order(cat, order); /* attrs keeps catalog order: svcs[i].def == &cat->v[i] */
	int rc = 0;
	for (size_t o = 0; o < a->nsvcs; o++) {
		const struct svc *s = &a->svcs[order[o]];
		if (!s->enabled)
			continue;
		struct plan *p = &ps->p[ps->np++];
		p->svc = s;
		plan_after(ps, p);
		p->uid = TREE_NO_OWNER;
		p->gid = (gid_t)TREE_NO_OWNER;
		if (plan_service(&x, ps, p) == -1)
			rc = -1;
	}
	free(order);
	tpl_cache_free(x.tpl);
	return rc;
}

/* ---- services to disable ----------------------------------------------------------------- */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The planned services' names, sorted: a search per entry of service/ stays logarithmic. */
static const char **planned_names(const struct plans *ps)
{
	const char **v = xcalloc(ps->np + 1, sizeof *v);
	for (size_t k = 0; k < ps->np; k++)
		v[k] = ps->p[k].svc->def->name;
	qsort(v, ps->np, sizeof *v, cmp_name);
	return v;
}

static bool planned(const struct plans *ps, const char **names, const char *name)
{
	return bsearch(&name, names, ps->np, sizeof *names, cmp_name) != NULL;
}

/* Where a disabled service leaves its data: its first `data` setting's path. */
static const char *kept_data(const struct svc *s)
{
	for (size_t i = 0; i < s->def->nsettings; i++)
		if (s->def->settings[i].data)
			return kv_get(&s->vars, s->def->settings[i].name);
	return NULL;
}

int plan_find_disabled(const struct ctl *ctl, const struct catalog *cat, const struct attrs *a,
                       struct plans *ps, struct diags *d)
{
	DIR *dir = opendir(ps->service_dir);
	if (dir == NULL)
		return errno == ENOENT ? 0 : -1;
	const char **names = planned_names(ps);
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.' || planned(ps, names, de->d_name))
			continue;
		const struct cat_service *def = catalog_find(cat, de->d_name);
		if (def == NULL) {
			if (ctl->verbose)
				diag_file(d, DIAG_NOTE, NULL, 0,
				          "leaving %s/%s alone: not a catalog service",
				          ps->service_dir, de->d_name);
			continue;
		}
		grow(&ps->disable, &ps->disablecap, ps->ndisable + 1, sizeof *ps->disable, 8);
		struct plan_disable *pd = &ps->disable[ps->ndisable];
		rc = path_join(pd->link, sizeof pd->link, ps->service_dir, de->d_name);
		pd->kept = kept_data(&a->svcs[def - cat->v]);
		if (rc == 0)
			ps->ndisable++;
	}
	int e = errno;
	free(names);
	closedir(dir);
	errno = e;
	return rc;
}

/* ---- the desired tree ------------------------------------------------------------------ */

/* The owner of what root (not the service) owns: root, or unmanaged when not root. */
struct owner {
	uid_t uid;
	gid_t gid;
};

static int join(char *out, size_t len, const char *a, const char *b, struct diags *d)
{
	if (path_join(out, len, a, b) == 0)
		return 0;
	diag_add(d, DIAG_ERR, "path too long: %s/%s", a, b);
	return -1;
}

/* An env value built from a secret (or named like one) is shown by no diff, old or new. */
static int add_env_file(struct tree *t, const char *dir, const struct kv *kv, struct owner o, int i,
                        const struct svc *s, struct diags *d)
{
	char path[PATH_MAX];
	if (join(path, sizeof path, dir, kv->name, d) == -1)
		return -1;
	tree_add_file(t, path, kv->value, strlen(kv->value), 0600, o.uid, o.gid, i, TR_ENV,
	              svc_env_secret(s, kv->name) != SECRET_NONE ? TN_SECRET : 0);
	return 0;
}

/* The complete environment: base env, then the service env over it. */
static int add_env(struct tree *t, const struct plan *p, int i, struct owner o, struct diags *d)
{
	const struct svc *s = p->svc;
	int rc = 0;
	tree_add_dir(t, s->env_dir, 0700, o.uid, o.gid, i, TR_ENV, TN_EXCLUSIVE);
	for (size_t k = 0; k < s->base_env.n && rc == 0; k++)
		if (kv_get(&s->env, s->base_env.v[k].name) == NULL)
			rc = add_env_file(t, s->env_dir, &s->base_env.v[k], o, i, s, d);
	for (size_t k = 0; k < s->env.n && rc == 0; k++)
		rc = add_env_file(t, s->env_dir, &s->env.v[k], o, i, s, d);
	return rc;
}

static int add_file(struct tree *t, const char *dir, const char *name, const struct buf *b,
                    const struct tpl_spans *sec, mode_t mode, struct owner o, int i,
                    enum tnode_role role, struct diags *d)
{
	char path[PATH_MAX];
	if (join(path, sizeof path, dir, name, d) == -1)
		return -1;
	tree_set_spans(
	    t, tree_add_file(t, path, b->p ? b->p : "", b->len, mode, o.uid, o.gid, i, role, 0),
	    sec);
	return 0;
}

/* The service's file of kind k, if it has one, in its directory (file_defs). */
static int add_kind(struct tree *t, const struct plan *p, enum plan_kind k, int i, struct owner o,
                    struct diags *d)
{
	const struct plan_file *f = &p->files[k];
	if (!f->on)
		return 0;
	char control[PATH_MAX];
	const char *dir = p->sv_dir;
	switch (file_defs[k].where) {
	case IN_SV:
		break;
	case IN_CONTROL:
		/* runsv runs control/t instead of sending TERM, for stop and restart. */
		if (join(control, sizeof control, p->sv_dir, "control", d) == -1)
			return -1;
		tree_add_dir(t, control, 0755, o.uid, o.gid, i, TR_NONE, 0);
		dir = control;
		break;
	case IN_LOG_SV:
		dir = p->log_sv;
		break;
	case IN_LOG_DIR:
		dir = p->svc->log_dir;
		break;
	}
	return add_file(t, dir, file_defs[k].name, &f->body, &f->sec, file_defs[k].mode, o, i,
	                file_defs[k].role, d);
}

/* sv/<svc>: run, check, control/t, after and log/run. */
static int add_sv_dir(struct tree *t, const struct plan *p, int i, struct owner o, struct diags *d)
{
	int rc = 0;
	tree_add_dir(t, p->sv_dir, 0755, o.uid, o.gid, i, TR_NONE, 0);
	/*
	 * runsv makes supervise/ 0700 (only when missing): 0755 lets node-exporter's
	 * runit collector, as its own account, read status. Its fifos stay 0600.
	 */
	char sup[PATH_MAX];
	if (join(sup, sizeof sup, p->sv_dir, "supervise", d) == -1)
		return -1;
	tree_add_dir(t, sup, 0755, o.uid, o.gid, i, TR_NONE, 0);
	rc |= add_kind(t, p, PF_RUN, i, o, d);
	rc |= add_kind(t, p, PF_CHECK, i, o, d);
	if (add_kind(t, p, PF_CONTROL_T, i, o, d) == -1)
		return -1;
	/* What start/stop order by (svsel.h): no config is parsed there. */
	rc |= add_file(t, p->sv_dir, "after", &p->after, NULL, 0644, o, i, TR_NONE, d);
	tree_add_dir(t, p->log_sv, 0755, o.uid, o.gid, i, TR_NONE, 0);
	rc |= add_kind(t, p, PF_LOG_RUN, i, o, d);
	return rc ? -1 : 0;
}

static int add_service(struct tree *t, const struct plan *p, int i, struct owner o, struct diags *d)
{
	const struct svc *s = p->svc;
	if (add_sv_dir(t, p, i, o, d) == -1 || add_env(t, p, i, o, d) == -1)
		return -1;
	/*
	 * svlogd runs as root and runs the `!` processor named in <log_dir>/config:
	 * the log dir is root's, unlike Omnibus, so the service user cannot swap that
	 * file. The service writes only to svlogd's pipe. Home is the service user's.
	 */
	tree_add_dir(t, s->log_dir, 0700, o.uid, o.gid, i, TR_NONE, 0);
	if (add_kind(t, p, PF_LOG_CONFIG, i, o, d) == -1)
		return -1;
	/*
	 * 0750 keeps other service accounts out; a catalog says 0755 where
	 * another account must reach a socket in it (the exporter, as git,
	 * connects to PostgreSQL's and Redis' sockets in their homes).
	 */
	tree_add_dir(t, s->home, s->def->home_mode, p->uid, p->gid, i, TR_NONE, 0);
	for (size_t e = 0; e < p->nextra; e++) {
		const struct plan_extra *x = &p->extra[e];
		uid_t u = x->service_owned ? p->uid : o.uid;
		gid_t g = x->service_owned || x->group_owned ? p->gid : o.gid;
		if (x->is_dir)
			tree_add_dir(t, x->dest, x->mode, u, g, i, TR_NONE, 0);
		else
			tree_set_spans(t,
			               tree_add_file(t, x->dest, x->body.p, x->body.len, x->mode, u,
			                             g, i, x->def->hup ? TR_CONFIG_HUP : TR_CONFIG,
			                             0),
			               &x->sec);
	}
	return 0;
}

/*
 * The bundled exporter as the default command, unless an exporter is installed there: our
 * link is managed (follows this binary's data dir), a real file is the operator's.
 */
static int add_exporter_link(const struct ctl *ctl, struct tree *t, struct diags *d)
{
	struct exporter_link x;
	if (exporter_link_paths(ctl, &x) == -1) {
		diag_add(d, DIAG_ERR, "path too long: %s", ctl->datadir);
		return -1;
	}
	if (access(x.bundled, X_OK) == 0 && x.bundled[0] == '/' && exporter_link_managed(&x))
		tree_add_link(t, x.path, x.bundled, -1, TR_NONE, 0);
	return 0;
}

/* Every string in a secret yaml setting (an SMTP password inside alertmanager['global']). */
static void add_data_secrets(struct tree *t, const struct yval *v)
{
	if (v == NULL)
		return;
	if (v->kind == YV_STR) {
		struct buf q; /* as the file holds it: escaped, between its quotes */
		buf_init(&q);
		tpl_yaml_quote(&q, v->text);
		buf_addc(&q, '\0');
		q.p[q.len - 2] = '\0';
		tree_add_secret(t, q.p + 1);
		tree_add_secret(t, v->text);
		buf_free(&q);
	}
	for (size_t i = 0; i < v->n; i++)
		add_data_secrets(t, v->items[i]);
}

/* Below the root nothing is followed; a secret value outside its spans hides the file's diff. */
static int add_anchor(const struct ctl *ctl, struct plans *ps, struct owner o, struct diags *d)
{
	struct tree *t = &ps->t;
	char path[PATH_MAX];
	if (tree_set_anchor(t, ctl->root) == -1) {
		diag_add(d, DIAG_ERR, "%s: not a usable root", ctl->root);
		return -1;
	}
	char aside[PATH_MAX]; /* root's place for an account's directory in a file's place */
	if (ctl_var_dir(ctl, aside, sizeof aside) == 0 &&
	    strlcat(aside, "/" TREE_ASIDE_DIR, sizeof aside) < sizeof aside)
		(void)tree_set_aside(t, aside); /* else each is moved beside its file */
	for (size_t k = 0; k < ps->np; k++) {
		const struct svc *s = ps->p[k].svc;
		for (size_t j = 0; j < s->secret_vars.n; j++)
			tree_add_secret(t, svc_var(s, s->secret_vars.v[j].name));
		for (size_t j = 0; j < s->env.n; j++)
			if (svc_env_secret(s, s->env.v[j].name) != SECRET_NONE)
				tree_add_secret(t, s->env.v[j].value);
		for (size_t j = 0; j < s->def->nsettings; j++)
			if (s->def->settings[j].secret && s->def->settings[j].type == ST_YAML)
				add_data_secrets(t, svc_data(s, s->def->settings[j].name));
	}
	if (ctl_path(ctl, path, sizeof path, GITLAB_CTL_INSTALL_DIR, "sv", (char *)NULL) == -1) {
		diag_add(d, DIAG_ERR, "path too long");
		return -1;
	}
	tree_add_dir(t, path, 0755, o.uid, o.gid, -1, TR_NONE, 0);
	tree_add_dir(t, ps->service_dir, 0755, o.uid, o.gid, -1, TR_NONE, 0);
	return 0;
}

int plan_tree(const struct ctl *ctl, struct plans *ps, struct diags *d)
{
	bool root = geteuid() == 0;
	struct owner o = {root ? 0 : TREE_NO_OWNER, root ? 0 : (gid_t)TREE_NO_OWNER};
	if (add_anchor(ctl, ps, o, d) == -1)
		return -1;
	for (size_t k = 0; k < ps->np; k++)
		if (add_service(&ps->t, &ps->p[k], (int)k, o, d) == -1)
			return -1;
	if (add_exporter_link(ctl, &ps->t, d) == -1)
		return -1;
	/* Enabling comes last: runsv must find a complete service directory. */
	for (size_t k = 0; k < ps->np; k++)
		tree_add_link(&ps->t, ps->p[k].link, ps->p[k].sv_dir, (int)k, TR_ENABLE, 0);
	return 0;
}
