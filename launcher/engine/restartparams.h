/*
 * restartparams: which changed parameters of a config a HUP does not take up.
 *
 * PostgreSQL rereads postgresql.conf on SIGHUP but keeps a postmaster-context
 * parameter (shared_buffers, wal_level, ...) until it restarts. Reconfigure
 * reloads, and names those parameters so the operator restarts at a time of
 * their choosing, as Omnibus does. The contexts come from the server's own
 * list (postgres --describe-config: name, context, ... tab-separated).
 */
#ifndef GITLAB_CTL_RESTARTPARAMS_H
#define GITLAB_CTL_RESTARTPARAMS_H

#include <stddef.h>

#include "lib/buf.h"

/*
 * The names of the `name = value` lines that differ between old and new (added, removed
 * or changed) whose context the listing gives as "postmaster", ", "-separated into out.
 */
void restartparams_changed(const char *listing, const char *old, size_t oldlen, const char *new,
                           size_t newlen, struct buf *out);

#endif
