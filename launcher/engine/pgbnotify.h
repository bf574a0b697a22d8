/*
 * pgbnotify: re-point one of PgBouncer's databases at another host, as Omnibus' gitlab-ctl
 * pgb-notify: the account's databases.ini (the one PgBouncer includes with the watcher) is
 * written anew from root's rendered one with that database's host replaced, as the account,
 * then through PgBouncer's admin console (its socket, as the account, which PgBouncer lets in
 * as `pgbouncer` without a password) the database is RESUMEd if it was paused and PgBouncer
 * RELOADs. Run by root (gitlab-ctl pgb-notify) or by the account itself (the watcher).
 */
#ifndef GITLAB_CTL_PGBNOTIFY_H
#define GITLAB_CTL_PGBNOTIFY_H

#include "lib/buf.h"
#include "lib/diag.h"

struct pgb_target {
	const char *rendered;     /* root's databases.ini, readable by the account's group */
	const char *live;         /* the account's copy PgBouncer includes */
	const char *socket;       /* PgBouncer's unix_socket_dir */
	const char *port;         /* its listen_port */
	const char *psql;         /* an absolute psql */
	const char *admin;        /* the admin console's user: pgbouncer */
	const char *user, *group; /* the account, when root */
};

/*
 * rendered's text with db's host value replaced by host (lib/pgbquote's quoting) into out.
 * 0, or -1 with why when rendered has no line for db.
 */
int pgb_databases_with(const char *rendered, const char *db, const char *host, struct buf *out,
                       const char **why);

/*
 * Write t->live as the rendered text with db's host set to host, RESUME db if PgBouncer has
 * it paused, RELOAD. 0, or -1 with the reason in d (nothing is written when db is unknown).
 */
int pgb_notify(const struct pgb_target *t, const char *db, const char *host, struct diags *d);

#endif
