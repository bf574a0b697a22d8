/* Block YAML from a plain data tree (see yaml.h). */
#include <stdbool.h>
#include <string.h>

#include "render/yaml.h"
#include "config/secret.h"
#include "lib/grow.h"
#include "render/template.h"

static void spaces(struct buf *b, int n)
{
	for (int i = 0; i < n; i++)
		buf_addc(b, ' ');
}

/* Words a YAML 1.1 reader (Prometheus' and Alertmanager's) takes for non-strings. */
static bool reserved(const char *s)
{
	static const char *const w[] = {"y",   "yes",  "n",    "no",   "true",  "false", "on",
	                                "off", "null", "~",    "Y",    "Yes",   "YES",   "N",
	                                "No",  "NO",   "True", "TRUE", "False", "FALSE", "On",
	                                "ON",  "Off",  "OFF",  "Null", "NULL"};
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
		if (strcmp(s, w[i]) == 0)
			return true;
	return false;
}

/* A key that reads back as the same string when written plain. */
static bool plain_key(const char *s)
{
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
			return false;
	return !reserved(s);
}

static void key(struct buf *b, const char *k)
{
	if (plain_key(k))
		buf_adds(b, k);
	else
		tpl_yaml_quote(b, k);
	buf_addc(b, ':');
}

static void scalar(struct buf *b, const struct yval *v)
{
	switch (v->kind) {
	case YV_STR:
		tpl_yaml_quote(b, v->text);
		break;
	case YV_NULL:
		buf_adds(b, "null");
		break;
	case YV_SEQ:
		buf_adds(b, "[]");
		break;
	case YV_MAP:
		buf_adds(b, "{}");
		break;
	default: /* numbers and booleans as written */
		buf_adds(b, v->text);
	}
}

/* One emission: the buffer, the output line being written, and where lines come from. */
struct emit {
	struct buf *b;
	struct yaml_srcmap *map;
	struct tpl_spans *secrets;
	int line;
};

/*
 * A key whose value is a credential: one that names it (secret.h: password,
 * basic_auth, authorization, bearer_token, client_secret, api_key, ...) or
 * holds one (credentials, of an authorization block).
 */
static bool secret_key(const char *k)
{
	return text_names_secret(k, strlen(k)) || strcasestr(k, "credential") != NULL;
}

/* A URL with userinfo (scheme://user:pass@host...): its whole text is a secret. */
static bool url_with_userinfo(const char *s)
{
	const char *p = strstr(s, "://");
	if (p == NULL)
		return false;
	p += 3;
	size_t auth = strcspn(p, "/?#");
	return memchr(p, '@', auth) != NULL;
}

static void mark(struct emit *e, size_t from)
{
	struct tpl_spans *sp = e->secrets;
	if (sp == NULL || e->b->len <= from)
		return;
	sp->may = true;
	grow(&sp->v, &sp->cap, sp->n + 1, sizeof *sp->v, 8);
	sp->v[sp->n++] = (struct tpl_span){from, e->b->len - from};
}

static void record(struct emit *e, int out, int src)
{
	if (e->map == NULL)
		return;
	grow(&e->map->v, &e->map->cap, e->map->n + 1, sizeof *e->map->v, 16);
	e->map->v[e->map->n++] = (struct yaml_src){out, src};
}

static void newline(struct emit *e, int indent, const struct yval *from)
{
	buf_addc(e->b, '\n');
	spaces(e->b, indent);
	e->line++;
	if (from != NULL)
		record(e, e->line, from->line);
}

static void item(struct emit *e, const struct yval *v, int indent);

static void value(struct emit *e, const struct yval *v, int indent);

/* key: value, the value marked secret when the key names a credential. */
static void entry(struct emit *e, const char *k, const struct yval *v, int indent)
{
	key(e->b, k);
	/* a scalar's span starts after the separator: "password: [REDACTED]" */
	size_t from = e->b->len + (yval_empty(v) || (v->kind != YV_SEQ && v->kind != YV_MAP));
	size_t inner = e->secrets ? e->secrets->n : 0;
	value(e, v, indent);
	if (secret_key(k)) {
		if (e->secrets != NULL)
			e->secrets->n = inner; /* one span for the whole value */
		mark(e, from);
	}
}

static void value(struct emit *e, const struct yval *v, int indent)
{
	if (yval_empty(v) || (v->kind != YV_SEQ && v->kind != YV_MAP)) {
		buf_addc(e->b, ' ');
		size_t from = e->b->len;
		scalar(e->b, v);
		if (v->kind == YV_STR && url_with_userinfo(v->text))
			mark(e, from);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		newline(e, indent + 2, v->items[i]);
		if (v->kind == YV_MAP) {
			entry(e, v->keys[i], v->items[i], indent + 2);
		} else {
			buf_addc(e->b, '-');
			item(e, v->items[i], indent + 2);
		}
	}
}

/* A list item after its '-' at column indent: a hash's first key shares that line. */
static void item(struct emit *e, const struct yval *v, int indent)
{
	if (v->kind != YV_MAP || v->n == 0) {
		value(e, v, indent);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		if (i == 0)
			buf_addc(e->b, ' ');
		else
			newline(e, indent + 2, v->items[i]);
		entry(e, v->keys[i], v->items[i], indent + 2);
	}
}

static struct emit start(struct buf *b, struct yaml_srcmap *map, struct tpl_spans *secrets)
{
	struct emit e = {b, map, secrets, 1};
	for (size_t i = 0; i < b->len; i++)
		e.line += b->p[i] == '\n';
	return e;
}

void yaml_emit_value(struct buf *b, const struct yval *v, int indent, struct yaml_srcmap *map,
                     struct tpl_spans *secrets)
{
	struct emit e = start(b, map, secrets);
	record(&e, e.line, v->line);
	value(&e, v, indent);
	record(&e, e.line + 1, 0); /* the template's own lines follow */
}

void yaml_emit_items(struct buf *b, const struct yval *v, int indent, struct yaml_srcmap *map,
                     struct tpl_spans *secrets)
{
	struct emit e = start(b, map, secrets);
	record(&e, e.line, v->kind == YV_SEQ && v->n > 0 ? v->items[0]->line : v->line);
	if (v->kind != YV_SEQ) {
		buf_addc(b, '-');
		item(&e, v, indent);
	}
	for (size_t i = 0; v->kind == YV_SEQ && i < v->n; i++) {
		if (i > 0)
			newline(&e, indent, v->items[i]);
		buf_addc(b, '-');
		item(&e, v->items[i], indent);
	}
	record(&e, e.line + 1, 0);
}

int yaml_srcmap_find(const struct yaml_srcmap *map, int line)
{
	int src = 0; /* entries ascend: the last at or above the line holds */
	for (size_t i = 0; map != NULL && i < map->n && map->v[i].out <= line; i++)
		src = map->v[i].src;
	return src;
}
