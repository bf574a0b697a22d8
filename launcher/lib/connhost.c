/* Listen host to connect host, and connecting by a deadline (see connhost.h). */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/connhost.h"
#include "lib/fdio.h"

static bool listen_v6_any(const char *listen)
{
	return strcmp(listen, "::") == 0 || strcmp(listen, "[::]") == 0;
}

bool listen_any(const char *listen)
{
	return listen == NULL || listen[0] == '\0' || strcmp(listen, "*") == 0 ||
	       strcmp(listen, "0.0.0.0") == 0 || listen_v6_any(listen);
}

const char *connect_host(const char *listen)
{
	if (!listen_any(listen))
		return listen;
	return listen != NULL && listen_v6_any(listen) ? "::1" : "127.0.0.1";
}

int target_host_port(char *out, size_t len, const char *listen, int port)
{
	return host_port(out, len, listen_any(listen) ? "localhost" : listen, port);
}

int host_port(char *out, size_t len, const char *host, int port)
{
	bool v6 = strchr(host, ':') != NULL;
	int n = snprintf(out, len, "%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "", port);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int connect_by(const struct sockaddr *sa, socklen_t salen, long deadline)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	if (connect(fd, sa, salen) == 0)
		return fd;
	int soerr = errno;
	if (soerr == EINPROGRESS) {
		socklen_t sl = sizeof soerr;
		int r = poll_until(fd, POLLOUT, deadline);
		if (r == 0)
			soerr = ETIMEDOUT;
		else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == -1)
			soerr = errno;
		if (soerr == 0)
			return fd;
	}
	close(fd);
	errno = soerr;
	return -1;
}

int connect_tcp(const char *host, int port, long deadline, char *err, size_t errlen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res;
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	int gai = getaddrinfo(host, ps, &hints, &res);
	if (gai != 0) {
		snprintf(err, errlen, "resolve: %s", gai_strerror(gai));
		errno = EHOSTUNREACH;
		return -1;
	}
	int fd = -1;
	errno = EADDRNOTAVAIL;
	for (const struct addrinfo *ai = res; ai != NULL && fd == -1; ai = ai->ai_next)
		fd = connect_by(ai->ai_addr, ai->ai_addrlen, deadline);
	int e = errno;
	freeaddrinfo(res);
	if (fd == -1)
		snprintf(err, errlen, "connect: %s", strerror(e));
	errno = e;
	return fd;
}

ssize_t read_by(int fd, void *p, size_t n, long deadline, char *err, size_t errlen)
{
	for (;;) {
		int r = poll_until(fd, POLLIN, deadline);
		if (r <= 0) {
			snprintf(err, errlen, "%s", r == 0 ? "no answer in time" : strerror(errno));
			return -1;
		}
		ssize_t got = fdio_read(fd, p, n);
		if (got == -1 && errno == EAGAIN)
			continue;
		if (got <= 0)
			snprintf(err, errlen, "%s",
			         got == 0 ? "connection closed without an answer"
			                  : strerror(errno));
		return got;
	}
}
