/* One HTTP/1.0 GET with a deadline: non-blocking connect and poll, no library. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/connhost.h"
#include "lib/clock.h"
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

/* "Authorization: Basic BASE64(userpass)\r\n" into out, or "" for none. */
static void basic_auth(const char *userpass, char *out, size_t len)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	out[0] = '\0';
	if (userpass == NULL)
		return;
	size_t n = strlen(userpass), o = 0;
	const unsigned char *p = (const unsigned char *)userpass;
	o = (size_t)snprintf(out, len, "Authorization: Basic ");
	for (size_t i = 0; i < n && o + 8 < len; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
		             (i + 2 < n ? p[i + 2] : 0);
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	snprintf(out + o, len - o, "\r\n");
}

/* Send the request and read the status line. Returns the code, or -1 with err. */
static int exchange(int fd, const char *host, const char *path, const char *userpass, long deadline,
                    char *err, size_t errlen)
{
	char req[1024], auth[600], resp[256];
	basic_auth(userpass, auth, sizeof auth);
	int n = snprintf(req, sizeof req,
	                 "GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: gitlab-ctl-inspect\r\n%s\r\n",
	                 path, host, auth);
	explicit_bzero(auth, sizeof auth);
	if (n < 0 || (size_t)n >= sizeof req) {
		snprintf(err, errlen, "request too long");
		return -1;
	}
	ssize_t sent = send(fd, req, (size_t)n, MSG_NOSIGNAL);
	explicit_bzero(req, sizeof req);
	if (sent != n) {
		snprintf(err, errlen, "send: %s", strerror(errno));
		return -1;
	}
	size_t len = 0;
	while (len < sizeof resp - 1 && memchr(resp, '\n', len) == NULL) {
		ssize_t got = read_by(fd, resp + len, sizeof resp - 1 - len, deadline, err, errlen);
		if (got <= 0)
			return -1;
		len += (size_t)got;
	}
	int code = http_status_code(resp, len);
	if (code == -1)
		snprintf(err, errlen, "not an HTTP answer");
	return code;
}

int http_probe(const char *host, int port, const char *path, const char *userpass, int timeout_ms,
               char *err, size_t errlen)
{
	host = connect_host(host);
	long deadline = mono_ms() + timeout_ms;
	int fd = connect_tcp(host, port, deadline, err, errlen);
	if (fd == -1)
		return -1;
	int code = exchange(fd, host, path, userpass, deadline, err, errlen);
	close(fd);
	return code;
}
