/* The command table: names, entry points and one-line help. */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/load.h"
#include "config/catalog.h"
#include "lib/diag.h"
#include "lib/hot.h"
#include "lib/rootlock.h"
#include "lib/suggest.h"
#include "runit/runit.h"
#include "runit/svdir.h"
#include "runit/svsel.h"

const struct command commands[] = {
    {"reconfigure", cmd_reconfigure, "[--dry-run] [--diff]",
     "render the service tree from gitlab.rb and converge the running services",
     "options:\n  --dry-run  say what would change, change nothing\n  --diff     show each file's "
     "changes (secrets hidden)\n"
     "exit: 0 converged; 1 an error (pre-flight, config, a service not ready): a pre-flight\n"
     "  failure changes nothing\nexample: gitlab-ctl reconfigure --dry-run --diff"},
    {"check-config", cmd_check_config, "[-c FILE] [--strict] [--json] [-v VERSION]",
     "validate gitlab.rb and the catalog; exit 1 on errors",
     "options:\n  -c FILE   check FILE instead of gitlab.rb\n  --strict  warnings and unknown keys "
     "are errors (CI)\n"
     "  --json    one JSON document: ok, config, errors, warnings, strict, diagnostics (file,\n"
     "            line, col, severity, message, hint: the fix the message names, or null)\n"
     "  -v VERSION  accepted for Omnibus' sake: no version checks are done here\n"
     "exit: 0 valid; 1 errors (or warnings under --strict); 2 usage\nexample: gitlab-ctl "
     "check-config --strict"},
    {"show-config", cmd_show_config, "[-c FILE] [--show-secrets] [--json] [SERVICE...]",
     "print the effective settings and env of every enabled service",
     "options:\n  --show-secrets  do not redact\n  --json          one JSON document; on errors "
     "their file, line, col, severity, message and hint\n"
     "exit: 0; 1 the configuration has errors\nexample: gitlab-ctl show-config gitlab-exporter"},
    {"start", cmd_control, "[SERVICE]", "start services and wait until they run", NULL},
    {"stop", cmd_control, "[SERVICE]", "stop services and wait until they are down", NULL},
    {"restart", cmd_control, "[SERVICE]", "stop then start services", NULL},
    {"restart-except", cmd_control, "SERVICE...",
     "restart every enabled service except the ones named",
     "exit: 0 all restarted; 1 a service failed or an unknown name\n"
     "example: gitlab-ctl restart-except postgresql redis"},
    {"once", cmd_control, "[SERVICE]", "start services, do not restart them when they exit", NULL},
    {"kill", cmd_control, "[SERVICE]", "send SIGKILL", NULL},
    {"term", cmd_control, "[SERVICE]", "send SIGTERM", NULL},
    {"hup", cmd_control, "[SERVICE]", "send SIGHUP", NULL},
    {"int", cmd_control, "[SERVICE]", "send SIGINT", NULL},
    {"usr1", cmd_control, "[SERVICE]", "send SIGUSR1", NULL},
    {"usr2", cmd_control, "[SERVICE]", "send SIGUSR2", NULL},
    {"graceful-kill", cmd_control, "[SERVICE]",
     "stop gracefully, then SIGKILL what is left after SVWAIT", NULL},
    {"status", cmd_status, "[--lsb] [SERVICE]", "print runit status; exit 0 when all run",
     "options:\n  --lsb  exit with one LSB code for the selection (worst wins): 0 running, 1 dead\n"
     "         (down although runit wants it up), 3 not running, 4 unknown\n"
     "exit: without --lsb, the sum over services (as Omnibus): 0 run, 1 runsv not running,\n"
     "  3 down, 4 status unreadable (capped at 255)\nexample: gitlab-ctl status --lsb postgresql"},
    {"service-list", cmd_service_list, "", "list catalog services, '*' marks enabled ones", NULL},
    {"tail", cmd_tail, "[-f] [-n LINES] [SERVICE[/FILE]]", "follow the current logs of services",
     "options:\n  -n N  start with the last N lines (default 10)\n  -f    accepted and ignored: "
     "tail always follows\n"
     "SERVICE/FILE follows FILE in the service's log directory\n"
     "exit: 1 an unknown service or unreadable log\nexample: gitlab-ctl tail postgresql/current"},
    {"inspect", cmd_inspect, "[--json] [SERVICE]",
     "check the running process: memory, allocator, env drift, user, /metrics",
     "options:\n  --json  one JSON document\nexit: 0 healthy; 1 a problem found\n"
     "example: gitlab-ctl inspect --json gitlab-exporter"},
    {"exec", cmd_exec,
     "[--envdir DIR | --from-config [-c FILE]] [--user USER] [--group GROUP] [--chdir DIR] SERVICE "
     "[-- COMMAND ARGS...]",
     "run a service in the foreground with its computed env (run scripts, containers)", NULL},
    {"runsvdir", cmd_runsvdir, "", "run runsvdir for the service tree in the foreground", NULL},
    {"upgrade", cmd_upgrade, "", "reconfigure, then restart services whose program changed", NULL},
    {"diff-config", cmd_diff_config, "",
     "diff -u of your gitlab.rb against the shipped template (as Omnibus: yours is '-')",
     "compares as Omnibus' diff-config does: your lines are the '-' side, the template's the '+'\n"
     "  side (a line you added or changed shows as '-', the template's default as '+')\n"
     "exit: diff's: 0 the same; 1 different; 2 a file is missing or diff failed\n"
     "example: gitlab-ctl diff-config | grep '^-[^-]'   # what you changed"},
    {"backup-etc", cmd_backup_etc, "[-p DIR] [--delete-old-backups [-k N]]",
     "archive gitlab.rb and the generated service tree (0600, in a 0700 directory)",
     "options:\n  -p DIR  the backup directory (default <root>/etc/gitlab/config_backup, made "
     "0700);\n"
     "          it must be root's and closed to others: the archive holds secrets\n"
     "  --delete-old-backups  then keep only the newest N archives\n"
     "  -k N    how many --delete-old-backups keeps (default 7)\n"
     "writes gitlab_config_<epoch>_<YYYY_MM_DD>.tar holding etc/gitlab, <install>/sv (without\n"
     "  supervise/) and <install>/etc; links are stored as links, never followed\n"
     "exit: 0 written; 1 refused or failed (nothing half written); 2 usage\n"
     "example: gitlab-ctl backup-etc --delete-old-backups -k 14"},
    {"uninstall", cmd_uninstall, "", "stop every service and runsvdir; keep config, data, logs",
     NULL},
    {"cleanse", cmd_cleanse, "[--yes | yes]",
     "uninstall, then delete generated files, logs and service data", NULL},
    {"remove-accounts", cmd_remove_accounts, "", "delete the accounts reconfigure created", NULL},
    {"probe", cmd_probe, "SERVICE", NULL, NULL}, /* sv/<svc>/check: readiness, exit 0 when ready */
    {NULL, NULL, NULL, NULL, NULL},
};

STATUS_PATH const struct command *command_find(const char *name)
{
	for (const struct command *c = commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

void command_unknown(const char *name, FILE *fp)
{
	const char *names[64];
	size_t n = 0;
	for (const struct command *c = commands; c->name && n < 64; c++)
		names[n++] = c->name;
	const char *hint = suggest_pick(name, names, n);
	if (hint != NULL)
		fprintf(
		    fp,
		    "gitlab-ctl: unknown command '%s'; did you mean '%s'? (see gitlab-ctl help)\n",
		    name, hint);
	else
		fprintf(fp, "gitlab-ctl: unknown command '%s' (see gitlab-ctl help)\n", name);
}

#define MAX_KNOWN 64

static size_t add_known(const char **v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return n;
	if (n < MAX_KNOWN)
		v[n++] = name;
	return n;
}

void command_unknown_service(const char *verb, const char *name, const struct catalog *cat,
                             const struct svsel *sel, FILE *fp)
{
	const char *v[MAX_KNOWN] = {NULL};
	size_t n = 0;
	for (size_t i = 0; cat != NULL && i < cat->n; i++)
		n = add_known(v, n, cat->v[i].name);
	for (size_t i = 0; sel != NULL && i < sel->n; i++)
		n = add_known(v, n, sel->names[i]);
	fprintf(fp, "gitlab-ctl %s: unknown service '%s' (known: ", verb, name);
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "%s%s", i ? ", " : "", v[i]);
	const char *hint = suggest_pick(name, v, n);
	fprintf(fp, "%s)", n ? "" : "none");
	if (hint != NULL)
		fprintf(fp, "; did you mean '%s'?", hint);
	fputc('\n', fp);
}

STATUS_PATH int command_one_arg(int argc, char **argv, const char **name)
{
	if (argc - optind > 1) {
		warnx("%s: too many arguments (one SERVICE at most)", argv[0]);
		return -1;
	}
	*name = optind < argc ? argv[optind] : NULL;
	return 0;
}

/* A catalog service by its runit name only: "gitlab_exporter" is a typo of a service name. */
static const struct cat_service *by_runit_name(const struct catalog *cat, const char *name)
{
	for (size_t i = 0; i < cat->n; i++)
		if (strcmp(cat->v[i].name, name) == 0)
			return &cat->v[i];
	return NULL;
}

int command_select(const struct ctl *ctl, const char *verb, const char *name, struct svsel *sel,
                   FILE *fp)
{
	if (svsel_load(ctl, name, sel) == 0)
		return 0;
	int e = errno;
	struct catalog cat;
	struct stat st;
	bool set_up = stat(sel->dir, &st) == 0;
	/* the catalog only names suggestions here: its problems are check-config's */
	bool have = cmd_load_catalog(ctl, &cat, CMD_REPORT_NONE, verb, NULL) == 0;
	const struct cat_service *def = have && name ? by_runit_name(&cat, name) : NULL;
	if (e != ENOENT)
		fprintf(fp, "gitlab-ctl %s: %s: %s\n", verb, sel->dir, strerror(e));
	else if (name != NULL && def == NULL && (have || set_up)) {
		struct svsel all;
		bool have_all = svsel_load(ctl, NULL, &all) == 0;
		command_unknown_service(verb, name, have ? &cat : NULL, have_all ? &all : NULL, fp);
		if (have_all)
			svsel_free(&all);
	} else if (!set_up || name == NULL)
		fprintf(fp, "gitlab-ctl %s: not set up yet: run gitlab-ctl reconfigure\n", verb);
	else
		fprintf(fp,
		        "gitlab-ctl %s: %s is not enabled: set %s['enable'] = true and run "
		        "gitlab-ctl reconfigure\n",
		        verb, name, def ? def->config_name : name);
	if (have)
		catalog_free(&cat);
	return 1;
}

void command_hint_runsvdir(const struct ctl *ctl, const char *verb, FILE *fp)
{
	pid_t pid;
	if (svdir_running(ctl, &pid) != 1)
		fprintf(fp,
		        "gitlab-ctl %s: runsvdir is not running: run gitlab-ctl reconfigure (or "
		        "gitlab-ctl start) to start it\n",
		        verb);
}

static bool longopt_needs_arg(const struct option *o, const char *name)
{
	for (; o != NULL && o->name != NULL; o++)
		if (strcmp(o->name, name) == 0)
			return o->has_arg == required_argument;
	return false;
}

STATUS_PATH int command_getopt(int argc, char **argv, const char *shortopts,
                               const struct option *longopts)
{
	opterr = 0;
	int ch = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (ch != '?' && ch != ':')
		return ch;
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
	bool is_long = strncmp(arg, "--", 2) == 0;
	if (is_long && strchr(arg, '=') == NULL && longopt_needs_arg(longopts, arg + 2))
		fprintf(stderr, "gitlab-ctl %s: option '%s' needs an argument\n", argv[0], arg);
	else if (is_long)
		fprintf(stderr, "gitlab-ctl %s: unknown option '%s' (see gitlab-ctl help %s)\n",
		        argv[0], arg, argv[0]);
	else if (optopt != 0 && strchr(shortopts, optopt) != NULL)
		fprintf(stderr, "gitlab-ctl %s: option '-%c' needs an argument\n", argv[0], optopt);
	else
		fprintf(stderr, "gitlab-ctl %s: unknown option '-%c' (see gitlab-ctl help %s)\n",
		        argv[0], optopt, argv[0]);
	return '?';
}

int command_lock(const struct ctl *ctl, bool create, int *fdp)
{
	struct diags d;
	diags_init(&d);
	d.live = stderr;
	int rc = rootlock_take(ctl, create, fdp, &d);
	diags_flush(&d, stderr);
	return rc;
}
