/*
 * quote: how each file format gitlab-ctl writes holds one value. Pure
 * functions: a value in, its bytes for that format appended to out, or -1
 * with *why saying what the format cannot hold (out is then unchanged). A
 * refusal is better than a value that changes the meaning of the line it
 * lands in, or one that passes check-config and then stops the service.
 *
 * The template filters of render/template.h and the placeholder filters of
 * config/placeholder.h call these; nothing here knows where a value came from.
 */
#ifndef GITLAB_CTL_QUOTE_H
#define GITLAB_CTL_QUOTE_H

#include <stdbool.h>

#include "lib/buf.h"
#include "lib/yval.h"

/* A quoting that can refuse: 0, or -1 with *why (a static string). */
typedef int (*quote_fn)(struct buf *out, const char *v, const char **why);

/* One POSIX shell word, single-quoted ('it'\''s'). Never refuses. */
void quote_sh(struct buf *out, const char *v);

/*
 * A YAML 1.1/1.2 double-quoted scalar, quotes included: \" \\ and every
 * control character escaped, NEL/LS/PS escaped, invalid UTF-8 as U+FFFD.
 * Never refuses.
 */
void quote_yaml(struct buf *out, const char *v);

/*
 * postgresql.conf: a single-quoted string ('' for a quote, \\ for a
 * backslash, which the GUC scanner would otherwise unescape). Refuses
 * control characters (a newline ends the setting).
 */
int quote_pg_string(struct buf *out, const char *v, const char **why);

/* The inside of a postgresql.conf string ('{{pg_part dir}}/pg_hba.conf'): as quote_pg_string, no
 * quotes. */
int quote_pg_part(struct buf *out, const char *v, const char **why);

/* postgresql.conf: a number with an optional unit (128MB, 0.5, 30s, -1), single-quoted. */
int quote_pg_number(struct buf *out, const char *v, const char **why);

/*
 * postgresql.conf listen_addresses: '' (none), '*', or host names and IP
 * addresses separated by commas, single-quoted.
 */
int quote_pg_hosts(struct buf *out, const char *v, const char **why);

/*
 * pg_hba.conf / pg_ident.conf: one user or role name token, unquoted. Only
 * [A-Za-z0-9_][A-Za-z0-9_.-]* up to 63 bytes, and none of the keywords
 * (all, sameuser, samerole, samegroup, replication): quotes, '+', '/', '@',
 * commas or spaces would make it a group, regex, file include or a list.
 */
int quote_pg_token(struct buf *out, const char *v, const char **why);

/*
 * pg_hba.conf: per IPv4/IPv6 address of an array (an optional /prefix; one host when
 * missing), "host all all ADDR/PREFIX md5" and the same for replication. Host names and
 * keywords are refused.
 */
int quote_pg_hba_md5(struct buf *out, const struct yval *v, const char **why);
/* The same lines as items of patroni.yml's postgresql.pg_hba list ("    - host ..."). */
int quote_patroni_hba_md5(struct buf *out, const struct yval *v, const char **why);

/*
 * A role's stored md5 password (SQL and psql's \set alike): "md5" and the 32 lowercase hex
 * digits of gitlab-ctl pg-password-md5 (Omnibus' postgresql['sql_user_password']), which the
 * value may already start with. Anything else (a plain password) is refused.
 */
int quote_pg_md5(struct buf *out, const char *v, const char **why);

/*
 * A libpq conninfo value: as is when it has no space, quote or backslash,
 * else single-quoted with \' and \\. Never refuses.
 */
void quote_conninfo(struct buf *out, const char *v);

/*
 * redis.conf: one argument, double-quoted as Redis' sdssplitargs reads it
 * (\" \\ \n \r \t, other control bytes as \xHH). Never refuses.
 */
void quote_redis_arg(struct buf *out, const char *v);

/* redis.conf: an ACL user's password as its ">password" rule, one quoted argument. */
int quote_redis_acl_pass(struct buf *out, const char *v, const char **why);

/* redis.conf: a memory size, digits and an optional unit b k kb m mb g gb (any case). */
int quote_redis_memory(struct buf *out, const char *v, const char **why);

/* redis.conf: a boolean setting's "true"/"false" as Redis' yes/no. */
int quote_redis_bool(struct buf *out, const char *v, const char **why);

/*
 * redis.conf client-output-buffer-limit's three arguments "HARD SOFT SECONDS":
 * two memory sizes and whole seconds, single spaces between them.
 */
int quote_redis_obl(struct buf *out, const char *v, const char **why);

/*
 * Data (a gitlab.rb array or hash) as whole redis.conf lines, joined by
 * newlines, no newline after the last; nothing for nil. 0, or -1 with *why.
 */
typedef int (*quote_data_fn)(struct buf *out, const struct yval *v, const char **why);

/*
 * redis['save']: each string "SECONDS CHANGES [SECONDS CHANGES...]" a save
 * line; an empty string among them a single `save ""` (no snapshots); an
 * empty array no line (Redis' own default).
 */
int quote_redis_save(struct buf *out, const struct yval *v, const char **why);

/*
 * redis['rename_commands']: { 'COMMAND' => 'NEWNAME' } as rename-command
 * lines, the new name quoted ("" disables it). AUTH and PING are refused:
 * gitlab-ctl's readiness check sends them.
 */
int quote_redis_renames(struct buf *out, const struct yval *v, const char **why);

/*
 * redis.conf bind: addresses separated by spaces, each an IPv4/IPv6 address,
 * a host name or *, optionally prefixed with '-' (Redis: skip if unavailable).
 */
int quote_redis_bind(struct buf *out, const char *v, const char **why);

/* A listen address ("host:port", "[::1]:port", or a bare host) whose host is a loopback one, else
 * refused. */
int quote_listen_loopback(struct buf *out, const char *v, const char **why);
/* The same, for a listener whose only credentials are TLS client certificates (redis-exporter). */
int quote_listen_loopback_tls(struct buf *out, const char *v, const char **why);

/* A bare host that is a loopback one, else refused: a listener without authentication. */
int quote_host_loopback(struct buf *out, const char *v, const char **why);
/* A host as a URL writes it: a name or IPv4 address as is, an IPv6 address in brackets. */
int quote_url_host(struct buf *out, const char *v, const char **why);

/* quote_redis_bind, and every address a loopback one (127.0.0.0/8, ::1, localhost). */
int quote_redis_bind_loopback(struct buf *out, const char *v, const char **why);
/* The same for Sentinel's bind, the refusal naming sentinel['password']. */
int quote_sentinel_bind_loopback(struct buf *out, const char *v, const char **why);
/* A Sentinel master name: 1 to 64 of [A-Za-z0-9._-], written as is (it is compared as a word). */
int quote_redis_name(struct buf *out, const char *v, const char **why);
/* Sentinel's myid: 40 lowercase hex digits. */
int quote_redis_myid(struct buf *out, const char *v, const char **why);

/* A file mode in octal (770, 0660) that grants others nothing: no world bits. */
int quote_mode_private(struct buf *out, const char *v, const char **why);

/* "//:PASSWORD@" with the password percent-encoded (RFC 3986 userinfo); "" when v is empty. */
void quote_url_auth(struct buf *out, const char *v);

/* A RESP bulk string: "$LEN\r\nBYTES\r\n" (a Redis command argument of any bytes). */
void quote_resp(struct buf *out, const char *v);

#endif
