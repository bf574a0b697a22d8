/* Block YAML from a plain data tree (see yaml.h). */
#include <string.h>

#include "render/yaml.h"
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

static void item(struct buf *b, const struct yval *v, int indent);

void yaml_emit_value(struct buf *b, const struct yval *v, int indent)
{
	if (yval_empty(v) || (v->kind != YV_SEQ && v->kind != YV_MAP)) {
		buf_addc(b, ' ');
		scalar(b, v);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		buf_addc(b, '\n');
		spaces(b, indent + 2);
		if (v->kind == YV_MAP) {
			key(b, v->keys[i]);
			yaml_emit_value(b, v->items[i], indent + 2);
		} else {
			buf_addc(b, '-');
			item(b, v->items[i], indent + 2);
		}
	}
}

/* A list item after its '-' at column indent: a hash's first key shares that line. */
static void item(struct buf *b, const struct yval *v, int indent)
{
	if (v->kind != YV_MAP || v->n == 0) {
		yaml_emit_value(b, v, indent);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		if (i == 0) {
			buf_addc(b, ' ');
		} else {
			buf_addc(b, '\n');
			spaces(b, indent + 2);
		}
		key(b, v->keys[i]);
		yaml_emit_value(b, v->items[i], indent + 2);
	}
}

void yaml_emit_items(struct buf *b, const struct yval *v, int indent)
{
	if (v->kind != YV_SEQ) {
		buf_addc(b, '-');
		item(b, v, indent);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		if (i > 0) {
			buf_addc(b, '\n');
			spaces(b, indent);
		}
		buf_addc(b, '-');
		item(b, v->items[i], indent);
	}
}
