/* Where gitlab.rb set each setting, for show-config and for refusals. */
#include <stdlib.h>
#include <string.h>

#include "config/assign.h"
#include "config/attrs.h"
#include "config/attrs_int.h"
#include "lib/alloc.h"

/* "file:line", with col "file:line:col". */
static char *loc_text(struct loc l, bool col)
{
	const char *f = l.src && l.src->name ? l.src->name : "gitlab.rb";
	return col ? xasprintf("%s:%d:%d", f, l.line, l.col) : xasprintf("%s:%d", f, l.line);
}

/* What gitlab.rb set, for show-config: setting -> "file:line", "env:NAME" -> "file:line". */
void compute_origin(const struct assign_svc *w, struct svc *out)
{
	const struct cat_service *def = w->def;
	size_t cap = def->nsettings + 1;
	for (size_t i = 0; i < def->nsettings; i++)
		cap += w->hash[i].n;
	struct kv *v = xcalloc(cap, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < def->nsettings; i++) {
		const struct assign_hash *h = &w->hash[i];
		if (w->val[i] != NULL || (def->settings[i].type == ST_YAML && w->data[i] != NULL))
			v[n++] = (struct kv){xstrdup(def->settings[i].name),
			                     loc_text(w->vloc[i], false)};
		else if (def->settings[i].type == ST_FLAGS && h->n > 0)
			v[n++] = (struct kv){xstrdup(def->settings[i].name),
			                     loc_text(h->v[h->n - 1].loc, false)};
		for (size_t j = 0; def->settings[i].type == ST_ENV && j < h->n; j++)
			if (h->v[j].val != NULL && kv_get(&out->env, h->v[j].key) != NULL &&
			    strcmp(kv_get(&out->env, h->v[j].key), h->v[j].val) == 0)
				v[n++] = (struct kv){xasprintf("env:%s", h->v[j].key),
				                     loc_text(h->v[j].loc, false)};
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
void compute_where(const struct assign_svc *w, struct svc *out)
{
	const struct cat_service *def = w->def;
	struct kv *v = xcalloc(def->nsettings + 1, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < def->nsettings; i++) {
		if (w->val[i] != NULL || w->data[i] != NULL)
			v[n++] =
			    (struct kv){xstrdup(def->settings[i].name), loc_text(w->vloc[i], true)};
	}
	qsort(v, n, sizeof *v, kv_cmp);
	out->where.v = v;
	out->where.n = n;
}

/*
 * Where roles([...]) names the role that enabled the service, when that is what enabled it
 * (not its enable): a default refused by a format (sentinel['bind']'s 0.0.0.0 without a
 * password) is reported there, the line the operator wrote.
 */
char *compute_role_where(const struct assigns *as, const struct assign_svc *w)
{
	const struct cat_service *def = w->def;
	const struct cat_setting *en = cat_setting_find(def, "enable");
	if (!as->roles_set || en == NULL || w->val[en - def->settings] != NULL)
		return NULL;
	for (size_t j = 0; j < as->nroles; j++)
		for (size_t i = 0; i < def->nroles; i++)
			if (strcmp(def->roles[i], as->roles[j]) == 0)
				return loc_text(as->role_locs[j], true);
	return NULL;
}
