/*
 * The life of an installation, as Omnibus' gitlab-ctl has it (doc/packaging.md):
 *   uninstall        stop every service and the runsvdir (and its systemd unit);
 *                    configuration, data and logs stay
 *   cleanse [--yes]  uninstall, then remove what reconfigure generated, the logs and
 *                    the service data; gitlab.rb stays
 *   remove-accounts  delete the service accounts reconfigure created
 *   diff-config      diff -u of the operator's gitlab.rb and the shipped template
 *   upgrade          reconfigure, then restart the running services whose program
 *                    changed on disk since they started
 * Each takes the reconfigure lock of the root, so no reconfigure runs in between.
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "render/accounts.h"
#include "render/exporterlink.h"
#include "config/attrs.h"
#include "build_config.h"
#include "lib/alloc.h"
#include "cmd/commands.h"
#include "cmd/load.h"
#include "engine/control.h"
#include "engine/teardown.h"
#include "lib/clock.h"
#include "lib/rmtree.h"
#include "lib/rootlock.h"
#include "runit/runit.h"
#include "lib/spawn.h"
#include "proc/procinfo.h"
#include "lib/pathjoin.h"
#include "runit/svdir.h"
#include "runit/svsel.h"

static int usage(const char *cmd, const char *args)
{
	fprintf(stderr, "usage: gitlab-ctl [--root DIR] %s%s%s\n", cmd, *args ? " " : "", args);
	return 2;
}

/* argv holds nothing but the command (and --yes when allowed). -1: a usage error. */
static int parse_yes(int argc, char **argv, bool allow_yes, bool *yes)
{
	*yes = false;
	for (int i = 1; i < argc; i++) {
		/* `cleanse yes` is Omnibus' spelling */
		if (allow_yes && (strcmp(argv[i], "--yes") == 0 || strcmp(argv[i], "yes") == 0)) {
			*yes = true;
		} else {
			if (allow_yes)
				warnx("unexpected argument '%s': only --yes (or Omnibus' 'yes') "
				      "skips the "
				      "question",
				      argv[i]);
			else
				warnx("unexpected argument '%s': %s takes none", argv[i], argv[0]);
			return -1;
		}
	}
	return 0;
}

/* uninstall's work, also cleanse's first step: its progress as it goes, problems after. */
static int stop_everything(const struct ctl *ctl)
{
	struct diags d;
	diags_init(&d);
	d.live = stdout;
	int rc = teardown_stop_all(ctl, &d);
	diags_flush(&d, stderr);
	return rc;
}

int cmd_uninstall(const struct ctl *ctl, int argc, char **argv)
{
	bool yes;
	if (parse_yes(argc, argv, false, &yes) == -1)
		return usage(argv[0], "");
	int lock;
	if (command_lock(ctl, false, &lock) == -1)
		return 1;
	int rc = stop_everything(ctl);
	rootlock_release(lock);
	if (rc == -1)
		return 1;
	printf("gitlab-ctl uninstalled: services and runsvdir stopped; configuration, data and "
	       "logs kept\n");
	return 0;
}

/* ---- cleanse ------------------------------------------------------------------------- */

struct doomed {
	char path[PATH_MAX];
};

/* What cleanse removes, root-prefixed: install dir parts, logs, data. */
static int cleanse_paths(const struct ctl *ctl, struct doomed *v, size_t *n)
{
	static const char *const parts[] = {"sv", "service", "etc", "var"};
	*n = 0;
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		if (ctl_path(ctl, v[(*n)++].path, PATH_MAX, GITLAB_CTL_INSTALL_DIR, parts[i],
		             (char *)NULL) == -1)
			return -1;
	if (ctl_path(ctl, v[(*n)++].path, PATH_MAX, GITLAB_CTL_LOG_DIR, (char *)NULL) == -1 ||
	    ctl_path(ctl, v[(*n)++].path, PATH_MAX, GITLAB_CTL_DATA_DIR, (char *)NULL) == -1)
		return -1;
	return 0;
}

static bool confirm(const struct doomed *v, size_t n)
{
	fprintf(stderr, "cleanse stops every service and DELETES, for good:\n");
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "  %s\n", v[i].path);
	fprintf(stderr,
	        "The configuration (%s) stays. Type 'yes' to go on: ", GITLAB_CTL_CONFIG_FILE);
	char line[16];
	if (fgets(line, sizeof line, stdin) == NULL)
		return false;
	line[strcspn(line, "\n")] = '\0';
	return strcmp(line, "yes") == 0;
}

/* The exporter link reconfigure made; directories left empty. */
static void remove_embedded(const struct ctl *ctl)
{
	struct exporter_link x;
	char dir[PATH_MAX];
	if (exporter_link_paths(ctl, &x) == -1)
		return;
	if (exporter_link_remove(&x) == 1)
		printf("remove %s\n", x.path);
	static const char *const dirs[] = {"embedded/bin", "embedded", ""};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (ctl_path(ctl, dir, sizeof dir, GITLAB_CTL_INSTALL_DIR, dirs[i], (char *)NULL) ==
		    0)
			rmdir(dir); /* only when empty: anything else there is not ours */
}

int cmd_cleanse(const struct ctl *ctl, int argc, char **argv)
{
	bool yes;
	if (parse_yes(argc, argv, true, &yes) == -1)
		return usage(argv[0], "[--yes]");
	struct doomed v[8];
	size_t n;
	if (cleanse_paths(ctl, v, &n) == -1) {
		warnx("path too long");
		return 1;
	}
	if (!yes && !isatty(STDIN_FILENO)) {
		warnx("cleanse deletes all service data and logs; without a terminal to confirm "
		      "it, pass --yes");
		return 2;
	}
	if (!yes && !confirm(v, n)) {
		fprintf(stderr, "cleanse: not confirmed; nothing done\n");
		return 1;
	}
	int lock;
	if (command_lock(ctl, false, &lock) == -1)
		return 1;
	int rc = stop_everything(ctl);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct stat st;
		if (lstat(v[i].path, &st) == -1)
			continue;
		printf("remove %s\n", v[i].path);
		fflush(stdout);
		struct diags d;
		diags_init(&d);
		if (rmtree_diags(v[i].path, &d) == -1)
			rc = -1;
		diags_flush(&d, stderr);
	}
	if (rc == 0)
		remove_embedded(ctl);
	rootlock_release(lock);
	if (rc == -1)
		return 1;
	printf("gitlab-ctl cleansed: %s kept; 'gitlab-ctl reconfigure' starts afresh\n",
	       ctl->config);
	return 0;
}

/* ---- remove-accounts ----------------------------------------------------------------- */

int cmd_remove_accounts(const struct ctl *ctl, int argc, char **argv)
{
	bool yes;
	if (parse_yes(argc, argv, false, &yes) == -1)
		return usage(argv[0], "");
	if (geteuid() != 0) {
		warnx("remove-accounts: only root deletes accounts");
		return 1;
	}
	pid_t pid;
	if (svdir_running(ctl, &pid) != 0) {
		warnx("runsvdir still runs for this root: 'gitlab-ctl uninstall' first");
		return 1;
	}
	struct loaded l;
	if (cmd_load(ctl, &l, CMD_REPORT_FAILED, argv[0], stderr) == -1) {
		cmd_unload(&l);
		return 1;
	}
	const struct attrs *a = &l.a;
	int rc = 0, removed = 0;
	for (size_t i = 0; i < a->nsvcs; i++) {
		const struct svc *s = &a->svcs[i];
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(a->svcs[j].user, s->user) == 0;
		/* The home useradd was given: reconfigure's accounts, and only those. */
		char home[PATH_MAX];
		if (seen)
			continue;
		struct diags d;
		diags_init(&d);
		if (accounts_home(s, home, sizeof home) == -1 ||
		    accounts_remove(s->user, s->group, home, stdout, &removed, &d) == -1)
			rc = 1;
		diags_flush(&d, stderr);
	}
	printf("%d account%s removed\n", removed, removed == 1 ? "" : "s");
	cmd_unload(&l);
	return rc;
}

/* ---- diff-config --------------------------------------------------------------------- */

int cmd_diff_config(const struct ctl *ctl, int argc, char **argv)
{
	bool yes;
	if (parse_yes(argc, argv, false, &yes) == -1)
		return usage(argv[0], "");
	char tpl[PATH_MAX];
	if (path_join(tpl, sizeof tpl, ctl->datadir, "etc/gitlab.rb") == -1) {
		warnx("path too long");
		return 2;
	}
	if (access(tpl, R_OK) == -1) {
		warn("the shipped template %s", tpl);
		return 2;
	}
	if (access(ctl->config, R_OK) == -1) {
		warn("%s", ctl->config);
		return 2;
	}
	fflush(stdout);
	/*
	 * Omnibus' direction (git diff gitlab.rb template): the operator's lines are the "-" side,
	 * the template's the "+" side. diff(1)'s own exit status: 0 same, 1 different, 2 trouble.
	 */
	char *dargv[] = {"diff", "-u", (char *)ctl->config, tpl, NULL};
	const struct spawn sp = {.out = SPAWN_INHERIT, .err = SPAWN_INHERIT};
	int rc = spawn_wait("/usr/bin/diff", dargv, &sp);
	if (rc == 127 || rc < 0) {
		warnx("cannot run /usr/bin/diff (diffutils)");
		return 2;
	}
	return rc;
}

/* ---- upgrade ------------------------------------------------------------------------- */

struct before {
	char name[NAME_MAX + 1];
	pid_t pid;
};

/* The pid of every running enabled service, before reconfigure. */
static struct before *snapshot(const struct ctl *ctl, size_t *n)
{
	struct svsel sel;
	*n = 0;
	if (svsel_load(ctl, NULL, &sel) == -1)
		return xcalloc(1, sizeof(struct before));
	struct before *b = xcalloc(sel.n, sizeof *b);
	for (size_t i = 0; i < sel.n; i++) {
		char dir[PATH_MAX];
		struct sv_status st;
		if (svsel_path(&sel, sel.names[i], false, dir, sizeof dir) == -1 ||
		    sv_read_status(dir, &st) == -1 || st.state != SV_RUN)
			continue;
		strlcpy(b[*n].name, sel.names[i], sizeof b[*n].name);
		b[(*n)++].pid = st.pid;
	}
	svsel_free(&sel);
	return b;
}

/* After reconfigure: restart what still runs as the same pid with a changed program. */
static int restart_changed(const struct ctl *ctl, const struct before *b, size_t n)
{
	struct loaded l;
	if (cmd_load(ctl, &l, CMD_REPORT_FAILED, "upgrade", stderr) == -1) {
		cmd_unload(&l);
		return -1;
	}
	const struct attrs *a = &l.a;
	int rc = 0, restarted = 0;
	long wait;
	const char *errstr;
	if (sv_wait_seconds(&wait, &errstr) == -1)
		wait = SV_WAIT_DEFAULT; /* reconfigure has refused a bad SVWAIT already */
	for (size_t i = 0; i < n; i++) {
		const struct svc *s = attrs_svc(a, b[i].name);
		char dir[PATH_MAX], why[PATH_MAX + 16];
		struct sv_status st;
		if (s == NULL || !s->enabled || ctl_sv_dir(ctl, dir, sizeof dir, b[i].name) == -1 ||
		    sv_read_status(dir, &st) == -1 || st.state != SV_RUN || st.pid != b[i].pid)
			continue; /* gone, or reconfigure restarted it already */
		if (proc_program_changed(st.pid, s->argv ? s->argv[0] : NULL, why, sizeof why) != 1)
			continue;
		printf("restart %s (pid %ld): %s changed since it started\n", b[i].name,
		       (long)st.pid, why);
		fflush(stdout);
		restarted++;
		struct svsel sel;
		if (command_select(ctl, "restart", b[i].name, &sel, stderr) != 0) {
			rc = -1;
			continue;
		}
		if (command_control(ctl, control_op("restart"), &sel, wait) != 0)
			rc = -1;
		svsel_free(&sel);
	}
	if (restarted == 0)
		printf("upgrade: no running service has a changed program\n");
	cmd_unload(&l);
	return rc;
}

int cmd_upgrade(const struct ctl *ctl, int argc, char **argv)
{
	bool yes;
	if (parse_yes(argc, argv, false, &yes) == -1)
		return usage(argv[0], "");
	size_t n;
	struct before *b = snapshot(ctl, &n);
	int rc = command_reconfigure(ctl, false, false, mono_ms());
	if (rc != 0) {
		warnx("upgrade: reconfigure failed; no service restarted for a changed program");
		free(b);
		return rc;
	}
	rc = restart_changed(ctl, b, n) == -1 ? 1 : 0;
	free(b);
	return rc;
}
