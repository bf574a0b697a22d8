/* inspect's probes of one running service (see inspect.h). */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "build_config.h"
#include "lib/alloc.h"
#include "lib/connhost.h"
#include "lib/envdir.h"
#include "lib/grow.h"
#include "proc/httpprobe.h"
#include "proc/inspect.h"
#include "proc/procinfo.h"
#include "proc/ready.h"
#include "runit/runit.h"

#define PROBE_TIMEOUT_MS 3000

static void add_name(struct inspect_names *l, const char *entry)
{
	grow(&l->v, &l->cap, l->n + 1, sizeof *l->v, 16);
	l->v[l->n++] = entry;
}

static size_t name_len(const char *entry)
{
	return strcspn(entry, "=");
}

/* Both sorted by name: one merge pass. */
static void env_diff(const struct envv *want, const struct envv *have, struct inspect_report *r)
{
	size_t i = 0, j = 0;
	while (i < want->n || j < have->n) {
		int c;
		if (i == want->n)
			c = 1;
		else if (j == have->n)
			c = -1;
		else {
			size_t a = name_len(want->v[i]), b = name_len(have->v[j]);
			c = strncmp(want->v[i], have->v[j], a < b ? a : b);
			if (c == 0)
				c = a < b ? -1 : a > b;
		}
		if (c < 0)
			add_name(&r->missing, want->v[i++]);
		else if (c > 0)
			add_name(&r->unexpected, have->v[j++]);
		else if (strcmp(want->v[i++], have->v[j++]) != 0)
			add_name(&r->changed, want->v[i - 1]);
	}
}

static void check_env(struct inspect_report *r, const struct envv *want)
{
	struct envv have;
	envv_init(&have);
	if (proc_environ(r->pid, &have) == -1) {
		snprintf(r->env_err, sizeof r->env_err, "/proc/%ld/environ: %s", (long)r->pid,
		         strerror(errno));
	} else {
		envv_sort(&have);
		env_diff(want, &have, r);
	}
	r->problems += r->env_err[0] != '\0' || r->changed.n || r->missing.n || r->unexpected.n;
	/* the names point into want's entries (changed, missing) and have's (unexpected) */
	for (size_t k = 0; k < r->unexpected.n; k++)
		r->unexpected.v[k] = xstrndup(r->unexpected.v[k], name_len(r->unexpected.v[k]));
	envv_free(&have);
}

static void env_dir_of(const struct ctl *ctl, const struct svc *s, const char *name, char *out,
                       size_t len)
{
	if (s != NULL && s->env_dir != NULL) {
		if (strlcpy(out, s->env_dir, len) >= len)
			out[0] = '\0'; /* a cut path would name another directory */
	} else if (ctl_path(ctl, out, len, GITLAB_CTL_INSTALL_DIR, "etc", name, "env",
	                    (char *)NULL) == -1)
		out[0] = '\0';
}

/* memory_budget (MB, a catalog int; 0 or unset: none) against the tree's PSS. */
static void check_budget(struct inspect_report *r, const struct svc *s)
{
	long long mb = s != NULL ? svc_int(s, "memory_budget", 0) : 0;
	if (mb <= 0 || mb > LLONG_MAX / 1024)
		return; /* no budget */
	r->budget_kb = mb * 1024;
	if (proc_tree_mem(r->pid, &r->tree, &r->tree_procs) == -1)
		return; /* the leader's smaps_rollup is unreadable: already a problem */
	r->tree_ok = true;
	r->over_budget = r->tree.pss_kb > r->budget_kb;
	r->problems += r->over_budget;
}

static void check_process(struct inspect_report *r, const struct svc *s, const struct envv *want)
{
	if (proc_mem(r->pid, &r->mem) == 0)
		r->mem_ok = true;
	check_budget(r, s);
	int found = proc_maps_find(r->pid, "libjemalloc", r->alloc_path, sizeof r->alloc_path);
	r->jemalloc = found == 1;
	const char *preload = envv_get(want, "LD_PRELOAD");
	r->want_jemalloc = preload != NULL && strstr(preload, "libjemalloc") != NULL;
	r->problems += r->want_jemalloc && !r->jemalloc;

	uid_t uid;
	if (proc_uid(r->pid, &uid) == -1) {
		snprintf(r->user, sizeof r->user, "?");
	} else {
		const struct passwd *pw = getpwuid(uid);
		if (pw != NULL)
			strlcpy(r->user, pw->pw_name, sizeof r->user);
		else
			snprintf(r->user, sizeof r->user, "%lu", (unsigned long)uid);
	}
	r->want_user = s ? s->user : NULL;
	r->problems += r->want_user != NULL && strcmp(r->user, r->want_user) != 0;
	if (!r->mem_ok)
		r->problems++;
}

static void check_metrics(struct inspect_report *r, const struct svc *s)
{
	if (s == NULL || s->listen_host == NULL || s->listen_port <= 0)
		return;
	if (s->def != NULL && s->def->check != NULL && strncmp(s->def->check, "http:", 5) != 0)
		return; /* not an HTTP service (PostgreSQL on TCP) */
	if (svc_tls(s))
		return; /* gitlab-ctl speaks no TLS; the readiness check connected */
	const char *path = "/metrics";
	if (s->def != NULL && s->def->check != NULL && strncmp(s->def->check, "http:", 5) == 0)
		path = s->def->check + 5;
	const char *host = connect_host(s->listen_host);
	char hp[300];
	(void)host_port(hp, sizeof hp, host, s->listen_port);
	if (snprintf(r->url, sizeof r->url, "http://%s%s", hp, path) < 0) /* cut: only shown */
		r->url[0] = '\0';
	/* An answer from a process outside the service (an orphan of a dead runsv) is no proof. */
	pid_t holder;
	char cmd[120];
	if (ready_port_holder(s->listen_port, &holder, cmd, sizeof cmd) == 1 && holder != r->pid &&
	    getpgid(holder) != getpgid(r->pid)) {
		r->http_code = -1;
		if (snprintf(r->http_err, sizeof r->http_err,
		             "port %d is held by pid %ld (%s), not by %s", s->listen_port,
		             (long)holder, cmd, r->name) < 0) /* a cut message is fine */
			r->http_err[0] = '\0';
		r->problems++;
		return;
	}
	char auth[512];
	r->http_code = http_probe(host, s->listen_port, path, svc_web_auth(s, auth, sizeof auth),
	                          PROBE_TIMEOUT_MS, r->http_err, sizeof r->http_err);
	explicit_bzero(auth, sizeof auth);
	r->problems += r->http_code != 200;
}

/* PromQL in a URL query value: everything but RFC 3986's unreserved characters escaped. */
static int url_encode(const char *s, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		             (*p >= '0' && *p <= '9') || strchr("-._~", *p) != NULL;
		if (o + (plain ? 1 : 3) >= len)
			return -1;
		if (plain) {
			out[o++] = (char)*p;
		} else {
			out[o++] = '%';
			out[o++] = hex[*p >> 4];
			out[o++] = hex[*p & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

/*
 * The Prometheus query that graphs the service's resident memory, and the URL
 * of that graph, when this node runs Prometheus: the process_* series every
 * exporter serves about itself, picked by the target Prometheus scrapes.
 */
static void graph_of(const struct attrs *a, const struct svc *s, struct inspect_report *r)
{
	const struct svc *prom = attrs_svc(a, "prometheus");
	char target[280], ptarget[280], enc[sizeof r->graph_query * 3];
	if (prom == NULL || !prom->enabled || prom->listen_host == NULL || s == NULL ||
	    s->listen_host == NULL || s->listen_port <= 0 ||
	    target_host_port(target, sizeof target, s->listen_host, s->listen_port) == -1 ||
	    target_host_port(ptarget, sizeof ptarget, prom->listen_host, prom->listen_port) == -1 ||
	    strpbrk(target, "\"\\") != NULL) /* no PromQL string could hold it as written */
		return;
	int n = snprintf(r->graph_query, sizeof r->graph_query,
	                 "process_resident_memory_bytes{instance=\"%s\"}", target);
	if (n < 0 || (size_t)n >= sizeof r->graph_query ||
	    url_encode(r->graph_query, enc, sizeof enc) == -1) {
		r->graph_query[0] = '\0';
		return;
	}
	n = snprintf(r->graph_url, sizeof r->graph_url,
	             "http://%s/classic/graph?g0.expr=%s&g0.tab=0", ptarget, enc);
	if (n < 0 || (size_t)n >= sizeof r->graph_url)
		r->graph_query[0] = r->graph_url[0] = '\0';
}

void inspect_service(const struct ctl *ctl, const struct svsel *sel, const struct attrs *a,
                     const char *name, struct inspect_report *r)
{
	memset(r, 0, sizeof *r);
	r->name = name;
	r->http_code = -1;
	char dir[PATH_MAX];
	struct sv_status st;
	const struct svc *s = attrs_svc(a, r->name);

	graph_of(a, s, r);
	int live = svsel_path(sel, r->name, false, dir, sizeof dir) == -1 ? -1 : sv_live(dir);
	if (live != SV_LIVE_OK || sv_read_status(dir, &st) == -1) {
		/* EACCES is not "runsv not running": a non-root caller on root's tree. */
		if (live != SV_LIVE_OK && live != -1)
			snprintf(r->state, sizeof r->state, "fail: %s: runsv not running", r->name);
		else
			snprintf(r->state, sizeof r->state, "fail: %s: supervise: %s%s", r->name,
			         strerror(errno),
			         errno == EACCES ? " (the tree is root's: run as root)" : "");
		r->problems++;
		return;
	}
	time_t now = time(NULL);
	if (st.state != SV_RUN || st.pid == 0) {
		sv_status_format(r->state, sizeof r->state, r->name, &st, !sv_normally_down(dir),
		                 now);
		r->problems++;
		return;
	}
	r->running = true;
	r->pid = st.pid;
	r->uptime = sv_status_age(&st, now);

	struct envv want;
	char bad[PATH_MAX];
	envv_init(&want);
	env_dir_of(ctl, s, r->name, r->env_dir, sizeof r->env_dir);
	if (envdir_read(r->env_dir, &want, bad, sizeof bad) == -1) {
		/* A cut message still names the dir: truncation is acceptable here. */
		if (snprintf(r->env_err, sizeof r->env_err, "%s/%s: %s", r->env_dir, bad,
		             strerror(errno)) < 0)
			r->env_err[0] = '\0';
		r->problems++;
	} else {
		envv_sort(&want);
		check_env(r, &want);
	}
	check_process(r, s, &want);
	check_metrics(r, s);
	/* changed/missing point into want: keep only the names */
	struct inspect_names *keep[] = {&r->changed, &r->missing};
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < keep[k]->n; i++)
			keep[k]->v[i] = xstrndup(keep[k]->v[i], name_len(keep[k]->v[i]));
	envv_free(&want);
}

static void names_free(struct inspect_names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free((char *)l->v[i]);
	free(l->v);
}

void inspect_report_free(struct inspect_report *r)
{
	names_free(&r->changed);
	names_free(&r->missing);
	names_free(&r->unexpected);
}
