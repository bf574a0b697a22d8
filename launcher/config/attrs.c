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
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_config.h"
#include "config/attrs.h"
#include "config/assign.h"
#include "config/envcheck.h"
#include "config/placeholder.h"
#include "config/railsmtp.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/genpass.h"
#include "lib/grow.h"
#include "lib/pathsafe.h"

/* ---- computing a service ------------------------------------------------- */

struct build {
	const struct ctl *ctl;
	enum { C_TODO, C_BUSY, C_DONE, C_FAILED } * cstate; /* per service, computed on demand */
	const struct catalog *cat;
	struct diags *d;
	struct attrs *out;
	const struct assign_svc *w; /* what gitlab.rb set, per catalog service */
	const struct assigns *as;
	const struct rb_file *f;     /* the parsed gitlab.rb, NULL for none */
	char root_dirs[3][PATH_MAX]; /* install, data, log dir under the root; "": too long */
	bool root;                   /* run by root (asked once per run, not per service) */
	struct envcheck ec;          /* the env checks' answers, shared by every service */
	char genpw[64];              /* generated_web_password, "" until first asked for */
};

enum vstate { V_TODO, V_BUSY, V_DONE };

struct var {
	const char *name;
	char *raw;   /* owned */
	bool expand; /* a catalog default: may hold placeholders */
	int line;    /* catalog line, for messages */
	char *val;   /* owned, when V_DONE */
	enum vstate state;
	bool own_secret;     /* a catalog setting marked secret */
	bool in_root;        /* a path setting not marked host: kept inside --root */
	enum secrecy secret; /* when V_DONE: own, or taken from the vars it was built from */
	struct loc from;     /* the gitlab.rb position of the value or of one it was built from */
};

struct comp {
	struct build *b;
	const struct assign_svc *w;
	const struct cat_service *def;
	struct var *v;
	size_t n, cap;
	bool failed;
	enum secrecy taint; /* the most secret var the expansion under way looked up */
	struct loc from;    /* the first gitlab.rb-set value it looked up, for messages */
	struct src nosrc;   /* gitlab.rb without its text, for a position holding a secret */
};

static struct var *var_find(struct comp *c, const char *name, size_t len)
{
	for (size_t i = 0; i < c->n; i++)
		if (strlen(c->v[i].name) == len && strncmp(c->v[i].name, name, len) == 0)
			return &c->v[i];
	return NULL;
}

static void var_add(struct comp *c, const char *name, char *raw, bool expand, int line)
{
	grow(&c->v, &c->cap, c->n + 1, sizeof *c->v, 32);
	c->v[c->n++] =
	    (struct var){name, raw, expand, line, NULL, V_TODO, false, false, SECRET_NONE, {0}};
}

static const char *comp_lookup(void *ctx, const char *name, size_t len, int line);

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

static const char *var_resolve(struct comp *c, struct var *v)
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
		if (!((strlen(o->name) == sl && strncmp(o->name, name, sl) == 0) ||
		      (strlen(o->config_name) == sl && strncmp(o->config_name, name, sl) == 0)))
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

static const char *comp_lookup(void *ctx, const char *name, size_t len, int line)
{
	struct comp *c = ctx;
	const char *dot = memchr(name, '.', len);
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

static char *comp_expand(struct comp *c, const char *tmpl, int line)
{
	char *s = ph_expand(tmpl, comp_lookup, c, line);
	if (s == NULL)
		c->failed = true;
	return s;
}

/*
 * Names attrs provides itself; a catalog setting must not shadow them, with
 * these exceptions: a port setting may be listen_port; `group` is the
 * service's own group (Omnibus' postgresql['group']); and install_dir,
 * data_dir and log_dir, older names of gitlab_install_dir, gitlab_data_dir
 * and gitlab_log_dir, may be settings (Omnibus' postgresql['data_dir']): in
 * such a service the name means the setting, and its defaults say
 * {{gitlab_data_dir}} for the directory.
 */
static const char *const builtin_vars[] = {
    "service",        "root",          "user",        "gitlab_ctl",         "sv_dir",
    "jemalloc",       "listen_host",   "listen_port", "gitlab_install_dir", "gitlab_data_dir",
    "gitlab_log_dir", "scrape_target",
};

static const char *const shadowable_dirs[] = {"install_dir", "data_dir", "log_dir"};
static const char *const gitlab_dirs[] = {"gitlab_install_dir", "gitlab_data_dir",
                                          "gitlab_log_dir"};

static bool is_builtin(const char *name)
{
	for (size_t i = 0; i < sizeof builtin_vars / sizeof builtin_vars[0]; i++)
		if (strcmp(builtin_vars[i], name) == 0)
			return strcmp(name, "listen_port") != 0; /* a port setting may be it */
	return svlog_key(name) >= 0;
}

static char *root_path(struct comp *c, const char *abs)
{
	char buf[PATH_MAX];
	if (ctl_path(c->b->ctl, buf, sizeof buf, abs, (char *)NULL) == -1) {
		diag_file(c->b->d, DIAG_ERR, abs, 0, "path too long under the root");
		c->failed = true;
		return xstrdup(abs);
	}
	return xstrdup(buf);
}

/* The run-as account: configured when root, else whoever runs gitlab-ctl. */
static void run_as(const struct attrs *a, bool root, char **user, char **group)
{
	if (root) {
		*user = xstrdup(a->user);
		*group = xstrdup(a->group);
		return;
	}
	const struct passwd *pw = getpwuid(geteuid());
	*user = pw ? xstrdup(pw->pw_name) : xasprintf("%u", (unsigned)geteuid());
	gid_t gid = pw ? pw->pw_gid : getegid();
	const struct group *gr = getgrgid(gid);
	*group = gr ? xstrdup(gr->gr_name) : xasprintf("%u", (unsigned)gid);
}

/*
 * The run-as account. As root: the service's own username / group settings
 * when it declares them (postgresql runs as gitlab-psql), else user[...].
 * Not root: whoever runs gitlab-ctl, whatever the settings say.
 */
static void add_account(struct comp *c)
{
	char *user, *group;
	bool root = c->b->root;
	run_as(c->b->out, root, &user, &group);
	var_add(c, "gitlab_user", xstrdup(user), false, 0);
	if (root && cat_setting_find(c->def, "username") != NULL) {
		free(user);
		var_add(c, "user", xstrdup("{{username}}"), true, 0);
	} else {
		var_add(c, "user", user, false, 0);
	}
	if (cat_setting_find(c->def, "group") == NULL)
		var_add(c, "group", group, false, 0);
	else if (!root)
		var_add(c, "group", group, false, 0); /* add_settings skips the setting */
	else
		free(group);
}

static const char *const builtin_dirs[] = {GITLAB_CTL_INSTALL_DIR, GITLAB_CTL_DATA_DIR,
                                           GITLAB_CTL_LOG_DIR};

/* Built once per run; one too long is reported per service, as root_path does. */
static char *root_dir(struct comp *c, size_t i)
{
	const char *d = c->b->root_dirs[i];
	return d[0] ? xstrdup(d) : root_path(c, builtin_dirs[i]);
}

/*
 * generated_web_password, for a service whose web_password defaults to it (Prometheus,
 * Alertmanager): kept by genpass.h, read once per run, a secret like the setting.
 */
static void add_generated_password(struct comp *c)
{
	const struct cat_setting *cs = cat_setting_find(c->def, "web_password");
	if (cs == NULL || cs->def == NULL || strstr(cs->def, "generated_web_password") == NULL)
		return;
	char var[PATH_MAX];
	if (c->b->genpw[0] == '\0' &&
	    (ctl_var_dir(c->b->ctl, var, sizeof var) == -1 ||
	     genpass_get(var, "monitoring-web-password", c->b->genpw, sizeof c->b->genpw) == -1)) {
		diag_at(c->b->d, DIAG_ERR, cat_loc(c->def, cs->line),
		        "cannot keep a generated %s['web_password'] in %s/secrets: %s",
		        c->def->config_name, var, strerror(errno));
		c->failed = true;
		return;
	}
	var_add(c, "generated_web_password", xstrdup(c->b->genpw), false, cs->line);
	c->v[c->n - 1].own_secret = true;
}

/*
 * generated_password, for a setting that defaults to it (redis['monitor_password']): kept by
 * genpass.h as "<service>-<setting>", read once per run, a secret like the setting.
 */
static void add_generated_secret(struct comp *c)
{
	for (size_t i = 0; i < c->def->nsettings; i++) {
		const struct cat_setting *cs = &c->def->settings[i];
		char var[PATH_MAX], name[128], pw[64];
		if (cs->def == NULL || strcmp(cs->def, "{{generated_password}}") != 0)
			continue;
		snprintf(name, sizeof name, "%s-%s", c->def->name, cs->name);
		if (ctl_var_dir(c->b->ctl, var, sizeof var) == -1 ||
		    genpass_get(var, name, pw, sizeof pw) == -1) {
			diag_at(c->b->d, DIAG_ERR, cat_loc(c->def, cs->line),
			        "cannot keep a generated %s['%s'] in %s/secrets: %s",
			        c->def->config_name, cs->name, var, strerror(errno));
			c->failed = true;
			return;
		}
		var_add(c, "generated_password", xstrdup(pw), false, cs->line);
		c->v[c->n - 1].own_secret = true;
		return; /* one per service */
	}
}

static void add_builtins(struct comp *c, struct svc *out)
{
	const struct ctl *ctl = c->b->ctl;
	char buf[PATH_MAX];
	add_account(c);
	var_add(c, "service", xstrdup(c->def->name), false, 0);
	var_add(c, "root", xstrdup(ctl->root), false, 0);
	var_add(c, "gitlab_ctl", xstrdup(ctl->self), false, 0);
	if (ctl_sv_dir(ctl, buf, sizeof buf, c->def->name) == -1)
		buf[0] = '\0';
	var_add(c, "sv_dir", xstrdup(buf), false, 0);
	for (size_t i = 0; i < 3; i++) {
		var_add(c, gitlab_dirs[i], root_dir(c, i), false, 0);
		if (cat_setting_find(c->def, shadowable_dirs[i]) == NULL)
			var_add(c, shadowable_dirs[i], root_dir(c, i), false, 0);
	}
	var_add(c, "jemalloc", xstrdup(GITLAB_CTL_JEMALLOC), false, 0);
	add_generated_password(c);
	add_generated_secret(c);
	for (int k = 0; k < SVLOG_N; k++)
		var_add(c, svlog_keys[k], svlog_text(&out->log, k), false, 0);
}

/* The effective svlogd settings: global logging[...] with per-service overrides. */
static void merge_log(const struct attrs *a, const struct assign_svc *w, struct svlog *l)
{
	svlog_copy(l, &a->logging);
	for (int k = 0; k < SVLOG_N; k++)
		if (w->log_set[k])
			svlog_set(l, k, w->log[k]);
}

/* One flag of a flags setting: name, value text, and whether it was a boolean. */
struct flag {
	char *name, *value;
	bool is_bool;
	bool keep_empty; /* the catalog's "key=": an explicitly empty value */
};

struct flags {
	struct flag *v;
	size_t n;
};

static int flag_cmp(const void *a, const void *b)
{
	return strcmp(((const struct flag *)a)->name, ((const struct flag *)b)->name);
}

static void flags_free(struct flags *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].value);
	}
	free(l->v);
}

/* Defaults of flags settings, expanded, with the user's entries merged over them. */
static struct flags merged_hash(struct comp *c, size_t si)
{
	const struct cat_setting *cs = &c->def->settings[si];
	const struct assign_hash *h = &c->w->hash[si];
	struct flags l = {xcalloc(cs->ndefs + h->n + 1, sizeof(struct flag)), 0};
	for (size_t i = 0; i < cs->ndefs; i++) {
		char *v = comp_expand(c, cs->defs[i].value, cs->defs[i].line);
		if (v == NULL)
			continue;
		l.v[l.n++] = (struct flag){xstrdup(cs->defs[i].name), v, cs->defs[i].is_true,
		                           cs->defs[i].keep_empty};
	}
	for (size_t i = 0; i < h->n; i++) {
		const struct assign_ent *e = &h->v[i];
		size_t j = 0;
		while (j < l.n && strcmp(l.v[j].name, e->key) != 0)
			j++;
		if (j < l.n) {
			free(l.v[j].value);
			if (e->val == NULL) { /* nil removes */
				free(l.v[j].name);
				l.v[j] = l.v[--l.n];
				continue;
			}
			l.v[j].value = xstrdup(e->val);
			l.v[j].is_bool = e->is_bool;
			/* '' over a catalog "key=" is that empty value (Alertmanager's
			 * cluster.listen-address: clustering off), not the flag dropped */
			l.v[j].keep_empty = l.v[j].keep_empty && e->val[0] == '\0';
		} else if (e->val != NULL) {
			l.v[l.n++] =
			    (struct flag){xstrdup(e->key), xstrdup(e->val), e->is_bool, false};
		}
	}
	qsort(l.v, l.n, sizeof *l.v, flag_cmp);
	return l;
}

/* The argument a flag becomes in the service's flags_style, or NULL for none. */
static char *flag_arg(enum flags_style style, const struct flag *f)
{
	bool empty = f->value[0] == '\0';
	if (style == FLAGS_LEGACY) /* "" renders --key (e.g. Go's --no-collector.x) */
		return empty ? xasprintf("--%s", f->name) : xasprintf("--%s=%s", f->name, f->value);
	if (style == FLAGS_KINGPIN && f->is_bool)
		return strcmp(f->value, "true") == 0 ? xasprintf("--%s", f->name)
		                                     : xasprintf("--no-%s", f->name);
	if (empty)
		return f->keep_empty ? xasprintf("--%s=", f->name) : NULL;
	return xasprintf("--%s=%s", f->name, f->value);
}

/* The flags joined by spaces: the setting's placeholder value. */
static char *flags_text(enum flags_style style, const struct flags *l)
{
	struct buf b;
	buf_init(&b);
	for (size_t i = 0; i < l->n; i++) {
		char *a = flag_arg(style, &l->v[i]);
		if (a == NULL)
			continue;
		if (b.len)
			buf_addc(&b, ' ');
		buf_adds(&b, a);
		free(a);
	}
	return buf_take(&b);
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
 * enable: an off switch set false wins; then what gitlab.rb says; then, when
 * roles([...]) is given, whether one of them names the service (Omnibus:
 * roles turn everything else off); then the catalog default.
 */
static char *enable_text(struct comp *c, size_t si, bool *placeholders)
{
	const struct cat_service *def = c->def;
	*placeholders = false;
	const struct assigns *as = c->b->as;
	for (size_t i = 0; def->off_switch && i < as->nswitches; i++)
		if (strcmp(as->switches[i].name, def->off_switch) == 0 && as->switches[i].off)
			return xstrdup("false");
	if (c->w->val[si] != NULL)
		return xstrdup(c->w->val[si]);
	if (as->roles_set)
		return xstrdup(in_roles(def, as) ? "true" : "false");
	*placeholders = def->settings[si].def != NULL; /* "{{redis.enable}}" */
	return xstrdup(def->settings[si].def ? def->settings[si].def : "false");
}

/* A yaml setting's var: "" when unset or empty (for {{#if}}), else a summary for show-config. */
static char *data_summary(const struct yval *v)
{
	if (yval_empty(v))
		return xstrdup("");
	if (v->kind == YV_SEQ)
		return xasprintf("(array of %zu)", v->n);
	if (v->kind == YV_MAP)
		return xasprintf("(hash of %zu)", v->n);
	return xstrdup(v->text);
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

/* Where a scraper on this node reaches a listener: a wildcard host means this host. */
static char *scrape_target(const char *host, long long port)
{
	static const char *const any[] = {"", "0.0.0.0", "::", "*", "[::]"};
	for (size_t i = 0; i < sizeof any / sizeof any[0]; i++)
		if (strcmp(host, any[i]) == 0)
			return xasprintf("localhost:%lld", port);
	if (strchr(host, ':') != NULL)
		return xasprintf("[%s]:%lld", host, port);
	return xasprintf("%s:%lld", host, port);
}

/* listen_host / listen_port from an address setting or listen_address + a port setting. */
static void add_listen(struct comp *c, struct svc *out)
{
	const struct cat_service *def = c->def;
	const struct cat_setting *addr = cat_setting_find(def, "listen_address");
	const struct cat_setting *port = NULL;
	for (size_t i = 0; i < def->nsettings && port == NULL; i++)
		if (def->settings[i].type == ST_PORT)
			port = &def->settings[i];
	if (addr == NULL) {
		for (size_t i = 0; i < def->nsettings && addr == NULL; i++)
			if (def->settings[i].type == ST_ADDRESS)
				addr = &def->settings[i];
	}
	if (addr == NULL)
		return;
	struct var *av = var_find(c, addr->name, strlen(addr->name));
	const char *a = av ? var_resolve(c, av) : NULL;
	if (a == NULL || *a == '\0')
		return; /* no TCP listener (postgresql['listen_address'] unset) */
	char *host = NULL;
	long long p = 0;
	if (addr->type == ST_ADDRESS) {
		if (!assign_address(a, &host, &p)) {
			diag_at(c->b->d, DIAG_ERR, cat_loc(def, addr->line),
			        "%s['%s'] = \"%s\" is not host:port", def->config_name, addr->name,
			        a);
			c->failed = true;
			return;
		}
	} else {
		host = xstrdup(a);
		struct var *pv = port ? var_find(c, port->name, strlen(port->name)) : NULL;
		const char *ps = pv ? var_resolve(c, pv) : NULL;
		p = ps ? strtonum(ps, 1, 65535, NULL) : 0;
	}
	var_add(c, "scrape_target", scrape_target(host, p), false, addr->line);
	var_add(c, "listen_host", host, false, addr->line);
	if (var_find(c, "listen_port", 11) == NULL)
		var_add(c, "listen_port", xasprintf("%lld", p), false, addr->line);
	out->listen_port = (int)p;
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

/* Where each env value came from, for messages. */
struct envloc {
	struct kvlist *env;
	struct loc *locs;
};

static struct loc env_where(const char *name, void *ctx)
{
	const struct envloc *e = ctx;
	for (size_t i = 0; i < e->env->n; i++)
		if (strcmp(e->env->v[i].name, name) == 0)
			return e->locs[i];
	return (struct loc){0};
}

static int env_entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kv *)a)->name, ((const struct kv *)b)->name);
}

/* An env being built: names, values and where each came from, in parallel. */
struct envb {
	struct kv *v;
	struct loc *locs;
	enum secrecy *sec; /* built from a secret setting (catalog values only) */
	size_t n;
};

/* One gitlab.rb env entry over what is there: set, replace, or (nil) remove. */
static void env_merge(struct envb *e, const struct assign_ent *ent)
{
	size_t j = 0;
	while (j < e->n && strcmp(e->v[j].name, ent->key) != 0)
		j++;
	if (j == e->n && ent->val == NULL)
		return;
	if (j == e->n) {
		e->v[j].name = xstrdup(ent->key);
		e->n++;
	} else {
		free(e->v[j].value);
	}
	if (ent->val == NULL) { /* nil removes a default */
		free(e->v[j].name);
		e->v[j] = e->v[e->n - 1];
		e->locs[j] = e->locs[e->n - 1];
		e->sec[j] = e->sec[e->n - 1];
		e->n--;
		return;
	}
	e->v[j].value = xstrdup(ent->val);
	e->locs[j] = ent->loc;
	e->sec[j] = SECRET_NONE;
}

/* Sort names and locations together (few entries: insertion sort). */
static void env_sort(struct envb *e)
{
	for (size_t i = 1; i < e->n; i++)
		for (size_t j = i; j > 0 && env_entry_cmp(&e->v[j - 1], &e->v[j]) > 0; j--) {
			struct kv tv = e->v[j];
			struct loc tl = e->locs[j];
			enum secrecy ts = e->sec[j];
			e->v[j] = e->v[j - 1];
			e->locs[j] = e->locs[j - 1];
			e->sec[j] = e->sec[j - 1];
			e->v[j - 1] = tv;
			e->locs[j - 1] = tl;
			e->sec[j - 1] = ts;
		}
}

/*
 * Where a catalog env value is blamed: the gitlab.rb line of a setting it was
 * built from ({{postgresql.port}}), else its catalog line. A value built from
 * a secret is blamed without echoing that line.
 */
static struct loc env_default_loc(struct comp *c, int line)
{
	if (c->from.src == NULL)
		return cat_loc(c->def, line);
	return c->taint != SECRET_NONE ? secret_loc(c->from, &c->nosrc) : c->from;
}

/* Catalog env, then the user's env settings merged over it; validated at the source. */
static void compute_env(struct comp *c, struct svc *out)
{
	const struct cat_service *def = c->def;
	size_t cap = def->nenv + 1;
	for (size_t i = 0; i < def->nsettings; i++)
		if (def->settings[i].type == ST_ENV)
			cap += c->w->hash[i].n;
	struct envb e = {xcalloc(cap, sizeof *e.v), xcalloc(cap, sizeof *e.locs),
	                 xcalloc(cap, sizeof *e.sec), 0};
	for (size_t i = 0; i < def->nenv; i++) {
		c->taint = SECRET_NONE;
		c->from = (struct loc){0};
		char *val = comp_expand(c, def->env[i].value, def->env[i].line);
		if (val == NULL)
			continue;
		e.v[e.n] = (struct kv){xstrdup(def->env[i].name), val};
		e.sec[e.n] = c->taint;
		e.locs[e.n++] = env_default_loc(c, def->env[i].line);
	}
	for (size_t si = 0; si < def->nsettings; si++)
		for (size_t i = 0; def->settings[si].type == ST_ENV && i < c->w->hash[si].n; i++)
			env_merge(&e, &c->w->hash[si].v[i]);
	env_sort(&e);
	out->env.v = e.v;
	out->env.n = e.n;
	for (size_t i = 0; i < e.n; i++)
		envcheck_var(&c->b->ec, e.v[i].name, e.v[i].value, e.locs[i], c->b->d);
	struct envloc el = {&out->env, e.locs};
	envcheck_env_at(&out->env, env_where, &el, c->b->d);
	out->secret_env.v = xcalloc(e.n + 1, sizeof *out->secret_env.v);
	for (size_t i = 0; i < e.n; i++) /* e is sorted: so is the list */
		if (e.sec[i] != SECRET_NONE)
			out->secret_env.v[out->secret_env.n++] =
			    (struct kv){xstrdup(e.v[i].name),
			                xstrdup(e.sec[i] == SECRET_HOLDS ? "holds" : "may")};
	free(e.locs);
	free(e.sec);
}

static void compute_base_env(struct comp *c, struct svc *out)
{
	const struct cat_service *def = c->def;
	out->base_env.v = xcalloc(def->nbase_env, sizeof *out->base_env.v);
	for (size_t i = 0; i < def->nbase_env; i++) {
		char *val = comp_expand(c, def->base_env[i].value, def->base_env[i].line);
		if (val != NULL)
			out->base_env.v[out->base_env.n++] =
			    (struct kv){xstrdup(def->base_env[i].name), val};
	}
	qsort(out->base_env.v, out->base_env.n, sizeof *out->base_env.v, kv_cmp);
}

/* A command element that is exactly {{X}} for a flags setting X. */
static const struct cat_setting *flags_elem(const struct cat_service *def, const char *e)
{
	size_t len = strlen(e);
	if (len < 5 || strncmp(e, "{{", 2) != 0 || strcmp(e + len - 2, "}}") != 0)
		return NULL;
	for (size_t i = 0; i < def->nsettings; i++)
		if (def->settings[i].type == ST_FLAGS && strlen(def->settings[i].name) == len - 4 &&
		    strncmp(def->settings[i].name, e + 2, len - 4) == 0)
			return &def->settings[i];
	return NULL;
}

/* Where flag `name` of flags setting si was written: its gitlab.rb entry, else its default. */
static struct loc flag_loc(const struct comp *c, size_t si, const char *name)
{
	const struct cat_setting *cs = &c->def->settings[si];
	const struct assign_hash *h = &c->w->hash[si];
	for (size_t i = h->n; i-- > 0;)
		if (h->v[i].val != NULL && strcmp(h->v[i].key, name) == 0)
			return h->v[i].loc;
	for (size_t i = 0; i < cs->ndefs; i++)
		if (strcmp(cs->defs[i].name, name) == 0)
			return cat_loc(c->def, cs->defs[i].line);
	return cat_loc(c->def, cs->line);
}

/* An argv being built, with each element's place and secrecy: three arrays grown together. */
struct argv_acc {
	char **argv;
	struct loc *locs;
	unsigned char *sec;
	size_t cap[3];
};

static void argv_room(struct argv_acc *a, size_t need)
{
	grow(&a->argv, &a->cap[0], need, sizeof *a->argv, 8);
	grow(&a->locs, &a->cap[1], need, sizeof *a->locs, 8);
	grow(&a->sec, &a->cap[2], need, sizeof *a->sec, 8);
}

static void compute_argv(struct comp *c, struct svc *out)
{
	const struct cat_service *def = c->def;
	struct argv_acc acc = {0};
	argv_room(&acc, def->ncommand + 1);
	char **argv = acc.argv;
	struct loc *locs = acc.locs;
	unsigned char *sec = acc.sec;
	/* The command's own elements: the gitlab.rb line of a `command` setting, or the catalog. */
	const struct cat_setting *cs = cat_setting_find(def, "command");
	struct loc at = cat_loc(def, def->command_line);
	if (cs != NULL && c->w->val[cs - def->settings] != NULL)
		at = c->w->vloc[cs - def->settings];
	size_t n = 0;
	for (size_t i = 0; i < def->ncommand; i++) {
		const struct cat_setting *fs = flags_elem(def, def->command[i]);
		if (fs == NULL) {
			c->taint = SECRET_NONE;
			char *a = comp_expand(c, def->command[i], def->command_line);
			if (a != NULL) {
				locs[n] = at;
				sec[n] = (unsigned char)c->taint;
				argv[n++] = a;
			}
			continue;
		}
		size_t si = (size_t)(fs - def->settings);
		c->taint = fs->secret ? SECRET_HOLDS : SECRET_NONE;
		struct flags l =
		    merged_hash(c, si); /* raises taint when a default names a secret */
		argv_room(&acc, n + l.n + (def->ncommand - i)); /* the rest's and the NULL's room */
		argv = acc.argv;
		locs = acc.locs;
		sec = acc.sec;
		for (size_t j = 0; j < l.n; j++) {
			char *a = flag_arg(def->flags_style, &l.v[j]);
			if (a == NULL)
				continue;
			locs[n] = flag_loc(c, si, l.v[j].name);
			bool hide = c->taint != SECRET_NONE || env_is_secret(l.v[j].name);
			sec[n] = (unsigned char)(hide ? SECRET_HOLDS : SECRET_NONE);
			argv[n++] = a;
		}
		flags_free(&l);
	}
	argv[n] = NULL;
	out->argv = argv;
	out->argv_secret = sec;
	out->argc = n;
	envcheck_argv(argv, locs, c->b->d);
	/* kept past the parsed file, whose source the locs point into */
	out->argv_pos = xcalloc(n + 1, sizeof *out->argv_pos);
	for (size_t i = 0; i < n; i++)
		if (locs[i].src != NULL && locs[i].src->name != NULL)
			out->argv_pos[i] =
			    (struct svc_pos){arena_strdup(&c->b->out->strs, locs[i].src->name),
			                     locs[i].line, locs[i].col};
	free(locs);
}

static char *loc_text(struct loc l)
{
	return xasprintf("%s:%d", l.src && l.src->name ? l.src->name : "gitlab.rb", l.line);
}

/* What gitlab.rb set, for show-config: setting -> "file:line", "env:NAME" -> "file:line". */
static void compute_origin(const struct assign_svc *w, struct svc *out)
{
	const struct cat_service *def = w->def;
	size_t cap = def->nsettings + 1;
	for (size_t i = 0; i < def->nsettings; i++)
		cap += w->hash[i].n;
	struct kv *v = xcalloc(cap, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < def->nsettings; i++) {
		const struct assign_hash *h = &w->hash[i];
		if (w->val[i] != NULL)
			v[n++] = (struct kv){xstrdup(def->settings[i].name), loc_text(w->vloc[i])};
		else if (def->settings[i].type == ST_YAML && w->data[i] != NULL)
			v[n++] = (struct kv){xstrdup(def->settings[i].name), loc_text(w->vloc[i])};
		else if (def->settings[i].type == ST_FLAGS && h->n > 0)
			v[n++] = (struct kv){xstrdup(def->settings[i].name),
			                     loc_text(h->v[h->n - 1].loc)};
		for (size_t j = 0; def->settings[i].type == ST_ENV && j < h->n; j++)
			if (h->v[j].val != NULL && kv_get(&out->env, h->v[j].key) != NULL &&
			    strcmp(kv_get(&out->env, h->v[j].key), h->v[j].val) == 0)
				v[n++] = (struct kv){xasprintf("env:%s", h->v[j].key),
				                     loc_text(h->v[j].loc)};
	}
	/* Several env settings could name the same variable; keep the names unique. */
	qsort(v, n, sizeof *v, kv_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++) {
		if (u > 0 && strcmp(v[u - 1].name, v[i].name) == 0) {
			free(v[u - 1].name);
			free(v[u - 1].value);
			u--;
		}
		v[u++] = v[i];
	}
	out->origin.v = v;
	out->origin.n = u;
}

/* Where gitlab.rb set each scalar or yaml setting, "file:line:col", for trust.c's and the
 * formats' refusals. */
static void compute_where(const struct assign_svc *w, struct svc *out)
{
	const struct cat_service *def = w->def;
	struct kv *v = xcalloc(def->nsettings + 1, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < def->nsettings; i++) {
		struct loc l = w->vloc[i];
		if (w->val[i] != NULL || w->data[i] != NULL)
			v[n++] = (struct kv){
			    xstrdup(def->settings[i].name),
			    xasprintf("%s:%d:%d", l.src && l.src->name ? l.src->name : "gitlab.rb",
			              l.line, l.col)};
	}
	qsort(v, n, sizeof *v, kv_cmp);
	out->where.v = v;
	out->where.n = n;
}

/* "NAME['key'] = 'v' <how>" where gitlab.rb set it (or the catalog's default), a secret redacted.
 */
static void refuse_value(struct build *b, const struct assign_svc *w, size_t i, const char *v,
                         const char *how)
{
	const struct cat_setting *cs = &w->def->settings[i];
	struct src nosrc;
	struct loc l = w->val[i] != NULL ? w->vloc[i] : cat_loc(w->def, cs->line);
	if (cs->secret)
		l = secret_loc(l, &nosrc);
	diag_at(b->d, DIAG_ERR, l, "%s['%s'] = '%s' %s", w->def->config_name, cs->name,
	        cs->secret ? "[redacted]" : v, how);
}

static bool one_of(const char *v, char *const *set, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (strcmp(v, set[k]) == 0)
			return true;
	return false;
}

/*
 * A value outside a setting's `values` (gitlab_exporter['server_name']), or one the catalog
 * refuses for it (refuse = [...]): postgresql['sql_user'] naming the cluster's superuser would
 * map the exporter's account to it in pg_ident.conf.
 */
static void check_refused(struct build *b, const struct assign_svc *w, const struct svc *s)
{
	const struct cat_service *def = w->def;
	for (size_t i = 0; i < def->nsettings; i++) {
		const struct cat_setting *cs = &def->settings[i];
		const char *v = kv_get(&s->vars, cs->name);
		/* unset (no default, not in gitlab.rb) is no value */
		bool unset = v == NULL || (v[0] == '\0' && w->val[i] == NULL);
		if (!unset && cs->nvalues > 0 && !one_of(v, cs->values, cs->nvalues)) {
			struct buf all;
			buf_init(&all);
			buf_addf(&all, "is not one of ");
			for (size_t k = 0; k < cs->nvalues; k++)
				buf_addf(&all, "%s'%s'", k ? ", " : "", cs->values[k]);
			if (cs->refuse_because)
				buf_addf(&all, ": %s", cs->refuse_because);
			refuse_value(b, w, i, v, buf_str(&all));
			buf_free(&all);
			continue;
		}
		for (size_t k = 0; v != NULL && k < cs->nrefuse; k++) {
			char *bad = svc_expand(s, cs->refuse[k]);
			bool hit = bad != NULL && strcmp(bad, v) == 0;
			free(bad);
			if (!hit)
				continue;
			struct buf why;
			buf_init(&why);
			buf_addf(&why, "is refused: %s",
			         cs->refuse_because ? cs->refuse_because
			                            : "the catalog forbids it");
			refuse_value(b, w, i, v, buf_str(&why));
			buf_free(&why);
			break;
		}
	}
}

/*
 * A service with TLS settings: tls_enabled = true (gitlab_exporter), or any of its TLS files
 * where it has no tls_enabled (redis_exporter, etcd), needs tls_cert_path and tls_key_path, as
 * Omnibus' validate_tls_config says, refused at that setting's line rather than left to a
 * server that cannot start (or, with a client CA alone, to one that serves plain HTTP).
 */
static void check_tls(struct build *b, const struct assign_svc *w, const struct svc *s)
{
	const struct cat_service *def = w->def;
	const char *const *files = svc_tls_keys(s);
	bool has_switch = cat_setting_find(def, "tls_enabled") != NULL;
	const char *on = has_switch && svc_tls(s) ? "tls_enabled" : NULL;
	for (size_t k = 0; !has_switch && on == NULL && k < 3; k++) {
		const char *v = kv_get(&s->vars, files[k]);
		if (v != NULL && v[0] != '\0')
			on = files[k];
	}
	for (size_t i = 0; on != NULL && i < def->nsettings; i++) {
		if (strcmp(def->settings[i].name, on) != 0)
			continue;
		for (size_t k = 0; k < 2; k++) {
			const char *v = kv_get(&s->vars, files[k]);
			if (v == NULL || v[0] == '\0')
				diag_at(b->d, DIAG_ERR,
				        w->val[i] != NULL ? w->vloc[i]
				                          : cat_loc(def, def->settings[i].line),
				        "%s['%s']%s needs %s['%s'] (the PEM file the server reads)",
				        def->config_name, on,
				        strcmp(on, "tls_enabled") == 0 ? " = true" : "",
				        def->config_name, files[k]);
		}
	}
}

static void data_add(struct svc *out, const char *name, struct yval *v, struct loc loc)
{
	grow(&out->data, &out->data_cap, out->ndata + 1, sizeof *out->data, 4);
	out->data[out->ndata++] = (struct svc_data){xstrdup(name), v, loc};
}

/* A yaml setting's catalog default: its strings, placeholders expanded. */
static struct yval *data_default(const struct cat_setting *cs, const struct svc *out)
{
	struct yval *v = yval_seq();
	for (size_t i = 0; i < cs->ndefs; i++) {
		char *s = svc_expand(out, cs->defs[i].value);
		if (s != NULL)
			yval_push(v, yval_scalar(YV_STR, s));
		free(s);
	}
	return v;
}

static void compute_data(const struct assign_svc *w, struct svc *out)
{
	for (size_t i = 0; i < w->def->nsettings; i++) {
		const struct cat_setting *cs = &w->def->settings[i];
		if (cs->type != ST_YAML)
			continue;
		if (w->data[i] != NULL)
			data_add(out, cs->name, yval_dup(w->data[i]), w->vloc[i]);
		else if (cs->ndefs > 0)
			data_add(out, cs->name, data_default(cs, out), (struct loc){0});
	}
}

/*
 * Prometheus refuses a scrape timeout above the scrape interval, and its own rule for a timeout
 * left unset is the smaller of the default and the interval: a service with both int settings
 * (prometheus) follows that rule where gitlab.rb sets only scrape_interval.
 */
static void cap_scrape_timeout(struct comp *c)
{
	const struct cat_setting *t = cat_setting_find(c->def, "scrape_timeout"),
	                         *i = cat_setting_find(c->def, "scrape_interval");
	if (t == NULL || i == NULL || t->type != ST_INT || i->type != ST_INT ||
	    c->w->val[t - c->def->settings] != NULL)
		return;
	struct var *tv = var_find(c, t->name, strlen(t->name)),
	           *iv = var_find(c, i->name, strlen(i->name));
	if (tv == NULL || iv == NULL || iv->expand)
		return;
	const char *e1 = NULL, *e2 = NULL;
	long long tn = strtonum(tv->raw, 1, LLONG_MAX, &e1),
	          in = strtonum(iv->raw, 1, LLONG_MAX, &e2);
	if (e1 != NULL || e2 != NULL || in >= tn)
		return;
	free(tv->raw);
	tv->raw = xstrdup(iv->raw);
	tv->expand = false;
	tv->from = iv->from;
}

/*
 * Omnibus' Alertmanager global: GitLab's SMTP settings (railsmtp.h) under the keys the
 * service's own global sets, for a service that mails admin_email. Its var follows (for
 * {{#if global}}); NULL when gitlab_rails enables no SMTP.
 */
static struct yval *rails_global(struct comp *c)
{
	const struct cat_setting *g = cat_setting_find(c->def, "global");
	if (g == NULL || g->type != ST_YAML || cat_setting_find(c->def, "admin_email") == NULL)
		return NULL;
	const struct yval *own = c->w->data[g - c->def->settings];
	struct var *v = var_find(c, g->name, strlen(g->name));
	if (v == NULL || (own != NULL && own->kind != YV_MAP)) /* amtool judges an odd value */
		return NULL;
	struct yval *m = railsmtp_global(c->b->f);
	if (m == NULL)
		return NULL;
	for (size_t i = 0; own != NULL && i < own->n; i++)
		yval_put(m, own->keys[i], yval_dup(own->items[i]));
	free(v->raw);
	v->raw = data_summary(m);
	return m;
}

/* Replace (or add) the data of a yaml setting. */
static void data_set(struct svc *out, const char *name, struct yval *v, struct loc loc)
{
	for (size_t i = 0; i < out->ndata; i++)
		if (strcmp(out->data[i].name, name) == 0) {
			yval_free(out->data[i].v);
			out->data[i].v = v;
			return;
		}
	data_add(out, name, v, loc);
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
	}
}

/*
 * How Prometheus reaches s, by Omnibus' names (monitoring/libraries/prometheus.rb):
 * prometheus_scrape_scheme, unset: https exactly when tls_enabled; with https a
 * tls_config naming prometheus_scrape_tls_server_name (else the listen address) and
 * prometheus_scrape_tls_skip_verification, trusting tls_cert_path, the certificate the
 * service serves (Omnibus leaves that to the system's CAs), and presenting
 * prometheus_scrape_tls_cert_path/_key_path where the service asks for a client certificate.
 */
static void scrape_tls(struct yval *job, const struct svc *s)
{
	const char *scheme = svc_var(s, "prometheus_scrape_scheme");
	if (scheme == NULL || scheme[0] == '\0')
		scheme = svc_tls(s) ? "https" : "http";
	if (strcmp(scheme, "https") != 0) /* the catalog allows http and https only */
		return;
	yval_put(job, "scheme", yval_scalar(YV_STR, "https"));
	struct yval *tls = yval_map();
	const char *name = svc_var(s, "prometheus_scrape_tls_server_name");
	if (name == NULL || name[0] == '\0')
		name = s->listen_host;
	if (name != NULL && name[0] != '\0')
		yval_put(tls, "server_name", yval_scalar(YV_STR, name));
	const char *ca = svc_var(s, "tls_cert_path");
	if (ca != NULL && ca[0] != '\0')
		yval_put(tls, "ca_file", yval_scalar(YV_STR, ca));
	/* The certificate Prometheus presents where the service asks for one (redis_exporter). */
	static const char *const client[][2] = {{"prometheus_scrape_tls_cert_path", "cert_file"},
	                                        {"prometheus_scrape_tls_key_path", "key_file"}};
	for (size_t i = 0; i < 2; i++) {
		const char *f = svc_var(s, client[i][0]);
		if (f != NULL && f[0] != '\0')
			yval_put(tls, client[i][1], yval_scalar(YV_STR, f));
	}
	const char *skip = svc_var(s, "prometheus_scrape_tls_skip_verification");
	yval_put(
	    tls, "insecure_skip_verify",
	    yval_scalar(YV_BOOL, skip != NULL && strcmp(skip, "true") == 0 ? "true" : "false"));
	yval_put(job, "tls_config", tls);
}

/*
 * One scrape job of ours: job_name, metrics_path, the service's own address, and its
 * web_username/web_password as basic_auth when it has one (yaml.c redacts it in --diff).
 */
static struct yval *scrape_job(const struct cat_scrape *j, const struct svc *s)
{
	struct yval *job = yval_map(), *sc = yval_seq(), *st = yval_map(), *tg = yval_seq();
	yval_put(job, "job_name", yval_scalar(YV_STR, j->job));
	yval_put(job, "metrics_path", yval_scalar(YV_STR, j->path));
	scrape_tls(job, s);
	const char *pw = svc_var(s, "web_password"), *user = svc_var(s, "web_username");
	if (pw != NULL && pw[0] != '\0') {
		struct yval *ba = yval_map();
		yval_put(ba, "username", yval_scalar(YV_STR, user ? user : ""));
		yval_put(ba, "password", yval_scalar(YV_STR, pw));
		yval_put(job, "basic_auth", ba);
	}
	yval_push(tg, yval_scalar(YV_STR, svc_var(s, "scrape_target")));
	yval_put(st, "targets", tg);
	yval_push(sc, st);
	yval_put(job, "static_configs", sc);
	return job;
}

struct job_ref {
	const struct cat_scrape *j;
	const struct svc *s;
};

static int job_ref_cmp(const void *a, const void *b)
{
	const struct job_ref *x = a, *y = b;
	if (x->j->order != y->j->order)
		return x->j->order < y->j->order ? -1 : 1;
	return strcmp(x->j->job, y->j->job);
}

/* The index in jobs of the job named name, or jobs->n. */
static size_t job_index(const struct yval *jobs, const char *name)
{
	size_t i = 0;
	for (; i < jobs->n; i++) {
		const struct yval *n = yval_get(jobs->items[i], "job_name");
		if (n != NULL && n->kind == YV_STR && strcmp(n->text, name) == 0)
			break;
	}
	return i;
}

/* The user's jobs after ours; one named like ours takes its place, with a warning. */
static void merge_user_jobs(struct build *b, const struct svc *s, struct yval *jobs,
                            const struct svc_data *user, size_t nours)
{
	const char *cn = s->def->config_name;
	if (user->v->kind != YV_SEQ) {
		diag_at(b->d, DIAG_ERR, user->loc, "%s['%s'] must be an array of scrape jobs", cn,
		        user->name);
		return;
	}
	for (size_t i = 0; i < user->v->n; i++) {
		const struct yval *u = user->v->items[i];
		const struct yval *name = yval_get(u, "job_name");
		struct loc at = {user->loc.src, u->line, u->col};
		if (name == NULL || name->kind != YV_STR) {
			diag_at(b->d, DIAG_ERR, at,
			        "each job of %s['%s'] needs a string 'job_name'", cn, user->name);
			continue;
		}
		size_t k = job_index(jobs, name->text);
		if (k < nours) {
			diag_at(b->d, DIAG_WARN, at,
			        "scrape job '%s' of %s['%s'] replaces gitlab-ctl's own job of that "
			        "name",
			        name->text, cn, user->name);
			yval_free(jobs->items[k]);
			jobs->items[k] = yval_dup(u);
		} else {
			yval_push(jobs, yval_dup(u));
		}
	}
}

/* scrape_jobs of a service with scrape_collect (see attrs.h). */
static void collect_scrape(struct build *b, struct svc *out)
{
	struct job_ref *refs = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < b->out->nsvcs; i++) {
		const struct svc *s = &b->out->svcs[i];
		const char *target = svc_var(s, "scrape_target");
		if (!s->enabled || target == NULL)
			continue;
		grow(&refs, &cap, n + s->def->nscrape + 1, sizeof *refs, 8);
		for (size_t j = 0; j < s->def->nscrape; j++) {
			const char *needs = s->def->scrape[j].needs, *when = s->def->scrape[j].when;
			const struct svc *o = needs ? attrs_svc(b->out, needs) : NULL;
			const char *on = when ? svc_var(s, when) : NULL;
			if ((needs == NULL || (o != NULL && o->enabled)) &&
			    (when == NULL || (on != NULL && strcmp(on, "true") == 0)))
				refs[n++] = (struct job_ref){&s->def->scrape[j], s};
		}
	}
	if (n > 0)
		qsort(refs, n, sizeof *refs, job_ref_cmp);
	struct yval *jobs = yval_seq();
	for (size_t i = 0; i < n; i++)
		yval_push(jobs, scrape_job(refs[i].j, refs[i].s));
	free(refs);
	const struct yval *user = svc_data(out, out->def->scrape_collect);
	for (size_t i = 0; user != NULL && i < out->ndata; i++)
		if (out->data[i].v == user)
			merge_user_jobs(b, out, jobs, &out->data[i], n);
	data_add(out, "scrape_jobs", jobs, (struct loc){0});
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

/* The groups of the enabled services s needs that share theirs (see attrs.h). */
static void compute_groups(const struct attrs *a, bool root, struct svc *s)
{
	struct buf b;
	buf_init(&b);
	for (size_t i = 0; root && s->def != NULL && i < s->def->nafter; i++) {
		const struct svc *o = attrs_svc(a, s->def->after[i]);
		if (o == NULL || !o->enabled || !o->def->share_group || o->group == NULL ||
		    (s->group != NULL && strcmp(o->group, s->group) == 0))
			continue;
		if (b.len > 0)
			buf_addc(&b, ',');
		buf_adds(&b, o->group);
	}
	s->groups = buf_take(&b);
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

const struct svc *attrs_svc(const struct attrs *a, const char *name)
{
	for (size_t i = 0; i < a->nsvcs; i++)
		if (strcmp(a->svcs[i].def->name, name) == 0 ||
		    strcmp(a->svcs[i].def->config_name, name) == 0)
			return &a->svcs[i];
	return NULL;
}

const char *svc_var(const struct svc *s, const char *name)
{
	return kv_get(&s->vars, name);
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
	for (size_t i = 0; i < a->nsvcs; i++) {
		const struct cat_service *o = a->svcs[i].def;
		size_t n = (size_t)(dot - name);
		if ((strlen(o->name) == n && strncmp(o->name, name, n) == 0) ||
		    (strlen(o->config_name) == n && strncmp(o->config_name, name, n) == 0))
			return svc_var(&a->svcs[i], dot + 1);
	}
	return NULL;
}

struct actx {
	const struct attrs *a;
	const struct svc *s;
};

static const char *attrs_lookup(void *ctx, const char *name, size_t len, int line)
{
	const struct actx *x = ctx;
	char key[256];
	(void)line;
	if (!ph_key(name, len, key, sizeof key))
		return NULL;
	const char *v = attrs_var(x->a, x->s, key);
	if (v == NULL)
		errno = EINVAL;
	return v;
}

enum secrecy attrs_var_secret(const struct attrs *a, const struct svc *s, const char *name)
{
	const char *dot = strchr(name, '.');
	if (dot == NULL)
		return svc_var_secret(s, name);
	for (size_t i = 0; i < a->nsvcs; i++) {
		const struct cat_service *o = a->svcs[i].def;
		size_t n = (size_t)(dot - name);
		if ((strlen(o->name) == n && strncmp(o->name, name, n) == 0) ||
		    (strlen(o->config_name) == n && strncmp(o->config_name, name, n) == 0))
			return svc_var_secret(&a->svcs[i], dot + 1);
	}
	return SECRET_NONE;
}

char *attrs_expand(const struct attrs *a, const struct svc *s, const char *tmpl)
{
	struct actx x = {a, s};
	return ph_expand(tmpl, attrs_lookup, &x, 0);
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
