/* Checks before reconfigure acts (see preflight.h). */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_config.h"
#include "config/placeholder.h"
#include "engine/preflight.h"
#include "lib/alloc.h"
#include "lib/reach.h"
#include "lib/pathsearch.h"
#include "proc/ready.h"
#include "render/exporterlink.h"
#include "runit/runit.h"

/* Where to blame s: the gitlab.rb line that set key, else the one that enabled s, else cat_line. */
static void blame(const struct svc *s, const char *key, int cat_line, char *file, size_t len,
                  int *line)
{
	const char *origin = key ? kv_get(&s->origin, key) : NULL, *colon;
	if (origin == NULL)
		origin = kv_get(&s->origin, "enable");
	*line = cat_line;
	strlcpy(file, s->def->file, len);
	if (origin != NULL && (colon = strrchr(origin, ':')) != NULL) {
		snprintf(file, len, "%.*s", (int)(colon - origin), origin);
		*line = (int)strtonum(colon + 1, 1, INT_MAX, NULL);
	}
}

/* The account's verdict on each PATH match (reach_exec), the first refusal kept to explain. */
struct runs_as {
	const struct reach_who *w;
	char *why;
	size_t len;
	bool refused;
};

static bool account_may_run(const char *file, void *arg)
{
	struct runs_as *r = arg;
	char why[PATH_MAX + 128];
	if (reach_exec(r->w, file, why, sizeof why) == 0)
		return true;
	if (!r->refused)
		strlcpy(r->why, why, r->len);
	r->refused = true;
	return false;
}

enum verdict { RUNS, MISSING, REFUSED };

/* A relative command: the match in the service's PATH its account can run, as exec finds it. */
static enum verdict search_path(const struct svc *s, const struct reach_who *w, char *out,
                                size_t len, char *why, size_t whylen)
{
	const char *path = kv_get(&s->env, "PATH");
	if (path == NULL)
		path = kv_get(&s->base_env, "PATH");
	struct runs_as r = {w, why, whylen, false};
	if (path_search(path, s->argv[0], account_may_run, &r, out, len) == 0)
		return RUNS;
	if (errno != EACCES)
		return MISSING;
	if (!r.refused) /* a directory on the way that root cannot search */
		strlcpy(why, strerror(EACCES), whylen);
	return REFUSED;
}

/* What s will execute (for the managed exporter link, the bundled exporter), as its account. */
static enum verdict command_path(const struct ctl *ctl, const struct svc *s,
                                 const struct reach_who *w, char *out, size_t len, char *why,
                                 size_t whylen)
{
	const char *cmd = s->argv[0];
	struct exporter_link x;
	struct stat st;
	if (strchr(cmd, '/') == NULL)
		return search_path(s, w, out, len, why, whylen);
	const char *runs = exporter_link_paths(ctl, &x) == 0 ? exporter_link_target(&x, cmd) : cmd;
	if (runs != cmd) {
		if (strlcpy(out, runs, len) >= len)
			return MISSING;
	} else if (strlcpy(out, cmd, len) >= len) {
		return MISSING;
	} else if (stat(out, &st) == -1 && (errno == ENOENT || errno == ENOTDIR)) {
		return MISSING; /* only a missing file: reach_exec explains any other failure */
	}
	return reach_exec(w, out, why, whylen) == 0 ? RUNS : REFUSED;
}

/* The setting of s that gitlab.rb set and that the catalog's command path names. */
struct chooser {
	const struct svc *s;
	const char *key; /* out: the first such setting, NULL if none */
};

static const char *note_chooser(void *ctx, const char *name, size_t len, int line)
{
	struct chooser *c = ctx;
	char key[128];
	size_t f = ph_filter_len(name, len);
	(void)line;
	if (c->key == NULL && ph_key(name + f, len - f, key, sizeof key)) {
		const struct cat_setting *cs = cat_setting_find(c->s->def, key);
		if (cs != NULL && kv_get(&c->s->origin, key) != NULL)
			c->key = cs->name;
	}
	return "";
}

/*
 * Which gitlab.rb setting chose the path of s's command (postgresql['bin_dir'] for
 * "{{bin_dir}}/postgres", gitlab_exporter['command'] for "{{command}}"), or NULL: the
 * catalog's own path.
 */
static const char *command_chooser(const struct svc *s)
{
	struct chooser c = {s, NULL};
	if (s->def->ncommand == 0)
		return NULL;
	free(ph_expand(s->def->command[0], note_chooser, &c, s->def->command_line));
	return c.key;
}

/* What to set key (which chose s's command path) to: the words after "set X['key'] ". */
static void chooser_fix(const struct svc *s, const char *key, char *out, size_t len)
{
	const char *tmpl = s->def->command[0], *base = strrchr(s->argv[0], '/');
	size_t klen = strlen(key);
	bool leads = strncmp(tmpl, "{{", 2) == 0 && strncmp(tmpl + 2, key, klen) == 0 &&
	             strncmp(tmpl + 2 + klen, "}}", 2) == 0;
	const char *rest = leads ? tmpl + 4 + klen : "";
	if (leads && *rest == '\0') /* "{{command}}" */
		strlcpy(out, "to the program's path", len);
	else if (leads && rest[0] == '/' && strchr(rest + 1, '/') == NULL && base != NULL)
		snprintf(out, len, "to the directory that holds %s", base + 1);
	else
		strlcpy(out, "to where the program is installed", len);
}

/*
 * "; S is enabled on line N" (in file, the message's), else "... at FILE:N"; "" when gitlab.rb
 * did not enable s (its default, a role).
 */
static void enabled_at(const struct svc *s, const char *file, char *out, size_t len)
{
	const char *origin = kv_get(&s->origin, "enable"), *colon;
	*out = '\0';
	if (origin == NULL || (colon = strrchr(origin, ':')) == NULL)
		return;
	if ((size_t)(colon - origin) == strlen(file) && strncmp(origin, file, strlen(file)) == 0)
		snprintf(out, len, "; %s is enabled on line %s", s->def->name, colon + 1);
	else
		snprintf(out, len, "; %s is enabled at %s", s->def->name, origin);
}

/*
 * A missing command: the package to install; when a gitlab.rb setting chose its path (the
 * error is at that setting's line), that setting to correct too.
 */
static void report_missing(const struct svc *s, const char *key, const char *file, int line,
                           struct diags *d)
{
	const char *pkg = s->def->package, *cfg = s->def->config_name;
	char install[256] = "", fix[128], en[PATH_MAX + 64];
	if (pkg != NULL)
		snprintf(install, sizeof install,
		         "install the Debian package %s (apt-get install %s)", pkg, pkg);
	if (key == NULL) {
		diag_file(d, DIAG_ERR, file, line, "%s: command %s not found%s%s", s->def->name,
		          s->argv[0], pkg ? ": " : "", install);
		return;
	}
	chooser_fix(s, key, fix, sizeof fix);
	enabled_at(s, file, en, sizeof en);
	diag_file(d, DIAG_ERR, file, line,
	          "%s: command %s not found (%s['%s'] on this line chose that path%s): %s%sset "
	          "%s['%s'] %s",
	          s->def->name, s->argv[0], cfg, key, en, install, pkg ? ", or " : "", cfg, key,
	          fix);
}

/*
 * Who runs s's command: the account's groups come from NSS (getgrouplist reads every group,
 * over a hundred system calls), so each account is looked up once per run, not per service.
 */
struct who_seen {
	const char *group;
	struct reach_who w;
};

static const struct reach_who *who_runs(const struct svc *s, struct who_seen *seen, size_t *n)
{
	if (geteuid() != 0) { /* without root, services run as the invoking user */
		if (*n == 0) {
			const struct passwd *me = getpwuid(geteuid());
			reach_who_self(&seen[(*n)++].w, me != NULL ? me->pw_name : "this user");
		}
		return &seen[0].w;
	}
	for (size_t k = 0; k < *n; k++)
		if (strcmp(seen[k].w.name, s->user) == 0 && strcmp(seen[k].group, s->group) == 0)
			return &seen[k].w;
	seen[*n].group = s->group;
	reach_who_account(&seen[*n].w, s->user, s->group);
	return &seen[(*n)++].w;
}

/*
 * The files s's settings keys name (those set), readable by w, each refusal blamed on its
 * setting; role says why w opens it when w is not s's own account ("" when it is).
 */
static void files_readable(const struct svc *s, const char *const *keys, size_t n,
                           const struct reach_who *w, const char *role, struct diags *d)
{
	for (size_t k = 0; k < n; k++) {
		const char *path = svc_var(s, keys[k]);
		char why[PATH_MAX + 128], file[PATH_MAX];
		int line;
		if (path == NULL || path[0] == '\0' || reach_read(w, path, why, sizeof why) == 0)
			continue;
		blame(s, keys[k], s->def->line, file, sizeof file, &line);
		diag_file(d, DIAG_ERR, file, line, "%s: %s['%s'] cannot be read by %s%s: %s",
		          s->def->name, s->def->config_name, keys[k], w->name, role, why);
	}
}

/*
 * The client certificate and key Prometheus presents to s's scrape job (redis_exporter,
 * patroni: prometheus_scrape_tls_cert_path/_key_path), readable by Prometheus' account w:
 * else the job stays down with nothing at reconfigure saying why.
 */
static void scrape_tls_files(const struct svc *s, const struct reach_who *w, struct diags *d)
{
	static const char *const keys[] = {"prometheus_scrape_tls_cert_path",
	                                   "prometheus_scrape_tls_key_path"};
	char role[160];
	snprintf(role, sizeof role, ", who presents it when Prometheus scrapes %s", s->def->name);
	files_readable(s, keys, sizeof keys / sizeof keys[0], w, role, d);
}

void preflight_commands(const struct ctl *ctl, const struct attrs *a, struct diags *d)
{
	struct who_seen *seen = xcalloc(a->nsvcs + 1, sizeof *seen);
	size_t nseen = 0;
	const struct svc *prom = attrs_svc(a, "prometheus");
	for (size_t i = 0; i < a->nsvcs; i++) {
		const struct svc *s = &a->svcs[i];
		char path[PATH_MAX], why[PATH_MAX + 128], file[PATH_MAX];
		int line;
		if (!s->enabled || s->argv == NULL || s->argv[0] == NULL)
			continue;
		const char *key = command_chooser(s);
		blame(s, key, s->def->command_line, file, sizeof file, &line);
		enum verdict v = command_path(ctl, s, who_runs(s, seen, &nseen), path, sizeof path,
		                              why, sizeof why);
		if (v == MISSING)
			report_missing(s, key, file, line, d);
		else if (v == REFUSED)
			diag_file(d, DIAG_ERR, file, line, "%s cannot run its command %s: %s",
			          s->def->name, path, why);
		/* The certificate and key a TLS service opens (Omnibus refuses a missing one too).
		 */
		if (svc_tls(s))
			files_readable(s, svc_tls_keys(s), 3, who_runs(s, seen, &nseen), "", d);
		if (prom != NULL && prom->enabled && s->def->nscrape > 0)
			scrape_tls_files(s, who_runs(prom, seen, &nseen), d);
	}
	free(seen);
}

/* The gitlab.rb key that holds s's port: its port setting, else its address setting. */
static const char *port_key(const struct svc *s)
{
	const struct cat_service *def = s->def;
	for (size_t i = 0; i < def->nsettings; i++)
		if (def->settings[i].type == ST_PORT)
			return def->settings[i].name;
	for (size_t i = 0; i < def->nsettings; i++)
		if (def->settings[i].type == ST_ADDRESS)
			return def->settings[i].name;
	return "listen_address";
}

/* The pid runsv supervises for s now, 0 if none. */
static pid_t supervised_pid(const struct ctl *ctl, const struct svc *s)
{
	char dir[PATH_MAX];
	struct sv_status st;
	if (ctl_sv_dir(ctl, dir, sizeof dir, s->def->name) == -1 || sv_read_status(dir, &st) == -1)
		return 0;
	return st.pid;
}

void preflight_ports(const struct ctl *ctl, const struct attrs *a, struct diags *d)
{
	for (size_t i = 0; i < a->nsvcs; i++) {
		const struct svc *s = &a->svcs[i];
		char cmd[4096], file[PATH_MAX];
		pid_t pid;
		int line;
		if (!s->enabled || s->listen_port <= 0)
			continue;
		if (ready_port_taken(s->listen_port, supervised_pid(ctl, s), &pid, cmd,
		                     sizeof cmd) != 1)
			continue;
		const char *key = port_key(s);
		blame(s, key, s->def->line, file, sizeof file, &line);
		if (pid > 0)
			diag_file(
			    d, DIAG_ERR, file, line,
			    "%s: port %d is in use by pid %ld (%s): stop that process, or set "
			    "%s['%s'] to a free port",
			    s->def->name, s->listen_port, (long)pid, cmd, s->def->config_name, key);
		else
			diag_file(
			    d, DIAG_ERR, file, line,
			    "%s: port %d is in use by a process gitlab-ctl cannot see (run as "
			    "root to name it): stop it, or set %s['%s'] to a free port",
			    s->def->name, s->listen_port, s->def->config_name, key);
	}
}
