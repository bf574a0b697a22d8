/*
 * inspect: check what a running service really runs with against what the
 * configuration wants: pid and uptime from runit, memory
 * from smaps_rollup, the allocator actually mapped, the run-as user, env
 * drift between the envdir and /proc/PID/environ, and whether /metrics
 * answers on the configured address. Exit 0 only when everything holds.
 */
#include <bsd/libutil.h>
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config/attrs.h"
#include "build_config.h"
#include "config/catalog.h"
#include "cmd/commands.h"
#include "cmd/load.h"
#include "lib/alloc.h"
#include "lib/connhost.h"
#include "lib/envdir.h"
#include "lib/grow.h"
#include "lib/safetext.h"
#include "proc/httpprobe.h"
#include "proc/procinfo.h"
#include "proc/ready.h"
#include "runit/runit.h"
#include "lib/suggest.h"
#include "runit/svsel.h"

#define PROBE_TIMEOUT_MS 3000

/* Names of variables, pointing into envv entries ("NAME=value"). */
struct names {
	const char **v;
	size_t n, cap;
};

struct report {
	const char *name;
	bool running;
	char state[256]; /* sv's status text when not running */
	pid_t pid;
	long uptime;
	bool mem_ok;
	struct pmem mem;
	bool jemalloc, want_jemalloc;
	char alloc_path[PATH_MAX];
	char user[64];
	const char *want_user; /* NULL: no expectation */
	char env_dir[PATH_MAX];
	char env_err[PATH_MAX + 64]; /* envdir or environ unreadable */
	struct names changed, missing, unexpected;
	char graph_query[200]; /* "" when Prometheus is off or the service has no address */
	char graph_url[700];
	char url[300]; /* "" when the service has no address */
	int http_code;
	char http_err[160];
	int problems;
};

static void add_name(struct names *l, const char *entry)
{
	grow(&l->v, &l->cap, l->n + 1, sizeof *l->v, 16);
	l->v[l->n++] = entry;
}

static size_t name_len(const char *entry)
{
	return strcspn(entry, "=");
}

/* Both sorted by name: one merge pass. */
static void env_diff(const struct envv *want, const struct envv *have, struct report *r)
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

static void check_env(struct report *r, const struct envv *want)
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

static void check_process(struct report *r, const struct svc *s, const struct envv *want)
{
	if (proc_mem(r->pid, &r->mem) == 0)
		r->mem_ok = true;
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

static void check_metrics(struct report *r, const struct svc *s)
{
	if (s == NULL || s->listen_host == NULL || s->listen_port <= 0)
		return;
	if (s->def != NULL && s->def->check != NULL && strncmp(s->def->check, "http:", 5) != 0)
		return; /* not an HTTP service (PostgreSQL on TCP) */
	const char *path = "/metrics";
	if (s->def != NULL && s->def->check != NULL && strncmp(s->def->check, "http:", 5) == 0)
		path = s->def->check + 5;
	const char *host = connect_host(s->listen_host);
	bool v6 = strchr(host, ':') != NULL;
	snprintf(r->url, sizeof r->url, "http://%s%s%s:%d%s", v6 ? "[" : "", host, v6 ? "]" : "",
	         s->listen_port, path);
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
	r->http_code = http_probe(host, s->listen_port, path, PROBE_TIMEOUT_MS, r->http_err,
	                          sizeof r->http_err);
	r->problems += r->http_code != 200;
}

/* host:port as a target in prometheus.yml: a wildcard host is scraped on localhost. */
static int target_of(const char *host, int port, char *out, size_t len)
{
	if (host[0] == '\0' || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "*") == 0 ||
	    strcmp(host, "::") == 0)
		host = "localhost";
	bool v6 = strchr(host, ':') != NULL;
	int n = snprintf(out, len, "%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "", port);
	return n < 0 || (size_t)n >= len ? -1 : 0;
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
static void graph_of(const struct attrs *a, const struct svc *s, struct report *r)
{
	const struct svc *prom = attrs_svc(a, "prometheus");
	char target[280], ptarget[280], enc[sizeof r->graph_query * 3];
	if (prom == NULL || !prom->enabled || prom->listen_host == NULL || s == NULL ||
	    s->listen_host == NULL || s->listen_port <= 0 ||
	    target_of(s->listen_host, s->listen_port, target, sizeof target) == -1 ||
	    target_of(prom->listen_host, prom->listen_port, ptarget, sizeof ptarget) == -1 ||
	    strpbrk(target, "\"\\") != NULL) /* no PromQL string could hold it as written */
		return;
	int n = snprintf(r->graph_query, sizeof r->graph_query,
	                 "process_resident_memory_bytes{instance=\"%s\"}", target);
	if (n < 0 || (size_t)n >= sizeof r->graph_query ||
	    url_encode(r->graph_query, enc, sizeof enc) == -1) {
		r->graph_query[0] = '\0';
		return;
	}
	n = snprintf(r->graph_url, sizeof r->graph_url, "http://%s/graph?g0.expr=%s&g0.tab=0",
	             ptarget, enc);
	if (n < 0 || (size_t)n >= sizeof r->graph_url)
		r->graph_query[0] = r->graph_url[0] = '\0';
}

/* Everything about one service, into r (problems counted there). */
static void inspect_one(const struct ctl *ctl, const struct svsel *sel, const struct attrs *a,
                        struct report *r)
{
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
	struct names *keep[] = {&r->changed, &r->missing};
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < keep[k]->n; i++)
			keep[k]->v[i] = xstrndup(keep[k]->v[i], name_len(keep[k]->v[i]));
	envv_free(&want);
}

static void names_free(struct names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free((char *)l->v[i]);
	free(l->v);
}

/* "24M", "5.3M", "1.5G": humanize_number scales to fit 4 characters. */
static void human(char *buf, size_t len, long long kb)
{
	if (len < 5 || humanize_number(buf, 5, kb * 1024, "", HN_AUTOSCALE,
	                               HN_DECIMAL | HN_NOSPACE | HN_B) == -1)
		snprintf(buf, len, "%lldK", kb);
}

static void print_names(const char *label, const struct names *l, bool *first)
{
	if (l->n == 0)
		return;
	printf("%s%s: ", *first ? "" : "; ", label);
	for (size_t i = 0; i < l->n; i++) {
		/* "unexpected" names come from the process's own environ: escaped */
		fputs(i ? ", " : "", stdout);
		safetext_put(stdout, l->v[i], strlen(l->v[i]), 0);
	}
	*first = false;
}

static void print_text(const struct report *r)
{
	if (!r->running) {
		printf("%s: not running: %s\n", r->name, r->state);
		return;
	}
	printf("%s: pid %ld, up %lds\n", r->name, (long)r->pid, r->uptime);
	if (r->mem_ok) {
		char rss[16], pss[16], uss[16];
		human(rss, sizeof rss, r->mem.rss_kb);
		human(pss, sizeof pss, r->mem.pss_kb);
		human(uss, sizeof uss, r->mem.uss_kb);
		printf("  memory: rss %s, pss %s, uss %s\n", rss, pss, uss);
	} else {
		printf("  memory: unknown (/proc/%ld/smaps_rollup unreadable)\n", (long)r->pid);
	}
	if (r->jemalloc)
		printf("  allocator: jemalloc %s\n", r->alloc_path);
	else
		printf("  allocator: glibc%s\n",
		       r->want_jemalloc ? " (expected jemalloc: LD_PRELOAD not in effect)" : "");
	if (r->want_user != NULL && strcmp(r->user, r->want_user) != 0)
		printf("  user: %s (expected %s)\n", r->user, r->want_user);
	else
		printf("  user: %s\n", r->user);
	if (r->env_err[0] != '\0') {
		printf("  env: unknown (%s)\n", r->env_err);
	} else if (r->changed.n + r->missing.n + r->unexpected.n == 0) {
		printf("  env: ok\n");
	} else {
		bool first = true;
		printf("  env: restart needed (");
		print_names("changed", &r->changed, &first);
		print_names("missing", &r->missing, &first);
		print_names("unexpected", &r->unexpected, &first);
		printf(")\n");
	}
	if (r->url[0] == '\0')
		printf("  metrics: no listen address configured\n");
	else if (r->http_code == -1)
		printf("  metrics: %s: %s\n", r->url, r->http_err);
	else
		printf("  metrics: %s: HTTP %d\n", r->url, r->http_code);
	if (r->graph_query[0])
		printf("  memory graph: %s\n    %s\n", r->graph_query, r->graph_url);
}

static void json_str(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void json_names(const char *key, const struct names *l)
{
	printf(", \"%s\": [", key);
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			printf(", ");
		json_str(l->v[i]);
	}
	printf("]");
}

static void print_json(const struct report *r, bool first)
{
	printf("%s\n  {\"service\": ", first ? "" : ",");
	json_str(r->name);
	printf(", \"ok\": %s, \"running\": %s", r->problems ? "false" : "true",
	       r->running ? "true" : "false");
	if (!r->running) {
		printf(", \"status\": ");
		json_str(r->state);
		printf("}");
		return;
	}
	if (r->graph_query[0]) {
		printf(", \"memory_query\": ");
		json_str(r->graph_query);
		printf(", \"memory_graph_url\": ");
		json_str(r->graph_url);
	}
	printf(", \"pid\": %ld, \"uptime_s\": %ld", (long)r->pid, r->uptime);
	if (r->mem_ok)
		printf(", \"memory_kb\": {\"rss\": %lld, \"pss\": %lld, \"uss\": %lld}",
		       r->mem.rss_kb, r->mem.pss_kb, r->mem.uss_kb);
	printf(", \"allocator\": \"%s\"", r->jemalloc ? "jemalloc" : "glibc");
	if (r->jemalloc) {
		printf(", \"allocator_path\": ");
		json_str(r->alloc_path);
	}
	printf(", \"jemalloc_expected\": %s, \"user\": ", r->want_jemalloc ? "true" : "false");
	json_str(r->user);
	if (r->want_user != NULL) {
		printf(", \"user_expected\": ");
		json_str(r->want_user);
	}
	printf(", \"env_dir\": ");
	json_str(r->env_dir);
	printf(", \"env_ok\": %s",
	       r->env_err[0] == '\0' && r->changed.n + r->missing.n + r->unexpected.n == 0
	           ? "true"
	           : "false");
	if (r->env_err[0] != '\0') {
		printf(", \"env_error\": ");
		json_str(r->env_err);
	}
	json_names("env_changed", &r->changed);
	json_names("env_missing", &r->missing);
	json_names("env_unexpected", &r->unexpected);
	if (r->url[0] != '\0') {
		printf(", \"metrics_url\": ");
		json_str(r->url);
		if (r->http_code != -1) {
			printf(", \"metrics_status\": %d", r->http_code);
		} else {
			printf(", \"metrics_error\": ");
			json_str(r->http_err);
		}
	}
	printf("}");
}

/* The configuration, its warnings summed up on stderr (check-config shows them). */
static int load_config(const struct ctl *ctl, struct loaded *l)
{
	if (!ctl_catalog_found(ctl)) {
		diags_init(&l->d);
		l->ok = false;
		ctl_catalog_hint(ctl, stderr);
		return -1;
	}
	return cmd_load(ctl, l, CMD_REPORT_QUIET, "inspect", stderr);
}

/*
 * --json always prints one document: a failure is an object saying what went wrong, with the
 * configuration's diagnostics when it did not load (d may be NULL).
 */
static int json_failure(const char *name, const char *where, const char *error, struct diags *d)
{
	char msg[PATH_MAX + 128];
	snprintf(msg, sizeof msg, "%s: %s", where, error);
	printf("[\n  {\"service\": ");
	if (name != NULL)
		json_str(name);
	else
		printf("null");
	printf(", \"ok\": false, \"error\": ");
	json_str(msg);
	if (d != NULL) {
		diags_sort(d);
		printf(", \"diagnostics\": ");
		diags_print_json(d, stdout);
	}
	printf("}\n]\n");
	return 1;
}

/* A name that is not enabled: a disabled catalog service, or unknown (with suggestions). */
static int not_enabled(const struct ctl *ctl, const char *name, bool json)
{
	struct loaded l;
	struct svsel all;
	bool have = load_config(ctl, &l) == 0;
	bool known = have && catalog_find(&l.cat, name) != NULL;
	bool have_all = svsel_load(ctl, NULL, &all) == 0;
	if (json) {
		printf("[\n  {\"service\": ");
		json_str(name);
		printf(", \"ok\": false, \"running\": false, \"enabled\": false, \"known\": %s",
		       known ? "true" : "false");
		if (!have) { /* known is a guess then: say why */
			diags_sort(&l.d);
			printf(", \"diagnostics\": ");
			diags_print_json(&l.d, stdout);
		}
		printf("}\n]\n");
	}
	if (known)
		fprintf(stderr,
		        "gitlab-ctl inspect: %s is not enabled: set %s['enable'] = true and run "
		        "gitlab-ctl reconfigure\n",
		        name, catalog_find(&l.cat, name)->config_name);
	else
		command_unknown_service("inspect", name, have ? &l.cat : NULL,
		                        have_all ? &all : NULL, stderr);
	if (have_all)
		svsel_free(&all);
	cmd_unload(&l);
	return 1;
}

int cmd_inspect(const struct ctl *ctl, int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {NULL, 0, NULL, 0}};
	bool json = false;
	int ch;
	while ((ch = command_getopt(argc, argv, "+j", opts)) != -1) {
		if (ch != 'j')
			return 2;
		json = true;
	}
	if (argc - optind > 1) {
		warnx("%s: too many arguments (one SERVICE at most)", argv[0]);
		return 2;
	}
	const char *name = optind < argc ? argv[optind] : NULL;
	struct svsel sel;
	struct loaded l;
	if (svsel_load(ctl, name, &sel) == -1) {
		int e = errno;
		if (name == NULL || e != ENOENT) {
			warn("%s", sel.dir);
			return json ? json_failure(name, sel.dir, strerror(e), NULL) : 1;
		}
		return not_enabled(ctl, name, json);
	}
	if (load_config(ctl, &l) == -1) {
		svsel_free(&sel);
		int rc =
		    json ? json_failure(name, ctl->config, "the configuration does not load", &l.d)
		         : 1;
		cmd_unload(&l);
		return rc;
	}
	int problems = 0;
	if (json)
		printf("[");
	for (size_t i = 0; i < sel.n; i++) {
		struct report r = {.name = sel.names[i], .http_code = -1};
		inspect_one(ctl, &sel, &l.a, &r);
		if (json)
			print_json(&r, i == 0);
		else
			print_text(&r);
		problems += r.problems;
		names_free(&r.changed);
		names_free(&r.missing);
		names_free(&r.unexpected);
	}
	if (json)
		printf("%s]\n", sel.n ? "\n" : "");
	cmd_unload(&l);
	svsel_free(&sel);
	if (fflush(stdout) != 0)
		return 1;
	return problems ? 1 : 0;
}
