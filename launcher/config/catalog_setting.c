/* A service's settings list: name, type, default (checked for its type), secret, refuse. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config/catalog.h"
#include "config/catalog_int.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/names.h"

static const char *const stype_names[] = {
    [ST_BOOL] = "bool", [ST_INT] = "int",         [ST_STRING] = "string", [ST_PATH] = "path",
    [ST_PORT] = "port", [ST_ADDRESS] = "address", [ST_ENV] = "env",       [ST_FLAGS] = "flags",
    [ST_YAML] = "yaml", [ST_SCALAR] = "scalar",
};

const char *stype_name(enum stype t)
{
	if ((size_t)t < sizeof stype_names / sizeof stype_names[0])
		return stype_names[t];
	return "?";
}

static int parse_stype(const char *s, enum stype *out)
{
	for (size_t i = 0; i < sizeof stype_names / sizeof stype_names[0]; i++)
		if (strcmp(s, stype_names[i]) == 0) {
			*out = (enum stype)i;
			return 0;
		}
	return -1;
}

/* username / group: the account a service runs as instead of user['username'] / ['group']. */
static bool is_account_setting(const char *name)
{
	return strcmp(name, "username") == 0 || strcmp(name, "group") == 0;
}

/* "{{name}}" and nothing else. */
static bool is_one_placeholder(const char *v)
{
	size_t len = strlen(v);
	return len > 4 && strncmp(v, "{{", 2) == 0 && strcmp(v + len - 2, "}}") == 0 &&
	       strstr(v + 2, "{{") == NULL && strstr(v + 2, "}}") == v + len - 2;
}

/* A default must be valid for its type so that a bad catalog fails at load. */
static int check_default(struct ld *l, const config_setting_t *st, const struct cat_setting *cs)
{
	const char *v = cs->def;
	const char *errstr = NULL;
	switch (cs->type) {
	case ST_BOOL:
		/* or one placeholder: an exporter is on where its backend is ({{redis.enable}}) */
		if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0 && !is_one_placeholder(v))
			errstr = "true or false (or one {{placeholder}})";
		break;
	case ST_INT:
		strtonum(v, LLONG_MIN, LLONG_MAX, &errstr);
		if (errstr)
			errstr = "an integer";
		break;
	case ST_PORT:
		strtonum(v, 1, 65535, &errstr);
		if (errstr)
			errstr = "a port (1..65535)";
		break;
	case ST_PATH:
		if (v[0] != '/' && strncmp(v, "{{", 2) != 0)
			errstr = "an absolute path";
		break;
	case ST_ADDRESS:
		if (strrchr(v, ':') == NULL)
			errstr = "host:port";
		break;
	default:
		break;
	}
	/* The service's own account: the names useradd accepts (checked before any useradd). */
	if (errstr == NULL && is_account_setting(cs->name) && strstr(v, "{{") == NULL &&
	    !name_account_ok(v))
		errstr = "a user or group name (letters, digits, '_', '-', '.'; at most 32)";
	if (errstr) {
		ld_err(l, st, "default of setting '%s' (%s) must be %s, not \"%s\"", cs->name,
		       stype_name(cs->type), errstr, v);
		return -1;
	}
	return ld_placeholders(l, st, v);
}

/* "key=value" strings of a flags default. */
static int load_flag_defaults(struct ld *l, const config_setting_t *st, struct cat_setting *cs)
{
	if (config_setting_type(st) != CONFIG_TYPE_ARRAY &&
	    config_setting_type(st) != CONFIG_TYPE_LIST) {
		ld_err(l, st,
		       "default of flags setting '%s' must be an array of \"key=value\" strings",
		       cs->name);
		return -1;
	}
	int n = config_setting_length(st);
	cs->defs = xcalloc((size_t)n + 1, sizeof *cs->defs);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(st, (unsigned)i);
		const char *s = ld_string(l, e, "a flags default");
		if (s == NULL)
			return -1;
		const char *eq = strchr(s, '=');
		if (eq == s || *s == '\0') {
			ld_err(l, e, "flags default \"%s\" must be \"key=value\" or \"key\"", s);
			return -1;
		}
		struct cat_kv *kv = &cs->defs[cs->ndefs++];
		/* "key" alone: true, --key in any style; "!key": false, kingpin's --no-key */
		bool off = eq == NULL && s[0] == '!' && s[1] != '\0';
		kv->is_true = eq == NULL;
		kv->keep_empty = eq != NULL && eq[1] == '\0'; /* "key=": --key= in any style */
		kv->name = eq ? xstrndup(s, (size_t)(eq - s)) : xstrdup(s + off);
		kv->value = xstrdup(eq ? eq + 1 : off ? "false" : "true");
		kv->line = (int)config_setting_source_line(e);
		if (ld_placeholders(l, e, kv->value) == -1)
			return -1;
	}
	return 0;
}

/* A yaml setting's default: an array of strings (with placeholders), kept in defs. */
static int load_yaml_default(struct ld *l, const config_setting_t *st, struct cat_setting *cs)
{
	if (config_setting_type(st) != CONFIG_TYPE_ARRAY &&
	    config_setting_type(st) != CONFIG_TYPE_LIST) {
		ld_err(l, st, "default of yaml setting '%s' must be an array of strings", cs->name);
		return -1;
	}
	int n = config_setting_length(st);
	cs->defs = xcalloc((size_t)n + 1, sizeof *cs->defs);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(st, (unsigned)i);
		const char *s = ld_string(l, e, "a yaml default");
		if (s == NULL)
			return -1;
		struct cat_kv *kv = &cs->defs[cs->ndefs++];
		kv->name = xstrdup("");
		kv->value = xstrdup(s);
		kv->line = (int)config_setting_source_line(e);
		if (ld_placeholders(l, e, kv->value) == -1)
			return -1;
	}
	return 0;
}

/* A setting being read: its default waits for its type. */
struct sld {
	struct cat_setting *cs;
	const config_setting_t *defst;
	bool have_type;
};

static int set_name(struct ld *l, const config_setting_t *m, struct sld *x)
{
	const char *s = ld_string(l, m, "setting name");
	if (s == NULL)
		return -1;
	if (!ld_name_ok(s, false) || !(s[0] >= 'a' && s[0] <= 'z')) {
		ld_err(l, m, "setting name '%s' must match [a-z][a-z0-9_]*", s);
		return -1;
	}
	x->cs->name = xstrdup(s);
	return 0;
}

static int set_type(struct ld *l, const config_setting_t *m, struct sld *x)
{
	const char *s = ld_string(l, m, "setting type");
	if (s == NULL)
		return -1;
	if (parse_stype(s, &x->cs->type) == -1) {
		ld_err(l, m,
		       "unknown setting type '%s' (bool, int, string, path, port, address, env, "
		       "flags, yaml)",
		       s);
		return -1;
	}
	x->have_type = true;
	return 0;
}

static int set_default(struct ld *l, const config_setting_t *m, struct sld *x)
{
	(void)l;
	x->defst = m;
	return 0;
}

static int set_secret(struct ld *l, const config_setting_t *m, struct sld *x)
{
	return ld_bool(l, m, "secret", &x->cs->secret);
}

static int set_host(struct ld *l, const config_setting_t *m, struct sld *x)
{
	return ld_bool(l, m, "host", &x->cs->host);
}

static int set_data(struct ld *l, const config_setting_t *m, struct sld *x)
{
	return ld_bool(l, m, "data", &x->cs->data);
}

static int set_refuse(struct ld *l, const config_setting_t *m, struct sld *x)
{
	return ld_argv(l, m, "refuse", &x->cs->refuse, &x->cs->nrefuse);
}

static int set_refuse_because(struct ld *l, const config_setting_t *m, struct sld *x)
{
	return ld_text(l, m, &x->cs->refuse_because);
}

static int set_values(struct ld *l, const config_setting_t *m, struct sld *x)
{
	return ld_argv(l, m, "values", &x->cs->values, &x->cs->nvalues);
}

static int set_gitlab_key(struct ld *l, const config_setting_t *m, struct sld *x)
{
	return ld_gitlab_name(l, m, "gitlab_key", &x->cs->gitlab_key);
}

static int set_required_by(struct ld *l, const config_setting_t *m, struct sld *x)
{
	return ld_argv(l, m, "required_by", &x->cs->required_by, &x->cs->nrequired_by);
}

static int set_gitlab_rails(struct ld *l, const config_setting_t *m, struct sld *x)
{
	return ld_text(l, m, &x->cs->gitlab_rails);
}

/* Every key a setting may have: the one list, the unknown-key message included. */
static const struct {
	const char *key;
	int (*load)(struct ld *l, const config_setting_t *m, struct sld *x);
} setting_keys[] = {
    {"name", set_name},
    {"type", set_type},
    {"default", set_default},
    {"secret", set_secret},
    {"host", set_host},
    {"data", set_data},
    {"refuse", set_refuse},
    {"refuse_because", set_refuse_because},
    {"values", set_values},
    {"required_by", set_required_by},
    {"gitlab_key", set_gitlab_key},
    {"gitlab_rails", set_gitlab_rails},
};

static int load_setting_key(struct ld *l, const config_setting_t *m, struct sld *x)
{
	const char *key = config_setting_name(m);
	size_t n = sizeof setting_keys / sizeof setting_keys[0];
	for (size_t i = 0; i < n; i++)
		if (strcmp(key, setting_keys[i].key) == 0)
			return setting_keys[i].load(l, m, x);
	struct buf known;
	buf_init(&known);
	for (size_t i = 0; i < n; i++)
		buf_addf(&known, "%s%s", i ? ", " : "", setting_keys[i].key);
	ld_err(l, m, "unknown key '%s' in a setting (%s)", key, buf_str(&known));
	buf_free(&known);
	return -1;
}

static int load_setting(struct ld *l, const config_setting_t *g, struct cat_setting *cs)
{
	struct sld x = {.cs = cs};
	cs->line = (int)config_setting_source_line(g);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
		ld_err(l, g, "each entry of settings must be a group { name = ...; type = ...; }");
		return -1;
	}
	for (int i = 0; i < config_setting_length(g); i++)
		if (load_setting_key(l, config_setting_get_elem(g, (unsigned)i), &x) == -1)
			return -1;
	const config_setting_t *defst = x.defst;
	if (cs->name == NULL || !x.have_type) {
		ld_err(l, g, "a setting needs a name and a type");
		return -1;
	}
	if ((cs->host || cs->data) && cs->type != ST_PATH) {
		ld_err(l, g, "%s = true is for path settings only ('%s')",
		       cs->host ? "host" : "data", cs->name);
		return -1;
	}
	if (defst == NULL)
		return 0;
	if (cs->type == ST_FLAGS)
		return load_flag_defaults(l, defst, cs);
	if (cs->type == ST_YAML)
		return load_yaml_default(l, defst, cs);
	if (cs->type == ST_ENV) {
		ld_err(l, defst, "env setting '%s' takes its defaults from the top-level env group",
		       cs->name);
		return -1;
	}
	cs->def = ld_scalar(l, defst, "a default");
	if (cs->def == NULL)
		return -1;
	return check_default(l, defst, cs);
}

int ld_settings(struct ld *l, const config_setting_t *st)
{
	if (config_setting_type(st) != CONFIG_TYPE_LIST) {
		ld_err(l, st, "settings must be a list ( { ... }, { ... } )");
		return -1;
	}
	struct cat_service *s = l->s;
	int n = config_setting_length(st);
	s->settings = xcalloc((size_t)n + 1, sizeof *s->settings);
	for (int i = 0; i < n; i++) {
		const config_setting_t *g = config_setting_get_elem(st, (unsigned)i);
		struct cat_setting *cs = &s->settings[s->nsettings++];
		if (load_setting(l, g, cs) == -1)
			return -1;
		for (size_t j = 0; j + 1 < s->nsettings; j++)
			if (strcmp(s->settings[j].name, cs->name) == 0) {
				ld_err(l, g, "setting '%s' is declared twice", cs->name);
				return -1;
			}
	}
	return 0;
}
