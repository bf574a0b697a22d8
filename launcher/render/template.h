/*
 * template: the small template language of templates/ (run scripts, svlogd
 * config, readiness checks, the exporter's YAML).
 *
 * Every substitution names its escaping, so that a config value can never
 * change the structure of the file it lands in:
 *   {{name}}         raw text; refused if the value holds a control character
 *                    (a newline would inject lines into log/config)
 *   {{sh name}}      one shell word, single-quoted ('it'\''s')
 *   {{sh* name}}     a list, each element single-quoted, space-separated
 *   {{yaml name}}    a YAML double-quoted scalar with escapes
 *   {{int name}}     a decimal integer; anything else is an error
 *   {{FORMAT name}}  the value in that file format's syntax (lib/quote.h), or an
 *                    error: pg_string pg_part (inside quotes) pg_number
 *                    pg_hosts (postgresql.conf),
 *                    pg_token (pg_hba/pg_ident names), pgb_value (pgbouncer.ini),
 *                    pg_md5 (a role's md5
 *                    password: quote.h), conninfo (libpq),
 *                    redis redis_memory redis_acl_pass redis_bind redis_bind_loopback
 *                    redis_bool (yes/no) redis_obl (client-output-buffer-limit)
 *                    redis_name (a master name) (redis.conf), sentinel_bind_loopback
 *                    redis_myid (sentinel.conf), mode_private (octal, no world bits),
 *                    yaml_str (as {{yaml name}}), bcrypt (the value's "$2b$"
 *                    hash as a YAML string: lib/bcrypt.h), loopback
 *                    listen_loopback listen_loopback_tls (a listener without
 *                    credentials stays on loopback, else refused), url_host
 *   {{yamlv name}}   a data value (hash, array, scalar; svc.name another service's) as block YAML,
 * placed after "key: " and indented under that line
 *   {{yamlitems name}} an array's elements as "- item" lines continuing a
 *                    list, the tag indented like the list's other items
 *   {{DATA name}}    a data setting (array, hash) as whole lines of its format,
 *                    or an error: redis_save redis_renames (redis.conf),
 *                    pg_hba_md5 (pg_hba.conf), patroni_hba_md5 (patroni.yml's pg_hba list),
 *                    pgb_databases pgb_users pgb_names (PgBouncer: lib/pgbquote.h)
 *   {{#if name}}...{{/if}}      kept when the value is not empty
 *   {{#unless name}}...{{/if}}  kept when the value is empty
 *   {{#if a|b}}, {{#unless a|b}}  the same for "any of the values is not empty"
 *   {{! comment }}   dropped
 * A block tag alone on its line drops the whole line, so optional lines leave
 * no blank line behind. An unknown name is an error naming the template file
 * and line: a typo never renders as an empty string. A value a format refuses
 * is reported where gitlab.rb set it, when the variables know (origin).
 */
#ifndef GITLAB_CTL_TEMPLATE_H
#define GITLAB_CTL_TEMPLATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/diag.h"
#include "lib/yval.h"

/* Append s as one single-quoted shell word ('' for the empty string). */
void tpl_sh_quote(struct buf *b, const char *s);
/* Append s as a YAML double-quoted scalar, quotes included. */
void tpl_yaml_quote(struct buf *b, const char *s);

/* The output bytes [off, off + len) came from a secret value (quoting included). */
struct tpl_span {
	size_t off, len;
};

/* Where secret values landed in one rendering. */
struct tpl_spans {
	struct tpl_span *v;
	size_t n, cap;
	bool may; /* a name that is or may be built from a secret was looked up */
};

void tpl_spans_free(struct tpl_spans *s);

#define TPL_SECRET_MAY   1 /* built from a secret setting that is empty now */
#define TPL_SECRET_HOLDS 2 /* holds a secret now */

/* Where a value was set, for a refusal: file:line:col and the name as written there. */
struct tpl_origin {
	char file[PATH_MAX];
	int line, col;
	char label[256]; /* e.g. postgresql['shared_buffers'] */
};

/*
 * Where values come from: a scalar (NULL: unknown), a list (NULL: unknown)
 * and where a scalar was set (false: a default; the template line is blamed).
 * When secret and spans are set, every substitution of a value secret says
 * TPL_SECRET_HOLDS of (elem: the list element, 0 for a scalar) records the
 * output bytes its escaping produced in spans, so that what is printed can be
 * redacted whatever the quoting did to the value.
 */
struct tpl_vars {
	const char *(*get)(void *arg, const char *name);
	char *const *(*get_list)(void *arg, const char *name); /* may be NULL */
	void *arg;
	bool (*origin)(void *arg, const char *name, struct tpl_origin *o); /* may be NULL */
	/* {{yamlv name}} / {{yamlitems name}} (items): append the value for a line
	 * indented `indent`, recording credentials in secrets (NULL: none wanted,
	 * yaml.h says which); -1: unknown. May be NULL. */
	int (*put_data)(void *arg, const char *name, bool items, struct buf *out, int indent,
	                struct tpl_spans *secrets);
	/* A data filter's value ({{redis_save name}}): 0 with *v (NULL: unset), -1: unknown.
	 * May be NULL. */
	int (*get_data)(void *arg, const char *name, const struct yval **v);
	int (*secret)(void *arg, const char *name, size_t elem); /* may be NULL */
	struct tpl_spans *spans;                                 /* may be NULL */
};

/*
 * Render text (named `name` in messages) into out (appended). Returns 0, or
 * -1 with every problem recorded in d as "name:LINE: error: ...".
 */
int tpl_render(const char *name, const char *text, size_t len, const struct tpl_vars *vars,
               struct buf *out, struct diags *d);

/* Read a template file and render it. I/O errors are recorded in d too. */
int tpl_render_file(const char *path, const struct tpl_vars *vars, struct buf *out,
                    struct diags *d);

/*
 * The templates of one run, each file read and parsed once however many
 * services render it (reconfigure renders the same few per service). Names
 * are file names under dir; messages are tpl_render_file's, repeated at every
 * render, so a bad template reads the same as without the cache.
 */
struct tpl_cache;

struct tpl_cache *tpl_cache_new(const char *dir);
void tpl_cache_free(struct tpl_cache *c);
int tpl_cache_render(struct tpl_cache *c, const char *name, const struct tpl_vars *vars,
                     struct buf *out, struct diags *d);

#endif
