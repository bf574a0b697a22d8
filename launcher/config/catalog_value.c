/* Value readers shared by the catalog's key loaders: types, names, placeholders, arrays. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/catalog.h"
#include "config/catalog_int.h"
#include "config/placeholder.h"
#include "lib/alloc.h"
#include "lib/names.h"

void ld_err(struct ld *l, const config_setting_t *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	int line = at ? (int)config_setting_source_line(at) : 0;
	diag_file(l->d, DIAG_ERR, l->file, line, "%s", msg);
	free(msg);
	l->errs++;
}

static const char *type_word(int t)
{
	switch (t) {
	case CONFIG_TYPE_GROUP:
		return "group";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "integer";
	case CONFIG_TYPE_FLOAT:
		return "float";
	case CONFIG_TYPE_STRING:
		return "string";
	case CONFIG_TYPE_BOOL:
		return "boolean";
	case CONFIG_TYPE_ARRAY:
		return "array";
	case CONFIG_TYPE_LIST:
		return "list";
	default:
		return "value";
	}
}

/* A string value, or NULL with an error recorded. */
const char *ld_string(struct ld *l, const config_setting_t *st, const char *what)
{
	if (config_setting_type(st) != CONFIG_TYPE_STRING) {
		ld_err(l, st, "%s must be a string, not %s", what,
		       type_word(config_setting_type(st)));
		return NULL;
	}
	return config_setting_get_string(st);
}

int ld_bool(struct ld *l, const config_setting_t *st, const char *what, bool *out)
{
	if (config_setting_type(st) != CONFIG_TYPE_BOOL) {
		ld_err(l, st, "%s must be true or false, not %s", what,
		       type_word(config_setting_type(st)));
		return -1;
	}
	*out = config_setting_get_bool(st) != 0;
	return 0;
}

/* Scalars as text: catalog authors may write 9168, true or "9168". */
char *ld_scalar(struct ld *l, const config_setting_t *st, const char *what)
{
	char buf[64];
	switch (config_setting_type(st)) {
	case CONFIG_TYPE_STRING:
		return xstrdup(config_setting_get_string(st));
	case CONFIG_TYPE_INT:
		snprintf(buf, sizeof buf, "%d", config_setting_get_int(st));
		return xstrdup(buf);
	case CONFIG_TYPE_INT64:
		snprintf(buf, sizeof buf, "%lld", config_setting_get_int64(st));
		return xstrdup(buf);
	case CONFIG_TYPE_FLOAT:
		snprintf(buf, sizeof buf, "%.17g", config_setting_get_float(st));
		return xstrdup(buf);
	case CONFIG_TYPE_BOOL:
		return xstrdup(config_setting_get_bool(st) ? "true" : "false");
	default:
		ld_err(l, st, "%s must be a string, number or boolean, not %s", what,
		       type_word(config_setting_type(st)));
		return NULL;
	}
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/*
 * "{{" must close with "}}" around a placeholder name, or service.setting for
 * another service's setting; attrs checks that the name exists.
 */
int ld_placeholders(struct ld *l, const config_setting_t *st, const char *s)
{
	for (const char *p = strstr(s, "{{"); p; p = strstr(p, "{{")) {
		const char *q = p + 2;
		const char *close = strstr(q, "}}");
		q += close ? ph_filter_len(q, (size_t)(close - q)) : 0;
		while (name_char(*q))
			q++;
		if (*q == '.' && q > p + 2 && name_char(q[1]))
			for (q++; name_char(*q);)
				q++;
		if (!name_char(q[-1]) || q[0] != '}' || q[1] != '}') {
			ld_err(
			    l, st,
			    "malformed placeholder in \"%s\": write {{name}} or {{service.name}}",
			    s);
			return -1;
		}
		p = q + 2;
	}
	return 0;
}

bool ld_name_ok(const char *s, bool dash_dot)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      (dash_dot && (*s == '-' || *s == '.'))))
			return false;
	return true;
}

/* NAME = value entries of env / base_env. */
int ld_env(struct ld *l, const config_setting_t *st, struct cat_kv **out, size_t *nout)
{
	const char *what = config_setting_name(st);
	if (config_setting_type(st) != CONFIG_TYPE_GROUP) {
		ld_err(l, st, "%s must be a group { NAME = \"value\"; }", what);
		return -1;
	}
	int n = config_setting_length(st);
	*out = xcalloc((size_t)n + 1, sizeof **out);
	for (int i = 0; i < n; i++) {
		const config_setting_t *m = config_setting_get_elem(st, (unsigned)i);
		const char *name = config_setting_name(m);
		if (!name_env_ok(name)) {
			ld_err(l, m, "'%s' is not a valid environment variable name", name);
			return -1;
		}
		char *v = ld_scalar(l, m, "an env value");
		if (v == NULL)
			return -1;
		struct cat_kv *kv = &(*out)[(*nout)++];
		kv->name = xstrdup(name);
		kv->value = v;
		kv->line = (int)config_setting_source_line(m);
		if (ld_placeholders(l, m, v) == -1)
			return -1;
	}
	return 0;
}

/* An array of strings with placeholders (command, check_command, a step's command). */
int ld_argv(struct ld *l, const config_setting_t *st, const char *what, char ***out, size_t *nout)
{
	int t = config_setting_type(st);
	if ((t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) || config_setting_length(st) < 1) {
		ld_err(l, st, "%s must be a non-empty array of strings", what);
		return -1;
	}
	int n = config_setting_length(st);
	*out = xcalloc((size_t)n + 1, sizeof **out);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(st, (unsigned)i);
		const char *v = ld_string(l, e, what);
		if (v == NULL)
			return -1;
		(*out)[(*nout)++] = xstrdup(v);
		if (ld_placeholders(l, e, v) == -1)
			return -1;
	}
	return 0;
}

/* A gitlab.rb name: a role, a switch, a setting. */
int ld_gitlab_name(struct ld *l, const config_setting_t *st, const char *what, char **out)
{
	const char *v = ld_string(l, st, what);
	if (v == NULL)
		return -1;
	if (!ld_name_ok(v, false) || !(v[0] >= 'a' && v[0] <= 'z')) {
		ld_err(l, st, "%s '%s' must match [a-z][a-z0-9_]*", what, v);
		return -1;
	}
	*out = xstrdup(v);
	return 0;
}

/* A free-text string key kept as it is. */
int ld_text(struct ld *l, const config_setting_t *m, char **out)
{
	const char *v = ld_string(l, m, config_setting_name(m));
	if (v == NULL)
		return -1;
	*out = xstrdup(v);
	return 0;
}
