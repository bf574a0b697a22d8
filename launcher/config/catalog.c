/*
 * The service catalog: one libconfig file per service in <datadir>/sv/.
 * The format is documented at the top of sv/gitlab-exporter.conf. Loading is
 * strict (unknown keys and wrong types are errors with file and line) because
 * a typo in a catalog file would otherwise silently drop a default.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libconfig.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/catalog.h"
#include "config/placeholder.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/grow.h"
#include "lib/names.h"
#include "lib/readfile.h"

static const char *const stype_names[] = {
    [ST_BOOL] = "bool", [ST_INT] = "int",     [ST_STRING] = "string",
    [ST_PATH] = "path", [ST_PORT] = "port",   [ST_ADDRESS] = "address",
    [ST_ENV] = "env",   [ST_FLAGS] = "flags", [ST_YAML] = "yaml",
};

const char *stype_name(enum stype t)
{
	if ((size_t)t < sizeof stype_names / sizeof stype_names[0])
		return stype_names[t];
	return "?";
}

/* Settings every service has: the tree layout and enable switch rely on them. */
static const struct {
	const char *name;
	enum stype type;
} required_settings[] = {
    {"enable", ST_BOOL},
    {"home", ST_PATH},
    {"log_directory", ST_PATH},
    {"env_directory", ST_PATH},
};

/* State of loading one file. */
struct ld {
	const char *file;
	struct diags *d;
	struct cat_service *s;
	int errs;
};

static void lerr(struct ld *l, const config_setting_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void lerr(struct ld *l, const config_setting_t *at, const char *fmt, ...)
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
static const char *get_string(struct ld *l, const config_setting_t *st, const char *what)
{
	if (config_setting_type(st) != CONFIG_TYPE_STRING) {
		lerr(l, st, "%s must be a string, not %s", what,
		     type_word(config_setting_type(st)));
		return NULL;
	}
	return config_setting_get_string(st);
}

static int get_bool(struct ld *l, const config_setting_t *st, const char *what, bool *out)
{
	if (config_setting_type(st) != CONFIG_TYPE_BOOL) {
		lerr(l, st, "%s must be true or false, not %s", what,
		     type_word(config_setting_type(st)));
		return -1;
	}
	*out = config_setting_get_bool(st) != 0;
	return 0;
}

/* Scalars as text: catalog authors may write 9168, true or "9168". */
static char *scalar_text(struct ld *l, const config_setting_t *st, const char *what)
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
		lerr(l, st, "%s must be a string, number or boolean, not %s", what,
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
static int check_placeholders(struct ld *l, const config_setting_t *st, const char *s)
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
			lerr(l, st,
			     "malformed placeholder in \"%s\": write {{name}} or {{service.name}}",
			     s);
			return -1;
		}
		p = q + 2;
	}
	return 0;
}

static int load_argv(struct ld *l, const config_setting_t *st, const char *what, char ***out,
                     size_t *nout);

static bool valid_name(const char *s, bool dash_dot)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      (dash_dot && (*s == '-' || *s == '.'))))
			return false;
	return true;
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
		lerr(l, st, "default of setting '%s' (%s) must be %s, not \"%s\"", cs->name,
		     stype_name(cs->type), errstr, v);
		return -1;
	}
	return check_placeholders(l, st, v);
}

/* "key=value" strings of a flags default. */
static int load_flag_defaults(struct ld *l, const config_setting_t *st, struct cat_setting *cs)
{
	if (config_setting_type(st) != CONFIG_TYPE_ARRAY &&
	    config_setting_type(st) != CONFIG_TYPE_LIST) {
		lerr(l, st,
		     "default of flags setting '%s' must be an array of \"key=value\" strings",
		     cs->name);
		return -1;
	}
	int n = config_setting_length(st);
	cs->defs = xcalloc((size_t)n + 1, sizeof *cs->defs);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(st, (unsigned)i);
		const char *s = get_string(l, e, "a flags default");
		if (s == NULL)
			return -1;
		const char *eq = strchr(s, '=');
		if (eq == s || *s == '\0') {
			lerr(l, e, "flags default \"%s\" must be \"key=value\" or \"key\"", s);
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
		if (check_placeholders(l, e, kv->value) == -1)
			return -1;
	}
	return 0;
}

/* A yaml setting's default: an array of strings (with placeholders), kept in defs. */
static int load_yaml_default(struct ld *l, const config_setting_t *st, struct cat_setting *cs)
{
	if (config_setting_type(st) != CONFIG_TYPE_ARRAY &&
	    config_setting_type(st) != CONFIG_TYPE_LIST) {
		lerr(l, st, "default of yaml setting '%s' must be an array of strings", cs->name);
		return -1;
	}
	int n = config_setting_length(st);
	cs->defs = xcalloc((size_t)n + 1, sizeof *cs->defs);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(st, (unsigned)i);
		const char *s = get_string(l, e, "a yaml default");
		if (s == NULL)
			return -1;
		struct cat_kv *kv = &cs->defs[cs->ndefs++];
		kv->name = xstrdup("");
		kv->value = xstrdup(s);
		kv->line = (int)config_setting_source_line(e);
		if (check_placeholders(l, e, kv->value) == -1)
			return -1;
	}
	return 0;
}

static int load_setting(struct ld *l, const config_setting_t *g, struct cat_setting *cs)
{
	cs->line = (int)config_setting_source_line(g);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
		lerr(l, g, "each entry of settings must be a group { name = ...; type = ...; }");
		return -1;
	}
	const config_setting_t *defst = NULL;
	bool have_type = false;
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		const char *key = config_setting_name(m);
		if (strcmp(key, "name") == 0) {
			const char *s = get_string(l, m, "setting name");
			if (s == NULL)
				return -1;
			if (!valid_name(s, false) || !(s[0] >= 'a' && s[0] <= 'z')) {
				lerr(l, m, "setting name '%s' must match [a-z][a-z0-9_]*", s);
				return -1;
			}
			cs->name = xstrdup(s);
		} else if (strcmp(key, "type") == 0) {
			const char *s = get_string(l, m, "setting type");
			if (s == NULL)
				return -1;
			if (parse_stype(s, &cs->type) == -1) {
				lerr(l, m,
				     "unknown setting type '%s' (bool, int, string, path, port, "
				     "address, env, flags, yaml)",
				     s);
				return -1;
			}
			have_type = true;
		} else if (strcmp(key, "default") == 0) {
			defst = m;
		} else if (strcmp(key, "secret") == 0) {
			if (config_setting_type(m) != CONFIG_TYPE_BOOL) {
				lerr(l, m, "secret must be true or false");
				return -1;
			}
			cs->secret = config_setting_get_bool(m) != 0;
		} else if (strcmp(key, "host") == 0) {
			if (config_setting_type(m) != CONFIG_TYPE_BOOL) {
				lerr(l, m, "host must be true or false");
				return -1;
			}
			cs->host = config_setting_get_bool(m) != 0;
		} else if (strcmp(key, "refuse") == 0) {
			if (load_argv(l, m, "refuse", &cs->refuse, &cs->nrefuse) == -1)
				return -1;
		} else if (strcmp(key, "refuse_because") == 0) {
			const char *s = get_string(l, m, "refuse_because");
			if (s == NULL)
				return -1;
			cs->refuse_because = xstrdup(s);
		} else {
			lerr(l, m,
			     "unknown key '%s' in a setting (name, type, default, secret, host, "
			     "refuse, "
			     "refuse_because)",
			     key);
			return -1;
		}
	}
	if (cs->name == NULL || !have_type) {
		lerr(l, g, "a setting needs a name and a type");
		return -1;
	}
	if (cs->host && cs->type != ST_PATH) {
		lerr(l, g, "host = true is for path settings only ('%s')", cs->name);
		return -1;
	}
	if (defst == NULL)
		return 0;
	if (cs->type == ST_FLAGS)
		return load_flag_defaults(l, defst, cs);
	if (cs->type == ST_YAML)
		return load_yaml_default(l, defst, cs);
	if (cs->type == ST_ENV) {
		lerr(l, defst, "env setting '%s' takes its defaults from the top-level env group",
		     cs->name);
		return -1;
	}
	cs->def = scalar_text(l, defst, "a default");
	if (cs->def == NULL)
		return -1;
	return check_default(l, defst, cs);
}

static int load_settings(struct ld *l, const config_setting_t *st)
{
	if (config_setting_type(st) != CONFIG_TYPE_LIST) {
		lerr(l, st, "settings must be a list ( { ... }, { ... } )");
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
				lerr(l, g, "setting '%s' is declared twice", cs->name);
				return -1;
			}
	}
	return 0;
}

/* NAME = value entries of env / base_env. */
static int load_env(struct ld *l, const config_setting_t *st, struct cat_kv **out, size_t *nout)
{
	const char *what = config_setting_name(st);
	if (config_setting_type(st) != CONFIG_TYPE_GROUP) {
		lerr(l, st, "%s must be a group { NAME = \"value\"; }", what);
		return -1;
	}
	int n = config_setting_length(st);
	*out = xcalloc((size_t)n + 1, sizeof **out);
	for (int i = 0; i < n; i++) {
		const config_setting_t *m = config_setting_get_elem(st, (unsigned)i);
		const char *name = config_setting_name(m);
		if (!name_env_ok(name)) {
			lerr(l, m, "'%s' is not a valid environment variable name", name);
			return -1;
		}
		char *v = scalar_text(l, m, "an env value");
		if (v == NULL)
			return -1;
		struct cat_kv *kv = &(*out)[(*nout)++];
		kv->name = xstrdup(name);
		kv->value = v;
		kv->line = (int)config_setting_source_line(m);
		if (check_placeholders(l, m, v) == -1)
			return -1;
	}
	return 0;
}

static int load_argv(struct ld *l, const config_setting_t *st, const char *what, char ***out,
                     size_t *nout);

static int load_template(struct ld *l, const config_setting_t *g, struct cat_template *t)
{
	t->line = (int)config_setting_source_line(g);
	t->mode = 0644;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
		lerr(l, g, "each template must be a group { src = ...; dest = ...; }");
		return -1;
	}
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		const char *key = config_setting_name(m);
		const char *v = NULL;
		if (strcmp(key, "validate") == 0) {
			if (load_argv(l, m, "validate", &t->validate, &t->nvalidate) == -1)
				return -1;
			continue;
		}
		if (strcmp(key, "src") != 0 && strcmp(key, "dest") != 0 &&
		    strcmp(key, "mode") != 0 && strcmp(key, "owner") != 0 &&
		    strcmp(key, "on_change") != 0) {
			lerr(l, m,
			     "unknown key '%s' in a template (src, dest, mode, owner, validate, "
			     "on_change)",
			     key);
			return -1;
		}
		if ((v = get_string(l, m, key)) == NULL)
			return -1;
		if (strcmp(key, "src") == 0) {
			if (v[0] == '\0' || v[0] == '/' || strstr(v, "..") != NULL) {
				lerr(l, m, "template src must be a file name under templates/");
				return -1;
			}
			t->src = xstrdup(v);
		} else if (strcmp(key, "dest") == 0) {
			if (check_placeholders(l, m, v) == -1)
				return -1;
			t->dest = xstrdup(v);
		} else if (strcmp(key, "mode") == 0) {
			char *end;
			errno = 0;
			unsigned long mode = strtoul(v, &end, 8);
			if (errno || *v == '\0' || *end != '\0' || mode > 07777) {
				lerr(l, m, "template mode must be an octal string like \"0600\"");
				return -1;
			}
			t->mode = (mode_t)mode;
		} else if (strcmp(key, "on_change") == 0) {
			if (strcmp(v, "hup") != 0 && strcmp(v, "restart") != 0) {
				lerr(l, m, "on_change must be \"hup\" or \"restart\"");
				return -1;
			}
			t->hup = strcmp(v, "hup") == 0;
		} else if (strcmp(v, "service") == 0 || strcmp(v, "root") == 0 ||
		           strcmp(v, "group") == 0) {
			t->service_owned = strcmp(v, "service") == 0;
			t->group_owned = strcmp(v, "group") == 0;
		} else {
			lerr(l, m, "template owner must be \"service\", \"group\" or \"root\"");
			return -1;
		}
	}
	if (t->dest == NULL) { /* without src: a directory */
		lerr(l, g, "a template needs dest (and src, unless it is a directory)");
		return -1;
	}
	return 0;
}

static int load_templates(struct ld *l, const config_setting_t *st)
{
	if (config_setting_type(st) != CONFIG_TYPE_LIST) {
		lerr(l, st, "templates must be a list ( { ... } )");
		return -1;
	}
	struct cat_service *s = l->s;
	int n = config_setting_length(st);
	s->templates = xcalloc((size_t)n + 1, sizeof *s->templates);
	for (int i = 0; i < n; i++)
		if (load_template(l, config_setting_get_elem(st, (unsigned)i),
		                  &s->templates[s->ntemplates++]) == -1)
			return -1;
	return 0;
}

static int load_check(struct ld *l, const config_setting_t *st)
{
	const char *v = get_string(l, st, "check");
	if (v == NULL)
		return -1;
	l->s->check_line = (int)config_setting_source_line(st);
	if (strcmp(v, "tcp") != 0 && strncmp(v, "http:/", 6) != 0 && strncmp(v, "unix:", 5) != 0) {
		lerr(l, st, "check must be \"http:/PATH\", \"tcp\" or \"unix:PATH\", not \"%s\"",
		     v);
		return -1;
	}
	if (check_placeholders(l, st, v) == -1)
		return -1;
	l->s->check = xstrdup(v);
	return 0;
}

/* An array of strings with placeholders (command, check_command, a step's command). */
static int load_argv(struct ld *l, const config_setting_t *st, const char *what, char ***out,
                     size_t *nout)
{
	int t = config_setting_type(st);
	if ((t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) || config_setting_length(st) < 1) {
		lerr(l, st, "%s must be a non-empty array of strings", what);
		return -1;
	}
	int n = config_setting_length(st);
	*out = xcalloc((size_t)n + 1, sizeof **out);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(st, (unsigned)i);
		const char *v = get_string(l, e, what);
		if (v == NULL)
			return -1;
		(*out)[(*nout)++] = xstrdup(v);
		if (check_placeholders(l, e, v) == -1)
			return -1;
	}
	return 0;
}

static int load_after(struct ld *l, const config_setting_t *st)
{
	struct cat_service *s = l->s;
	int t = config_setting_type(st);
	s->after_line = (int)config_setting_source_line(st);
	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
		lerr(l, st, "after must be an array of service names");
		return -1;
	}
	int n = config_setting_length(st);
	s->after = xcalloc((size_t)n + 1, sizeof *s->after);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(st, (unsigned)i);
		const char *v = get_string(l, e, "an after entry");
		if (v == NULL)
			return -1;
		if (!valid_name(v, true)) {
			lerr(l, e, "after: '%s' is not a service name", v);
			return -1;
		}
		s->after[s->nafter++] = xstrdup(v);
	}
	return 0;
}

/* timeout = seconds: the step's own deadline. */
static int load_step_timeout(struct ld *l, const config_setting_t *m, struct cat_step *st)
{
	if (config_setting_type(m) != CONFIG_TYPE_INT || config_setting_get_int(m) < 1 ||
	    config_setting_get_int(m) > STEP_TIMEOUT_MAX) {
		lerr(l, m, "setup step 'timeout' must be a number of seconds, 1 to %d",
		     STEP_TIMEOUT_MAX);
		return -1;
	}
	st->timeout = config_setting_get_int(m);
	return 0;
}

static int load_step_when(struct ld *l, const config_setting_t *m, const char *v,
                          struct cat_step *st)
{
	if (strcmp(v, "before_start") == 0)
		st->when = STEP_BEFORE_START;
	else if (strcmp(v, "after_ready") == 0)
		st->when = STEP_AFTER_READY;
	else {
		lerr(l, m, "setup step 'when' must be \"before_start\" or \"after_ready\"");
		return -1;
	}
	return 0;
}

static int load_step_key(struct ld *l, const config_setting_t *m, struct cat_step *st)
{
	const char *key = config_setting_name(m), *v;
	if (strcmp(key, "command") == 0)
		return load_argv(l, m, "a setup command", &st->argv, &st->argc);
	if (strcmp(key, "verify") == 0)
		return load_argv(l, m, "a setup verify command", &st->verify, &st->nverify);
	if (strcmp(key, "timeout") == 0)
		return load_step_timeout(l, m, st);
	if (strcmp(key, "staged") == 0)
		return get_bool(l, m, "staged", &st->staged);
	if (strcmp(key, "name") != 0 && strcmp(key, "when") != 0 && strcmp(key, "creates") != 0) {
		lerr(l, m,
		     "unknown key '%s' in a setup step (name, when, creates, staged, command, "
		     "verify, timeout)",
		     key);
		return -1;
	}
	if ((v = get_string(l, m, key)) == NULL)
		return -1;
	if (strcmp(key, "name") == 0) {
		if (!valid_name(v, true)) {
			lerr(l, m, "setup step name '%s' must match [a-z0-9][a-z0-9._-]*", v);
			return -1;
		}
		st->name = xstrdup(v);
	} else if (strcmp(key, "when") == 0) {
		return load_step_when(l, m, v, st);
	} else {
		if (check_placeholders(l, m, v) == -1)
			return -1;
		st->creates = xstrdup(v);
	}
	return 0;
}

/* What only a one-time step can have. */
static int check_step_once(struct ld *l, const config_setting_t *g, const struct cat_step *st)
{
	/* A one-time step is remembered only by what it creates: without it, it would rerun. */
	if (st->when == STEP_BEFORE_START && st->creates == NULL) {
		lerr(l, g, "setup step '%s' (before_start) needs 'creates': the path it makes",
		     st->name);
		return -1;
	}
	if (st->when == STEP_AFTER_READY &&
	    (st->creates != NULL || st->staged || st->verify != NULL)) {
		lerr(l, g,
		     "setup step '%s': 'creates', 'staged' and 'verify' are only for "
		     "before_start steps",
		     st->name);
		return -1;
	}
	bool names_stage = false;
	for (size_t i = 0; i < st->argc; i++)
		names_stage |= strstr(st->argv[i], "{{staging_dir}}") != NULL;
	if (st->staged != names_stage) {
		lerr(l, g, "setup step '%s': %s", st->name,
		     st->staged ? "staged, but its command never names {{staging_dir}}"
		                : "{{staging_dir}} is only for a staged step (staged = true)");
		return -1;
	}
	return 0;
}

static int load_step(struct ld *l, const config_setting_t *g, struct cat_step *st)
{
	bool have_when = false;
	st->line = (int)config_setting_source_line(g);
	st->timeout = STEP_TIMEOUT_DEFAULT;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
		lerr(l, g,
		     "each setup step must be a group { name = ...; when = ...; command = ...; }");
		return -1;
	}
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		have_when |= strcmp(config_setting_name(m), "when") == 0;
		if (load_step_key(l, m, st) == -1)
			return -1;
	}
	if (st->name == NULL || !have_when || st->argv == NULL) {
		lerr(l, g, "a setup step needs name, when and command");
		return -1;
	}
	return check_step_once(l, g, st);
}

static int load_setup(struct ld *l, const config_setting_t *st)
{
	struct cat_service *s = l->s;
	if (config_setting_type(st) != CONFIG_TYPE_LIST) {
		lerr(l, st, "setup must be a list ( { ... } )");
		return -1;
	}
	int n = config_setting_length(st);
	s->setup = xcalloc((size_t)n + 1, sizeof *s->setup);
	for (int i = 0; i < n; i++) {
		const config_setting_t *g = config_setting_get_elem(st, (unsigned)i);
		struct cat_step *step = &s->setup[s->nsetup++];
		if (load_step(l, g, step) == -1)
			return -1;
		for (size_t j = 0; j + 1 < s->nsetup; j++)
			if (strcmp(s->setup[j].name, step->name) == 0) {
				lerr(l, g, "setup step '%s' is declared twice", step->name);
				return -1;
			}
	}
	return 0;
}

/* check_send / check_expect: protocol bytes (placeholders, e.g. {{resp password}}); no NUL. */
static int load_check_str(struct ld *l, const config_setting_t *st, char **out)
{
	const char *v = get_string(l, st, config_setting_name(st));
	if (v == NULL || check_placeholders(l, st, v) == -1)
		return -1;
	if (*v == '\0') {
		lerr(l, st, "%s must not be empty", config_setting_name(st));
		return -1;
	}
	*out = xstrdup(v);
	return 0;
}

/* A signal runsv's control/t sends instead of TERM (PostgreSQL: INT, a fast shutdown). */
static int load_stop_signal(struct ld *l, const config_setting_t *st)
{
	static const char *const ok[] = {"TERM", "INT", "QUIT", "HUP", "USR1", "USR2"};
	const char *v = get_string(l, st, "stop_signal");
	if (v == NULL)
		return -1;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (strcmp(v, ok[i]) == 0) {
			l->s->stop_signal = xstrdup(v);
			return 0;
		}
	lerr(l, st, "stop_signal must be one of TERM, INT, QUIT, HUP, USR1, USR2, not \"%s\"", v);
	return -1;
}

static int load_home_mode(struct ld *l, const config_setting_t *st)
{
	const char *v = get_string(l, st, "home_mode");
	if (v == NULL)
		return -1;
	if (strcmp(v, "0750") != 0 && strcmp(v, "0755") != 0 && strcmp(v, "0700") != 0) {
		lerr(l, st, "home_mode must be \"0700\", \"0750\" or \"0755\", not \"%s\"", v);
		return -1;
	}
	l->s->home_mode = (mode_t)strtol(v, NULL, 8);
	return 0;
}

static int load_scrape_job(struct ld *l, const config_setting_t *g, struct cat_scrape *j)
{
	j->line = (int)config_setting_source_line(g);
	j->order = 100;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
		lerr(l, g,
		     "each scrape job must be a group { job = ...; path = ...; order = ...; }");
		return -1;
	}
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		const char *key = config_setting_name(m), *v;
		if (strcmp(key, "order") == 0) {
			if (config_setting_type(m) != CONFIG_TYPE_INT) {
				lerr(l, m, "a scrape job's order must be an integer");
				return -1;
			}
			j->order = config_setting_get_int(m);
		} else if (strcmp(key, "needs") == 0) {
			if ((v = get_string(l, m, key)) == NULL)
				return -1;
			if (!valid_name(v, true)) {
				lerr(l, m, "needs: '%s' is not a service name", v);
				return -1;
			}
			j->needs = xstrdup(v);
		} else if (strcmp(key, "job") == 0 || strcmp(key, "path") == 0) {
			if ((v = get_string(l, m, key)) == NULL)
				return -1;
			if (strcmp(key, "path") == 0 && v[0] != '/') {
				lerr(l, m, "a scrape job's path must start with '/'");
				return -1;
			}
			*(strcmp(key, "job") == 0 ? &j->job : &j->path) = xstrdup(v);
		} else {
			lerr(l, m, "unknown key '%s' in a scrape job (job, path, order, needs)",
			     key);
			return -1;
		}
	}
	if (j->job == NULL) {
		lerr(l, g, "a scrape job needs a job name");
		return -1;
	}
	if (j->path == NULL)
		j->path = xstrdup("/metrics");
	return 0;
}

static int load_scrape(struct ld *l, const config_setting_t *st)
{
	if (config_setting_type(st) != CONFIG_TYPE_LIST) {
		lerr(l, st, "scrape must be a list ( { job = ...; } )");
		return -1;
	}
	struct cat_service *s = l->s;
	int n = config_setting_length(st);
	s->scrape = xcalloc((size_t)n + 1, sizeof *s->scrape);
	for (int i = 0; i < n; i++)
		if (load_scrape_job(l, config_setting_get_elem(st, (unsigned)i),
		                    &s->scrape[s->nscrape++]) == -1)
			return -1;
	return 0;
}

/* A gitlab.rb name: a role, a switch, a setting. */
static int load_name(struct ld *l, const config_setting_t *st, const char *what, char **out)
{
	const char *v = get_string(l, st, what);
	if (v == NULL)
		return -1;
	if (!valid_name(v, false) || !(v[0] >= 'a' && v[0] <= 'z')) {
		lerr(l, st, "%s '%s' must match [a-z][a-z0-9_]*", what, v);
		return -1;
	}
	*out = xstrdup(v);
	return 0;
}

static int load_roles(struct ld *l, const config_setting_t *st)
{
	struct cat_service *s = l->s;
	int t = config_setting_type(st);
	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
		lerr(l, st, "roles must be an array of role names");
		return -1;
	}
	int n = config_setting_length(st);
	s->roles = xcalloc((size_t)n + 1, sizeof *s->roles);
	for (int i = 0; i < n; i++)
		if (load_name(l, config_setting_get_elem(st, (unsigned)i), "role",
		              &s->roles[s->nroles++]) == -1)
			return -1;
	return 0;
}

static int load_flags_style(struct ld *l, const config_setting_t *st)
{
	const char *v = get_string(l, st, "flags_style");
	if (v == NULL)
		return -1;
	if (strcmp(v, "kingpin") == 0)
		l->s->flags_style = FLAGS_KINGPIN;
	else if (strcmp(v, "plain") == 0)
		l->s->flags_style = FLAGS_PLAIN;
	else {
		lerr(l, st, "flags_style must be \"kingpin\" or \"plain\", not \"%s\"", v);
		return -1;
	}
	return 0;
}

static int load_svc_name(struct ld *l, const config_setting_t *m)
{
	const char *v;
	l->s->line = (int)config_setting_source_line(m);
	if ((v = get_string(l, m, "name")) == NULL)
		return -1;
	if (!valid_name(v, true)) {
		lerr(l, m, "service name '%s' must match [a-z0-9][a-z0-9._-]*", v);
		return -1;
	}
	l->s->name = xstrdup(v);
	return 0;
}

static int load_config_name(struct ld *l, const config_setting_t *m)
{
	const char *v;
	if ((v = get_string(l, m, "config_name")) == NULL)
		return -1;
	if (!valid_name(v, false) || !(v[0] >= 'a' && v[0] <= 'z')) {
		lerr(l, m, "config_name '%s' must match [a-z][a-z0-9_]*", v);
		return -1;
	}
	l->s->config_name = xstrdup(v);
	return 0;
}

/* A free-text string key kept as it is. */
static int load_text(struct ld *l, const config_setting_t *m, char **out)
{
	const char *v = get_string(l, m, config_setting_name(m));
	if (v == NULL)
		return -1;
	*out = xstrdup(v);
	return 0;
}

static int load_description(struct ld *l, const config_setting_t *m)
{
	return load_text(l, m, &l->s->description);
}

static int load_package(struct ld *l, const config_setting_t *m)
{
	return load_text(l, m, &l->s->package);
}

static int load_omnibus_keys(struct ld *l, const config_setting_t *m)
{
	return load_argv(l, m, "omnibus_keys", &l->s->omnibus_keys, &l->s->nomnibus_keys);
}

static int load_enable_default(struct ld *l, const config_setting_t *m)
{
	return get_bool(l, m, "enable_default", &l->s->enable_default);
}

static int load_jemalloc(struct ld *l, const config_setting_t *m)
{
	return get_bool(l, m, "jemalloc", &l->s->jemalloc);
}

static int load_share_group(struct ld *l, const config_setting_t *m)
{
	return get_bool(l, m, "share_group", &l->s->share_group);
}

static int load_env_key(struct ld *l, const config_setting_t *m)
{
	return load_env(l, m, &l->s->env, &l->s->nenv);
}

static int load_base_env(struct ld *l, const config_setting_t *m)
{
	return load_env(l, m, &l->s->base_env, &l->s->nbase_env);
}

static int load_command(struct ld *l, const config_setting_t *m)
{
	l->s->command_line = (int)config_setting_source_line(m);
	return load_argv(l, m, "command", &l->s->command, &l->s->ncommand);
}

static int load_check_send(struct ld *l, const config_setting_t *m)
{
	return load_check_str(l, m, &l->s->check_send);
}

static int load_check_expect(struct ld *l, const config_setting_t *m)
{
	return load_check_str(l, m, &l->s->check_expect);
}

static int load_check_command(struct ld *l, const config_setting_t *m)
{
	if (l->s->check_line == 0)
		l->s->check_line = (int)config_setting_source_line(m);
	return load_argv(l, m, "check_command", &l->s->check_command, &l->s->ncheck_command);
}

static int load_scrape_collect(struct ld *l, const config_setting_t *m)
{
	return load_name(l, m, "scrape_collect", &l->s->scrape_collect);
}

static int load_off_switch(struct ld *l, const config_setting_t *m)
{
	return load_name(l, m, "off_switch", &l->s->off_switch);
}

/* Every key a service entry may have, and what reads it: the one list, messages included. */
static const struct {
	const char *key;
	int (*load)(struct ld *l, const config_setting_t *m);
} service_keys[] = {
    {"name", load_svc_name},
    {"config_name", load_config_name},
    {"description", load_description},
    {"package", load_package},
    {"omnibus_keys", load_omnibus_keys},
    {"enable_default", load_enable_default},
    {"jemalloc", load_jemalloc},
    {"settings", load_settings},
    {"env", load_env_key},
    {"base_env", load_base_env},
    {"command", load_command},
    {"templates", load_templates},
    {"check", load_check},
    {"check_send", load_check_send},
    {"check_expect", load_check_expect},
    {"check_command", load_check_command},
    {"after", load_after},
    {"setup", load_setup},
    {"home_mode", load_home_mode},
    {"stop_signal", load_stop_signal},
    {"share_group", load_share_group},
    {"flags_style", load_flags_style},
    {"scrape", load_scrape},
    {"scrape_collect", load_scrape_collect},
    {"roles", load_roles},
    {"off_switch", load_off_switch},
};

static int load_key(struct ld *l, const config_setting_t *m)
{
	const char *key = config_setting_name(m);
	size_t n = sizeof service_keys / sizeof service_keys[0];
	for (size_t i = 0; i < n; i++)
		if (strcmp(key, service_keys[i].key) == 0)
			return service_keys[i].load(l, m);
	struct buf known;
	buf_init(&known);
	for (size_t i = 0; i < n; i++)
		buf_addf(&known, "%s%s", i ? ", " : "", service_keys[i].key);
	lerr(l, m, "unknown key '%s' (one of: %s)", key, buf_str(&known));
	buf_free(&known);
	return -1;
}

/* Whole-service rules that no single key can check. */
static void check_service(struct ld *l)
{
	struct cat_service *s = l->s;
	if (s->name == NULL || s->config_name == NULL || s->command == NULL) {
		diag_file(l->d, DIAG_ERR, l->file, 0,
		          "a service needs name, config_name and command");
		l->errs++;
		return;
	}
	for (size_t i = 0; i < sizeof required_settings / sizeof required_settings[0]; i++) {
		const struct cat_setting *cs = cat_setting_find(s, required_settings[i].name);
		if (cs == NULL || cs->type != required_settings[i].type || cs->def == NULL) {
			diag_file(l->d, DIAG_ERR, l->file, s->line,
			          "service %s must declare setting '%s' (%s) with a default",
			          s->name, required_settings[i].name,
			          stype_name(required_settings[i].type));
			l->errs++;
		}
	}
	const struct cat_setting *jobs =
	    s->scrape_collect ? cat_setting_find(s, s->scrape_collect) : NULL;
	if (s->scrape_collect != NULL && (jobs == NULL || jobs->type != ST_YAML)) {
		diag_file(l->d, DIAG_ERR, l->file, s->line,
		          "scrape_collect must name a yaml setting of the service");
		l->errs++;
	}
	if ((s->check_send || s->check_expect) &&
	    (s->check == NULL || strncmp(s->check, "http:", 5) == 0)) {
		diag_file(l->d, DIAG_ERR, l->file, s->check_line ? s->check_line : s->line,
		          "check_send and check_expect need check = \"tcp\" or \"unix:PATH\"");
		l->errs++;
	}
}

static void free_argv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void service_free(struct cat_service *s)
{
	free(s->file);
	free(s->name);
	free(s->config_name);
	free(s->description);
	free(s->package);
	for (size_t i = 0; i < s->nomnibus_keys; i++)
		free(s->omnibus_keys[i]);
	free(s->omnibus_keys);
	for (size_t i = 0; i < s->nsettings; i++) {
		free(s->settings[i].name);
		free(s->settings[i].def);
		for (size_t j = 0; j < s->settings[i].ndefs; j++) {
			free(s->settings[i].defs[j].name);
			free(s->settings[i].defs[j].value);
		}
		free(s->settings[i].defs);
		free_argv(s->settings[i].refuse, s->settings[i].nrefuse);
		free(s->settings[i].refuse_because);
	}
	free(s->settings);
	for (size_t i = 0; i < s->nenv; i++) {
		free(s->env[i].name);
		free(s->env[i].value);
	}
	free(s->env);
	for (size_t i = 0; i < s->nbase_env; i++) {
		free(s->base_env[i].name);
		free(s->base_env[i].value);
	}
	free(s->base_env);
	free_argv(s->command, s->ncommand);
	free_argv(s->check_command, s->ncheck_command);
	free_argv(s->after, s->nafter);
	for (size_t i = 0; i < s->nsetup; i++) {
		free(s->setup[i].name);
		free(s->setup[i].creates);
		free_argv(s->setup[i].argv, s->setup[i].argc);
		free_argv(s->setup[i].verify, s->setup[i].nverify);
	}
	free(s->setup);
	free(s->check_send);
	free(s->check_expect);
	free(s->stop_signal);
	for (size_t i = 0; i < s->ntemplates; i++) {
		free(s->templates[i].src);
		free(s->templates[i].dest);
		free_argv(s->templates[i].validate, s->templates[i].nvalidate);
	}
	free(s->templates);
	free(s->check);
	for (size_t i = 0; i < s->nscrape; i++) {
		free(s->scrape[i].job);
		free(s->scrape[i].path);
		free(s->scrape[i].needs);
	}
	free(s->scrape);
	free(s->scrape_collect);
	free_argv(s->roles, s->nroles);
	free(s->off_switch);
	memset(s, 0, sizeof *s);
}

static int read_conf_fd(int fd, struct buf *b)
{
	struct stat st;
	if (fstat(fd, &st) == -1)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	/* Sized by fstat: readfile_fd's 64 KiB chunks cost more than reading a small file. */
	size_t want = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
	ssize_t n = read_full(fd, buf_room(b, want), want);
	if (n == -1)
		return -1;
	buf_commit(b, (size_t)n);
	return (size_t)n < want ? 0 : readfile_fd(fd, b, SIZE_MAX / 2);
}

/* The whole file into b, opened as fopen would (links followed). 0, or -1 with errno. */
static int read_conf(const char *path, struct buf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	int rc = read_conf_fd(fd, b), e = errno;
	close(fd);
	errno = e;
	return rc;
}

/*
 * Parse a .conf. libconfig parses a string for about 14k instructions less than
 * it reads a FILE; a text with a NUL byte (which a string would end at) goes
 * through its file reader, as before, for the same diagnostics.
 */
static int parse_conf(config_t *cfg, const char *path)
{
	struct buf text;
	buf_init(&text);
	if (read_conf(path, &text) == -1) {
		int e = errno;
		buf_free(&text);
		errno = e;
		return -1;
	}
	int ok = memchr(buf_str(&text), '\0', text.len) == NULL
	             ? config_read_string(cfg, buf_str(&text))
	             : config_read_file(cfg, path);
	buf_free(&text);
	return ok == CONFIG_TRUE ? 0 : 1;
}

/* Load one .conf into s. Returns 0, or -1 with errors in d (s is then freed). */
static int load_file(const char *path, struct cat_service *s, struct diags *d)
{
	config_t cfg;
	struct ld l = {.file = path, .d = d, .s = s};
	memset(s, 0, sizeof *s);
	s->file = xstrdup(path);
	s->home_mode = 0750;
	config_init(&cfg);
	int rc = parse_conf(&cfg, path);
	if (rc != 0) {
		if (rc == -1 || config_error_type(&cfg) == CONFIG_ERR_FILE_IO)
			diag_file(d, DIAG_ERR, path, 0, "cannot read: %s", strerror(errno));
		else
			diag_file(d, DIAG_ERR,
			          config_error_file(&cfg) ? config_error_file(&cfg) : path,
			          config_error_line(&cfg), "%s", config_error_text(&cfg));
		config_destroy(&cfg);
		service_free(s);
		return -1;
	}
	const config_setting_t *root = config_root_setting(&cfg);
	for (int i = 0; i < config_setting_length(root); i++)
		(void)load_key(&l, config_setting_get_elem(root, (unsigned)i));
	if (l.errs == 0)
		check_service(&l);
	config_destroy(&cfg);
	if (l.errs) {
		service_free(s);
		return -1;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cat_service *)a)->name, ((const struct cat_service *)b)->name);
}

static bool is_conf(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".conf") == 0;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the *.conf files in dir, sorted, so that load order is reproducible. */
static char **list_confs(const char *dir, size_t *n, struct diags *d)
{
	DIR *dp = opendir(dir);
	if (dp == NULL) {
		diag_file(d, DIAG_ERR, dir, 0, "cannot open the service catalog: %s",
		          strerror(errno));
		return NULL;
	}
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	struct dirent *de;
	while ((de = readdir(dp)) != NULL) {
		if (!is_conf(de->d_name))
			continue;
		grow(&v, &cap, *n + 2, sizeof *v, 8); /* + the NULL */
		v[(*n)++] = xstrdup(de->d_name);
	}
	closedir(dp);
	if (v == NULL)
		v = xcalloc(1, sizeof *v);
	qsort(v, *n, sizeof *v, cmpstr);
	return v;
}

/* A service's name or config name, with the service's index, for finding clashes by sorting. */
struct name_ref {
	const char *name;
	size_t svc;
};

static int name_ref_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->svc > y->svc) - (x->svc < y->svc);
}

/* A clash between services i and j (j < i): reported once, in (i, j) order. */
static int clash_cmp(const void *a, const void *b)
{
	const size_t *x = a, *y = b;
	if (x[0] != y[0])
		return (x[0] > y[0]) - (x[0] < y[0]);
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Clashing pairs (i, j < i) among the services of one run of equal names. */
static void run_clashes(const struct name_ref *r, size_t n, size_t (**pairs)[2], size_t *np,
                        size_t *cap)
{
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < a; b++) {
			if (r[a].svc == r[b].svc)
				continue; /* a service's name may equal its own config name */
			grow(pairs, cap, *np + 1, sizeof **pairs, 8);
			(*pairs)[*np][0] = r[a].svc;
			(*pairs)[(*np)++][1] = r[b].svc;
		}
}

/* Sorting the 2n names keeps this linear in practice (a pairwise search was N^2). */
static void check_unique(struct catalog *c, struct diags *d)
{
	struct name_ref *refs = xcalloc(2 * c->n + 1, sizeof *refs);
	for (size_t i = 0; i < c->n; i++) {
		refs[2 * i] = (struct name_ref){c->v[i].name, i};
		refs[2 * i + 1] = (struct name_ref){c->v[i].config_name, i};
	}
	qsort(refs, 2 * c->n, sizeof *refs, name_ref_cmp);
	size_t(*pairs)[2] = NULL;
	size_t np = 0, cap = 0;
	for (size_t i = 0, k; i < 2 * c->n; i = k) {
		for (k = i + 1; k < 2 * c->n && strcmp(refs[k].name, refs[i].name) == 0;)
			k++;
		if (k - i > 1)
			run_clashes(&refs[i], k - i, &pairs, &np, &cap);
	}
	if (np > 0)
		qsort(pairs, np, sizeof *pairs, clash_cmp);
	for (size_t p = 0; p < np; p++) {
		if (p > 0 && clash_cmp(pairs[p], pairs[p - 1]) == 0)
			continue;
		const struct cat_service *a = &c->v[pairs[p][0]], *b = &c->v[pairs[p][1]];
		diag_file(d, DIAG_ERR, a->file, a->line,
		          "service %s (%s) clashes with %s (%s) in %s", a->name, a->config_name,
		          b->name, b->config_name, b->file);
	}
	free(pairs);
	free(refs);
}

/* Depth-first search for a cycle through `after`; state: 0 new, 1 on the path, 2 done. */
static bool dep_cycle(const struct catalog *c, size_t i, int *state, size_t *path, size_t depth,
                      struct diags *d)
{
	if (state[i] == 2)
		return false;
	path[depth] = i;
	if (state[i] == 1) {
		const struct cat_service *s = &c->v[i];
		char text[1024] = "";
		size_t from = 0;
		while (path[from] != i)
			from++;
		for (size_t k = from; k <= depth; k++) {
			if (k > from)
				strlcat(text, " -> ", sizeof text);
			strlcat(text, c->v[path[k]].name, sizeof text);
		}
		diag_file(d, DIAG_ERR, s->file, s->after_line, "after: dependency cycle %s", text);
		return true;
	}
	state[i] = 1;
	for (size_t k = 0; k < c->v[i].nafter; k++) {
		const struct cat_service *dep = catalog_find(c, c->v[i].after[k]);
		if (dep && dep_cycle(c, (size_t)(dep - c->v), state, path, depth + 1, d))
			return true;
	}
	state[i] = 2;
	return false;
}

/* Every `after` names a catalog service other than itself, and they form no cycle. */
/* A scrape job's needs names a catalog service (a typo would drop the job silently). */
static void check_scrape_needs(const struct catalog *c, struct diags *d)
{
	for (size_t i = 0; i < c->n; i++)
		for (size_t k = 0; k < c->v[i].nscrape; k++) {
			const struct cat_scrape *j = &c->v[i].scrape[k];
			if (j->needs != NULL && catalog_find(c, j->needs) == NULL)
				diag_file(d, DIAG_ERR, c->v[i].file, j->line,
				          "scrape job %s: needs unknown service '%s'", j->job,
				          j->needs);
		}
}

static void check_deps(const struct catalog *c, struct diags *d)
{
	size_t nerr = d->nerr;
	check_scrape_needs(c, d);
	for (size_t i = 0; i < c->n; i++)
		for (size_t k = 0; k < c->v[i].nafter; k++) {
			const struct cat_service *s = &c->v[i];
			const struct cat_service *dep = catalog_find(c, s->after[k]);
			if (dep == NULL)
				diag_file(d, DIAG_ERR, s->file, s->after_line,
				          "after: unknown service '%s'", s->after[k]);
			else if (dep == s)
				diag_file(d, DIAG_ERR, s->file, s->after_line,
				          "after: %s cannot depend on itself", s->name);
		}
	if (d->nerr > nerr)
		return;
	int *state = xcalloc(c->n + 1, sizeof *state);
	size_t *path = xcalloc(c->n + 2, sizeof *path);
	for (size_t i = 0; i < c->n; i++)
		if (dep_cycle(c, i, state, path, 0, d))
			break;
	free(state);
	free(path);
}

static void order_visit(const struct catalog *c, size_t i, bool *done, size_t *order, size_t *n)
{
	if (done[i])
		return;
	done[i] = true; /* acyclic: marking on entry cannot cut a real dependency short */
	for (size_t k = 0; k < c->v[i].nafter; k++) {
		const struct cat_service *dep = catalog_find(c, c->v[i].after[k]);
		if (dep)
			order_visit(c, (size_t)(dep - c->v), done, order, n);
	}
	order[(*n)++] = i;
}

void catalog_order(const struct catalog *c, size_t *order)
{
	bool *done = xcalloc(c->n + 1, sizeof *done);
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		order_visit(c, i, done, order, &n);
	free(done);
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* <dir>/omnibus-names.list, one name per line, '#' comments; absent: no list. */
static void load_omnibus_names(struct catalog *c, struct diags *d)
{
	struct buf b;
	char *path = xasprintf("%s/omnibus-names.list", c->dir);
	buf_init(&b);
	if (readfile(path, &b, 1 << 20) == -1) {
		if (errno != ENOENT)
			diag_file(d, DIAG_ERR, path, 0, "cannot read: %s", strerror(errno));
		buf_free(&b);
		free(path);
		return;
	}
	buf_addc(&b, '\0');
	size_t cap = 0;
	int line = 0;
	for (char *p = b.p, *nl; p != NULL && *p != '\0'; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		line++;
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		n = strcspn(p, "#\n") < n ? strcspn(p, "#\n") : n;
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
			n--;
		if (n == 0)
			continue;
		if (strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_") != n) {
			diag_file(d, DIAG_ERR, path, line, "not a gitlab.rb name: \"%.*s\"", (int)n,
			          p);
			continue;
		}
		grow(&c->omnibus, &cap, c->nomnibus + 1, sizeof *c->omnibus, 64);
		c->omnibus[c->nomnibus++] = xstrndup(p, n);
	}
	if (c->omnibus == NULL)
		c->omnibus = xcalloc(1, sizeof *c->omnibus); /* present but empty: still strict */
	qsort(c->omnibus, c->nomnibus, sizeof *c->omnibus, cmp_strp);
	buf_free(&b);
	free(path);
}

bool catalog_omnibus_name(const struct catalog *c, const char *name)
{
	return c->nomnibus > 0 &&
	       bsearch(&name, c->omnibus, c->nomnibus, sizeof *c->omnibus, cmp_strp) != NULL;
}

int catalog_load(const char *dir, struct catalog *out, struct diags *d)
{
	size_t nerr = d->nerr, nfiles;
	memset(out, 0, sizeof *out);
	out->dir = xstrdup(dir);
	char **files = list_confs(dir, &nfiles, d);
	if (files == NULL)
		return -1;
	out->v = xcalloc(nfiles + 1, sizeof *out->v);
	for (size_t i = 0; i < nfiles; i++) {
		char *path = xasprintf("%s/%s", dir, files[i]);
		if (load_file(path, &out->v[out->n], d) == 0)
			out->n++;
		free(path);
		free(files[i]);
	}
	free(files);
	if (nfiles == 0)
		diag_file(d, DIAG_ERR, dir, 0, "no service definitions (*.conf) in the catalog");
	qsort(out->v, out->n, sizeof *out->v, by_name);
	load_omnibus_names(out, d);
	check_unique(out, d);
	check_deps(out, d);
	for (size_t i = 0; i < out->n; i++) {
		out->v[i].src.name = out->v[i].file;
		out->v[i].src.text = NULL;
		out->v[i].src.len = 0;
	}
	return d->nerr > nerr ? -1 : 0;
}

void catalog_free(struct catalog *c)
{
	for (size_t i = 0; i < c->n; i++)
		service_free(&c->v[i]);
	free(c->v);
	free(c->dir);
	for (size_t i = 0; i < c->nomnibus; i++)
		free(c->omnibus[i]);
	free(c->omnibus);
	memset(c, 0, sizeof *c);
}

const struct cat_service *catalog_find(const struct catalog *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->v[i].name, name) == 0 || strcmp(c->v[i].config_name, name) == 0)
			return &c->v[i];
	return NULL;
}

const struct cat_setting *cat_setting_find(const struct cat_service *s, const char *name)
{
	for (size_t i = 0; i < s->nsettings; i++)
		if (strcmp(s->settings[i].name, name) == 0)
			return &s->settings[i];
	return NULL;
}

struct loc cat_loc(const struct cat_service *s, int line)
{
	struct loc l = {.src = &s->src, .line = line, .col = 0};
	return l;
}

bool catalog_has_check(const struct cat_service *def)
{
	return def->check != NULL || def->check_command != NULL;
}
