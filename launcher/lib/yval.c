/* Plain data trees for YAML files (see yval.h). */
#include <stdlib.h>
#include <string.h>

#include "lib/yval.h"
#include "lib/alloc.h"
#include "lib/grow.h"

static struct yval *node(enum yval_kind kind)
{
	struct yval *v = xcalloc(1, sizeof *v);
	v->kind = kind;
	return v;
}

struct yval *yval_null(void)
{
	return node(YV_NULL);
}

struct yval *yval_scalar(enum yval_kind kind, const char *text)
{
	struct yval *v = node(kind);
	v->text = xstrdup(text);
	return v;
}

struct yval *yval_seq(void)
{
	return node(YV_SEQ);
}

struct yval *yval_map(void)
{
	return node(YV_MAP);
}

void yval_push(struct yval *seq, struct yval *v)
{
	grow(&seq->items, &seq->cap, seq->n + 1, sizeof *seq->items, 4);
	seq->items[seq->n++] = v;
}

void yval_put(struct yval *map, const char *key, struct yval *v)
{
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->keys[i], key) == 0) {
			yval_free(map->items[i]);
			map->items[i] = v;
			return;
		}
	grow(&map->items, &map->cap, map->n + 1, sizeof *map->items, 4);
	grow(&map->keys, &map->kcap, map->n + 1, sizeof *map->keys, 4);
	map->keys[map->n] = xstrdup(key);
	map->items[map->n++] = v;
}

const struct yval *yval_get(const struct yval *m, const char *key)
{
	if (m == NULL || m->kind != YV_MAP)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->keys[i], key) == 0)
			return m->items[i];
	return NULL;
}

struct yval *yval_dup(const struct yval *v)
{
	struct yval *c = node(v->kind);
	c->text = v->text ? xstrdup(v->text) : NULL;
	c->line = v->line;
	c->col = v->col;
	for (size_t i = 0; i < v->n; i++) {
		if (v->kind == YV_MAP)
			yval_put(c, v->keys[i], yval_dup(v->items[i]));
		else
			yval_push(c, yval_dup(v->items[i]));
	}
	return c;
}

void yval_free(struct yval *v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < v->n; i++) {
		yval_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->text);
	free(v);
}

bool yval_empty(const struct yval *v)
{
	return v == NULL || v->kind == YV_NULL ||
	       ((v->kind == YV_SEQ || v->kind == YV_MAP) && v->n == 0);
}
