/*
 * catalog_int: what the catalog's own files share, not part of its contract
 * (catalog.h is). A definition is read key by key off libconfig's tree by
 * catalog_keys (service keys), catalog_setting (settings), catalog_parts
 * (templates, setup steps, scrape jobs), with the value readers of
 * catalog_value; catalog (listing, loading, freeing) and catalog_order
 * (names and dependencies across files) make the catalog of them.
 */
#ifndef GITLAB_CTL_CATALOG_INT_H
#define GITLAB_CTL_CATALOG_INT_H

#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>

/* Declared in config/catalog.h and lib/diag.h, which this header leaves to its includers. */
struct cat_kv;
struct cat_service;
struct catalog;
struct diags;

#define OMNIBUS_NAMES "omnibus-names.list"

/* State of loading one file. */
struct ld {
	const char *file;
	struct diags *d;
	struct cat_service *s;
	int errs;
};

/* An error at a libconfig node's line (at NULL: the file). */
void ld_err(struct ld *l, const config_setting_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Value readers: NULL or -1 with an error recorded. */
const char *ld_string(struct ld *l, const config_setting_t *st, const char *what);
int ld_bool(struct ld *l, const config_setting_t *st, const char *what, bool *out);
char *ld_scalar(struct ld *l, const config_setting_t *st, const char *what);
int ld_placeholders(struct ld *l, const config_setting_t *st, const char *s);
/* [a-z0-9][a-z0-9_]*, with dash_dot also '-' and '.'. */
bool ld_name_ok(const char *s, bool dash_dot);
int ld_argv(struct ld *l, const config_setting_t *st, const char *what, char ***out, size_t *nout);
int ld_gitlab_name(struct ld *l, const config_setting_t *st, const char *what, char **out);
int ld_text(struct ld *l, const config_setting_t *m, char **out);
int ld_env(struct ld *l, const config_setting_t *st, struct cat_kv **out, size_t *nout);

/* Lists of groups, into l->s. */
int ld_settings(struct ld *l, const config_setting_t *st);
int ld_templates(struct ld *l, const config_setting_t *st);
int ld_setup(struct ld *l, const config_setting_t *st);
int ld_scrape(struct ld *l, const config_setting_t *st);

/* Load one .conf into s. Returns 0, or -1 with errors in d (s is then freed). */
int catalog_load_file(const char *path, struct cat_service *s, struct diags *d);
void catalog_service_free(struct cat_service *s);

/* Across files: names unique, `after` and scrape `needs` known, no dependency cycle. */
void catalog_check_unique(struct catalog *c, struct diags *d);
void catalog_check_deps(const struct catalog *c, struct diags *d);

#endif
