/* The command table: names, entry points and one-line help. */
#include <err.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "config/catalog.h"
#include "lib/suggest.h"
#include "runit/svsel.h"

const struct command commands[] = {
    {"reconfigure", cmd_reconfigure, "[--dry-run] [--diff]",
     "render the service tree from gitlab.rb and converge the running services"},
    {"check-config", cmd_check_config, "[-c FILE] [--strict]",
     "validate gitlab.rb and the catalog; exit 1 on errors"},
    {"show-config", cmd_show_config, "[-c FILE] [--show-secrets] [--json] [SERVICE...]",
     "print the effective settings and env of every enabled service"},
    {"start", cmd_control, "[SERVICE]", "start services and wait until they run"},
    {"stop", cmd_control, "[SERVICE]", "stop services and wait until they are down"},
    {"restart", cmd_control, "[SERVICE]", "stop then start services"},
    {"once", cmd_control, "[SERVICE]", "start services, do not restart them when they exit"},
    {"kill", cmd_control, "[SERVICE]", "send SIGKILL"},
    {"term", cmd_control, "[SERVICE]", "send SIGTERM"},
    {"hup", cmd_control, "[SERVICE]", "send SIGHUP"},
    {"int", cmd_control, "[SERVICE]", "send SIGINT"},
    {"usr1", cmd_control, "[SERVICE]", "send SIGUSR1"},
    {"usr2", cmd_control, "[SERVICE]", "send SIGUSR2"},
    {"graceful-kill", cmd_control, "[SERVICE]",
     "stop gracefully, then SIGKILL what is left after SVWAIT"},
    {"status", cmd_status, "[SERVICE]", "print runit status; exit 0 when all run"},
    {"service-list", cmd_service_list, "", "list catalog services, '*' marks enabled ones"},
    {"tail", cmd_tail, "[-n LINES] [SERVICE]", "follow the current logs of services"},
    {"inspect", cmd_inspect, "[--json] [SERVICE]",
     "check the running process: memory, allocator, env drift, user, /metrics"},
    {"exec", cmd_exec,
     "[--envdir DIR | --from-config [-c FILE]] [--user USER] [--group GROUP] [--chdir DIR] SERVICE "
     "[-- COMMAND ARGS...]",
     "run a service in the foreground with its computed env (run scripts, containers)"},
    {"runsvdir", cmd_runsvdir, "", "run runsvdir for the service tree in the foreground"},
    {"upgrade", cmd_upgrade, "", "reconfigure, then restart services whose program changed"},
    {"diff-config", cmd_diff_config, "", "diff -u of the shipped gitlab.rb template and yours"},
    {"uninstall", cmd_uninstall, "", "stop every service and runsvdir; keep config, data, logs"},
    {"cleanse", cmd_cleanse, "[--yes]",
     "uninstall, then delete generated files, logs and service data"},
    {"remove-accounts", cmd_remove_accounts, "", "delete the accounts reconfigure created"},
    {"probe", cmd_probe, "SERVICE", NULL}, /* sv/<svc>/check: readiness, exit 0 when ready */
    {NULL, NULL, NULL, NULL},
};

const struct command *command_find(const char *name)
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

void command_unknown_service(const char *name, const struct catalog *cat, const struct svsel *sel,
                             FILE *fp)
{
	const char *v[MAX_KNOWN] = {NULL};
	size_t n = 0;
	for (size_t i = 0; cat != NULL && i < cat->n; i++)
		n = add_known(v, n, cat->v[i].name);
	for (size_t i = 0; sel != NULL && i < sel->n; i++)
		n = add_known(v, n, sel->names[i]);
	fprintf(fp, "gitlab-ctl: unknown service '%s' (known: ", name);
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
