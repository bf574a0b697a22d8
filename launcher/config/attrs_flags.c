/* Flags settings: defaults merged with gitlab.rb, as one var and as the argv elements. */
#include <stdlib.h>
#include <string.h>

#include "config/assign.h"
#include "config/attrs.h"
#include "config/attrs_int.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/grow.h"

static int flag_cmp(const void *a, const void *b)
{
	return strcmp(((const struct flag *)a)->name, ((const struct flag *)b)->name);
}

void flags_free(struct flags *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].value);
	}
	free(l->v);
}

static const char *flag_key(const void *list, size_t i)
{
	return ((const struct flag *)list)[i].name;
}

/* Defaults of flags settings, expanded, with the user's entries merged over them. */
struct flags merged_hash(struct comp *c, size_t si)
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
		size_t j;
		switch (assign_hash_merge(e, l.v, l.n, flag_key, &j)) {
		case HASH_NOOP:
			break;
		case HASH_ADD:
			l.v[l.n++] =
			    (struct flag){xstrdup(e->key), xstrdup(e->val), e->is_bool, false};
			break;
		case HASH_REPLACE:
			free(l.v[j].value);
			l.v[j].value = xstrdup(e->val);
			l.v[j].is_bool = e->is_bool;
			/* '' over a catalog "key=" is that empty value (Alertmanager's
			 * cluster.listen-address: clustering off), not the flag dropped */
			l.v[j].keep_empty = l.v[j].keep_empty && e->val[0] == '\0';
			break;
		case HASH_REMOVE:
			free(l.v[j].name);
			free(l.v[j].value);
			l.v[j] = l.v[--l.n];
			break;
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
char *flags_text(enum flags_style style, const struct flags *l)
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

void compute_argv(struct comp *c, struct svc *out)
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
