/*
 * connhost: where to connect to reach a server given the host it listens on. A wildcard
 * ("", "*", "0.0.0.0", Prometheus' ":9100" form) is reached on loopback, "::" on ::1; any
 * other host as written. The one mapping for every probe (HTTP, TCP, inspect's /metrics).
 */
#ifndef GITLAB_CTL_CONNHOST_H
#define GITLAB_CTL_CONNHOST_H

/* listen may be NULL (no address configured): loopback. */
const char *connect_host(const char *listen);

#endif
