/* The Redis master the sentinels name (see redisfollow.h). */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/redisfollow.h"
#include "lib/yval.h"
#include "proc/sentinelask.h"

#define ASK_MS        1000
#define MAX_SENTINELS 16

struct target {
	char host[256];
	int port;
	const char *password;
};

static int to_port(const char *s)
{
	const char *e = NULL;
	return s ? (int)strtonum(s, 1, 65535, &e) : 0;
}

static size_t targets(const struct attrs *a, struct target *t, size_t max)
{
	size_t n = 0;
	const struct svc *s = attrs_svc(a, "sentinel");
	if (s != NULL && s->enabled && s->listen_host != NULL && s->listen_port > 0) {
		snprintf(t[n].host, sizeof t[n].host, "%s", s->listen_host);
		t[n].port = s->listen_port;
		t[n++].password = svc_var(s, "password");
	}
	const struct svc *x = attrs_svc(a, "gitlab_exporter");
	const struct yval *l = x ? svc_data(x, "redis_sentinels") : NULL;
	for (size_t i = 0; l != NULL && l->kind == YV_SEQ && i < l->n && n < max; i++) {
		const struct yval *h = yval_get(l->items[i], "host"),
		                  *p = yval_get(l->items[i], "port");
		if (h == NULL || h->text == NULL)
			continue;
		int port = p && p->text ? to_port(p->text) : 26379;
		if (port == 0 ||
		    snprintf(t[n].host, sizeof t[n].host, "%s", h->text) >= (int)sizeof t[n].host)
			continue;
		t[n].port = port;
		t[n++].password = svc_var(x, "redis_sentinel_password");
	}
	return n;
}

int redis_master_now(const struct attrs *a, int timeout_ms, char *ip, size_t iplen, int *port,
                     struct diags *d, bool report)
{
	struct target t[MAX_SENTINELS];
	size_t n = targets(a, t, MAX_SENTINELS);
	const struct svc *r = attrs_svc(a, "redis");
	const char *name = r ? svc_var(r, "master_name") : NULL;
	if (n == 0 || name == NULL)
		return 1;
	for (size_t i = 0; i < n; i++) {
		char err[256];
		int rc = sentinel_ask(t[i].host, t[i].port, t[i].password, name, timeout_ms, ip,
		                      iplen, port, err, sizeof err);
		if (rc == 0)
			return 0;
		if (report)
			diag_add(d, DIAG_NOTE, "sentinel %s:%d: %s", t[i].host, t[i].port,
			         rc == 1 ? "knows no master of that name" : err);
	}
	return -1;
}

/* Is ip one of this host's addresses (or redis' announce_ip or a bind address)? */
static bool local_address(const struct svc *r, const char *ip)
{
	const char *ann = svc_var(r, "announce_ip");
	if (ann != NULL && ann[0] != '\0')
		return strcmp(ann, ip) == 0; /* behind NAT: the one address the others see */
	struct ifaddrs *ifs = NULL;
	if (getifaddrs(&ifs) == -1)
		return false;
	bool mine = false;
	for (const struct ifaddrs *i = ifs; i != NULL && !mine; i = i->ifa_next) {
		char txt[INET6_ADDRSTRLEN];
		const void *addr = NULL;
		if (i->ifa_addr == NULL)
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			addr = &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
		else if (i->ifa_addr->sa_family == AF_INET6)
			addr = &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr;
		if (addr != NULL &&
		    inet_ntop(i->ifa_addr->sa_family, addr, txt, sizeof txt) != NULL)
			mine = strcmp(txt, ip) == 0;
	}
	freeifaddrs(ifs);
	return mine;
}

void redis_follow(struct attrs *a, struct diags *d)
{
	const struct svc *r = attrs_svc(a, "redis");
	if (r == NULL || !r->enabled)
		return;
	char ip[256];
	int port = 0;
	if (redis_master_now(a, ASK_MS, ip, sizeof ip, &port, d, false) != 0)
		return;
	const char *ann_port = svc_var(r, "announce_port");
	int own = ann_port && ann_port[0] ? to_port(ann_port) : to_port(svc_var(r, "port"));
	bool self = port == own && local_address(r, ip);
	const char *was_ip = svc_var(r, "master_ip"), *was_master = svc_var(r, "master");
	int was_port = to_port(svc_var(r, "master_port"));
	bool same = was_ip && strcmp(was_ip, ip) == 0 && was_port == port && was_master &&
	            strcmp(was_master, self ? "true" : "false") == 0;
	char num[16];
	snprintf(num, sizeof num, "%d", port);
	if (attrs_set_var(a, "redis", "master_ip", ip) == -1 ||
	    attrs_set_var(a, "redis", "master_port", num) == -1 ||
	    attrs_set_var(a, "redis", "master", self ? "true" : "false") == -1)
		return;
	if (!same)
		diag_out(
		    d, "redis: the sentinels' master is %s:%d%s, not gitlab.rb's: rendering that\n",
		    ip, port, self ? " (this node)" : "");
}
