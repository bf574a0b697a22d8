/* The variables of a service's templates (see svvars.h). */
#include <stdbool.h>
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
	case 'c':
		return is(name, "config", c->ctl->config, v);
	case 'd':
		return is(name, "datadir", c->ctl->datadir, v);
	case 'e':
		return is(name, "env_directory", s->env_dir, v);
	case 'g':
		return is(name, "gitlab_ctl", c->ctl->self, v) || is(name, "group", s->group, v);
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

struct tpl_vars svvars_init(struct svvars *v, const struct ctl *ctl, const struct attrs *a,
                            const struct svc *s)
{
	memset(v, 0, sizeof *v);
	v->ctl = ctl;
	v->a = a;
	v->svc = s;
	if (s->listen_port > 0)
		snprintf(v->port, sizeof v->port, "%d", s->listen_port);
	return (struct tpl_vars){rget, rlist, v, rsecret, NULL};
}
