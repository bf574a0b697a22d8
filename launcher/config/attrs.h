/*
 * attrs: the effective configuration. Catalog defaults merged with the
 * statements of gitlab.rb (later assignments win), validated, and each
 * service's env and command computed.
 *
 * Template placeholders a service offers (svc_var()): every catalog setting
 * by name (home, log_directory, env_directory, listen_address, listen_port,
 * command, ...; paths already root-prefixed), plus
 *   service   runit name          root       the --root ("" for none)
 *   user      run-as user         group      run-as group
 *   gitlab_ctl absolute path of this binary
 *   sv_dir    <install>/sv/<svc>  listen_host / listen_port split from an ST_ADDRESS
 *   scrape_target  host:port others reach it at (0.0.0.0, ::, * or "" -> localhost)
 *   svlogd_*  the effective logging settings for this service ("" when nil)
 *   gitlab_install_dir, gitlab_data_dir, gitlab_log_dir  the compile-time
 *             dirs, root-prefixed (install_dir, data_dir, log_dir: the same,
 *             unless the service has a setting of that name, which wins)
 *   jemalloc  the jemalloc shared object found at build time
 *   svc.name  a var of another service (runit or config name), e.g.
 *             {{postgresql.port}}; that service is computed first
 *   gitlab_user  user['username'] (or the invoking user when not root): the
 *             account of services without their own, e.g. the exporter's
 * user and group are the service's own `username` and `group` settings when
 * it declares them and gitlab-ctl runs as root, else user['username'|'group'].
 * groups (struct svc) names the groups of the enabled services in `after`
 * that say share_group (Redis: the exporter joins gitlab-redis to reach its
 * 0770 socket); only as root, as supplementary groups need it.
 * A setting that is nil has the value "". A flags setting's var is its
 * rendered arguments joined by spaces; env settings have no var; a yaml
 * setting's var is "" when unset or empty, else a short summary, and its
 * value is svc_data(). A service with scrape_collect also has the data
 * scrape_jobs: the scrape jobs of every enabled service (catalog `scrape`,
 * by order), then the user's jobs, a user job named like one of ours taking
 * its place. roles([...]) decides `enable` where gitlab.rb does not, and an
 * off_switch set false turns the service off whatever it says.
 */
#ifndef GITLAB_CTL_ATTRS_H
#define GITLAB_CTL_ATTRS_H

#include <stdbool.h>
#include <stddef.h>

#include "config/catalog.h"
#include "config/rbconf.h"
#include "config/secret.h" /* env_is_secret: what redacts a service's env */
#include "config/svlog.h"
#include "lib/arena.h"
#include "lib/ctl.h"
#include "lib/diag.h"
#include "lib/kvlist.h"
#include "lib/yval.h"

/* A yaml setting's value, or a tree gitlab-ctl built (scrape_jobs). */
struct svc_data {
	char *name;
	struct yval *v; /* never NULL */
	struct loc loc; /* where gitlab.rb set it, while attrs_build runs; then {0} */
};

/* Where a value was written: gitlab.rb's line, or the catalog's for a default. */
struct svc_pos {
	const char *file; /* NULL: unknown */
	int line, col;
};

struct svc {
	const struct cat_service *def;
	bool enabled;
	struct kvlist vars; /* template placeholders, see above */
	struct kvlist env;  /* computed service env (no base env) */
	struct kvlist base_env;
	char **argv; /* expanded command, NULL-terminated */
	size_t argc;
	const char *home, *log_dir, *env_dir; /* point into vars */
	const char *user, *group;             /* point into vars */
	char *groups; /* supplementary groups, comma-separated ("" for none): see share_group */
	const char *listen_host; /* NULL if the service has no address */
	int listen_port;         /* 0 if none */
	struct svlog log;
	/* Where gitlab.rb set things, "file:line": by setting name, and "env:NAME" for env. */
	struct kvlist origin;
	struct kvlist where; /* settings gitlab.rb set -> "file:line:col" */
	char *role_where;    /* the role in roles([...]) that enabled it, "file:line:col"; NULL */
	struct kvlist secret_vars;  /* vars built from a secret -> "may" or "holds" */
	struct kvlist secret_env;   /* env values built from a secret (by value, not name) */
	unsigned char *argv_secret; /* per argv element: an enum secrecy */
	struct svc_pos *argv_pos;   /* per argv element: where it was written */
	struct svc_data *data;      /* yaml settings gitlab.rb set, and scrape_jobs */
	size_t ndata, data_cap;
};

struct attrs {
	char *user, *group; /* user['username'], user['group'] */
	bool manage_accounts;
	struct svlog logging;
	struct svc *svcs; /* one per catalog service, catalog order */
	size_t nsvcs;
	struct kvlist unknown_names; /* ignored top-level names -> first "file:line" */
	struct arena strs; /* every service's vars and secret_vars strings: freed at once */
};

/*
 * Load the config file of ctl (a missing default config means "all
 * defaults"; a missing -c FILE is an error), merge, validate. Returns 0 (maybe
 * with warnings in d), or -1 with errors in d.
 */
int attrs_load(const struct ctl *ctl, const struct catalog *cat, struct attrs *out,
               struct diags *d);

/*
 * What every command that needs the configuration does: the catalog of
 * <ctl->datadir>/sv, then attrs_load. Returns 0 (maybe with warnings in d;
 * free both with attrs_free and catalog_free), or -1 with errors in d and
 * both already freed (zeroed, so freeing them again is harmless).
 */
int attrs_load_all(const struct ctl *ctl, struct catalog *cat, struct attrs *out, struct diags *d);

/* Same from an already-parsed file (unit tests, fuzzing). */
int attrs_build(const struct ctl *ctl, const struct catalog *cat, const struct rb_file *f,
                struct attrs *out, struct diags *d);

void attrs_free(struct attrs *a);

const struct svc *attrs_svc(const struct attrs *a, const char *name); /* runit or config name */
/*
 * Replace the value of an existing var of a service (runit or config name) with a copy of
 * value, after the configuration was computed: what a live service says (the Redis master a
 * sentinel names) overriding gitlab.rb's. 0, or -1 when there is no such var.
 */
int attrs_set_var(struct attrs *a, const char *svc, const char *name, const char *value);
const char *svc_var(const struct svc *s, const char *name);
/* An int setting's value (its catalog type checked it where it was written), or dflt when
 * unset or not a number. */
long long svc_int(const struct svc *s, const char *name, long long dflt);
/*
 * The names of s's TLS files, by Omnibus' naming for the service: {certificate, key, client
 * CA} (tls_cert_path, tls_key_path, tls_client_ca_path; Patroni's tls_certificate_file,
 * tls_key_file, tls_ca_file).
 */
const char *const *svc_tls_keys(const struct svc *s);
/* The service serves TLS: its tls_enabled setting (Omnibus' name) is true, or, without one,
 * its certificate is set. */
bool svc_tls(const struct svc *s);
/* A yaml setting (or scrape_jobs), or NULL when unset. */
const struct yval *svc_data(const struct svc *s, const char *name);

/*
 * Expand {{placeholders}} (svc_var names) and @JEMALLOC@ in a catalog string,
 * e.g. a template's dest. Returns a malloc'ed string, or NULL with errno
 * EINVAL for an unknown placeholder.
 */
char *svc_expand(const struct svc *s, const char *tmpl);

/*
 * "web_username:web_password" into buf, the HTTP basic auth a service's pages want
 * (Prometheus, Alertmanager: web.config.file), or NULL when it has no web_password.
 */
const char *svc_web_auth(const struct svc *s, char *buf, size_t len);

/* Whether var `name` of s is (built from) a secret setting. */
enum secrecy svc_var_secret(const struct svc *s, const char *name);
/* Whether env value `name` of s is secret: by its name, or built from a secret. */
enum secrecy svc_env_secret(const struct svc *s, const char *name);
/* svc_var_secret, and "svc.name" for another service's var. */
enum secrecy attrs_var_secret(const struct attrs *a, const struct svc *s, const char *name);

/* svc_var, and "svc.name" for another service's var; NULL if unknown. */
const char *attrs_var(const struct attrs *a, const struct svc *s, const char *name);
/* svc_expand with attrs_var names. */
char *attrs_expand(const struct attrs *a, const struct svc *s, const char *tmpl);
/*
 * A catalog argv (validate, contexts, check_command, setup steps) through attrs_expand, with
 * {{ph}} meaning val unless that is NULL (validate's {{file}}, a step's {{staging_dir}}):
 * malloc'ed and NULL-terminated (argv_free frees it), or NULL with *bad the element naming an
 * unknown placeholder.
 */
char **attrs_expand_argv(const struct attrs *a, const struct svc *s, char *const *tmpl, size_t n,
                         const char *ph, const char *val, size_t *bad);
void argv_free(char **v);

#endif
