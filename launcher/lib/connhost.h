/*
 * connhost: where to connect to reach a server given the host it listens on, and the one
 * connect with a deadline. A wildcard ("", "*", "0.0.0.0", Prometheus' ":9100" form) is
 * reached on loopback, "::" on ::1; any other host as written. The one mapping and the one
 * connect for every probe (HTTP, TCP, unix sockets, inspect's /metrics).
 */
#ifndef GITLAB_CTL_CONNHOST_H
#define GITLAB_CTL_CONNHOST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* listen may be NULL (no address configured): loopback. */
const char *connect_host(const char *listen);

/* Whether listen (NULL too) is a wildcard: "", "*", "0.0.0.0", "::" or "[::]". */
bool listen_any(const char *listen);

/*
 * The server's name in a scrape target or a URL: "localhost:PORT" for a wildcard (Omnibus'
 * targets), else host_port's. -1 when it does not fit; strlen(listen) + 9 always does.
 */
int target_host_port(char *out, size_t len, const char *listen, int port);

/* host:port into out, an IPv6 host in brackets; -1 when it does not fit (out cut). */
int host_port(char *out, size_t len, const char *host, int port);

/*
 * A non-blocking, close-on-exec stream socket connected to sa by deadline (lib/clock.h).
 * The fd, or -1 with errno (ETIMEDOUT when the deadline passed first).
 */
int connect_by(const struct sockaddr *sa, socklen_t salen, long deadline);

/*
 * connect_by to host:port (host as connect_host gives it), trying each address getaddrinfo
 * gives in order until one connects. The fd, or -1 with the one wording of why in err:
 * "connect: REASON" (errno that of the last address tried) or "resolve: REASON" (errno
 * EHOSTUNREACH). Callers add only their own context (what they were reaching), so the
 * address is not in err.
 */
int connect_tcp(const char *host, int port, long deadline, char *err, size_t errlen);

/*
 * One read of at most n bytes of a peer's answer on a non-blocking fd, waiting until deadline:
 * the bytes read; 0 at EOF, with "connection closed without an answer" in err; -1 with "no
 * answer in time" or the error in err. The one wording of every probe's reads.
 */
ssize_t read_by(int fd, void *p, size_t n, long deadline, char *err, size_t errlen);

#endif
