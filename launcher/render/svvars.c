/* The variables of a service's templates (see svvars.h). */
#include <stdio.h>
#include <string.h>

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

static const char *rget(void *arg, const char *name)
{
	const struct svvars *c = arg;
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
	if (strcmp(name, "stop_signal") == 0)
		return s->def->stop_signal ? s->def->stop_signal : "TERM";
	if (strcmp(name, "datadir") == 0)
		return c->ctl->datadir;
	if (strcmp(name, "config") == 0)
		return c->ctl->config;
	return cross_var(c, name);
}

static char *const *rlist(void *arg, const char *name)
{
	const struct svvars *c = arg;
	return strcmp(name, "argv") == 0 ? c->svc->argv : NULL;
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
	return (struct tpl_vars){rget, rlist, v};
}
