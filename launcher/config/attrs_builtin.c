/* The placeholders attrs provides itself (attrs.h): account, dirs, generated secrets, listen. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_config.h"
#include "config/assign.h"
#include "config/attrs.h"
#include "config/attrs_int.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/connhost.h"
#include "lib/genpass.h"

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

bool is_builtin(const char *name)
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

const char *const builtin_dirs[] = {GITLAB_CTL_INSTALL_DIR, GITLAB_CTL_DATA_DIR,
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
	     genpass_get(var, "monitoring-web-password", !c->b->ctl->read_only, c->b->genpw,
	                 sizeof c->b->genpw) == -1)) {
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
		    genpass_get(var, name, !c->b->ctl->read_only, pw, sizeof pw) == -1) {
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

void add_builtins(struct comp *c, struct svc *out)
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

/* Where a scraper on this node reaches a listener: a wildcard host means this host. */
static char *scrape_target(const char *host, long long port)
{
	size_t len = strlen(host) + 9; /* "[", "]:", five digits, NUL */
	char *t = xmalloc(len);
	(void)target_host_port(t, len, host, (int)port); /* fits: see connhost.h */
	return t;
}

/* listen_host / listen_port from an address setting or listen_address + a port setting. */
void add_listen(struct comp *c, struct svc *out)
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

/* The groups of the enabled services s needs that share theirs (see attrs.h). */
void compute_groups(const struct attrs *a, bool root, struct svc *s)
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
