/*
 * sentinelconf: the sentinel.conf a Sentinel starts from. Sentinel rewrites its own file
 * (the master it follows after a failover, its id, epochs, the replicas and sentinels it
 * found), so the file is its account's; root renders its own copy elsewhere. This merges
 * the two, in the account's process: the rendered lines, with the monitored master's
 * address and Sentinel's state taken from the live file, so that gitlab.rb never resets
 * a failover (Omnibus #9989) and a changed quorum, timeout or password still applies.
 */
#ifndef GITLAB_CTL_SENTINELCONF_H
#define GITLAB_CTL_SENTINELCONF_H

#include <stddef.h>

#include "lib/buf.h"

/*
 * Append to out the rendered file (rlen bytes) merged with the live one (llen bytes, NULL
 * for none): `sentinel monitor NAME IP PORT QUORUM` takes IP and PORT from the live file's
 * line for the same NAME; the live lines `sentinel myid` (unless rendered), `current-epoch`
 * and NAME's `config-epoch`, `leader-epoch`, `known-replica`/`known-slave` and
 * `known-sentinel` follow, as Sentinel wrote them. Anything else of the live file is
 * dropped: the rendered settings win.
 */
void sentinelconf_merge(const char *rendered, size_t rlen, const char *live, size_t llen,
                        struct buf *out);

#endif
