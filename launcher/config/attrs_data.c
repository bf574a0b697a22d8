/* yaml settings: what gitlab.rb set, the catalog's defaults, Alertmanager's SMTP global. */
#include <stdlib.h>
#include <string.h>

#include "config/assign.h"
#include "config/attrs.h"
#include "config/attrs_int.h"
#include "config/railsmtp.h"
#include "lib/alloc.h"
#include "lib/grow.h"

/* A yaml setting's var: "" when unset or empty (for {{#if}}), else a summary for show-config. */
char *data_summary(const struct yval *v)
{
	if (yval_empty(v))
		return xstrdup("");
	if (v->kind == YV_SEQ)
		return xasprintf("(array of %zu)", v->n);
	if (v->kind == YV_MAP)
		return xasprintf("(hash of %zu)", v->n);
	return xstrdup(v->text);
}

void data_add(struct svc *out, const char *name, struct yval *v, struct loc loc)
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

void compute_data(const struct assign_svc *w, struct svc *out)
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
 * Omnibus' Alertmanager global: GitLab's SMTP settings (railsmtp.h) under the keys the
 * service's own global sets, for a service that mails admin_email. Its var follows (for
 * {{#if global}}); NULL when gitlab_rails enables no SMTP.
 */
struct yval *rails_global(struct comp *c)
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
void data_set(struct svc *out, const char *name, struct yval *v, struct loc loc)
{
	for (size_t i = 0; i < out->ndata; i++)
		if (strcmp(out->data[i].name, name) == 0) {
			yval_free(out->data[i].v);
			out->data[i].v = v;
			return;
		}
	data_add(out, name, v, loc);
}
