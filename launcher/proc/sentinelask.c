/* Ask a sentinel for the current master (see sentinelask.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/ascii.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/connhost.h"
#include "lib/quote.h"
#include "proc/sentinelask.h"

/* One line at *p ending in CRLF: its length without CRLF, or -1 when incomplete. */
static long line_at(const char *p, const char *end)
{
	for (const char *q = p; q + 1 < end; q++)
		if (q[0] == '\r' && q[1] == '\n')
			return q - p;
	return -1;
}

/* A decimal in s[0, n) (a leading '-' allowed): false when it is none. */
static bool number(const char *s, long n, long *out)
{
	long v = 0, i = 0;
	bool neg = n > 0 && s[0] == '-';
	i = neg;
	if (i >= n || n > 12)
		return false;
	for (; i < n; i++) {
		if (!ascii_digit(s[i]))
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = neg ? -v : v;
	return true;
}

/* A bulk string at *p: copied into out (outlen), *p moved past it. 0; 2 incomplete; -1. */
static int bulk(const char **p, const char *end, char *out, size_t outlen)
{
	long n = line_at(*p, end), len;
	if (n < 0)
		return 2;
	if (**p != '$' || !number(*p + 1, n - 1, &len) || len < 0 || (size_t)len >= outlen)
		return -1;
	const char *data = *p + n + 2;
	if (end - data < len + 2)
		return 2;
	memcpy(out, data, (size_t)len);
	out[len] = '\0';
	*p = data + len + 2;
	return 0;
}

int sentinel_parse(const char *buf, size_t len, int authed, char *ip, size_t iplen, int *mport,
                   char *err, size_t errlen)
{
	const char *p = buf, *end = buf + len;
	if (authed) {
		long n = line_at(p, end);
		if (n < 0)
			return 2;
		if (*p != '+') {
			/* an error line of the sentinel's own: shown cut, never the request */
			snprintf(err, errlen, "AUTH refused: %.*s", (int)(n > 80 ? 80 : n), p);
			return -1;
		}
		p += n + 2;
	}
	long n = line_at(p, end), count;
	if (n < 0)
		return 2;
	if (*p == '-') {
		snprintf(err, errlen, "%.*s", (int)(n > 80 ? 80 : n), p);
		return -1;
	}
	if (*p != '*' || !number(p + 1, n - 1, &count)) {
		snprintf(err, errlen, "not a Redis answer");
		return -1;
	}
	if (count == -1)
		return 1;
	if (count != 2) {
		snprintf(err, errlen, "an answer of %ld elements, not 2", count);
		return -1;
	}
	p += n + 2;
	char port[16];
	int r = bulk(&p, end, ip, iplen);
	if (r == 0)
		r = bulk(&p, end, port, sizeof port);
	if (r == 2)
		return 2;
	long pv;
	if (r == -1 || !number(port, (long)strlen(port), &pv) || pv < 1 || pv > 65535) {
		snprintf(err, errlen, "not an address answer");
		return -1;
	}
	for (const char *c = ip; *c; c++)
		if (!(ascii_alnum(*c) || *c == '.' || *c == ':' || *c == '-' || *c == '_')) {
			snprintf(err, errlen, "not an address answer");
			return -1;
		}
	*mport = (int)pv;
	return 0;
}

static void arg(struct buf *b, const char *s)
{
	quote_resp(b, s);
}

int sentinel_ask(const char *host, int port, const char *password, const char *name, int timeout_ms,
                 char *ip, size_t iplen, int *mport, char *err, size_t errlen)
{
	host = connect_host(host);
	long deadline = mono_ms() + timeout_ms;
	int fd = connect_tcp(host, port, deadline, err, errlen);
	if (fd == -1)
		return -1;
	bool authed = password != NULL && password[0] != '\0';
	struct buf req, resp;
	buf_init(&req);
	buf_init(&resp);
	if (authed) {
		buf_adds(&req, "*2\r\n");
		arg(&req, "AUTH");
		arg(&req, password);
	}
	buf_adds(&req, "*3\r\n");
	arg(&req, "SENTINEL");
	arg(&req, "get-master-addr-by-name");
	arg(&req, name);
	ssize_t sent = send(fd, req.p, req.len, MSG_NOSIGNAL);
	int r = -1;
	if (sent != (ssize_t)req.len)
		snprintf(err, errlen, "send: %s", strerror(errno));
	else
		r = 2;
	while (r == 2) {
		ssize_t got = read_by(fd, buf_room(&resp, 512), 512, deadline, err, errlen);
		if (got <= 0) {
			r = -1;
			break;
		}
		buf_commit(&resp, (size_t)got);
		if (resp.len > 4096) {
			snprintf(err, errlen, "answer too long");
			r = -1;
			break;
		}
		r = sentinel_parse(resp.p, resp.len, authed, ip, iplen, mport, err, errlen);
	}
	explicit_bzero(req.p, req.len);
	buf_free(&req);
	buf_free(&resp);
	close(fd);
	return r;
}
