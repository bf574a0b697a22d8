/* A service's env: the catalog's, with gitlab.rb's env settings merged over it; its base env. */
#include <stdlib.h>
#include <string.h>

#include "config/assign.h"
#include "config/attrs.h"
#include "config/attrs_int.h"
#include "lib/alloc.h"

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

/* An env being built: names, values and where each came from, in parallel. */
struct envb {
	struct kv *v;
	struct loc *locs;
	enum secrecy *sec; /* built from a secret setting (catalog values only) */
	size_t n;
};

static const char *env_key(const void *list, size_t i)
{
	return ((const struct kv *)list)[i].name;
}

/* One gitlab.rb env entry over what is there (assign_hash_merge). */
static void env_merge(struct envb *e, const struct assign_ent *ent)
{
	size_t j;
	switch (assign_hash_merge(ent, e->v, e->n, env_key, &j)) {
	case HASH_NOOP:
		return;
	case HASH_ADD:
		e->v[e->n++].name = xstrdup(ent->key);
		break;
	case HASH_REPLACE:
		free(e->v[j].value);
		break;
	case HASH_REMOVE:
		free(e->v[j].name);
		free(e->v[j].value);
		e->n--;
		e->v[j] = e->v[e->n];
		e->locs[j] = e->locs[e->n];
		e->sec[j] = e->sec[e->n];
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
		for (size_t j = i; j > 0 && kv_cmp(&e->v[j - 1], &e->v[j]) > 0; j--) {
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
void compute_env(struct comp *c, struct svc *out)
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

void compute_base_env(struct comp *c, struct svc *out)
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
