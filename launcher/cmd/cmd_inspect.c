/*
 * inspect: what a running service really runs with against what the configuration wants
 * (proc/inspect.h probes it), as text or --json. Exit 0 only when everything holds.
 */
#include <bsd/libutil.h>
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/attrs.h"
#include "config/catalog.h"
#include "cmd/commands.h"
#include "cmd/load.h"
#include "lib/json.h"
#include "lib/safetext.h"
#include "proc/inspect.h"
#include "lib/suggest.h"
#include "runit/svsel.h"

/* "24M", "5.3M", "1.5G": humanize_number scales to fit 4 characters. */
static void human(char *buf, size_t len, long long kb)
{
	if (len < 5 || humanize_number(buf, 5, kb * 1024, "", HN_AUTOSCALE,
	                               HN_DECIMAL | HN_NOSPACE | HN_B) == -1)
		snprintf(buf, len, "%lldK", kb);
}

static void print_names(const char *label, const struct inspect_names *l, bool *first)
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

static void print_text(const struct inspect_report *r)
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
		if (r->tree_ok) {
			char tree[16], budget[16];
			human(tree, sizeof tree, r->tree.pss_kb);
			human(budget, sizeof budget, r->budget_kb);
			printf("  budget: pss %s of %s (%d process%s)%s\n", tree, budget,
			       r->tree_procs, r->tree_procs == 1 ? "" : "es",
			       r->over_budget ? ": over budget" : "");
		}
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

static void json_names(const char *key, const struct inspect_names *l)
{
	printf(", \"%s\": [", key);
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			printf(", ");
		json_str_put(stdout, l->v[i]);
	}
	printf("]");
}

static void print_json(const struct inspect_report *r, bool first)
{
	printf("%s\n  {\"service\": ", first ? "" : ",");
	json_str_put(stdout, r->name);
	printf(", \"ok\": %s, \"running\": %s", r->problems ? "false" : "true",
	       r->running ? "true" : "false");
	if (!r->running) {
		printf(", \"status\": ");
		json_str_put(stdout, r->state);
		printf("}");
		return;
	}
	if (r->graph_query[0]) {
		printf(", \"memory_query\": ");
		json_str_put(stdout, r->graph_query);
		printf(", \"memory_graph_url\": ");
		json_str_put(stdout, r->graph_url);
	}
	printf(", \"pid\": %ld, \"uptime_s\": %ld", (long)r->pid, r->uptime);
	if (r->mem_ok)
		printf(", \"memory_kb\": {\"rss\": %lld, \"pss\": %lld, \"uss\": %lld}",
		       r->mem.rss_kb, r->mem.pss_kb, r->mem.uss_kb);
	if (r->tree_ok)
		printf(", \"budget_kb\": %lld, \"tree_pss_kb\": %lld, \"tree_processes\": %d, "
		       "\"over_budget\": %s",
		       r->budget_kb, r->tree.pss_kb, r->tree_procs,
		       r->over_budget ? "true" : "false");
	printf(", \"allocator\": \"%s\"", r->jemalloc ? "jemalloc" : "glibc");
	if (r->jemalloc) {
		printf(", \"allocator_path\": ");
		json_str_put(stdout, r->alloc_path);
	}
	printf(", \"jemalloc_expected\": %s, \"user\": ", r->want_jemalloc ? "true" : "false");
	json_str_put(stdout, r->user);
	if (r->want_user != NULL) {
		printf(", \"user_expected\": ");
		json_str_put(stdout, r->want_user);
	}
	printf(", \"env_dir\": ");
	json_str_put(stdout, r->env_dir);
	printf(", \"env_ok\": %s",
	       r->env_err[0] == '\0' && r->changed.n + r->missing.n + r->unexpected.n == 0
	           ? "true"
	           : "false");
	if (r->env_err[0] != '\0') {
		printf(", \"env_error\": ");
		json_str_put(stdout, r->env_err);
	}
	json_names("env_changed", &r->changed);
	json_names("env_missing", &r->missing);
	json_names("env_unexpected", &r->unexpected);
	if (r->url[0] != '\0') {
		printf(", \"metrics_url\": ");
		json_str_put(stdout, r->url);
		if (r->http_code != -1) {
			printf(", \"metrics_status\": %d", r->http_code);
		} else {
			printf(", \"metrics_error\": ");
			json_str_put(stdout, r->http_err);
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
		json_str_put(stdout, name);
	else
		printf("null");
	printf(", \"ok\": false, \"error\": ");
	json_str_put(stdout, msg);
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
	const struct cat_service *def = have ? catalog_find(&l.cat, name) : NULL;
	/* by its runit name only: "gitlab_exporter" is a typo of a service name */
	bool known = def != NULL && strcmp(def->name, name) == 0;
	bool have_all = svsel_load(ctl, NULL, &all) == 0;
	if (json) {
		printf("[\n  {\"service\": ");
		json_str_put(stdout, name);
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
		        name, def->config_name);
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
	if (!json) {
		if (!ctl_catalog_found(ctl)) { /* the cause to fix before any other */
			ctl_catalog_hint(ctl, stderr);
			return 1;
		}
		if (command_select(ctl, "inspect", name, &sel, stderr) != 0)
			return 1;
	} else if (svsel_load(ctl, name, &sel) == -1) {
		int e = errno;
		struct stat st;
		if (e == ENOENT && stat(sel.dir, &st) == -1) { /* as command_select says it */
			warnx("not set up yet: run gitlab-ctl reconfigure");
			bool loads = load_config(ctl, &l) == 0; /* else its diagnostics say why */
			int rc = json_failure(name, sel.dir,
			                      "not set up yet: run gitlab-ctl reconfigure",
			                      loads ? NULL : &l.d);
			cmd_unload(&l);
			return rc;
		}
		if (name == NULL || e != ENOENT) {
			warn("%s", sel.dir);
			return json_failure(name, sel.dir, strerror(e), NULL);
		}
		return not_enabled(ctl, name, true);
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
		struct inspect_report r;
		inspect_service(ctl, &sel, &l.a, sel.names[i], &r);
		if (json)
			print_json(&r, i == 0);
		else
			print_text(&r);
		problems += r.problems;
		inspect_report_free(&r);
	}
	if (json)
		printf("%s]\n", sel.n ? "\n" : "");
	cmd_unload(&l);
	svsel_free(&sel);
	if (fflush(stdout) != 0)
		return 1;
	return problems ? 1 : 0;
}
