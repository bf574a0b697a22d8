/*
 * exec: become a service. What a run script execs under
 * runsv, and a container's entrypoint with --from-config.
 *
 *   gitlab-ctl exec [--envdir DIR | --from-config [-c FILE]] [--user U] [--group G]
 *                   [--groups G1,G2...] [--chdir DIR] SERVICE [-- COMMAND ARGS...]
 *
 * Where the parts come from:
 *   --envdir DIR    env from DIR; user, group, home and command from the
 *                   options only (the run script; no config is parsed)
 *   --from-config   everything computed from gitlab.rb + catalog (containers)
 *   neither         env from the service's envdir as reconfigure wrote it,
 *                   the rest from gitlab.rb + catalog (by hand, as runsv would)
 * Options always win over the computed values.
 *
 * The new process gets exactly the computed environment (nothing inherited
 * from runsv or the shell); proc/svexec.h makes this process the service's.
 * The --envdir path parses no configuration at all, so it costs little more
 * than the execve.
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/attrs.h"
#include "config/catalog.h"
#include "cmd/commands.h"
#include "cmd/load.h"
#include "lib/alloc.h"
#include "lib/bcrypt.h"
#include "lib/diag.h"
#include "lib/envdir.h"
#include "proc/svexec.h"
#include "render/exporterlink.h"
#include "render/svfiles.h"

struct exec_opts {
	const char *envdir, *user, *group, *groups, *chdir;
	const char *config; /* -c FILE after the command name, as containers write it */
	bool from_config;
	const char *service;
	char **cmd; /* NULL: the service's command (--from-config) */
};

/* What the target process is made of; strings point into opts, attrs or env. */
struct target {
	struct svexec x;
	const char *config_name; /* --from-config with the catalog's command: where to change it */
	struct exporter_link link;
	char **argv; /* s->argv with the managed link resolved (owned: the array only) */
};

/* msg NULL: the option parser has said what is wrong */
static int usage_error(const char *msg)
{
	if (msg != NULL)
		warnx("%s", msg);
	fprintf(stderr,
	        "usage: gitlab-ctl exec [--envdir DIR | --from-config [-c FILE]] [--user USER] "
	        "[--group GROUP] [--groups G1,G2...] [--chdir DIR] SERVICE [-- COMMAND ARGS...]\n");
	return 2;
}

/* Index of the first "--", which ends exec's own arguments; argc if none. */
static int find_dashdash(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return argc;
}

/*
 * Options may come before or after SERVICE (containers write
 * `exec gitlab-exporter --from-config -c FILE`), so getopt permutes, but only
 * up to "--": everything after it is the command's, untouched.
 */
static int parse_opts(int argc, char **argv, struct exec_opts *o)
{
	static const struct option longopts[] = {
	    {"envdir", required_argument, NULL, 'e'},
	    {"user", required_argument, NULL, 'u'},
	    {"group", required_argument, NULL, 'g'},
	    {"groups", required_argument, NULL, 'G'}, /* chpst's -u user:group:extra... */
	    {"chdir", required_argument, NULL, 'C'},
	    {"from-config", no_argument, NULL, 'f'},
	    {"config", required_argument, NULL, 'c'},
	    {NULL, 0, NULL, 0},
	};
	int ch, end = find_dashdash(argc, argv);
	memset(o, 0, sizeof *o);
	while ((ch = command_getopt(end, argv, "e:u:g:G:C:fc:", longopts)) != -1) {
		switch (ch) {
		case 'e':
			o->envdir = optarg;
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'g':
			o->group = optarg;
			break;
		case 'G':
			o->groups = optarg;
			break;
		case 'C':
			o->chdir = optarg;
			break;
		case 'f':
			o->from_config = true;
			break;
		case 'c':
			o->config = optarg;
			break;
		default:
			return usage_error(NULL);
		}
	}
	if (optind >= end)
		return usage_error("no SERVICE given");
	if (optind + 1 < end)
		return usage_error("one SERVICE only; put the command after --");
	o->service = argv[optind];
	if (end < argc) {
		if (end + 1 >= argc)
			return usage_error("no COMMAND after --");
		o->cmd = &argv[end + 1];
	}
	if (o->envdir != NULL && o->from_config)
		return usage_error("--envdir and --from-config exclude each other");
	if (o->cmd == NULL && o->envdir != NULL)
		return usage_error("--envdir needs a COMMAND (-- COMMAND ARGS)");
	return 0;
}

static int env_from_dir(const char *dir, struct envv *env)
{
	char bad[256];
	if (envdir_read(dir, env, bad, sizeof bad) == 0)
		return 0;
	if (bad[0] == '\0')
		warn("envdir %s", dir);
	else if (errno == EINVAL)
		warnx("envdir %s: %s: not a valid variable (name, file type or NUL byte)", dir,
		      bad);
	else
		warn("envdir %s: %s", dir, bad);
	return -1;
}

static void env_add_list(struct envv *env, const struct kvlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		envv_set(env, l->v[i].name, l->v[i].value);
}

/*
 * From gitlab.rb and the catalog, no runit tree; the env too with
 * --from-config, else from the service's envdir. The attrs stay loaded: the
 * target points into them until the execve.
 */
static int target_from_config(const struct ctl *ctl, const struct exec_opts *o, struct loaded *l,
                              struct target *t)
{
	/* a run script's every start: warnings once */
	if (cmd_load(ctl, l, CMD_REPORT_QUIET, "exec", stderr) == -1)
		return -1;
	const struct attrs *a = &l->a;
	const struct svc *s = attrs_svc(a, o->service);
	if (s == NULL) {
		command_unknown_service("exec", o->service, &l->cat, NULL, stderr);
		return -1;
	}
	if (!o->from_config) {
		if (env_from_dir(s->env_dir, &t->x.env) == -1)
			return -1;
	} else {
		env_add_list(&t->x.env, &s->base_env);
		env_add_list(&t->x.env, &s->env);
		struct diags d;
		diags_init(&d);
		/*
		 * reconfigure's record of bcrypt hashes (its policy: the effective user's own 0600
		 * file, else ignored): an unchanged web password costs a container's start no
		 * bcrypt, and its web.yml is not rewritten to a new salt.
		 */
		char var[PATH_MAX];
		if (ctl_var_dir(ctl, var, sizeof var) == 0)
			bcrypt_keep_open(var, true);
		int rc = svfiles_write(ctl, a, s, stderr, &d);
		bcrypt_keep_close();
		diags_flush(&d, stderr);
		if (rc == -1)
			return -1; /* a container's config files come from gitlab.rb alone */
	}
	envv_sort(&t->x.env);
	t->x.user = o->user ? o->user : s->user;
	t->x.group = o->group ? o->group : s->group;
	t->x.groups = o->groups ? o->groups : (s->groups && s->groups[0] ? s->groups : NULL);
	/* Groups shared by services it needs: a container may run this one alone. */
	t->x.groups_if_present = o->groups == NULL;
	t->x.home = o->chdir ? o->chdir : s->home;
	t->x.argv = o->cmd ? o->cmd : s->argv;
	if (o->cmd == NULL && cat_setting_find(s->def, "command") != NULL)
		t->config_name = s->def->config_name;
	/* The catalog's exporter command is reconfigure's link: a fresh root has none yet. */
	if (o->from_config && o->cmd == NULL && s->argv != NULL && s->argv[0] != NULL &&
	    exporter_link_paths(ctl, &t->link) == 0 &&
	    exporter_link_target(&t->link, s->argv[0]) != s->argv[0]) {
		size_t n = 0;
		while (s->argv[n] != NULL)
			n++;
		t->argv = xcalloc(n + 1, sizeof *t->argv);
		memcpy(t->argv, s->argv, n * sizeof *t->argv);
		t->argv[0] = t->link.bundled;
		t->x.argv = t->argv;
	}
	if (t->x.argv == NULL || t->x.argv[0] == NULL) {
		warnx("service '%s' has no command", o->service);
		return -1;
	}
	return 0;
}

/* The program's path resolved and the process prepared, then replaced; what failed, printed. */
static int run(struct target *t)
{
	char path[PATH_MAX];
	struct diags d;
	diags_init(&d);
	int rc = svexec_prepare(&t->x, path, sizeof path, &d);
	diags_flush(&d, stderr); /* before the execve: a dropped LD_PRELOAD file */
	if (rc == -1) {
		rc = svexec_replace(&t->x, path, &d);
		diags_flush(&d, stderr);
		if (rc == SVEXEC_NOTFOUND && t->config_name != NULL)
			fprintf(stderr,
			        "gitlab-ctl exec: set %s['command'] to the program's path\n",
			        t->config_name);
	}
	diags_free(&d);
	return rc;
}

int cmd_exec(const struct ctl *ctl, int argc, char **argv)
{
	struct exec_opts o;
	struct target t;
	struct loaded l;
	bool loaded = false;
	int rc = parse_opts(argc, argv, &o);

	if (rc != 0)
		return rc;
	memset(&t, 0, sizeof t);
	envv_init(&t.x.env);
	if (o.envdir == NULL) {
		struct ctl local = *ctl;
		if (o.config != NULL &&
		    strlcpy(local.config, o.config, sizeof local.config) >= sizeof local.config) {
			warnx("%s: path too long", o.config);
			return 2;
		}
		loaded = true;
		rc = target_from_config(&local, &o, &l, &t) == 0 ? 0 : 1;
	} else {
		t.x.user = o.user;
		t.x.group = o.group;
		t.x.groups = o.groups;
		t.x.home = o.chdir;
		t.x.argv = o.cmd;
		t.x.own_pgrp = true;
		rc = env_from_dir(o.envdir, &t.x.env) == 0 ? 0 : 1;
	}
	if (rc == 0)
		rc = run(&t); /* returns only on failure */
	envv_free(&t.x.env);
	free(t.argv);
	if (loaded)
		cmd_unload(&l);
	return rc;
}
