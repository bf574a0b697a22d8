/*
 * The service catalog: one libconfig file per service in <datadir>/sv/.
 * The format is documented at the top of sv/gitlab-exporter.conf. Loading is
 * strict (unknown keys and wrong types are errors with file and line) because
 * a typo in a catalog file would otherwise silently drop a default.
 */
#include <dirent.h>
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "envcheck.h"
#include "grow.h"

static const char *const stype_names[] = {
    [ST_BOOL] = "bool", [ST_INT] = "int",         [ST_STRING] = "string", [ST_PATH] = "path",
    [ST_PORT] = "port", [ST_ADDRESS] = "address", [ST_ENV] = "env",       [ST_FLAGS] = "flags",
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
	char *msg;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	int line = at ? (int)config_setting_source_line(at) : 0;
	diag_file(l->d, DIAG_ERR, l->file, line, "%s", n == -1 ? fmt : msg);
	if (n != -1)
		free(msg);
	l->errs++;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (p == NULL)
		abort(); /* allocation of a few bytes; nothing sensible is left to do */
	return p;
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

/* "{{" must close with "}}" around a placeholder name; attrs checks the name exists. */
static int check_placeholders(struct ld *l, const config_setting_t *st, const char *s)
{
	for (const char *p = strstr(s, "{{"); p; p = strstr(p, "{{")) {
		const char *q = p + 2;
		while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')
			q++;
		if (q == p + 2 || q[0] != '}' || q[1] != '}') {
			lerr(l, st, "malformed placeholder in \"%s\": write {{name}}", s);
			return -1;
		}
		p = q + 2;
	}
	return 0;
}

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

/* A default must be valid for its type so that a bad catalog fails at load. */
static int check_default(struct ld *l, const config_setting_t *st, const struct cat_setting *cs)
{
	const char *v = cs->def;
	const char *errstr = NULL;
	switch (cs->type) {
	case ST_BOOL:
		if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
			errstr = "true or false";
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
	cs->defs = calloc((size_t)n + 1, sizeof *cs->defs);
	if (cs->defs == NULL)
		abort();
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(st, (unsigned)i);
		const char *s = get_string(l, e, "a flags default");
		if (s == NULL)
			return -1;
		const char *eq = strchr(s, '=');
		if (eq == NULL || eq == s) {
			lerr(l, e, "flags default \"%s\" must be \"key=value\"", s);
			return -1;
		}
		struct cat_kv *kv = &cs->defs[cs->ndefs++];
		kv->name = strndup(s, (size_t)(eq - s));
		kv->value = xstrdup(eq + 1);
		kv->line = (int)config_setting_source_line(e);
		if (kv->name == NULL)
			abort();
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
				     "address, env, flags)",
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
		} else {
			lerr(l, m, "unknown key '%s' in a setting (name, type, default, secret)",
			     key);
			return -1;
		}
	}
	if (cs->name == NULL || !have_type) {
		lerr(l, g, "a setting needs a name and a type");
		return -1;
	}
	if (defst == NULL)
		return 0;
	if (cs->type == ST_FLAGS)
		return load_flag_defaults(l, defst, cs);
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
	s->settings = calloc((size_t)n + 1, sizeof *s->settings);
	if (s->settings == NULL)
		abort();
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
	*out = calloc((size_t)n + 1, sizeof **out);
	if (*out == NULL)
		abort();
	for (int i = 0; i < n; i++) {
		const config_setting_t *m = config_setting_get_elem(st, (unsigned)i);
		const char *name = config_setting_name(m);
		if (!envcheck_name(name)) {
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

static int load_command(struct ld *l, const config_setting_t *st)
{
	struct cat_service *s = l->s;
	int t = config_setting_type(st);
	s->command_line = (int)config_setting_source_line(st);
	if ((t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) || config_setting_length(st) < 1) {
		lerr(l, st, "command must be a non-empty array of strings");
		return -1;
	}
	int n = config_setting_length(st);
	s->command = calloc((size_t)n + 1, sizeof *s->command);
	if (s->command == NULL)
		abort();
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(st, (unsigned)i);
		const char *v = get_string(l, e, "a command element");
		if (v == NULL)
			return -1;
		s->command[s->ncommand++] = xstrdup(v);
		if (check_placeholders(l, e, v) == -1)
			return -1;
	}
	return 0;
}

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
		if (strcmp(key, "src") != 0 && strcmp(key, "dest") != 0 &&
		    strcmp(key, "mode") != 0 && strcmp(key, "owner") != 0) {
			lerr(l, m, "unknown key '%s' in a template (src, dest, mode, owner)", key);
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
		} else if (strcmp(v, "service") == 0 || strcmp(v, "root") == 0) {
			t->service_owned = strcmp(v, "service") == 0;
		} else {
			lerr(l, m, "template owner must be \"service\" or \"root\"");
			return -1;
		}
	}
	if (t->src == NULL || t->dest == NULL) {
		lerr(l, g, "a template needs src and dest");
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
	s->templates = calloc((size_t)n + 1, sizeof *s->templates);
	if (s->templates == NULL)
		abort();
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
	if (strcmp(v, "tcp") != 0 && !(strncmp(v, "http:/", 6) == 0)) {
		lerr(l, st, "check must be \"http:/PATH\" or \"tcp\", not \"%s\"", v);
		return -1;
	}
	l->s->check = xstrdup(v);
	return 0;
}

static int load_key(struct ld *l, const config_setting_t *m)
{
	struct cat_service *s = l->s;
	const char *key = config_setting_name(m);
	const char *v;
	if (strcmp(key, "name") == 0) {
		s->line = (int)config_setting_source_line(m);
		if ((v = get_string(l, m, "name")) == NULL)
			return -1;
		if (!valid_name(v, true)) {
			lerr(l, m, "service name '%s' must match [a-z0-9][a-z0-9._-]*", v);
			return -1;
		}
		s->name = xstrdup(v);
	} else if (strcmp(key, "config_name") == 0) {
		if ((v = get_string(l, m, "config_name")) == NULL)
			return -1;
		if (!valid_name(v, false) || !(v[0] >= 'a' && v[0] <= 'z')) {
			lerr(l, m, "config_name '%s' must match [a-z][a-z0-9_]*", v);
			return -1;
		}
		s->config_name = xstrdup(v);
	} else if (strcmp(key, "description") == 0) {
		if ((v = get_string(l, m, "description")) == NULL)
			return -1;
		s->description = xstrdup(v);
	} else if (strcmp(key, "enable_default") == 0) {
		return get_bool(l, m, key, &s->enable_default);
	} else if (strcmp(key, "jemalloc") == 0) {
		return get_bool(l, m, key, &s->jemalloc);
	} else if (strcmp(key, "settings") == 0) {
		return load_settings(l, m);
	} else if (strcmp(key, "env") == 0) {
		return load_env(l, m, &s->env, &s->nenv);
	} else if (strcmp(key, "base_env") == 0) {
		return load_env(l, m, &s->base_env, &s->nbase_env);
	} else if (strcmp(key, "command") == 0) {
		return load_command(l, m);
	} else if (strcmp(key, "templates") == 0) {
		return load_templates(l, m);
	} else if (strcmp(key, "check") == 0) {
		return load_check(l, m);
	} else {
		lerr(l, m,
		     "unknown key '%s' (name, config_name, description, enable_default, jemalloc, "
		     "settings, env, base_env, command, templates, check)",
		     key);
		return -1;
	}
	return 0;
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
}

static void service_free(struct cat_service *s)
{
	free(s->file);
	free(s->name);
	free(s->config_name);
	free(s->description);
	for (size_t i = 0; i < s->nsettings; i++) {
		free(s->settings[i].name);
		free(s->settings[i].def);
		for (size_t j = 0; j < s->settings[i].ndefs; j++) {
			free(s->settings[i].defs[j].name);
			free(s->settings[i].defs[j].value);
		}
		free(s->settings[i].defs);
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
	for (size_t i = 0; i < s->ncommand; i++)
		free(s->command[i]);
	free(s->command);
	for (size_t i = 0; i < s->ntemplates; i++) {
		free(s->templates[i].src);
		free(s->templates[i].dest);
	}
	free(s->templates);
	free(s->check);
	memset(s, 0, sizeof *s);
}

/* Load one .conf into s. Returns 0, or -1 with errors in d (s is then freed). */
static int load_file(const char *path, struct cat_service *s, struct diags *d)
{
	config_t cfg;
	struct ld l = {.file = path, .d = d, .s = s};
	memset(s, 0, sizeof *s);
	s->file = xstrdup(path);
	config_init(&cfg);
	if (config_read_file(&cfg, path) != CONFIG_TRUE) {
		if (config_error_type(&cfg) == CONFIG_ERR_FILE_IO)
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
		if (grow(&v, &cap, *n + 2, sizeof *v, 8) == -1) /* + the NULL */
			abort();
		v[(*n)++] = xstrdup(de->d_name);
	}
	closedir(dp);
	if (v == NULL) {
		v = calloc(1, sizeof *v);
		if (v == NULL)
			abort();
	}
	qsort(v, *n, sizeof *v, cmpstr);
	return v;
}

static void check_unique(struct catalog *c, struct diags *d)
{
	for (size_t i = 0; i < c->n; i++)
		for (size_t j = 0; j < i; j++) {
			const struct cat_service *a = &c->v[i], *b = &c->v[j];
			if (strcmp(a->name, b->name) == 0 ||
			    strcmp(a->config_name, b->config_name) == 0 ||
			    strcmp(a->name, b->config_name) == 0 ||
			    strcmp(a->config_name, b->name) == 0)
				diag_file(d, DIAG_ERR, a->file, a->line,
				          "service %s (%s) clashes with %s (%s) in %s", a->name,
				          a->config_name, b->name, b->config_name, b->file);
		}
}

int catalog_load(const char *dir, struct catalog *out, struct diags *d)
{
	size_t nerr = d->nerr, nfiles;
	memset(out, 0, sizeof *out);
	out->dir = xstrdup(dir);
	char **files = list_confs(dir, &nfiles, d);
	if (files == NULL)
		return -1;
	out->v = calloc(nfiles + 1, sizeof *out->v);
	if (out->v == NULL)
		abort();
	for (size_t i = 0; i < nfiles; i++) {
		char *path;
		if (asprintf(&path, "%s/%s", dir, files[i]) == -1)
			abort();
		if (load_file(path, &out->v[out->n], d) == 0)
			out->n++;
		free(path);
		free(files[i]);
	}
	free(files);
	if (nfiles == 0)
		diag_file(d, DIAG_ERR, dir, 0, "no service definitions (*.conf) in the catalog");
	qsort(out->v, out->n, sizeof *out->v, by_name);
	check_unique(out, d);
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
