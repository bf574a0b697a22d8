/* One HTTP/1.0 GET with a deadline: non-blocking connect and poll, no library. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/connhost.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "proc/httpprobe.h"

int http_status_code(const char *line, size_t len)
{
	/* "HTTP/1.0 200 OK" or "HTTP/1.1 200 OK" */
	if (len < 12 || strncmp(line, "HTTP/1.", 7) != 0 || line[8] != ' ')
		return -1;
	int code = 0;
	for (int i = 9; i < 12; i++) {
		if (line[i] < '0' || line[i] > '9')
			return -1;
		code = code * 10 + (line[i] - '0');
	}
	if (len > 12 && line[12] != ' ' && line[12] != '\r' && line[12] != '\n')
		return -1;
	return code;
}

/* Send the request and read the status line. Returns the code, or -1 with err. */
static int exchange(int fd, const char *host, const char *path, long deadline, char *err,
                    size_t errlen)
{
	char req[512], resp[256];
	int n = snprintf(req, sizeof req,
	                 "GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: gitlab-ctl-inspect\r\n\r\n",
	                 path, host);
	if (n < 0 || (size_t)n >= sizeof req) {
		snprintf(err, errlen, "request too long");
		return -1;
	}
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
		snprintf(err, errlen, "send: %s", strerror(errno));
		return -1;
	}
	size_t len = 0;
	while (len < sizeof resp - 1 && memchr(resp, '\n', len) == NULL) {
		int r = poll_until(fd, POLLIN, deadline);
		if (r <= 0) {
			snprintf(err, errlen, "%s", r == 0 ? "no answer in time" : strerror(errno));
			return -1;
		}
		ssize_t got = fdio_read(fd, resp + len, sizeof resp - 1 - len);
		if (got == -1 && errno == EAGAIN)
			continue;
		if (got <= 0) {
			snprintf(err, errlen, "%s",
			         got == 0 ? "connection closed without an answer"
			                  : strerror(errno));
			return -1;
		}
		len += (size_t)got;
	}
	int code = http_status_code(resp, len);
	if (code == -1)
		snprintf(err, errlen, "not an HTTP answer");
	return code;
}

int http_probe(const char *host, int port, const char *path, int timeout_ms, char *err,
               size_t errlen)
{
	host = connect_host(host);
	long deadline = mono_ms() + timeout_ms;
	int fd = connect_tcp(host, port, deadline, err, errlen);
	if (fd < 0) {
		if (fd == -1)
			snprintf(err, errlen, "connect: %s", strerror(errno));
		return -1;
	}
	int code = exchange(fd, host, path, deadline, err, errlen);
	close(fd);
	return code;
}
