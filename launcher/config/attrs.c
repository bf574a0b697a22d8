/*
 * The effective configuration: catalog defaults merged with the statements of
 * gitlab.rb in order (later assignments win), then each service's vars, env,
 * base env and argv computed and validated.
 *
 * Everything the user wrote is checked where it is written, so that every
 * message points at the gitlab.rb line; values that come from the catalog
 * point at the .conf line instead. Nothing here knows any particular service:
 * settings, defaults, env and command all come from the catalog.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_config.h"
#include "config/assign.h"
#include "config/attrs.h"
#include "config/attrs_int.h"
#include "config/placeholder.h"
#include "lib/alloc.h"
#include "lib/grow.h"
#include "lib/pathsafe.h"

/* ---- computing a service ------------------------------------------------- */

struct var *var_find(struct comp *c, const char *name, size_t len)
{
	for (size_t i = 0; i < c->n; i++)
		if (strlen(c->v[i].name) == len && strncmp(c->v[i].name, name, len) == 0)
			return &c->v[i];
	return NULL;
}

void var_add(struct comp *c, const char *name, char *raw, bool expand, int line)
{
	grow(&c->v, &c->cap, c->n + 1, sizeof *c->v, 32);
	c->v[c->n++] =
	    (struct var){name, raw, expand, line, NULL, V_TODO, false, false, SECRET_NONE, {0}};
}

static const char *comp_lookup(void *ctx, const char *name, size_t len, int line);

/* Whether o's runit or config name is name[0, n). */
static bool cat_named(const struct cat_service *o, const char *name, size_t n)
{
	return (strlen(o->name) == n && strncmp(o->name, name, n) == 0) ||
	       (strlen(o->config_name) == n && strncmp(o->config_name, name, n) == 0);
}

/*
 * A path setting's default outside --root (a catalog's absolute
 * /var/opt/...) is taken inside it, as gitlab.rb's paths are (assign.c):
 * every path setting but a host one stays below the root.
 */
static char *inside_root(const struct comp *c, const struct var *v, char *val)
{
	const char *root = c->b->ctl->root;
	if (!v->in_root || root[0] == '\0' || val[0] != '/' || pathsafe_below(val, root))
		return val;
	char *p = xasprintf("%s%s", root, val);
	free(val);
	return p;
}

const char *var_resolve(struct comp *c, struct var *v)
{
	if (v->state == V_DONE)
		return v->val;
	if (v->state == V_BUSY) {
		diag_at(c->b->d, DIAG_ERR, cat_loc(c->def, v->line),
		        "the default of '%s' refers to itself through {{placeholders}}", v->name);
		c->failed = true;
		return NULL;
	}
	v->state = V_BUSY;
	enum secrecy outer = c->taint;
	struct loc outer_from = c->from;
	c->taint = SECRET_NONE;
	c->from = (struct loc){0};
	char *val = v->raw; /* a literal is its own value: taken over, not copied */
	if (v->expand)
		val = ph_expand(v->raw, comp_lookup, c, v->line);
	else
		v->raw = NULL;
	enum secrecy inner = c->taint;
	if (v->from.src == NULL)
		v->from = c->from;
	c->taint = outer;
	c->from = outer_from;
	if (val == NULL) {
		v->state = V_TODO;
		return NULL;
	}
	if (v->own_secret)
		inner = val[0] != '\0' ? SECRET_HOLDS : SECRET_MAY;
	val = inside_root(c, v, val);
	v->secret = inner;
	v->val = val;
	v->state = V_DONE;
	return v->val;
}

static void compute_at(struct build *b, size_t i);

/* {{svc.setting}}: a var of another service (runit or config name), computed first. */
static const char *cross_lookup(struct comp *c, const char *name, size_t len, const char *dot,
                                int line)
{
	struct build *b = c->b;
	size_t sl = (size_t)(dot - name);
	const char *why = "no such service";
	for (size_t j = 0; j < b->cat->n; j++) {
		const struct cat_service *o = &b->cat->v[j];
		if (!cat_named(o, name, sl))
			continue;
		if (b->cstate[j] == C_BUSY) {
			why = "the two services' placeholders refer to each other";
			break;
		}
		compute_at(b, j);
		char key[128];
		const char *v = NULL;
		if (len - sl - 1 < sizeof key) {
			memcpy(key, dot + 1, len - sl - 1);
			key[len - sl - 1] = '\0';
			v = kv_get(&b->out->svcs[j].vars, key);
		}
		if (v != NULL) {
			enum secrecy sec = svc_var_secret(&b->out->svcs[j], key);
			if (sec > c->taint)
				c->taint = sec;
			const struct cat_setting *cs = cat_setting_find(o, key);
			if (c->from.src == NULL && cs != NULL &&
			    b->w[j].val[cs - o->settings] != NULL)
				c->from = b->w[j].vloc[cs - o->settings];
			return v;
		}
		why = b->cstate[j] == C_FAILED ? "that service has errors" : "no such setting";
		break;
	}
	diag_at(b->d, DIAG_ERR, cat_loc(c->def, line),
	        "unknown placeholder {{%.*s}} in service %s: %s", (int)len, name, c->def->name,
	        why);
	c->failed = true;
	return NULL;
}

/* {{roles.NAME}}: "true" when roles([...]) in gitlab.rb lists NAME (redis_replica_role). */
static const char *role_lookup(const struct comp *c, const char *role, size_t len)
{
	const struct assigns *as = c->b->as;
	for (size_t i = 0; i < as->nroles; i++)
		if (strlen(as->roles[i]) == len && strncmp(as->roles[i], role, len) == 0)
			return "true";
	return "false";
}

static const char *comp_lookup(void *ctx, const char *name, size_t len, int line)
{
	struct comp *c = ctx;
	const char *dot = memchr(name, '.', len);
	if (dot != NULL && dot - name == 5 && strncmp(name, "roles", 5) == 0)
		return role_lookup(c, dot + 1, len - 6);
	if (dot != NULL)
		return cross_lookup(c, name, len, dot, line);
	struct var *v = var_find(c, name, len);
	if (v == NULL) {
		diag_at(c->b->d, DIAG_ERR, cat_loc(c->def, line),
		        "unknown placeholder {{%.*s}} in service %s", (int)len, name, c->def->name);
		c->failed = true;
		return NULL;
	}
	const char *val = var_resolve(c, v);
	if (val != NULL && v->secret > c->taint)
		c->taint = v->secret;
	if (val != NULL && c->from.src == NULL)
		c->from = v->from;
	return val;
}

char *comp_expand(struct comp *c, const char *tmpl, int line)
{
	char *s = ph_expand(tmpl, comp_lookup, c, line);
	if (s == NULL)
		c->failed = true;
	return s;
}

/* The effective svlogd settings: global logging[...] with per-service overrides. */
static void merge_log(const struct attrs *a, const struct assign_svc *w, struct svlog *l)
{
	svlog_copy(l, &a->logging);
	for (int k = 0; k < SVLOG_N; k++)
		if (w->log_set[k])
			svlog_set(l, k, w->log[k]);
}

static bool in_roles(const struct cat_service *def, const struct assigns *as)
{
	for (size_t i = 0; i < def->nroles; i++)
		for (size_t j = 0; j < as->nroles; j++)
			if (strcmp(def->roles[i], as->roles[j]) == 0)
				return true;
	return false;
}

/*
 * What gitlab.rb and the roles decide for service j's enable, without computing the service:
 * an off switch set false wins; then what gitlab.rb says; then, when roles([...]) is given,
 * whether one of them names the service (Omnibus: roles turn everything else off). NULL:
 * neither says, the catalog default decides.
 */
static const char *enable_said(const struct build *b, size_t j, size_t si)
{
	const struct cat_service *def = &b->cat->v[j];
	const struct assigns *as = b->as;
	for (size_t i = 0; def->off_switch && i < as->nswitches; i++)
		if (strcmp(as->switches[i].name, def->off_switch) == 0 && as->switches[i].off)
			return "false";
	if (b->w[j].val[si] != NULL)
		return b->w[j].val[si];
	if (as->roles_set)
		return in_roles(def, as) ? "true" : "false";
	return NULL;
}

/*
 * A service that another runs itself (postgresql, which Patroni runs: off_with) is off
 * where that one is enabled, unless gitlab.rb turns it on by name: as Omnibus, where
 * patroni_role with postgres_role, or patroni['enable'] with postgres_role, runs Patroni.
 */
static bool off_with_enabled(const struct build *b, const struct cat_service *def)
{
	const struct cat_service *o = def->off_with ? catalog_find(b->cat, def->off_with) : NULL;
	const struct cat_setting *cs = o ? cat_setting_find(o, "enable") : NULL;
	if (cs == NULL)
		return false;
	size_t j = (size_t)(o - b->cat->v);
	const char *v = enable_said(b, j, (size_t)(cs - o->settings));
	return strcmp(v ? v : cs->def ? cs->def : "false", "true") == 0;
}

/* enable: as enable_said, else the catalog default; placeholders set when it has some. */
static char *enable_text(struct comp *c, size_t si, bool *placeholders)
{
	const struct cat_service *def = c->def;
	*placeholders = false;
	size_t j = (size_t)(def - c->b->cat->v);
	const char *v = enable_said(c->b, j, si);
	if (c->w->val[si] == NULL && off_with_enabled(c->b, def))
		return xstrdup("false");
	if (v != NULL)
		return xstrdup(v);
	*placeholders = def->settings[si].def != NULL; /* "{{redis.enable}}" */
	return xstrdup(def->settings[si].def ? def->settings[si].def : "false");
}

static void add_settings(struct comp *c)
{
	const struct cat_service *def = c->def;
	for (size_t i = 0; i < def->nsettings; i++) {
		const struct cat_setting *cs = &def->settings[i];
		if (is_builtin(cs->name)) {
			diag_at(c->b->d, DIAG_ERR, cat_loc(def, cs->line),
			        "setting '%s' clashes with a built-in placeholder", cs->name);
			c->failed = true;
			continue;
		}
		if (cs->type == ST_ENV || var_find(c, cs->name, strlen(cs->name)) != NULL)
			continue; /* `group` when not root: the invoking user's, added already */
		bool built_from_secret = false;
		if (strcmp(cs->name, "enable") == 0 && cs->type == ST_BOOL) {
			bool ph;
			char *t = enable_text(c, i, &ph);
			var_add(c, cs->name, t, ph, cs->line);
		} else if (cs->type == ST_YAML) {
			var_add(c, cs->name,
			        c->w->data[i] || cs->ndefs == 0
			            ? data_summary(c->w->data[i])
			            : xasprintf("(array of %zu)", cs->ndefs),
			        false, cs->line);
		} else if (cs->type == ST_FLAGS) {
			c->taint = SECRET_NONE;
			struct flags l = merged_hash(c, i);
			built_from_secret = c->taint != SECRET_NONE; /* a default names a secret */
			var_add(c, cs->name, flags_text(def->flags_style, &l), false, cs->line);
			flags_free(&l);
		} else if (c->w->val[i] != NULL) {
			var_add(c, cs->name, xstrdup(c->w->val[i]), false, cs->line);
			c->v[c->n - 1].from = c->w->vloc[i];
		} else {
			var_add(c, cs->name, xstrdup(cs->def ? cs->def : ""), cs->def != NULL,
			        cs->line);
		}
		c->v[c->n - 1].own_secret = cs->secret || built_from_secret;
		c->v[c->n - 1].in_root = cs->type == ST_PATH && !cs->host;
	}
}

/* A bool default taken from a placeholder must still be a bool. */
static int check_bool(struct comp *c, const char *name, const char *v)
{
	const struct cat_setting *cs = cat_setting_find(c->def, name);
	if (cs == NULL || cs->type != ST_BOOL || strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
		return 0;
	diag_at(c->b->d, DIAG_ERR, cat_loc(c->def, cs->line),
	        "default of setting '%s' (bool) is \"%s\", not true or false", name, v);
	return -1;
}

/* The vars, and which hold secrets, as strings of the run's arena (attrs_free frees them). */
static int resolve_all(struct comp *c, struct svc *out)
{
	struct arena *strs = &c->b->out->strs;
	out->vars.v = xcalloc(c->n, sizeof *out->vars.v);
	for (size_t i = 0; i < c->n; i++) {
		const char *v = var_resolve(c, &c->v[i]);
		if (v == NULL || check_bool(c, c->v[i].name, v) == -1)
			return -1;
		out->vars.v[out->vars.n++] =
		    (struct kv){arena_strdup(strs, c->v[i].name), arena_strdup(strs, v)};
	}
	qsort(out->vars.v, out->vars.n, sizeof *out->vars.v, kv_cmp);
	char *holds = arena_strdup(strs, "holds"), *may = arena_strdup(strs, "may");
	out->secret_vars.v = xcalloc(c->n + 1, sizeof *out->secret_vars.v);
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].secret != SECRET_NONE)
			out->secret_vars.v[out->secret_vars.n++] =
			    (struct kv){arena_strdup(strs, c->v[i].name),
			                c->v[i].secret == SECRET_HOLDS ? holds : may};
	qsort(out->secret_vars.v, out->secret_vars.n, sizeof *out->secret_vars.v, kv_cmp);
	return 0;
}

static void compute_svc(struct build *b, const struct assign_svc *w, struct svc *out)
{
	struct comp c = {.b = b, .w = w, .def = w->def};
	out->def = w->def;
	merge_log(b->out, w, &out->log);
	add_builtins(&c, out);
	add_settings(&c);
	cap_scrape_timeout(&c);
	struct yval *mail = rails_global(&c);
	add_listen(&c, out);
	if (!c.failed && resolve_all(&c, out) == 0) {
		compute_env(&c, out);
		compute_base_env(&c, out);
		compute_argv(&c, out);
		compute_origin(w, out);
		compute_where(w, out);
		out->role_where = compute_role_where(b->as, w);
		compute_data(w, out);
		if (mail != NULL)
			data_set(out, "global", mail, (struct loc){0});
		mail = NULL;
	}
	yval_free(mail);
	for (size_t i = 0; i < c.n; i++) {
		free(c.v[i].raw);
		free(c.v[i].val);
	}
	free(c.v);
	if (out->argv == NULL)
		out->argv = xcalloc(1, sizeof *out->argv);
	const char *en = kv_get(&out->vars, "enable");
	out->enabled = en != NULL && strcmp(en, "true") == 0;
	out->home = kv_get(&out->vars, "home");
	out->log_dir = kv_get(&out->vars, "log_directory");
	out->env_dir = kv_get(&out->vars, "env_directory");
	out->user = kv_get(&out->vars, "user");
	out->group = kv_get(&out->vars, "group");
	out->listen_host = kv_get(&out->vars, "listen_host");
	if (out->listen_host == NULL)
		out->listen_port = 0;
	if (!c.failed) {
		check_refused(b, w, out);
		check_tls(b, w, out);
		check_required(b, w, out);
	}
}

/* Services are computed on demand: {{postgresql.port}} computes postgresql first. */
static void compute_at(struct build *b, size_t i)
{
	if (b->cstate[i] != C_TODO)
		return;
	b->cstate[i] = C_BUSY;
	size_t nerr = b->d->nerr;
	compute_svc(b, &b->w[i], &b->out->svcs[i]);
	b->cstate[i] = b->d->nerr > nerr ? C_FAILED : C_DONE;
}

/* ---- entry points -------------------------------------------------------- */

int attrs_build(const struct ctl *ctl, const struct catalog *cat, const struct rb_file *f,
                struct attrs *out, struct diags *d)
{
	size_t nerr = d->nerr;
	struct assigns as;
	assigns_walk(ctl, cat, f, &as, d);
	memset(out, 0, sizeof *out);
	/* The global settings are the walk's: taken over, not copied. */
	out->user = as.user;
	out->group = as.group;
	out->manage_accounts = as.manage_accounts;
	out->logging = as.logging;
	out->unknown_names = as.unknown;
	as.user = as.group = NULL;
	memset(&as.logging, 0, sizeof as.logging);
	memset(&as.unknown, 0, sizeof as.unknown);
	arena_init(&out->strs);
	struct build b = {
	    .ctl = ctl, .cat = cat, .d = d, .out = out, .w = as.svc, .as = &as, .f = f};
	out->svcs = xcalloc(cat->n, sizeof *out->svcs);
	out->nsvcs = cat->n;
	b.cstate = xcalloc(cat->n, sizeof *b.cstate);
	b.root = geteuid() == 0;
	envcheck_init(&b.ec, NULL);
	char var_dir[PATH_MAX];
	if (b.root && ctl_var_dir(ctl, var_dir, sizeof var_dir) == 0)
		envcheck_cache(&b.ec, var_dir, !ctl->read_only);
	for (size_t i = 0; i < 3; i++)
		if (ctl_path(ctl, b.root_dirs[i], PATH_MAX, builtin_dirs[i], (char *)NULL) == -1)
			b.root_dirs[i][0] = '\0';
	for (size_t i = 0; i < cat->n; i++)
		compute_at(&b, i);
	for (size_t i = 0; i < cat->n; i++)
		compute_groups(out, b.root, &out->svcs[i]);
	for (size_t i = 0; i < cat->n; i++)
		if (cat->v[i].scrape_collect != NULL && b.cstate[i] == C_DONE)
			collect_scrape(&b, &out->svcs[i]);
	for (size_t i = 0; i < cat->n; i++) /* their source goes with the parsed file */
		for (size_t j = 0; j < out->svcs[i].ndata; j++)
			out->svcs[i].data[j].loc = (struct loc){0};
	free(b.cstate);
	envcheck_free(&b.ec);
	assigns_free(&as);
	return d->nerr > nerr ? -1 : 0;
}

/* The default config may be absent (all defaults); an explicit -c FILE may not. */
static bool is_default_config(const struct ctl *ctl)
{
	char def[PATH_MAX];
	return ctl_path(ctl, def, sizeof def, GITLAB_CTL_CONFIG_FILE, (char *)NULL) == 0 &&
	       strcmp(def, ctl->config) == 0;
}

int attrs_load(const struct ctl *ctl, const struct catalog *cat, struct attrs *out, struct diags *d)
{
	struct stat st;
	if (stat(ctl->config, &st) == -1 && errno == ENOENT && is_default_config(ctl)) {
		diag_file(d, DIAG_WARN, ctl->config, 0,
		          "no configuration file; using the defaults of every setting");
		return attrs_build(ctl, cat, NULL, out, d);
	}
	/* Root runs what gitlab.rb says: refuse one that someone else can edit. */
	char msg[PATH_MAX + 160];
	if (geteuid() == 0 && pathsafe_config_file(ctl->config, msg, sizeof msg) == -1) {
		diag_file(d, DIAG_ERR, ctl->config, 0, "%s", msg);
		memset(out, 0, sizeof *out);
		return -1;
	}
	struct rb_file f;
	memset(&f, 0, sizeof f);
	if (rb_load(ctl->config, &f, d) == -1) {
		rb_free(&f);
		memset(out, 0, sizeof *out);
		return -1;
	}
	int rc = attrs_build(ctl, cat, &f, out, d);
	rb_free(&f);
	return rc;
}

void attrs_free(struct attrs *a)
{
	free(a->user);
	free(a->group);
	svlog_free(&a->logging);
	for (size_t i = 0; i < a->nsvcs; i++) {
		struct svc *s = &a->svcs[i];
		free(s->vars.v); /* its strings are a->strs' */
		kvlist_free(&s->env);
		kvlist_free(&s->base_env);
		kvlist_free(&s->origin);
		kvlist_free(&s->where);
		free(s->role_where);
		free(s->secret_vars.v);
		kvlist_free(&s->secret_env);
		free(s->argv_secret);
		free(s->argv_pos);
		free(s->groups);
		for (size_t j = 0; s->argv && j < s->argc; j++)
			free(s->argv[j]);
		free(s->argv);
		svlog_free(&s->log);
		for (size_t j = 0; j < s->ndata; j++) {
			free(s->data[j].name);
			yval_free(s->data[j].v);
		}
		free(s->data);
	}
	free(a->svcs);
	kvlist_free(&a->unknown_names);
	arena_free(&a->strs);
	memset(a, 0, sizeof *a);
}

static const struct svc *svc_named(const struct attrs *a, const char *name, size_t n)
{
	for (size_t i = 0; i < a->nsvcs; i++)
		if (cat_named(a->svcs[i].def, name, n))
			return &a->svcs[i];
	return NULL;
}

const struct svc *attrs_svc(const struct attrs *a, const char *name)
{
	return svc_named(a, name, strlen(name));
}

int attrs_set_var(struct attrs *a, const char *svc, const char *name, const char *value)
{
	struct svc *s = (struct svc *)svc_named(a, svc, strlen(svc));
	struct kv key = {(char *)name, NULL};
	struct kv *v = s ? bsearch(&key, s->vars.v, s->vars.n, sizeof *s->vars.v, kv_cmp) : NULL;
	if (v == NULL)
		return -1;
	v->value = arena_strdup(&a->strs, value);
	return 0;
}

const char *svc_var(const struct svc *s, const char *name)
{
	return kv_get(&s->vars, name);
}

long long svc_int(const struct svc *s, const char *name, long long dflt)
{
	const char *v = svc_var(s, name), *errstr = NULL;
	long long n = v != NULL ? strtonum(v, LLONG_MIN, LLONG_MAX, &errstr) : dflt;
	return v != NULL && errstr == NULL ? n : dflt;
}

const char *const *svc_tls_keys(const struct svc *s)
{
	static const char *const ours[] = {"tls_cert_path", "tls_key_path", "tls_client_ca_path"};
	static const char *const patroni[] = {"tls_certificate_file", "tls_key_file",
	                                      "tls_ca_file"};
	return cat_setting_find(s->def, patroni[0]) != NULL ? patroni : ours;
}

/* Omnibus' tls_enabled where the service has it (gitlab_exporter), else a certificate set. */
bool svc_tls(const struct svc *s)
{
	const char *v = kv_get(&s->vars, "tls_enabled");
	if (v != NULL)
		return strcmp(v, "true") == 0;
	v = kv_get(&s->vars, svc_tls_keys(s)[0]);
	return v != NULL && v[0] != '\0';
}

static enum secrecy secrecy_of(const char *v)
{
	return v == NULL ? SECRET_NONE : strcmp(v, "holds") == 0 ? SECRET_HOLDS : SECRET_MAY;
}

enum secrecy svc_var_secret(const struct svc *s, const char *name)
{
	return secrecy_of(kv_get(&s->secret_vars, name));
}

enum secrecy svc_env_secret(const struct svc *s, const char *name)
{
	if (env_is_secret(name))
		return SECRET_HOLDS;
	return secrecy_of(kv_get(&s->secret_env, name));
}

const char *svc_web_auth(const struct svc *s, char *buf, size_t len)
{
	const char *u = svc_var(s, "web_username"), *p = svc_var(s, "web_password");
	if (p == NULL || p[0] == '\0')
		return NULL;
	int n = snprintf(buf, len, "%s:%s", u ? u : "", p);
	return n < 0 || (size_t)n >= len ? NULL : buf;
}

const struct yval *svc_data(const struct svc *s, const char *name)
{
	for (size_t i = 0; i < s->ndata; i++)
		if (strcmp(s->data[i].name, name) == 0)
			return s->data[i].v;
	return NULL;
}

static const char *svc_lookup(void *ctx, const char *name, size_t len, int line)
{
	const struct svc *s = ctx;
	(void)line;
	char key[128];
	if (!ph_key(name, len, key, sizeof key))
		return NULL;
	const char *v = svc_var(s, key);
	if (v == NULL)
		errno = EINVAL;
	return v;
}

char *svc_expand(const struct svc *s, const char *tmpl)
{
	return ph_expand(tmpl, svc_lookup, (void *)s, 0);
}

const char *attrs_var(const struct attrs *a, const struct svc *s, const char *name)
{
	const char *dot = strchr(name, '.');
	if (dot == NULL)
		return svc_var(s, name);
	const struct svc *o = svc_named(a, name, (size_t)(dot - name));
	return o != NULL ? svc_var(o, dot + 1) : NULL;
}

struct actx {
	const struct attrs *a;
	const struct svc *s;
	const char *ph, *val; /* {{ph}} is val, unless NULL */
};

static const char *attrs_lookup(void *ctx, const char *name, size_t len, int line)
{
	const struct actx *x = ctx;
	char key[256];
	(void)line;
	if (!ph_key(name, len, key, sizeof key))
		return NULL;
	const char *v =
	    x->val != NULL && strcmp(key, x->ph) == 0 ? x->val : attrs_var(x->a, x->s, key);
	if (v == NULL)
		errno = EINVAL;
	return v;
}

enum secrecy attrs_var_secret(const struct attrs *a, const struct svc *s, const char *name)
{
	const char *dot = strchr(name, '.');
	if (dot == NULL)
		return svc_var_secret(s, name);
	const struct svc *o = svc_named(a, name, (size_t)(dot - name));
	return o != NULL ? svc_var_secret(o, dot + 1) : SECRET_NONE;
}

char *attrs_expand(const struct attrs *a, const struct svc *s, const char *tmpl)
{
	struct actx x = {a, s, NULL, NULL};
	return ph_expand(tmpl, attrs_lookup, &x, 0);
}

char **attrs_expand_argv(const struct attrs *a, const struct svc *s, char *const *tmpl, size_t n,
                         const char *ph, const char *val, size_t *bad)
{
	struct actx x = {a, s, ph, val};
	char **v = xcalloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++)
		if ((v[i] = ph_expand(tmpl[i], attrs_lookup, &x, 0)) == NULL) {
			*bad = i;
			argv_free(v);
			return NULL;
		}
	return v;
}

void argv_free(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

int attrs_load_all(const struct ctl *ctl, struct catalog *cat, struct attrs *out, struct diags *d)
{
	memset(out, 0, sizeof *out);
	if (catalog_load_ctl(ctl, cat, d) == 0 && attrs_load(ctl, cat, out, d) == 0)
		return 0;
	attrs_free(out);
	catalog_free(cat);
	return -1;
}
