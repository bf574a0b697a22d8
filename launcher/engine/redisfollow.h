/*
 * redisfollow: the Redis master the sentinels name, for reconfigure and get-redis-master.
 * The sentinels asked, in turn: this node's (when sentinel runs here: its listen address,
 * port and password), then gitlab_exporter['redis_sentinels'] (gitlab_rails['redis_sentinels'],
 * with redis_sentinel_password). A reconfigure renders the master the first answer names, so
 * it never undoes a failover: replicaof that master, or none when it is this node.
 */
#ifndef GITLAB_CTL_REDISFOLLOW_H
#define GITLAB_CTL_REDISFOLLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "config/attrs.h"
#include "lib/diag.h"

/*
 * Ask each sentinel in turn for redis['master_name'] (timeout_ms each): 0 with the first
 * answer in ip (iplen) and *port; 1 when no sentinel is configured; -1 when none answered
 * (each one's reason a DIAG_NOTE in d when report).
 */
int redis_master_now(const struct attrs *a, int timeout_ms, char *ip, size_t iplen, int *port,
                     struct diags *d, bool report);

/*
 * With Redis enabled here and a sentinel to ask: set redis' master_ip, master_port and master
 * (true when the answer is this node) to what the sentinel says, saying so on d->live when
 * that differs from gitlab.rb. Nothing when no sentinel answers (a first start).
 */
void redis_follow(struct attrs *a, struct diags *d);

#endif
