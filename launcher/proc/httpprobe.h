/*
 * httpprobe: does an HTTP endpoint answer? One GET over HTTP/1.0 with a
 * deadline, for `inspect` (is /metrics served on the configured address).
 */
#ifndef GITLAB_CTL_HTTPPROBE_H
#define GITLAB_CTL_HTTPPROBE_H

#include <stddef.h>

/*
 * GET path from host:port (every address getaddrinfo gives, in order; the
 * wildcard addresses 0.0.0.0 and :: mean the loopback) within timeout_ms in
 * total, with an Authorization: Basic header when userpass ("USER:PASSWORD")
 * is not NULL. Returns the HTTP status code (e.g. 200), or -1 with a reason in err.
 */
int http_probe(const char *host, int port, const char *path, const char *userpass, int timeout_ms,
               char *err, size_t errlen);

/* Parse "HTTP/1.x NNN ..." -> NNN, or -1. */
int http_status_code(const char *line, size_t len);

#endif
