/*
 * sentinelask: which Redis is the master now? One sentinel asked over TCP, Redis' own
 * protocol: AUTH with the sentinel's password (when there is one), then SENTINEL
 * get-master-addr-by-name NAME, within a deadline. For reconfigure (a failover is never
 * undone by rendering gitlab.rb's master) and gitlab-ctl get-redis-master. The password
 * travels in the request only, never on a command line.
 */
#ifndef GITLAB_CTL_SENTINELASK_H
#define GITLAB_CTL_SENTINELASK_H

#include <stddef.h>

/*
 * Ask the sentinel at host:port (a wildcard host: loopback) for master `name` within
 * timeout_ms. 0 with the master's address in ip (iplen bytes) and *mport; 1 when the sentinel
 * knows no such master; -1 with a reason in err (no answer, refused password, not RESP).
 */
int sentinel_ask(const char *host, int port, const char *password, const char *name, int timeout_ms,
                 char *ip, size_t iplen, int *mport, char *err, size_t errlen);

/*
 * Parse the replies to AUTH (when authed) and get-master-addr-by-name in buf[0, len):
 * 0 with ip and *mport; 1 a null reply (no such master); 2 incomplete (read more); -1 with
 * err. Exposed for the unit test.
 */
int sentinel_parse(const char *buf, size_t len, int authed, char *ip, size_t iplen, int *mport,
                   char *err, size_t errlen);

#endif
