/*
 * check-config and show-config: load the catalog and gitlab.rb, report every
 * problem at once, and print the effective configuration.
 *
 * show-config writes libconfig syntax (the format of the catalog itself), so
 * the output is both readable and machine-parseable, and stable: services in
 * catalog order, settings in declaration order, env sorted by name.
 */
#include <err.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/attrs.h"
#include "build_config.h"
#include "config/catalog.h"
#include "cmd/commands.h"
#include "cmd/load.h"
#include "engine/prepublish.h"
#include "engine/preflight.h"
#include "runit/runit.h"
#include "lib/alloc.h"
#include "lib/bcrypt.h"
#include "lib/json.h"
#include "config/trust.h"
#include "render/plan.h"

static size_t count_warnings(const struct diags *d)
{
	return d->n - d->nerr - d->nnote;
}

/* -c FILE after the command, as in `gitlab-ctl check-config -c FILE`. */
static int parse_opts(int argc, char **argv, struct ctl *c, bool *show_secrets, bool *json)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"show-secrets", no_argument, NULL, 's'},
	    {"json", no_argument, NULL, 'j'},
	    {NULL, 0, NULL, 0},
	};
	int ch;
	while ((ch = command_getopt(argc, argv, "c:", opts)) != -1) {
		switch (ch) {
		case 'c':
			if (strlcpy(c->config, optarg, sizeof c->config) >= sizeof c->config) {
				warnx("%s: path too long", optarg);
				return -1;
			}
			break;
		case 's':
			if (show_secrets == NULL)
				goto usage;
			*show_secrets = true;
			break;
		case 'j':
			if (json == NULL)
				goto usage;
			*json = true;
			break;
		default:
			goto usage;
		}
	}
	return 0;
usage:
	fprintf(stderr, "usage: gitlab-ctl %s [-c FILE]%s\n", argv[0],
	        show_secrets ? " [--show-secrets] [--json] [SERVICE...]" : " [--strict] [--json]");
	return -1;
}

/*
 * Under --root, where each path gitlab.rb set resolves: an absolute path
 * outside the root (an Omnibus /var/opt/gitlab/...) is taken inside it, and
 * the operator sees the path reconfigure will use.
 */
static void report_paths(const struct ctl *ctl, const struct attrs *a, FILE *fp)
{
	if (ctl->root[0] == '\0')
		return;
	for (size_t i = 0; i < a->nsvcs; i++) {
		const struct svc *s = &a->svcs[i];
		for (size_t j = 0; j < s->where.n; j++) {
			const char *name = s->where.v[j].name;
			const struct cat_setting *cs = cat_setting_find(s->def, name);
			if (cs == NULL || cs->type != ST_PATH)
				continue;
			fprintf(fp, "%s: %s['%s'] is %s (%s)\n", s->where.v[j].value,
			        s->def->config_name, name, svc_var(s, name),
			        cs->host ? "a host path, used as written" : "inside --root");
		}
	}
}

/*
 * Every file of every enabled service rendered in memory, as reconfigure does first, and
 * put through every check reconfigure runs before it publishes (in memory too).
 */
static int render_all(const struct ctl *ctl, struct loaded *l)
{
	struct plans ps;
	plans_init(&ps);
	char var[PATH_MAX];
	if (ctl_var_dir(ctl, var, sizeof var) == 0) /* reconfigure's hashes, not made again */
		bcrypt_keep_open(var, false);
	int rc = plan_services(ctl, &l->cat, &l->a, &ps, &l->d);
	bcrypt_keep_close();
	long wait_s = 0;
	const char *errstr;
	if (sv_wait_seconds(&wait_s, &errstr) == -1)
		wait_s = 0;
	if (rc == 0)
		rc = prepublish_check(ctl, &l->a, &ps, false, wait_s * 1000L, &l->d);
	plans_free(&ps);
	return rc;
}

static int check_usage(void)
{
	fprintf(stderr, "usage: gitlab-ctl check-config [-c FILE] [--strict] [--json]\n");
	return 2;
}

/* check-config --json: {"ok", "config", "errors", "warnings", "strict", "diagnostics"}. */
static void check_json(FILE *fp, const char *config, bool ok, bool strict, struct diags *d)
{
	diags_sort(d);
	fprintf(fp, "{\"ok\": %s, \"config\": ", ok ? "true" : "false");
	json_str_put(fp, config);
	fprintf(fp,
	        ", \"errors\": %zu, \"warnings\": %zu, \"strict\": %s, \"diagnostics\": ", d->nerr,
	        count_warnings(d), strict ? "true" : "false");
	diags_print_json(d, fp);
	fputs("}\n", fp);
}

int cmd_check_config(const struct ctl *ctl, int argc, char **argv)
{
	struct ctl c = *ctl;
	c.read_only = true; /* it promises to change nothing on disk, caches included */
	struct loaded l;
	bool strict = false, json = false;
	for (int i = 1; i < argc; i++) /* before getopt: the shared option parser lacks it */
		if (strcmp(argv[i], "--strict") == 0) {
			strict = true;
			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof *argv);
			argc--, i--;
		}
	if (parse_opts(argc, argv, &c, NULL, &json) == -1)
		return 2;
	if (optind + 1 == argc && strspn(argv[optind], "0123456789.") == strlen(argv[optind])) {
		/* Omnibus' `check-config -v VERSION`: main took the -v, the version is left */
		fprintf(stderr,
		        "gitlab-ctl check-config: version %s: no version checks here (gitlab-ctl "
		        "installs no GitLab); checking %s only\n",
		        argv[optind], c.config);
		optind++;
	}
	if (optind < argc)
		return check_usage();
	if (!ctl_catalog_found(&c)) {
		ctl_catalog_hint(&c, stderr);
		return 1;
	}
	int rc = cmd_load(&c, &l, CMD_REPORT_NONE, argv[0], stderr);
	if (rc == 0) /* not ports: they are this host's state now, reconfigure checks them */
		preflight_commands(&c, &l.a, &l.d);
	if (rc == 0 && render_all(&c, &l) == -1)
		rc = -1; /* a value a file format cannot hold, as reconfigure would find it */
	if (rc == 0 && trust_check(&c, &l.a, &l.d) == -1)
		rc = -1; /* what reconfigure would refuse before writing anything */
	diags_print(&l.d, stderr);
	size_t nwarn = count_warnings(&l.d);
	bool ok = rc == 0 && l.d.nerr == 0 && !(strict && nwarn > 0);
	if (json) {
		check_json(stdout, c.config, ok, strict, &l.d);
		cmd_unload(&l);
		return ok ? 0 : 1;
	}
	if (!ok) {
		fprintf(stderr, "%s: %zu error%s, %zu warning%s%s\n", c.config, l.d.nerr,
		        l.d.nerr == 1 ? "" : "s", nwarn, nwarn == 1 ? "" : "s",
		        strict && nwarn > 0 ? " (--strict: warnings are errors)" : "");
		cmd_unload(&l);
		return 1;
	}
	size_t enabled = 0;
	for (size_t i = 0; i < l.a.nsvcs; i++)
		enabled += l.a.svcs[i].enabled;
	report_paths(&c, &l.a, stdout);
	printf("gitlab.rb OK: %s (%zu service%s in the catalog, %zu enabled; %zu warning%s)\n",
	       c.config, l.a.nsvcs, l.a.nsvcs == 1 ? "" : "s", enabled, nwarn,
	       nwarn == 1 ? "" : "s");
	cmd_unload(&l);
	return 0;
}

/* ---- show-config ---------------------------------------------------------- */

/* A libconfig string literal. */
static void put_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", fp);
		else if (*p == '\t')
			fputs("\\t", fp);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(fp, "\\x%02x", *p);
		else
			fputc(*p, fp);
	}
	fputc('"', fp);
}

static void indent(FILE *fp, int n)
{
	while (n-- > 0)
		fputc('\t', fp);
}

/* An integer as libconfig 1.5 needs it: values past 32 bits take an L. */
static void put_int(FILE *fp, long long n)
{
	fprintf(fp, "%lld%s", n, n > 2147483647LL || n < -2147483648LL ? "L" : "");
}

static void put_log(FILE *fp, int ind, const struct svlog *lg)
{
	const struct {
		const char *name;
		long long n;
		const char *s;
		bool is_int;
	} f[] = {
	    {"svlogd_size", lg->size, NULL, true},       {"svlogd_num", lg->num, NULL, true},
	    {"svlogd_timeout", lg->timeout, NULL, true}, {"svlogd_filter", 0, lg->filter, false},
	    {"svlogd_udp", 0, lg->udp, false},           {"svlogd_prefix", 0, lg->prefix, false},
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		indent(fp, ind);
		if (f[i].is_int ? f[i].n < 0 : f[i].s == NULL) {
			fprintf(fp, "# %s: unset\n", f[i].name);
			continue;
		}
		fprintf(fp, "%s = ", f[i].name);
		if (f[i].is_int)
			put_int(fp, f[i].n);
		else
			put_str(fp, f[i].s);
		fputs(";\n", fp);
	}
}

/* "  # from FILE:LINE" for values gitlab.rb set; nothing for defaults. */
static void put_origin(FILE *fp, const struct svc *s, const char *key)
{
	const char *o = s ? kv_get(&s->origin, key) : NULL;
	if (o != NULL)
		fprintf(fp, " # %s", o);
}

/* What show-config prints for a value: itself, or [REDACTED] when it holds a secret. */
static const char *shown(const char *v, enum secrecy sec, bool secrets)
{
	return !secrets && sec == SECRET_HOLDS ? "[REDACTED]" : v;
}

static const char *shown_arg(const struct svc *s, size_t i, bool secrets)
{
	enum secrecy sec = s->argv_secret ? (enum secrecy)s->argv_secret[i] : SECRET_NONE;
	return shown(s->argv[i], sec, secrets);
}

/* An env value: the service env by name or by what it is built from; base env by name. */
static const char *shown_env(const struct svc *s, const struct kv *kv, bool secrets)
{
	enum secrecy sec = s                         ? svc_env_secret(s, kv->name)
	                   : env_is_secret(kv->name) ? SECRET_HOLDS
	                                             : SECRET_NONE;
	return shown(kv->value, sec, secrets);
}

static void put_setting(FILE *fp, int ind, const struct svc *s, const struct cat_setting *cs,
                        bool secrets)
{
	const char *errstr = NULL, *v = svc_var(s, cs->name);
	indent(fp, ind);
	if (v == NULL || (v[0] == '\0' && cs->def == NULL && cs->type != ST_FLAGS)) {
		fprintf(fp, "# %s: unset\n", cs->name);
		return;
	}
	fprintf(fp, "%s = ", cs->name);
	if (!secrets && (cs->secret || svc_var_secret(s, cs->name) == SECRET_HOLDS)) {
		put_str(fp, "[REDACTED]");
	} else if (cs->type == ST_BOOL && (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)) {
		fputs(v, fp);
	} else if (cs->type == ST_INT || cs->type == ST_PORT) {
		long long n = strtonum(v, LLONG_MIN, LLONG_MAX, &errstr);
		if (errstr)
			put_str(fp, v);
		else
			put_int(fp, n);
	} else {
		put_str(fp, v);
	}
	fputc(';', fp);
	put_origin(fp, s, cs->name);
	fputc('\n', fp);
}

/* NAME=value strings, one per line; origin comments only for the service env. */
static void put_env(FILE *fp, int ind, const char *name, const struct kvlist *env,
                    const struct svc *s, bool secrets)
{
	indent(fp, ind);
	fprintf(fp, "%s = [", name);
	for (size_t i = 0; i < env->n; i++) {
		char *line = xasprintf("%s=%s", env->v[i].name, shown_env(s, &env->v[i], secrets));
		char *key = xasprintf("env:%s", env->v[i].name);
		fputc('\n', fp);
		indent(fp, ind + 1);
		put_str(fp, line);
		if (i + 1 < env->n)
			fputc(',', fp);
		put_origin(fp, s, key);
		free(line);
		free(key);
	}
	if (env->n) {
		fputc('\n', fp);
		indent(fp, ind);
	}
	fputs("];\n", fp);
}

static void put_service(FILE *fp, const struct svc *s, bool secrets)
{
	const struct cat_service *def = s->def;
	fprintf(fp, "\t%s = {\n", def->name);
	fputs("\t\tconfig_name = ", fp);
	put_str(fp, def->config_name);
	fprintf(fp, ";\n\t\tenabled = %s;\n", s->enabled ? "true" : "false");
	if (def->description) {
		fputs("\t\tdescription = ", fp);
		put_str(fp, def->description);
		fputs(";\n", fp);
	}
	fputs("\t\tuser = ", fp);
	put_str(fp, s->user ? s->user : "");
	fputs(";\n\t\tgroup = ", fp);
	put_str(fp, s->group ? s->group : "");
	fputs(";\n", fp);
	if (s->listen_host) {
		fputs("\t\tlisten_host = ", fp);
		put_str(fp, s->listen_host);
		fprintf(fp, ";\n\t\tlisten_port = %d;\n", s->listen_port);
	}
	fputs("\t\tsettings = {\n", fp);
	for (size_t i = 0; i < def->nsettings; i++)
		if (def->settings[i].type != ST_ENV)
			put_setting(fp, 3, s, &def->settings[i], secrets);
	fputs("\t\t};\n\t\tlogging = {\n", fp);
	put_log(fp, 3, &s->log);
	fputs("\t\t};\n\t\tcommand = [", fp);
	for (size_t i = 0; i < s->argc; i++) {
		fputs(i ? ", " : " ", fp);
		put_str(fp, shown_arg(s, i, secrets));
	}
	fputs(" ];\n", fp);
	put_env(fp, 2, "env", &s->env, s, secrets);
	put_env(fp, 2, "base_env", &s->base_env, NULL, secrets);
	fputs("\t};\n", fp);
}

static bool wanted(const struct svc *s, int argc, char **argv)
{
	if (argc == 0)
		return s->enabled;
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], s->def->name) == 0 || strcmp(argv[i], s->def->config_name) == 0)
			return true;
	return false;
}

static void show(FILE *fp, const struct ctl *ctl, const struct attrs *a, int argc, char **argv,
                 bool secrets)
{
	fputs("# gitlab-ctl show-config: the effective configuration, in libconfig syntax.\n"
	      "# config: ",
	      fp);
	fputs(ctl->config, fp);
	fprintf(fp, "%s\n",
	        secrets ? ""
	                : "\n# Settings marked secret (and values built from them) and env values "
	                  "named *PASSWORD*, *SECRET*, *TOKEN*, *KEY* are redacted; "
	                  "--show-secrets shows them.");
	fputs("user = {\n\tusername = ", fp);
	put_str(fp, a->user);
	fputs(";\n\tgroup = ", fp);
	put_str(fp, a->group);
	fprintf(fp, ";\n};\nmanage_accounts = {\n\tenable = %s;\n};\nlogging = {\n",
	        a->manage_accounts ? "true" : "false");
	put_log(fp, 1, &a->logging);
	fputs("};\nservices = {\n", fp);
	for (size_t i = 0; i < a->nsvcs; i++) {
		const struct svc *s = &a->svcs[i];
		if (wanted(s, argc, argv))
			put_service(fp, s, secrets);
		else if (argc == 0)
			fprintf(fp, "\t# %s: disabled (%s['enable'] = true to enable)\n",
			        s->def->name, s->def->config_name);
	}
	fputs("};\n", fp);
}

/* ---- show-config --json: one document, the same content as the text ------------------- */

/* {"ok": false, "error": "WHAT: ERROR", "diagnostics": [...]}: the messages stderr has. */
static void json_error_diags(FILE *fp, const char *what, const char *error, const struct diags *d)
{
	fputs("{\"ok\": false, \"error\": ", fp);
	char msg[PATH_MAX + 128];
	snprintf(msg, sizeof msg, "%s: %s", what, error);
	json_str_put(fp, msg);
	fputs(", \"diagnostics\": ", fp);
	diags_print_json(d, fp);
	fputs("}\n", fp);
}

static void json_error(FILE *fp, const char *what, const char *error)
{
	json_error_diags(fp, what, error, NULL);
}

/* , "name": value (a JSON string) after an earlier member. */
static void jfield(FILE *fp, const char *name, const char *v)
{
	fprintf(fp, ", \"%s\": ", name);
	json_str_put(fp, v);
}

static void jlog(FILE *fp, const struct svlog *lg)
{
	fprintf(fp, "{\"svlogd_size\": %lld, \"svlogd_num\": %lld, \"svlogd_timeout\": %lld",
	        lg->size, lg->num, lg->timeout);
	jfield(fp, "svlogd_filter", lg->filter);
	jfield(fp, "svlogd_udp", lg->udp);
	jfield(fp, "svlogd_prefix", lg->prefix);
	fputc('}', fp);
}

static void jsetting(FILE *fp, const struct svc *s, const struct cat_setting *cs, bool secrets)
{
	const char *errstr = NULL, *v = svc_var(s, cs->name);
	json_str_put(fp, cs->name);
	fputs(": ", fp);
	if (v == NULL || (v[0] == '\0' && cs->def == NULL && cs->type != ST_FLAGS)) {
		fputs("null", fp);
		return;
	}
	if (!secrets && (cs->secret || svc_var_secret(s, cs->name) == SECRET_HOLDS)) {
		json_str_put(fp, "[REDACTED]");
		return;
	}
	if (cs->type == ST_BOOL && (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)) {
		fputs(v, fp);
		return;
	}
	if (cs->type == ST_INT || cs->type == ST_PORT) {
		long long n = strtonum(v, LLONG_MIN, LLONG_MAX, &errstr);
		if (errstr == NULL) {
			fprintf(fp, "%lld", n);
			return;
		}
	}
	json_str_put(fp, v);
}

static void jenv(FILE *fp, const struct svc *s, const struct kvlist *env, bool secrets)
{
	fputc('{', fp);
	for (size_t i = 0; i < env->n; i++) {
		fputs(i ? ", " : "", fp);
		json_str_put(fp, env->v[i].name);
		fputs(": ", fp);
		json_str_put(fp, shown_env(s, &env->v[i], secrets));
	}
	fputc('}', fp);
}

static void jservice(FILE *fp, const struct svc *s, bool secrets)
{
	const struct cat_service *def = s->def;
	fputs("{\"config_name\": ", fp);
	json_str_put(fp, def->config_name);
	fprintf(fp, ", \"enabled\": %s, \"description\": ", s->enabled ? "true" : "false");
	json_str_put(fp, def->description);
	jfield(fp, "user", s->user);
	jfield(fp, "group", s->group);
	jfield(fp, "listen_host", s->listen_host);
	fprintf(fp, ", \"listen_port\": %d, \"settings\": {", s->listen_port);
	bool first = true;
	for (size_t i = 0; i < def->nsettings; i++) {
		if (def->settings[i].type == ST_ENV)
			continue;
		fputs(first ? "" : ", ", fp);
		first = false;
		jsetting(fp, s, &def->settings[i], secrets);
	}
	fputs("}, \"logging\": ", fp);
	jlog(fp, &s->log);
	fputs(", \"command\": [", fp);
	for (size_t i = 0; i < s->argc; i++) {
		fputs(i ? ", " : "", fp);
		json_str_put(fp, shown_arg(s, i, secrets));
	}
	fputs("], \"env\": ", fp);
	jenv(fp, s, &s->env, secrets);
	fputs(", \"base_env\": ", fp);
	jenv(fp, NULL, &s->base_env, secrets);
	fputc('}', fp);
}

static void show_json(FILE *fp, const struct ctl *ctl, const struct attrs *a, int argc, char **argv,
                      bool secrets)
{
	fputs("{\"config\": ", fp);
	json_str_put(fp, ctl->config);
	fprintf(fp, ", \"secrets_redacted\": %s, \"user\": {\"username\": ",
	        secrets ? "false" : "true");
	json_str_put(fp, a->user);
	jfield(fp, "group", a->group);
	fprintf(fp, "}, \"manage_accounts\": {\"enable\": %s}, \"logging\": ",
	        a->manage_accounts ? "true" : "false");
	jlog(fp, &a->logging);
	fputs(", \"services\": {", fp);
	bool first = true;
	for (size_t i = 0; i < a->nsvcs; i++) {
		const struct svc *s = &a->svcs[i];
		bool full = wanted(s, argc, argv);
		if (!full && argc != 0)
			continue;
		fprintf(fp, "%s\n  ", first ? "" : ",");
		first = false;
		json_str_put(fp, s->def->name);
		fputs(": ", fp);
		if (full)
			jservice(fp, s, secrets);
		else
			fputs("{\"enabled\": false}", fp);
	}
	fputs("\n}}\n", fp);
}

int cmd_show_config(const struct ctl *ctl, int argc, char **argv)
{
	struct ctl c = *ctl;
	struct loaded l;
	bool secrets = false, json = false;
	if (parse_opts(argc, argv, &c, &secrets, &json) == -1)
		return 2;
	if (!ctl_catalog_found(&c)) {
		ctl_catalog_hint(&c, stderr);
		if (json)
			json_error(stdout, c.datadir, "no service catalog (sv/)");
		return 1;
	}
	/* check-config shows the warnings in full */
	int rc = cmd_load(&c, &l, CMD_REPORT_QUIET, argv[0], stderr);
	if (rc == -1) {
		if (json) {
			diags_sort(&l.d);
			json_error_diags(stdout, c.config, "the configuration has errors", &l.d);
		}
		cmd_unload(&l);
		return 1;
	}
	for (int i = optind; i < argc; i++)
		if (attrs_svc(&l.a, argv[i]) == NULL) {
			warnx("%s: no such service in the catalog", argv[i]);
			if (json)
				json_error(stdout, argv[i], "no such service in the catalog");
			cmd_unload(&l);
			return 1;
		}
	if (json)
		show_json(stdout, &c, &l.a, argc - optind, argv + optind, secrets);
	else
		show(stdout, &c, &l.a, argc - optind, argv + optind, secrets);
	cmd_unload(&l);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		warn("stdout");
		return 1;
	}
	return 0;
}
