/*
 * pgbquote: PgBouncer's file formats. pgbouncer.ini takes a value as the rest of its line
 * (no quoting, ';' and '#' start a comment only at a line's start); a [databases] entry is
 * NAME = a connection string of key=value pairs whose values may be single-quoted ('' for a
 * quote, PgBouncer 1.18's loader); userlist.txt is "name" "password" lines ("" for a quote).
 * Every function refuses what its format cannot hold (why names it) and writes nothing then.
 */
#ifndef GITLAB_CTL_PGBQUOTE_H
#define GITLAB_CTL_PGBQUOTE_H

#include "lib/buf.h"
#include "lib/yval.h"

/* A pgbouncer.ini value: letters, digits and . _ - : , * / @ + only, not empty. */
int quote_pgb_value(struct buf *out, const char *v, const char **why);

/* One value of a [databases] connection string, always single-quoted; no control bytes. */
void quote_pgb_connval(struct buf *out, const char *v);

/*
 * pgbouncer['databases'] = { NAME => { 'host' => H, 'port' => P, 'dbname' => D, 'user' => U,
 * 'password' => W, 'pool_size' => N, ... } }: one "NAME = host=... key=..." line each, host
 * first (pgbnotify re-points that value). NAME is letters, digits, '_', '.', '-'; a key is
 * one of PgBouncer's connection-string keys; values through quote_pgb_connval.
 */
int quote_pgb_databases(struct buf *out, const struct yval *v, const char **why);

/* pgbouncer['users'] = { NAME => { 'password' => HASH } }: userlist.txt's "NAME" "HASH" lines. */
int quote_pgb_users(struct buf *out, const struct yval *v, const char **why);

/* An array of role names (admin_users, stats_users) as "a,b" (names as in [databases]). */
int quote_pgb_names(struct buf *out, const struct yval *v, const char **why);

#endif
