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
#include "lib/rootlock.h"
#include "lib/suggest.h"
#include "runit/runit.h"
#include "runit/svdir.h"
#include "runit/svsel.h"

const struct command commands[] = {
    {.name = "reconfigure",
     .fn = cmd_reconfigure,
     .usage = "[--dry-run] [--diff]",
     .summary = "render the service tree from gitlab.rb and converge the running services",
     .details =
         "options:\n"
         "  --dry-run  say what would change, change nothing\n"
         "  --diff     show each file's changes (secrets hidden)\n"
         "exit: 0 converged; 1 an error (pre-flight, config, a service not ready): a pre-flight\n"
         "  failure changes nothing\n"
         "example: gitlab-ctl reconfigure --dry-run --diff"},
    {.name = "check-config",
     .fn = cmd_check_config,
     .usage = "[-c FILE] [--strict] [--json] [-v VERSION]",
     .summary = "validate gitlab.rb and the catalog; exit 1 on errors",
     .details =
         "options:\n"
         "  -c FILE   check FILE instead of gitlab.rb\n"
         "  --strict  warnings and unknown keys are errors (CI)\n"
         "  --json    one JSON document: ok, config, errors, warnings, strict, diagnostics (file,\n"
         "            line, col, severity, message, hint: the fix the message names, or null)\n"
         "  -v VERSION  accepted for Omnibus' sake: no version checks are done here\n"
         "exit: 0 valid; 1 errors (or warnings under --strict); 2 usage\n"
         "example: gitlab-ctl check-config --strict"},
    {.name = "show-config",
     .fn = cmd_show_config,
     .usage = "[-c FILE] [--show-secrets] [--json] [SERVICE...]",
     .summary = "print the effective settings and env of every enabled service",
     .details = "options:\n"
                "  --show-secrets  do not redact\n"
                "  --json          one JSON document; on errors their file, line, col, severity, "
                "message and hint\n"
                "exit: 0; 1 the configuration has errors\n"
                "example: gitlab-ctl show-config gitlab-exporter"},
    {.name = "start",
     .fn = cmd_control,
     .usage = "[SERVICE]",
     .summary = "start services and wait until they run"},
    {.name = "stop",
     .fn = cmd_control,
     .usage = "[SERVICE]",
     .summary = "stop services and wait until they are down"},
    {.name = "restart",
     .fn = cmd_control,
     .usage = "[SERVICE]",
     .summary = "stop then start services"},
    {.name = "restart-except",
     .fn = cmd_control,
     .usage = "SERVICE...",
     .summary = "restart every enabled service except the ones named",
     .details = "exit: 0 all restarted; 1 a service failed or an unknown name\n"
                "example: gitlab-ctl restart-except postgresql redis"},
    {.name = "once",
     .fn = cmd_control,
     .usage = "[SERVICE]",
     .summary = "start services, do not restart them when they exit"},
    {.name = "kill", .fn = cmd_control, .usage = "[SERVICE]", .summary = "send SIGKILL"},
    {.name = "term", .fn = cmd_control, .usage = "[SERVICE]", .summary = "send SIGTERM"},
    {.name = "hup", .fn = cmd_control, .usage = "[SERVICE]", .summary = "send SIGHUP"},
    {.name = "int", .fn = cmd_control, .usage = "[SERVICE]", .summary = "send SIGINT"},
    {.name = "usr1", .fn = cmd_control, .usage = "[SERVICE]", .summary = "send SIGUSR1"},
    {.name = "usr2", .fn = cmd_control, .usage = "[SERVICE]", .summary = "send SIGUSR2"},
    {.name = "graceful-kill",
     .fn = cmd_control,
     .usage = "[SERVICE]",
     .summary = "stop gracefully, then SIGKILL what is left after SVWAIT"},
    {.name = "status",
     .fn = cmd_status,
     .usage = "[--lsb] [SERVICE]",
     .summary = "print runit status; exit 0 when all run",
     .flags = CMD_ROOT_ONLY,
     .details =
         "options:\n"
         "  --lsb  exit with one LSB code for the selection (worst wins): 0 running, 1 dead\n"
         "         (down although runit wants it up), 3 not running, 4 unknown\n"
         "exit: without --lsb, the sum over services (as Omnibus): 0 run, 1 runsv not running,\n"
         "  3 down, 4 status unreadable (capped at 255)\n"
         "example: gitlab-ctl status --lsb postgresql"},
    {.name = "service-list",
     .fn = cmd_service_list,
     .usage = "",
     .summary = "list catalog services, '*' marks enabled ones"},
    {.name = "tail",
     .fn = cmd_tail,
     .usage = "[-f] [-n LINES] [SERVICE[/FILE]]",
     .summary = "follow the current logs of services",
     .details = "options:\n"
                "  -n N  start with the last N lines (default 10)\n"
                "  -f    accepted and ignored: tail always follows\n"
                "SERVICE/FILE follows FILE in the service's log directory\n"
                "exit: 1 an unknown service or unreadable log\n"
                "example: gitlab-ctl tail postgresql/current"},
    {.name = "inspect",
     .fn = cmd_inspect,
     .usage = "[--json] [SERVICE]",
     .summary = "check the running process: memory, allocator, env drift, user, /metrics",
     .details = "options:\n"
                "  --json  one JSON document\n"
                "exit: 0 healthy; 1 a problem found\n"
                "example: gitlab-ctl inspect --json gitlab-exporter"},
    {.name = "exec",
     .fn = cmd_exec,
     .usage = "[--envdir DIR | --from-config [-c FILE]] [--user USER] [--group GROUP] [--chdir "
              "DIR] SERVICE [-- COMMAND ARGS...]",
     .summary = "run a service in the foreground with its computed env (run scripts, containers)",
     .flags = CMD_OWN_CONFIG},
    {.name = "runsvdir",
     .fn = cmd_runsvdir,
     .usage = "",
     .summary = "run runsvdir for the service tree in the foreground"},
    {.name = "upgrade",
     .fn = cmd_upgrade,
     .usage = "",
     .summary = "reconfigure, then restart services whose program changed"},
    {.name = "diff-config",
     .fn = cmd_diff_config,
     .usage = "",
     .summary = "diff -u of your gitlab.rb against the shipped template (as Omnibus: yours is '-')",
     .details = "compares as Omnibus' diff-config does: your lines are the '-' side, the "
                "template's the '+'\n"
                "  side (a line you added or changed shows as '-', the template's default as '+')\n"
                "exit: diff's: 0 the same; 1 different; 2 a file is missing or diff failed\n"
                "example: gitlab-ctl diff-config | grep '^-[^-]'   # what you changed"},
    {.name = "backup-etc",
     .fn = cmd_backup_etc,
     .usage = "[-p DIR] [--delete-old-backups [-k N]]",
     .summary = "archive gitlab.rb and the generated service tree (0600, in a 0700 directory)",
     .details =
         "options:\n"
         "  -p DIR  the backup directory (default <root>/etc/gitlab/config_backup, made 0700);\n"
         "          it must be root's and closed to others: the archive holds secrets\n"
         "  --delete-old-backups  then keep only the newest N archives\n"
         "  -k N    how many --delete-old-backups keeps (default 7)\n"
         "writes gitlab_config_<epoch>_<YYYY_MM_DD>.tar holding etc/gitlab, <install>/sv (without\n"
         "  supervise/) and <install>/etc; links are stored as links, never followed\n"
         "exit: 0 written; 1 refused or failed (nothing half written); 2 usage\n"
         "example: gitlab-ctl backup-etc --delete-old-backups -k 14"},
    {.name = "uninstall",
     .fn = cmd_uninstall,
     .usage = "",
     .summary = "stop every service and runsvdir; keep config, data, logs"},
    {.name = "cleanse",
     .fn = cmd_cleanse,
     .usage = "[--yes | yes]",
     .summary = "uninstall, then delete generated files, logs and service data"},
    {.name = "remove-accounts",
     .fn = cmd_remove_accounts,
     .usage = "",
     .summary = "delete the accounts reconfigure created"},
    {.name = "pg-password-md5",
     .fn = cmd_pg_password_md5,
     .usage = "USER",
     .summary = "print md5(password + USER) in hex, as Omnibus (asks twice on a terminal)",
     .details = "the password: typed twice without echo on a terminal, else one line of stdin\n"
                "exit: 0 printed; 1 no USER, no password or the two differ\n"
                "example: gitlab-ctl pg-password-md5 gitlab"},
    {.name = "patroni",
     .fn = cmd_patroni,
     .usage = "VERB [OPTIONS]",
     .summary = "Patroni: members, pause, switchover, failover; does this node lead",
     .details = "VERB: members, pause, resume, reload, restart, switchover, failover,\n"
                "  reinitialize-replica, check-leader, check-replica\n"
                "members, pause, resume, reload, restart: patronictl (list, pause, resume,\n"
                "  reload/restart --force of this node), run as Patroni's account; -w, --wait:\n"
                "  until the cluster is (un)paused; exit: patronictl's\n"
                "switchover|failover [--master X] [--candidate Y] (switchover: [--scheduled T]),\n"
                "  reinitialize-replica [--member X] [--wait]: patronictl's, with --force\n"
                "check-leader GETs /leader, check-replica /replica (TLS: through python3)\n"
                "exit (as Omnibus): 0 the answer was 200; 1 another answer; 3 no answer or\n"
                "  not enabled; 2 usage\n"
                "example: gitlab-ctl patroni check-leader && echo leader"},
    {.name = "get-postgresql-primary",
     .fn = cmd_get_postgresql_primary,
     .usage = "",
     .summary = "print the PostgreSQL primary Patroni names, as HOST:PORT",
     .details = "patronictl list, as Patroni's account on this node: the running Leader\n"
                "  (else a standby cluster's Standby Leader), as Omnibus asks Consul\n"
                "exit: 0 printed; 1 none (or patronictl failed, or no Patroni here); 2 usage\n"
                "example: gitlab-ctl get-postgresql-primary"},
    {.name = "pgb-notify",
     .fn = cmd_pgb_notify,
     .usage = "--pg-database DB --newhost HOST [--user U] [--hostuser X]",
     .summary = "re-point a PgBouncer database at HOST, RESUME it if paused, RELOAD",
     .details =
         "writes PgBouncer's databases.ini (the account's copy, with\n"
         "  pgbouncer_watcher['enable']) from the rendered one with DB's host set to\n"
         "  HOST, then on the admin console as PgBouncer's account: RESUME DB if\n"
         "  paused, RELOAD; --user: the console's user (pgbouncer); --hostuser: taken\n"
         "exit: 0 done; 1 failed (why on stderr); 2 usage\n"
         "example: gitlab-ctl pgb-notify --pg-database gitlabhq_production --newhost 10.0.0.12"},
    {.name = "pgb-watch",
     .fn = cmd_pgb_watch,
     .usage = "--pg-database DB --patroni-config YML ..."}, /* pgbouncer-watcher's command */
    {.name = "get-redis-master",
     .fn = cmd_get_redis_master,
     .usage = "",
     .summary = "print the Redis master the sentinels name, as HOST:PORT",
     .details =
         "asks this node's sentinel (roles(['redis_sentinel_role'])), then each of\n"
         "  gitlab_rails['redis_sentinels'] in turn, for redis['master_name'], with\n"
         "  their password (sentinel['password'], gitlab_rails['redis_sentinels_password'])\n"
         "exit: 0 printed; 1 no sentinel answered (each one's reason on stderr); 2 usage\n"
         "example: gitlab-ctl get-redis-master"},
    {.name = "probe",
     .fn = cmd_probe,
     .usage = "SERVICE"}, /* sv/<svc>/check: readiness, exit 0 when ready */
    {.name = "sentinel-config",
     .fn = cmd_sentinel_config,
     .usage = "/RENDERED /LIVE -- COMMAND [ARGS...]", /* sentinel's: its own file, as its account */
     .flags = CMD_ROOT_ONLY},
    {.name = "subreaper",
     .fn = cmd_subreaper,
     .usage = "-- COMMAND [ARGS...]", /* a catalog command: keep detached children in the tree */
     .flags = CMD_ROOT_ONLY},
    {.name = NULL},
};

const struct command *command_find(const char *name)
{
	for (const struct command *c = commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/*
 * Omnibus' gitlab-ctl commands (files/gitlab-ctl-commands*, omnibus-gitlab) this build does not
 * have, each with what to do here instead.
 */
static const struct {
	const char *name, *instead;
} omnibus_only[] = {
    {"apply-sepolicy", "no SELinux policy is shipped; label the directories yourself"},
    {"completion", "no shell completion is shipped; gitlab-ctl help lists the commands"},
    {"consul",
     "gitlab-ctl runs no Consul; scrape targets are static (prometheus['scrape_targets'])"},
    {"consul-download", "gitlab-ctl runs no Consul"},
    {"deploy-page", "gitlab-ctl runs no GitLab web service"},
    {"generate-secrets", "gitlab-ctl runs no GitLab Rails: there is no gitlab-secrets.json"},
    {"geo", "GitLab Geo is not run by gitlab-ctl"},
    {"geo-replication-pause", "GitLab Geo is not run by gitlab-ctl"},
    {"geo-replication-resume", "GitLab Geo is not run by gitlab-ctl"},
    {"pg-decomposition-migration", "gitlab-ctl runs no GitLab Rails to migrate"},
    {"pg-upgrade",
     "stop it (gitlab-ctl stop postgresql), run the new PostgreSQL's pg_upgrade on "
     "postgresql['data_dir'], set postgresql['bin_dir'] to it, then gitlab-ctl reconfigure"},
    {"pgb-console", "psql -h pgbouncer['home'] -p pgbouncer['listen_port'] -U pgbouncer -d "
                    "pgbouncer as PgBouncer's account instead"},
    {"pgb-kill",
     "gitlab-ctl runs no split-brain watcher: stop pgbouncer (gitlab-ctl stop pgbouncer)"},
    {"pgb-resume", "gitlab-ctl pgb-notify RESUMEs a paused database"},
    {"pgb-suspend", "PAUSE on PgBouncer's admin console (see pgb-console)"},
    {"praefect", "gitlab-ctl runs no Gitaly Cluster"},
    {"promotion-preflight-checks", "GitLab Geo is not run by gitlab-ctl"},
    {"registry-database", "gitlab-ctl runs no Container Registry"},
    {"registry-garbage-collect", "gitlab-ctl runs no Container Registry"},
    {"renew-le-certs", "no NGINX or Let's Encrypt here: renew with certbot"},
    {"replicate-geo-database", "GitLab Geo is not run by gitlab-ctl"},
    {"repmgr", "no repmgr (Omnibus' older replication manager) here: gitlab-ctl runs one "
               "PostgreSQL"},
    {"revert-pg-upgrade",
     "there is no pg-upgrade to revert: restore postgresql['data_dir'] from your backup"},
    {"set-geo-primary-node", "GitLab Geo is not run by gitlab-ctl"},
    {"set-replication-password", "gitlab-ctl runs no PostgreSQL replication"},
    {"upgrade-check", "gitlab-ctl upgrade reconfigures, then restarts what changed"},
    {"write-pgpass", "no PgBouncer or Consul here: write ~/.pgpass (0600) yourself"},
};

void command_unknown(const char *name, FILE *fp)
{
	for (size_t i = 0; i < sizeof omnibus_only / sizeof omnibus_only[0]; i++)
		if (strcmp(omnibus_only[i].name, name) == 0) {
			fprintf(fp, "gitlab-ctl: '%s' is an Omnibus command this build lacks: %s\n",
			        name, omnibus_only[i].instead);
			return;
		}
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

int command_one_arg(int argc, char **argv, const char **name)
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

/*
 * getopt_long's complaint about argv[optind - 1], in this project's words: "gitlab-ctl VERB:
 * unknown option '--x' (see gitlab-ctl help VERB)", or without VERB for the global options.
 */
static __attribute__((cold, noinline)) void option_error(const char *verb, int argc, char **argv,
                                                         const char *shortopts,
                                                         const struct option *longopts)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
	const char *sep = verb != NULL ? " " : "", *v = verb != NULL ? verb : "";
	bool is_long = strncmp(arg, "--", 2) == 0;
	if (is_long && strchr(arg, '=') == NULL && longopt_needs_arg(longopts, arg + 2))
		fprintf(stderr, "gitlab-ctl%s%s: option '%s' needs an argument\n", sep, v, arg);
	else if (is_long)
		fprintf(stderr, "gitlab-ctl%s%s: unknown option '%s' (see gitlab-ctl help%s%s)\n",
		        sep, v, arg, sep, v);
	else if (optopt != 0 && strchr(shortopts, optopt) != NULL)
		fprintf(stderr, "gitlab-ctl%s%s: option '-%c' needs an argument\n", sep, v, optopt);
	else
		fprintf(stderr, "gitlab-ctl%s%s: unknown option '-%c' (see gitlab-ctl help%s%s)\n",
		        sep, v, optopt, sep, v);
}

/* getopt_long with the complaint in our words, for VERB's options (NULL: the global ones). */
static int getopt_as(const char *verb, int argc, char **argv, const char *shortopts,
                     const struct option *longopts)
{
	opterr = 0;
	int ch = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (ch != '?' && ch != ':')
		return ch;
	option_error(verb, argc, argv, shortopts, longopts);
	return '?';
}

int command_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
	return getopt_as(argv[0], argc, argv, shortopts, longopts);
}

int command_getopt_global(int argc, char **argv, const char *shortopts,
                          const struct option *longopts)
{
	return getopt_as(NULL, argc, argv, shortopts, longopts);
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
