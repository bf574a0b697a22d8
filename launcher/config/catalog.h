/*
 * catalog: service definitions, one libconfig file per service in <datadir>/sv/.
 * Adding a service is adding a file there: no C change.
 *
 * Strings in a definition may hold {{placeholders}} that attrs expands per
 * service (see attrs.h for the names), plus @JEMALLOC@ for the jemalloc
 * shared object found at build time.
 */
#ifndef GITLAB_CTL_CATALOG_H
#define GITLAB_CTL_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/diag.h"

struct ctl;

enum stype {
	ST_BOOL,
	ST_INT,
	ST_STRING,
	ST_PATH,    /* absolute; root-prefixed when it is a default */
	ST_PORT,    /* 1..65535, integer or numeric string */
	ST_ADDRESS, /* "host:port" (node_exporter['listen_address']) */
	ST_ENV,     /* hash NAME => string|nil, merged over the catalog env */
	ST_FLAGS,   /* hash flag => scalar|nil, rendered as --flag=value */
	ST_YAML,    /* any literal data (hash, array, scalar), written into a YAML file */
	ST_SCALAR,  /* a string, symbol, number or boolean as text, for the program to judge
	               (a postgresql.conf parameter: postgres checks it before publish) */
};

struct cat_kv {
	char *name;
	char *value;
	int line;        /* in the .conf, for messages */
	bool is_true;    /* a boolean flags default: "key" alone (true) or "!key" (false) */
	bool keep_empty; /* a flags default written "key=": --key= even where "" is skipped */
};

/*
 * How a flags hash becomes arguments (Omnibus spells them two ways):
 *   FLAGS_LEGACY   --k=v, and --k for an empty value
 *   FLAGS_KINGPIN  true -> --k, false -> --no-k, empty skipped, else --k=v
 *   FLAGS_PLAIN    empty skipped, else --k=v (booleans as true/false)
 */
enum flags_style { FLAGS_LEGACY, FLAGS_KINGPIN, FLAGS_PLAIN };

struct cat_setting {
	char *name;
	enum stype type;
	char *def;           /* default as text ("true", "9168", "/var/opt/..."), NULL if none */
	struct cat_kv *defs; /* ST_FLAGS: default entries (name = flag), in file order;
	                        ST_YAML: the strings of a default array (name "") */
	size_t ndefs;
	bool secret;   /* never shown: show-config, --diff and diagnostics redact it */
	bool host;     /* ST_PATH read from the host as is (binaries): --root does not apply */
	bool data;     /* ST_PATH holding the service's data: kept when it is disabled */
	char **refuse; /* values it may never take (placeholders expanded), e.g. a superuser */
	size_t nrefuse;
	char *refuse_because; /* why, for the message */
	char **values;        /* the only values a string may take (NULL: any), e.g. server names */
	size_t nvalues;
	char **required_by; /* roles that need a value (redis['master_ip'] on a replica) */
	char *gitlab_rails; /* gitlab_rails[KEY] sets it too (GitLab's own client settings) */
	size_t nrequired_by;
	char *gitlab_key; /* the gitlab.rb key that sets it, when Omnibus names it otherwise */
	int line;
};

struct cat_template {
	char *src;  /* file name under <datadir>/templates/; NULL: dest is a directory */
	char *dest; /* destination path, with placeholders */
	mode_t mode;
	bool service_owned; /* chown to the service user (else root) */
	bool group_owned;   /* root's, in the service's group (a file holding its password) */
	char **validate;    /* argv run on the rendered bytes before anything is published */
	size_t nvalidate;
	bool hup; /* a change is taken up by HUP (same pid), not by a restart */
	/*
	 * hup: argv printing each parameter and its context, tab-separated (postgres
	 * --describe-config); a changed `name = value` line of context "postmaster" takes
	 * effect only at a restart, which reconfigure names instead of doing.
	 */
	char **contexts;
	size_t ncontexts;
	int line;
};

/* A Prometheus scrape job a service offers (catalog: scrape). */
struct cat_scrape {
	char *job;   /* job_name */
	char *path;  /* metrics_path */
	int order;   /* place among every service's jobs, ascending */
	char *needs; /* a service that must be enabled too (NULL: none) */
	char *when;  /* a bool setting of the service that must be true (NULL: none) */
	int line;
};

/* When a setup step runs (see sv/gitlab-exporter.conf). */
enum step_when {
	STEP_BEFORE_START, /* once: before the first start, only while `creates` is missing */
	STEP_AFTER_READY,  /* every reconfigure, once the service is ready: must be idempotent */
};

/* A step's own deadline when the catalog gives none: initdb on a busy machine takes a while. */
#define STEP_TIMEOUT_DEFAULT 300
#define STEP_TIMEOUT_MAX     86400

struct cat_step {
	char *name;
	enum step_when when;
	char *creates; /* path with placeholders; required for before_start */
	char **argv;   /* with placeholders, no shell */
	size_t argc;
	/*
	 * staged: `creates` is a directory the command builds in {{staging_dir}},
	 * a fresh directory beside it, renamed into place only after it succeeded.
	 */
	bool staged;
	char **verify; /* argv: does a `creates` made before steps were recorded hold? */
	size_t nverify;
	int timeout; /* seconds, the step's own deadline (not SVWAIT) */
	int line;
};

struct cat_service {
	char *file;        /* the .conf path, for messages */
	char *name;        /* runit service name: "gitlab-exporter" */
	char *config_name; /* gitlab.rb top-level name: "gitlab_exporter" */
	char *description;
	char *package;       /* the Debian package providing the command, NULL if none (bundled) */
	char **omnibus_keys; /* keys Omnibus knows under config_name that are not settings here */
	size_t nomnibus_keys;
	bool enable_default;
	bool jemalloc; /* wants LD_PRELOAD of jemalloc (Ruby services) */
	enum flags_style flags_style;
	struct cat_setting *settings;
	size_t nsettings;
	struct cat_kv *env; /* default service env (LD_PRELOAD, MALLOC_CONF, RUBY_GC_*) */
	size_t nenv;
	struct cat_kv *base_env; /* clean base for exec: PATH, HOME, LANG */
	size_t nbase_env;
	char **command; /* argv templates; "{{flags}}" expands an ST_FLAGS setting */
	size_t ncommand;
	struct cat_template *templates;
	size_t ntemplates;
	char *check;          /* readiness: "http:/PATH", "tcp", "unix:PATH", or NULL for none */
	char *check_send;     /* sent after connecting ("tcp" or "unix:"), NULL for nothing */
	char *check_expect;   /* the reply must contain this, NULL: connecting is enough */
	char **check_command; /* argv run as the service user; exit 0 = ready; NULL if none */
	size_t ncheck_command;
	int check_line;
	char **after; /* services that must be up and ready before this one starts */
	size_t nafter;
	int after_line;
	struct cat_step *setup;
	size_t nsetup;
	mode_t home_mode;          /* 0750, or 0755 where other accounts reach a socket in it */
	bool share_group;          /* services with this one in `after` also run in its group */
	char *stop_signal;         /* what runsv's stop sends (sv/<svc>/control/t), NULL: TERM */
	struct cat_scrape *scrape; /* the jobs that scrape this service when it is enabled */
	size_t nscrape;
	char *scrape_collect; /* a yaml setting of user jobs: this service gathers every job */
	char **roles;         /* roles([...]) that enable it */
	size_t nroles;
	bool roles_exclusive; /* a node takes one of its roles at most (redis master or replica) */
	char *off_switch;     /* top-level name whose ['enable'] = false turns it off */
	char *off_with;       /* a service that runs it itself: enabled, it leaves this one off */
	int off_with_line;
	int line;         /* of `name`, for service-level messages */
	int command_line; /* of `command` */
	struct src src;   /* {file, no text}: lets diag_at() point into the .conf */
};

struct catalog {
	char *dir;
	struct cat_service *v; /* sorted by name */
	size_t n;
	/*
	 * omnibus-names.list: top-level names Omnibus knows and this catalog does not manage,
	 * sorted; NULL when the file is absent (then every unknown name is only a warning).
	 */
	char **omnibus;
	size_t nomnibus;
	/*
	 * Its NAME['KEY'] lines, sorted: keys Omnibus knows under the names gitlab-ctl reads
	 * itself (user, logging) that it does not manage.
	 */
	char **omnibus_keys;
	size_t nomnibus_keys;
};

/*
 * Load every *.conf in dir. Dependencies (`after`) must name catalog services
 * and form no cycle. Returns 0, or -1 with errors (file and line) in d. */
int catalog_load(const char *dir, struct catalog *out, struct diags *d);
void catalog_free(struct catalog *c);

/* <datadir>/sv. */
int catalog_load_ctl(const struct ctl *ctl, struct catalog *out, struct diags *d);

/* By runit name ("gitlab-exporter") or config name ("gitlab_exporter"); NULL if none. */
const struct cat_service *catalog_find(const struct catalog *c, const char *name);
/* Is name one of Omnibus' top-level names the catalog lists as known but unmanaged? */
bool catalog_omnibus_name(const struct catalog *c, const char *name);
/* Is name['key'] one of those keys? */
bool catalog_omnibus_key(const struct catalog *c, const char *name, const char *key);

/* Whether a service declares a readiness check (check or check_command). */
bool catalog_has_check(const struct cat_service *def);
const struct cat_setting *cat_setting_find(const struct cat_service *s, const char *name);
/* The setting gitlab.rb's NAME['key'] sets: the one with that gitlab_key, else by name. */
const struct cat_setting *cat_setting_key(const struct cat_service *s, const char *key);

/* The location of a line of a service's .conf (column unknown), for diag_at(). */
struct loc cat_loc(const struct cat_service *s, int line);

const char *stype_name(enum stype t); /* "bool", "port", ... as written in .conf files */

/*
 * The services in dependency order: every service after those it names in
 * `after`, otherwise by name. Writes catalog indexes into order[c->n].
 * The catalog is acyclic once loaded.
 */
void catalog_order(const struct catalog *c, size_t *order);

#endif
