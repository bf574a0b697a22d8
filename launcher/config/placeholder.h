/*
 * placeholder: the expansion of catalog strings, {{name}} and @JEMALLOC@.
 * The engine only: what a name means is the caller's lookup (a service's
 * vars while attrs computes them, or the finished vars afterwards), so the
 * same syntax holds in defaults, env, commands, template destinations and
 * setup steps.
 */
#ifndef GITLAB_CTL_PLACEHOLDER_H
#define GITLAB_CTL_PLACEHOLDER_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The value of the name (len bytes, not NUL-terminated) used on catalog
 * line `line`, or NULL: unknown (the lookup reports why, or sets errno).
 */
typedef const char *(*ph_lookup_fn)(void *ctx, const char *name, size_t len, int line);

/*
 * Expand {{name}} through lookup and @JEMALLOC@ to the jemalloc found at
 * build time; an unclosed "{{" is kept as text. {{FILTER name}} puts the
 * value through a format's quoting (lib/quote.h): conninfo (a libpq
 * conninfo value), url_auth ("//:PASSWORD@" percent-encoded, "" when empty),
 * resp (a RESP bulk string), not (a boolean's opposite). Returns a malloc'ed string, or NULL when a
 * lookup failed.
 */
char *ph_expand(const char *tmpl, ph_lookup_fn lookup, void *ctx, int line);

/* The length of name's "FILTER " prefix (len bytes of name), 0 when it has none. */
size_t ph_filter_len(const char *name, size_t len);

/* Copy name (len bytes) into key as a C string: false when it does not fit (EINVAL). */
bool ph_key(const char *name, size_t len, char *key, size_t keylen);

#endif
