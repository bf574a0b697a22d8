/* Readiness checks of the catalog, in C (see ready.h). */
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/connhost.h"
#include "lib/fdio.h"
#include "lib/pathjoin.h"
#include "lib/proctree.h"
#include "lib/readfile.h"
#include "lib/safetext.h"
#include "proc/httpprobe.h"
#include "proc/ready.h"
#include "proc/svrun.h"

#define MAX_INODES 64

struct inodes {
	unsigned long v[MAX_INODES];
	char addr[MAX_INODES][64]; /* "127.0.0.1:9168", for messages */
	size_t n;
};

/* ---- who holds a socket --------------------------------------------------------------- */

static void addr_text(const char *hex, bool v6, unsigned port, char *out, size_t len)
{
	unsigned char a[16];
	char ip[INET6_ADDRSTRLEN] = "?";
	size_t n = v6 ? 16 : 4;
	/* /proc/net/tcp prints each 32-bit word in host byte order. */
	for (size_t w = 0; w < n / 4; w++) {
		unsigned int x;
		if (sscanf(hex + w * 8, "%8x", &x) != 1)
			break;
		memcpy(a + w * 4, &x, 4);
	}
	inet_ntop(v6 ? AF_INET6 : AF_INET, a, ip, sizeof ip);
	snprintf(out, len, v6 ? "[%s]:%u" : "%s:%u", ip, port);
}

/* Listening sockets on port from one of /proc/net/tcp, tcp6. */
static void tcp_listeners(const char *file, bool v6, int port, struct inodes *in)
{
	FILE *fp = fopen(file, "re");
	char line[512], local[64];
	if (fp == NULL)
		return;
	while (fgets(line, sizeof line, fp) != NULL && in->n < MAX_INODES) {
		unsigned lport, st;
		unsigned long ino;
		/* sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, " %*d: %63[0-9A-Fa-f]:%x %*s %x %*s %*s %*s %*u %*u %lu", local,
		           &lport, &st, &ino) != 4)
			continue;
		if (st != 0x0A || (int)lport != port || ino == 0)
			continue;
		addr_text(local, v6, lport, in->addr[in->n], sizeof in->addr[0]);
		in->v[in->n++] = ino;
	}
	fclose(fp);
}

#define TCP_LISTEN_STATE 10 /* the kernel's TCP_LISTEN (include/net/tcp_states.h) */

/*
 * Listening sockets of family on port, from the kernel's sock_diag: asked for listeners only,
 * it walks its table of listeners, where reading /proc/net/tcp walks every bucket of the
 * machine's connection hash (milliseconds a read on a large host, and the port pre-flight
 * asks once per service). 0, or -1 when it does not answer (then /proc/net/tcp*).
 */
static int diag_listeners(int family, int port, struct inodes *in)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd == -1)
		return -1;
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {.nlh = {.nlmsg_len = sizeof req,
	                 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
	                 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
	         .r = {.sdiag_family = (unsigned char)family,
	               .sdiag_protocol = IPPROTO_TCP,
	               .idiag_states = 1U << TCP_LISTEN_STATE}};
	struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
	int rc = -1;
	if (sendto(fd, &req, sizeof req, 0, (struct sockaddr *)&nl, sizeof nl) !=
	    (ssize_t)sizeof req) {
		close(fd);
		return -1;
	}
	_Alignas(struct nlmsghdr) char buf[16384];
	for (;;) {
		ssize_t got = recv(fd, buf, sizeof buf, 0);
		if (got == -1 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		int len = (int)got;
		for (struct nlmsghdr *h = (struct nlmsghdr *)(void *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				rc = 0;
				goto out;
			}
			if (h->nlmsg_type == NLMSG_ERROR)
				goto out;
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
				continue;
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			unsigned lport = ntohs(m->id.idiag_sport);
			if ((int)lport != port || m->idiag_inode == 0 || in->n >= MAX_INODES)
				continue;
			char ip[INET6_ADDRSTRLEN] = "?";
			inet_ntop(family, m->id.idiag_src, ip, sizeof ip);
			snprintf(in->addr[in->n], sizeof in->addr[0],
			         family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, lport);
			in->v[in->n++] = m->idiag_inode;
		}
	}
out:
	close(fd);
	return rc;
}

/* Listening TCP sockets on port, IPv4 and IPv6. */
static void listeners(int port, struct inodes *in)
{
	size_t n0 = in->n;
	if (diag_listeners(AF_INET, port, in) == 0 && diag_listeners(AF_INET6, port, in) == 0)
		return;
	in->n = n0;
	tcp_listeners("/proc/net/tcp", false, port, in);
	tcp_listeners("/proc/net/tcp6", true, port, in);
}

/* Listening unix sockets bound to path (/proc/net/unix: flag 0x10000 is __SO_ACCEPTCON). */
static void unix_listeners(const char *path, struct inodes *in)
{
	FILE *fp = fopen("/proc/net/unix", "re");
	char line[PATH_MAX + 128];
	if (fp == NULL)
		return;
	while (fgets(line, sizeof line, fp) != NULL && in->n < MAX_INODES) {
		unsigned long flags, ino;
		int off = 0;
		if (sscanf(line, "%*x: %*x %*x %lx %*x %*x %lu %n", &flags, &ino, &off) != 2 ||
		    off == 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (!(flags & 0x10000) || strcmp(line + off, path) != 0)
			continue;
		snprintf(in->addr[in->n], sizeof in->addr[0], "%.60s", path);
		in->v[in->n++] = ino;
	}
	fclose(fp);
}

/* Does pid hold one of the inodes as an fd? */
static bool holds(pid_t pid, const struct inodes *in)
{
	char dir[64], link[PATH_MAX], target[64];
	snprintf(dir, sizeof dir, "/proc/%ld/fd", (long)pid);
	DIR *d = opendir(dir);
	if (d == NULL)
		return false;
	bool found = false;
	struct dirent *de;
	while (!found && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || path_join(link, sizeof link, dir, de->d_name) == -1)
			continue;
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		unsigned long ino;
		if (sscanf(target, "socket:[%lu]", &ino) != 1)
			continue;
		for (size_t i = 0; i < in->n && !found; i++)
			found = in->v[i] == ino;
	}
	closedir(d);
	return found;
}

static pid_t pgrp_of(pid_t pid)
{
	struct pstat ps;
	return proc_stat(pid, &ps) == -1 ? -1 : ps.pgrp;
}

/* The start of pid's command line, for a message: a long one is cut, not refused. */
static void cmdline_of(pid_t pid, char *out, size_t len)
{
	char path[64], raw[4096];
	snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
	out[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return;
	ssize_t n = fdio_read_all(fd, raw, sizeof raw);
	close(fd);
	if (n <= 0)
		return;
	for (ssize_t i = 0; i < n; i++)
		if (raw[i] == '\0')
			raw[i] = ' ';
	while (n > 0 && raw[n - 1] == ' ')
		n--;
	/* Any account names its own processes: escaped before it can reach a terminal. */
	struct buf esc;
	buf_init(&esc);
	safetext_add(&esc, raw, (size_t)n, 0);
	strlcpy(out, buf_str(&esc), len);
	buf_free(&esc);
}

/*
 * Which process holds one of the inodes: the supervised group first (its
 * leader, then members, who run under exec's own process group), else any.
 * Returns the holder's pid, 0 if none is visible; *ours tells which it is.
 */
static pid_t holder(pid_t pid, const struct inodes *in, bool *ours)
{
	*ours = false;
	if (pid > 0 && holds(pid, in)) {
		*ours = true;
		return pid;
	}
	DIR *d = opendir("/proc");
	if (d == NULL)
		return 0;
	pid_t other = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		const char *errstr;
		pid_t p = (pid_t)strtonum(de->d_name, 1, INT32_MAX, &errstr);
		if (errstr != NULL || p == pid)
			continue;
		bool member = pid > 0 && pgrp_of(p) == pid;
		if ((member || other == 0) && holds(p, in)) {
			if (member) {
				*ours = true;
				other = p;
				break;
			}
			other = p;
		}
	}
	closedir(d);
	return other;
}

int ready_port_holder(int port, pid_t *pid, char *cmd, size_t len)
{
	struct inodes in = {.n = 0};
	bool ours;
	listeners(port, &in);
	*pid = in.n ? holder(0, &in, &ours) : 0;
	if (*pid > 0)
		cmdline_of(*pid, cmd, len);
	return *pid > 0;
}

int ready_port_taken(int port, pid_t svpid, pid_t *pid, char *cmd, size_t len)
{
	struct inodes in = {.n = 0};
	bool ours;
	*pid = 0;
	cmd[0] = '\0';
	listeners(port, &in);
	if (in.n == 0)
		return 0;
	*pid = holder(svpid, &in, &ours);
	if (ours)
		return 0;
	if (*pid > 0)
		cmdline_of(*pid, cmd, len);
	return 1;
}

/* 1 when the socket is the service's; 0 with why (nobody listens, or someone else). */
static int owned(pid_t pid, const struct inodes *in, const char *what, char *why, size_t len)
{
	bool ours;
	char cmd[160];
	if (in->n == 0) {
		snprintf(why, len, "nothing listens on %s yet", what);
		return 0;
	}
	pid_t h = holder(pid, in, &ours);
	if (ours)
		return 1;
	if (h == 0) {
		snprintf(why, len, "%s is in use by a process gitlab-ctl cannot see", in->addr[0]);
		return 0;
	}
	cmdline_of(h, cmd, sizeof cmd);
	snprintf(why, len, "%s is in use by pid %ld (%s)", in->addr[0], (long)h, cmd);
	return 0;
}

/* connect_tcp, with "HOST:PORT: " before its reason in why. */
static int connect_service(const char *host, int port, long deadline, char *why, size_t len)
{
	host = connect_host(host);
	char err[200];
	int fd = connect_tcp(host, port, deadline, err, sizeof err);
	if (fd == -1) {
		char hp[300];
		(void)host_port(hp, sizeof hp, host, port); /* a cut address still names it */
		snprintf(why, len, "%s: %s", hp, err);
	}
	return fd;
}

static int connect_unix(const char *path, long deadline, char *why, size_t len)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	if (strlcpy(sun.sun_path, path, sizeof sun.sun_path) >= sizeof sun.sun_path) {
		snprintf(why, len, "socket path too long: %s", path);
		return -1;
	}
	int fd = connect_by((const struct sockaddr *)&sun, sizeof sun, deadline);
	if (fd == -1)
		snprintf(why, len, "%s: connect: %s", path, strerror(errno)); /* as connect_tcp's */
	return fd;
}

/*
 * The socket path lies in a directory the service account owns: it could
 * swap it for a link to another socket between the ownership check and the
 * connect. So the peer must be the supervised process or its group, from
 * the kernel (SO_PEERCRED), before anything is sent.
 */
static bool peer_is(int fd, pid_t pid, const char *path, char *why, size_t len)
{
	struct ucred cr;
	socklen_t sl = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) == -1) {
		snprintf(why, len, "%s: peer: %s", path, strerror(errno));
		return false;
	}
	if (cr.pid == pid || pgrp_of(cr.pid) == pid)
		return true;
	snprintf(why, len, "%s leads to pid %ld, not the supervised pid %ld", path, (long)cr.pid,
	         (long)pid);
	return false;
}

/*
 * check_send, then read until check_expect shows up in the reply. 1, or 0 with why. Both are
 * expanded here, in gitlab-ctl's memory: a {{resp password}} never reaches an argv.
 */
static int converse_with(int fd, const char *send_s, const char *expect, long deadline, char *why,
                         size_t len)
{
	char buf[1024];
	size_t got = 0;
	if (send_s != NULL) {
		size_t n = strlen(send_s);
		if (send(fd, send_s, n, MSG_NOSIGNAL) != (ssize_t)n) {
			snprintf(why, len, "send: %s", strerror(errno));
			return 0;
		}
	}
	if (expect == NULL)
		return 1;
	while (got < sizeof buf - 1) {
		ssize_t n = read_by(fd, buf + got, sizeof buf - 1 - got, deadline, why, len);
		if (n == -1)
			return 0;
		if (n == 0)
			break; /* what it said before it closed is the answer below */
		got += (size_t)n;
		buf[got] = '\0';
		if (strstr(buf, expect) != NULL)
			return 1;
	}
	buf[got] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	/* The answer is the service's: escaped before it can reach a terminal. */
	struct buf esc;
	buf_init(&esc);
	safetext_add(&esc, buf, strnlen(buf, 80), 0);
	snprintf(why, len, "answered \"%s\", not \"%s\"", buf_str(&esc), expect);
	buf_free(&esc);
	return 0;
}

static int converse(int fd, const struct attrs *a, const struct svc *s, long deadline, char *why,
                    size_t len)
{
	const struct cat_service *def = s->def;
	char *send_s = def->check_send ? attrs_expand(a, s, def->check_send) : NULL;
	char *expect = def->check_expect ? attrs_expand(a, s, def->check_expect) : NULL;
	int r = 0;
	if ((def->check_send && send_s == NULL) || (def->check_expect && expect == NULL))
		snprintf(why, len, "check_send or check_expect: unknown placeholder");
	else
		r = converse_with(fd, send_s, expect, deadline, why, len);
	if (send_s != NULL)
		explicit_bzero(send_s, strlen(send_s)); /* it may hold a password */
	free(send_s);
	free(expect);
	return r;
}

/* ---- the checks --------------------------------------------------------------------------- */

static int check_socket(const struct attrs *a, const struct svc *s, pid_t pid, long deadline,
                        char *why, size_t len)
{
	const struct cat_service *def = s->def;
	struct inodes in = {.n = 0};
	char what[PATH_MAX + 16];
	int fd;
	if (strncmp(def->check, "unix:", 5) == 0) {
		char *path = attrs_expand(a, s, def->check + 5);
		if (path == NULL) {
			snprintf(why, len, "check \"%s\": unknown placeholder", def->check);
			return 0;
		}
		unix_listeners(path, &in);
		snprintf(what, sizeof what, "%s", path);
		int r = owned(pid, &in, what, why, len);
		fd = r == 1 ? connect_unix(path, deadline, why, len) : -1;
		if (fd != -1 && !peer_is(fd, pid, path, why, len)) {
			close(fd);
			fd = -1;
		}
		free(path);
	} else {
		if (s->listen_port <= 0) {
			snprintf(why, len, "check \"%s\" needs a listen port", def->check);
			return 0;
		}
		listeners(s->listen_port, &in);
		snprintf(what, sizeof what, "%s:%d", s->listen_host ? s->listen_host : "",
		         s->listen_port);
		if (owned(pid, &in, what, why, len) != 1)
			return 0;
		/* gitlab-ctl speaks no TLS: a TLS service's http: check is the connect below. */
		if (strncmp(def->check, "http:", 5) == 0 && !svc_tls(s)) {
			char err[200], auth[512];
			int code = http_probe(connect_host(s->listen_host), s->listen_port,
			                      def->check + 5, svc_web_auth(s, auth, sizeof auth),
			                      (int)ms_until(deadline), err, sizeof err);
			explicit_bzero(auth, sizeof auth);
			if (code >= 200 && code < 400)
				return 1;
			if (code == -1)
				snprintf(why, len, "GET %s: %s", def->check + 5, err);
			else
				snprintf(why, len, "GET %s: HTTP %d", def->check + 5, code);
			return 0;
		}
		fd = connect_service(s->listen_host, s->listen_port, deadline, why, len);
	}
	if (fd == -1)
		return 0;
	int r = converse(fd, a, s, deadline, why, len);
	close(fd);
	return r;
}

static int check_command(const struct ctl *ctl, const struct attrs *a, const struct svc *s,
                         long deadline, char *why, size_t len)
{
	const struct cat_service *def = s->def;
	size_t bad;
	char **argv =
	    attrs_expand_argv(a, s, def->check_command, def->ncheck_command, NULL, NULL, &bad);
	if (argv == NULL) {
		snprintf(why, len, "check_command: cannot expand \"%s\"", def->check_command[bad]);
		return 0;
	}
	struct buf out;
	buf_init(&out);
	int rc = svrun(ctl, s, argv, deadline, &out, NULL);
	if (rc == -1)
		snprintf(why, len, "%s: %s", argv[0],
		         errno == ETIMEDOUT ? "no answer in time" : strerror(errno));
	else if (rc != 0) {
		const char *p = buf_str(&out);
		size_t n = strcspn(p, "\n");
		struct buf esc;
		buf_init(&esc);
		safetext_add(&esc, p, n > 160 ? 160 : n, 0);
		snprintf(why, len, "%s exited %d%s%s", argv[0], rc, n ? ": " : "", buf_str(&esc));
		buf_free(&esc);
	}
	buf_free(&out);
	argv_free(argv);
	return rc == 0;
}

int ready_check(const struct ctl *ctl, const struct attrs *a, const struct svc *s, pid_t pid,
                long deadline, char *why, size_t len)
{
	const struct cat_service *def = s->def;
	snprintf(why, len, "not ready");
	if (pid <= 0) {
		snprintf(why, len, "not running");
		return 0;
	}
	if (def->check != NULL && check_socket(a, s, pid, deadline, why, len) != 1)
		return 0;
	if (def->check_command != NULL && check_command(ctl, a, s, deadline, why, len) != 1)
		return 0;
	return 1;
}
