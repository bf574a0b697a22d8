/* The variables of a service's templates (see svvars.h). */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "render/svvars.h"

/*
 * {{svc.name}} reads another service's setting; a bool reads "" for false so
 * that {{#if postgresql.enable}} keeps a block only for an enabled service.
 */
static const char *cross_var(const struct svvars *c, const char *name)
{
	const char *v = attrs_var(c->a, c->svc, name), *dot = strchr(name, '.');
	if (v == NULL || dot == NULL)
		return v;
	const struct svc *o = NULL;
	char svc[128];
	if ((size_t)(dot - name) < sizeof svc) {
		memcpy(svc, name, (size_t)(dot - name));
		svc[dot - name] = '\0';
		o = attrs_svc(c->a, svc);
	}
	const struct cat_setting *cs = o ? cat_setting_find(o->def, dot + 1) : NULL;
	if (cs != NULL && cs->type == ST_BOOL && strcmp(v, "false") == 0)
		return "";
	return v;
}

static bool is(const char *name, const char *want, const char *val, const char **v)
{
	if (strcmp(name, want) != 0)
		return false;
	*v = val;
	return true;
}

/* A built-in name: true with its value (which may be NULL) in *v. */
static bool builtin(const struct svvars *c, const char *name, const char **v)
{
	const struct svc *s = c->svc;
	/* The first letter picks the candidate: a chain of strcmp cost more than rendering. */
	switch (name[0]) {
	case 'a': /* argv.ELEM: "1" when the command has that element, for a block's condition */
		if (strncmp(name, "argv.", 5) != 0)
			return false;
		*v = "";
		for (char *const *e = s->argv; e != NULL && *e != NULL; e++)
			if (strcmp(*e, name + 5) == 0)
				*v = "1";
		return true;
	case 'c':
		return is(name, "config", c->ctl->config, v);
	case 'd':
		return is(name, "datadir", c->ctl->datadir, v);
	case 'e':
		return is(name, "env_directory", s->env_dir, v);
	case 'g':
		return is(name, "gitlab_ctl", c->ctl->self, v) || is(name, "group", s->group, v) ||
		       is(name, "groups", s->groups ? s->groups : "", v);
	case 'h':
		return is(name, "home", s->home, v);
	case 'l':
		return is(name, "log_directory", s->log_dir, v) ||
		       is(name, "listen_host", s->listen_host ? s->listen_host : "", v) ||
		       is(name, "listen_port", c->port, v);
	case 'r':
		return is(name, "root", c->ctl->root, v);
	case 's':
		return is(name, "service", s->def->name, v) ||
		       is(name, "stop_signal", s->def->stop_signal ? s->def->stop_signal : "TERM",
		          v);
	case 'u':
		return is(name, "user", s->user, v);
	default:
		return false;
	}
}

static const char *rget(void *arg, const char *name)
{
	const struct svvars *c = arg;
	const char *v;
	return builtin(c, name, &v) ? v : cross_var(c, name);
}

static char *const *rlist(void *arg, const char *name)
{
	const struct svvars *c = arg;
	return strcmp(name, "argv") == 0 ? c->svc->argv : NULL;
}

/* How secret a value is (template.h): a setting built from a secret, or an argv element. */
static int rsecret(void *arg, const char *name, size_t elem)
{
	const struct svvars *c = arg;
	const struct svc *s = c->svc;
	if (strcmp(name, "argv") != 0)
		return (int)attrs_var_secret(c->a, s, name);
	if (s->argv_secret == NULL)
		return 0;
	if (elem != (size_t)-1)
		return elem < s->argc ? s->argv_secret[elem] : 0;
	int most = 0; /* the list as a whole */
	for (size_t i = 0; i < s->argc; i++)
		most = s->argv_secret[i] > most ? s->argv_secret[i] : most;
	return most;
}

/* "file:line:col" read from the right (a file name may hold ':'). */
static bool parse_where(const char *w, struct tpl_origin *o)
{
	const char *c2 = strrchr(w, ':'), *c1 = c2;
	while (c1 != NULL && c1 > w && c1[-1] != ':')
		c1--;
	if (c2 == NULL || c1 == NULL || c1 == w || (size_t)(c1 - 1 - w) >= sizeof o->file)
		return false;
	char num[32];
	const char *e1 = NULL, *e2 = NULL;
	if ((size_t)(c2 - c1) >= sizeof num)
		return false;
	memcpy(num, c1, (size_t)(c2 - c1));
	num[c2 - c1] = '\0';
	o->line = (int)strtonum(num, 1, INT_MAX, &e1);
	o->col = (int)strtonum(c2 + 1, 0, INT_MAX, &e2);
	memcpy(o->file, w, (size_t)(c1 - 1 - w));
	o->file[c1 - 1 - w] = '\0';
	return e1 == NULL && e2 == NULL;
}

/* Where gitlab.rb set a setting of this service, or of another as {{svc.name}}. */
static bool rorigin(void *arg, const char *name, struct tpl_origin *o)
{
	const struct svvars *c = arg;
	const struct svc *s = c->svc;
	const char *dot = strchr(name, '.');
	if (dot != NULL) {
		char svc[128];
		if ((size_t)(dot - name) >= sizeof svc)
			return false;
		memcpy(svc, name, (size_t)(dot - name));
		svc[dot - name] = '\0';
		s = attrs_svc(c->a, svc);
		name = dot + 1;
	}
	const char *w = s ? kv_get(&s->where, name) : NULL;
	if (w != NULL && parse_where(w, o)) {
		snprintf(o->label, sizeof o->label, "%s['%s']", s->def->config_name, name);
		return true;
	}
	/* a default of a service a role enabled: at that role */
	if (s == NULL || s->role_where == NULL || cat_setting_find(s->def, name) == NULL ||
	    !parse_where(s->role_where, o))
		return false;
	snprintf(o->label, sizeof o->label, "%s['%s'] (its default; the role enables %s)",
	         s->def->config_name, name, s->def->name);
	return true;
}

static int rget_data(void *arg, const char *name, const struct yval **v);

/* {{yamlv name}}: a yaml setting (svc.name: another service's) or scrape_jobs; an unset
 * setting writes null. */
static int rdata(void *arg, const char *name, bool items, struct buf *out, int indent,
                 struct tpl_spans *secrets)
{
	const struct svvars *c = arg;
	const struct cat_setting *cs = cat_setting_find(c->svc->def, name);
	const struct yval *v = NULL;
	if (strchr(name, '.') != NULL) {
		if (rget_data(arg, name, &v) == -1)
			return -1;
	} else if ((v = svc_data(c->svc, name)) == NULL && (cs == NULL || cs->type != ST_YAML) &&
	           !(strcmp(name, "scrape_jobs") == 0 && c->svc->def->scrape_collect)) {
		return -1;
	}
	struct yval null = {.kind = YV_NULL};
	if (items)
		yaml_emit_items(out, v ? v : &null, indent, c->map, secrets);
	else
		yaml_emit_value(out, v ? v : &null, indent, c->map, secrets);
	return 0;
}

/* A data filter's value: a yaml setting (svc.setting: another service's), NULL while unset. */
static int rget_data(void *arg, const char *name, const struct yval **v)
{
	const struct svvars *c = arg;
	const struct svc *s = c->svc;
	const char *dot = strchr(name, '.');
	if (dot != NULL) {
		char svc_name[64];
		if ((size_t)(dot - name) >= sizeof svc_name)
			return -1;
		memcpy(svc_name, name, (size_t)(dot - name));
		svc_name[dot - name] = '\0';
		if ((s = attrs_svc(c->a, svc_name)) == NULL)
			return -1;
		name = dot + 1;
	}
	const struct cat_setting *cs = cat_setting_find(s->def, name);
	if (cs == NULL || cs->type != ST_YAML)
		return -1;
	*v = svc_data(s, name);
	return 0;
}

struct tpl_vars svvars_init(struct svvars *v, const struct ctl *ctl, const struct attrs *a,
                            const struct svc *s)
{
	memset(v, 0, sizeof *v);
	v->ctl = ctl;
	v->a = a;
	v->svc = s;
	if (s->listen_port > 0)
		snprintf(v->port, sizeof v->port, "%d", s->listen_port);
	return (struct tpl_vars){.get = rget,
	                         .get_list = rlist,
	                         .arg = v,
	                         .origin = rorigin,
	                         .put_data = rdata,
	                         .get_data = rget_data,
	                         .secret = rsecret};
}
