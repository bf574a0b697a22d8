/*
 * One definition file: libconfig parses it, then each top-level key goes to its
 * loader in service_keys, the one list of keys (the unknown-key message included).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/catalog.h"
#include "config/catalog_int.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/readfile.h"

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

static int load_check(struct ld *l, const config_setting_t *st)
{
	const char *v = ld_string(l, st, "check");
	if (v == NULL)
		return -1;
	l->s->check_line = (int)config_setting_source_line(st);
	if (strcmp(v, "tcp") != 0 && strncmp(v, "http:/", 6) != 0 && strncmp(v, "unix:", 5) != 0) {
		ld_err(l, st, "check must be \"http:/PATH\", \"tcp\" or \"unix:PATH\", not \"%s\"",
		       v);
		return -1;
	}
	if (ld_placeholders(l, st, v) == -1)
		return -1;
	l->s->check = xstrdup(v);
	return 0;
}

static int load_after(struct ld *l, const config_setting_t *st)
{
	struct cat_service *s = l->s;
	int t = config_setting_type(st);
	s->after_line = (int)config_setting_source_line(st);
	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
		ld_err(l, st, "after must be an array of service names");
		return -1;
	}
	int n = config_setting_length(st);
	s->after = xcalloc((size_t)n + 1, sizeof *s->after);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(st, (unsigned)i);
		const char *v = ld_string(l, e, "an after entry");
		if (v == NULL)
			return -1;
		if (!ld_name_ok(v, true)) {
			ld_err(l, e, "after: '%s' is not a service name", v);
			return -1;
		}
		s->after[s->nafter++] = xstrdup(v);
	}
	return 0;
}

/* timeout = seconds: the step's own deadline. */

/* check_send / check_expect: protocol bytes (placeholders, e.g. {{resp password}}); no NUL. */
static int load_check_str(struct ld *l, const config_setting_t *st, char **out)
{
	const char *v = ld_string(l, st, config_setting_name(st));
	if (v == NULL || ld_placeholders(l, st, v) == -1)
		return -1;
	if (*v == '\0') {
		ld_err(l, st, "%s must not be empty", config_setting_name(st));
		return -1;
	}
	*out = xstrdup(v);
	return 0;
}

/* A signal runsv's control/t sends instead of TERM (PostgreSQL: INT, a fast shutdown). */
static int load_stop_signal(struct ld *l, const config_setting_t *st)
{
	static const char *const ok[] = {"TERM", "INT", "QUIT", "HUP", "USR1", "USR2"};
	const char *v = ld_string(l, st, "stop_signal");
	if (v == NULL)
		return -1;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (strcmp(v, ok[i]) == 0) {
			l->s->stop_signal = xstrdup(v);
			return 0;
		}
	ld_err(l, st, "stop_signal must be one of TERM, INT, QUIT, HUP, USR1, USR2, not \"%s\"", v);
	return -1;
}

static int load_home_mode(struct ld *l, const config_setting_t *st)
{
	const char *v = ld_string(l, st, "home_mode");
	if (v == NULL)
		return -1;
	if (strcmp(v, "0750") != 0 && strcmp(v, "0755") != 0 && strcmp(v, "0700") != 0) {
		ld_err(l, st, "home_mode must be \"0700\", \"0750\" or \"0755\", not \"%s\"", v);
		return -1;
	}
	l->s->home_mode = (mode_t)strtol(v, NULL, 8);
	return 0;
}

static int load_roles(struct ld *l, const config_setting_t *st)
{
	struct cat_service *s = l->s;
	int t = config_setting_type(st);
	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) {
		ld_err(l, st, "roles must be an array of role names");
		return -1;
	}
	int n = config_setting_length(st);
	s->roles = xcalloc((size_t)n + 1, sizeof *s->roles);
	for (int i = 0; i < n; i++)
		if (ld_gitlab_name(l, config_setting_get_elem(st, (unsigned)i), "role",
		                   &s->roles[s->nroles++]) == -1)
			return -1;
	return 0;
}

static int load_flags_style(struct ld *l, const config_setting_t *st)
{
	const char *v = ld_string(l, st, "flags_style");
	if (v == NULL)
		return -1;
	if (strcmp(v, "kingpin") == 0)
		l->s->flags_style = FLAGS_KINGPIN;
	else if (strcmp(v, "plain") == 0)
		l->s->flags_style = FLAGS_PLAIN;
	else {
		ld_err(l, st, "flags_style must be \"kingpin\" or \"plain\", not \"%s\"", v);
		return -1;
	}
	return 0;
}

static int load_svc_name(struct ld *l, const config_setting_t *m)
{
	const char *v;
	l->s->line = (int)config_setting_source_line(m);
	if ((v = ld_string(l, m, "name")) == NULL)
		return -1;
	if (!ld_name_ok(v, true)) {
		ld_err(l, m, "service name '%s' must match [a-z0-9][a-z0-9._-]*", v);
		return -1;
	}
	l->s->name = xstrdup(v);
	return 0;
}

static int load_config_name(struct ld *l, const config_setting_t *m)
{
	const char *v;
	if ((v = ld_string(l, m, "config_name")) == NULL)
		return -1;
	if (!ld_name_ok(v, false) || !(v[0] >= 'a' && v[0] <= 'z')) {
		ld_err(l, m, "config_name '%s' must match [a-z][a-z0-9_]*", v);
		return -1;
	}
	l->s->config_name = xstrdup(v);
	return 0;
}

static int load_description(struct ld *l, const config_setting_t *m)
{
	return ld_text(l, m, &l->s->description);
}

static int load_package(struct ld *l, const config_setting_t *m)
{
	return ld_text(l, m, &l->s->package);
}

static int load_omnibus_keys(struct ld *l, const config_setting_t *m)
{
	return ld_argv(l, m, "omnibus_keys", &l->s->omnibus_keys, &l->s->nomnibus_keys);
}

static int load_enable_default(struct ld *l, const config_setting_t *m)
{
	return ld_bool(l, m, "enable_default", &l->s->enable_default);
}

static int load_jemalloc(struct ld *l, const config_setting_t *m)
{
	return ld_bool(l, m, "jemalloc", &l->s->jemalloc);
}

static int load_share_group(struct ld *l, const config_setting_t *m)
{
	return ld_bool(l, m, "share_group", &l->s->share_group);
}

static int load_roles_exclusive(struct ld *l, const config_setting_t *m)
{
	return ld_bool(l, m, "roles_exclusive", &l->s->roles_exclusive);
}

static int load_env_key(struct ld *l, const config_setting_t *m)
{
	return ld_env(l, m, &l->s->env, &l->s->nenv);
}

static int load_base_env(struct ld *l, const config_setting_t *m)
{
	return ld_env(l, m, &l->s->base_env, &l->s->nbase_env);
}

static int load_command(struct ld *l, const config_setting_t *m)
{
	l->s->command_line = (int)config_setting_source_line(m);
	return ld_argv(l, m, "command", &l->s->command, &l->s->ncommand);
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
	return ld_argv(l, m, "check_command", &l->s->check_command, &l->s->ncheck_command);
}

static int load_scrape_collect(struct ld *l, const config_setting_t *m)
{
	return ld_gitlab_name(l, m, "scrape_collect", &l->s->scrape_collect);
}

static int load_off_switch(struct ld *l, const config_setting_t *m)
{
	return ld_gitlab_name(l, m, "off_switch", &l->s->off_switch);
}

static int load_off_with(struct ld *l, const config_setting_t *m)
{
	const char *v = ld_string(l, m, "off_with");
	if (v == NULL)
		return -1;
	l->s->off_with = xstrdup(v);
	l->s->off_with_line = (int)config_setting_source_line(m);
	return 0;
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
    {"settings", ld_settings},
    {"env", load_env_key},
    {"base_env", load_base_env},
    {"command", load_command},
    {"templates", ld_templates},
    {"check", load_check},
    {"check_send", load_check_send},
    {"check_expect", load_check_expect},
    {"check_command", load_check_command},
    {"after", load_after},
    {"setup", ld_setup},
    {"home_mode", load_home_mode},
    {"stop_signal", load_stop_signal},
    {"share_group", load_share_group},
    {"flags_style", load_flags_style},
    {"scrape", ld_scrape},
    {"scrape_collect", load_scrape_collect},
    {"roles", load_roles},
    {"roles_exclusive", load_roles_exclusive},
    {"off_switch", load_off_switch},
    {"off_with", load_off_with},
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
	ld_err(l, m, "unknown key '%s' (one of: %s)", key, buf_str(&known));
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
	for (size_t i = 0; i < s->nscrape; i++) {
		const struct cat_setting *w =
		    s->scrape[i].when ? cat_setting_find(s, s->scrape[i].when) : NULL;
		if (s->scrape[i].when != NULL && (w == NULL || w->type != ST_BOOL)) {
			diag_file(l->d, DIAG_ERR, l->file, s->scrape[i].line,
			          "scrape job '%s': when must name a bool setting of the service",
			          s->scrape[i].job);
			l->errs++;
		}
	}
	if ((s->check_send || s->check_expect) &&
	    (s->check == NULL || strncmp(s->check, "http:", 5) == 0)) {
		diag_file(l->d, DIAG_ERR, l->file, s->check_line ? s->check_line : s->line,
		          "check_send and check_expect need check = \"tcp\" or \"unix:PATH\"");
		l->errs++;
	}
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
int catalog_load_file(const char *path, struct cat_service *s, struct diags *d)
{
	config_t c, *cfg = &c;
	struct ld l = {.file = path, .d = d, .s = s};
	memset(s, 0, sizeof *s);
	s->file = xstrdup(path);
	s->home_mode = 0750;
	config_init(cfg);
	int rc = parse_conf(cfg, path);
	if (rc != 0) {
		if (rc == -1 || config_error_type(cfg) == CONFIG_ERR_FILE_IO)
			diag_file(d, DIAG_ERR, path, 0, "cannot read: %s", strerror(errno));
		else
			diag_file(d, DIAG_ERR,
			          config_error_file(cfg) ? config_error_file(cfg) : path,
			          config_error_line(cfg), "%s", config_error_text(cfg));
		config_destroy(cfg);
		catalog_service_free(s);
		return -1;
	}
	const config_setting_t *root = config_root_setting(cfg);
	for (int i = 0; i < config_setting_length(root); i++)
		(void)load_key(&l, config_setting_get_elem(root, (unsigned)i));
	if (l.errs == 0)
		check_service(&l);
	config_destroy(cfg);
	if (l.errs) {
		catalog_service_free(s);
		return -1;
	}
	return 0;
}
