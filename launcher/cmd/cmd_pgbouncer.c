/*
 * pgb-notify --pg-database DB --newhost HOST [--user U] [--hostuser X]: Omnibus' command,
 * PgBouncer's DB re-pointed at HOST (engine/pgbnotify.h), as root from gitlab.rb's
 * settings; --user is the admin console's user (default pgbouncer, whom PgBouncer lets in
 * without a password from its own account), --hostuser (Omnibus' account that runs it) is
 * taken and unused: the account is PgBouncer's. Exit 0 done, 1 failed, 2 usage.
 *
 * pgb-watch OPTIONS: the pgbouncer-watcher service's command, as PgBouncer's account with
 * every path given (it reads no gitlab.rb): every --interval seconds Patroni's leader
 * (patronictl list on --patroni-config); when --live differs from --rendered with the
 * database's host set to it, pgb_notify. It logs each move and each failure once.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/commands.h"
#include "cmd/load.h"
#include "engine/pgbnotify.h"
#include "lib/readfile.h"

#define PGB_FILE_MAX (1024 * 1024)

/* argv[i] is NAME and a value follows that is no option: *v, i advanced. */
static bool opt(int argc, char **argv, int *i, const char *name, const char **v)
{
	if (strcmp(argv[*i], name) != 0 || *i + 1 >= argc || argv[*i + 1][0] == '-' ||
	    argv[*i + 1][0] == '\0')
		return false;
	*v = argv[++*i];
	return true;
}

int cmd_pgb_notify(const struct ctl *ctl, int argc, char **argv)
{
	const char *db = NULL, *host = NULL, *user = "pgbouncer", *hostuser = NULL;
	for (int i = 1; i < argc; i++)
		if (!opt(argc, argv, &i, "--pg-database", &db) &&
		    !opt(argc, argv, &i, "--newhost", &host) &&
		    !opt(argc, argv, &i, "--user", &user) &&
		    !opt(argc, argv, &i, "--hostuser", &hostuser)) {
			db = NULL;
			break;
		}
	if (db == NULL || host == NULL) {
		fprintf(stderr, "usage: gitlab-ctl pgb-notify --pg-database DB --newhost HOST "
		                "[--user U] [--hostuser X]\n");
		return 2;
	}
	struct loaded l;
	int rc = 1;
	if (cmd_load(ctl, &l, CMD_REPORT_FAILED, "pgb-notify", stderr) == -1) {
		cmd_unload(&l);
		return 1;
	}
	const struct svc *s = attrs_svc(&l.a, "pgbouncer"),
	                 *w = attrs_svc(&l.a, "pgbouncer-watcher"),
	                 *pg = attrs_svc(&l.a, "postgresql");
	char dir[PATH_MAX], rendered[PATH_MAX], live[PATH_MAX], psql[PATH_MAX];
	const char *bin = pg != NULL ? attrs_var(&l.a, pg, "bin_dir") : NULL;
	if (s == NULL || !s->enabled)
		fprintf(stderr, "gitlab-ctl pgb-notify: pgbouncer is not enabled: "
		                "roles(['pgbouncer_role']) and gitlab-ctl reconfigure\n");
	else if (w == NULL || !w->enabled)
		/* without the watcher PgBouncer reads root's rendered file, which only gitlab.rb
		 * says */
		fprintf(stderr,
		        "gitlab-ctl pgb-notify: set pgbouncer_watcher['enable'] = true and "
		        "run gitlab-ctl reconfigure: PgBouncer then reads the databases.ini "
		        "this re-points\n");
	else if (ctl_sv_dir(ctl, dir, sizeof dir, s->def->name) == -1 ||
	         snprintf(rendered, sizeof rendered, "%s/databases.ini", dir) >=
	             (int)sizeof rendered ||
	         snprintf(live, sizeof live, "%s/databases.ini", s->home) >= (int)sizeof live ||
	         snprintf(psql, sizeof psql, "%s/psql", bin != NULL ? bin : "/usr/bin") >=
	             (int)sizeof psql)
		fprintf(stderr, "gitlab-ctl pgb-notify: path too long\n");
	else {
		struct pgb_target t = {.rendered = rendered,
		                       .live = live,
		                       .socket = s->home,
		                       .port = attrs_var(&l.a, s, "listen_port"),
		                       .psql = psql,
		                       .admin = user,
		                       .user = s->user,
		                       .group = s->group};
		struct diags d;
		diags_init(&d);
		rc = pgb_notify(&t, db, host, &d) == 0 ? 0 : 1;
		if (rc != 0)
			diags_print(&d, stderr);
		diags_free(&d);
	}
	cmd_unload(&l);
	return rc;
}

static void nap(long sec)
{
	struct timespec ts = {.tv_sec = sec};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

int cmd_pgb_watch(const struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	const char *db = NULL, *yml = NULL, *ren = NULL, *live = NULL, *sock = NULL, *port = NULL,
	           *iv = "1", *psql = "/usr/lib/postgresql/15/bin/psql";
	for (int i = 1; i < argc; i++)
		if (!opt(argc, argv, &i, "--pg-database", &db) &&
		    !opt(argc, argv, &i, "--patroni-config", &yml) &&
		    !opt(argc, argv, &i, "--rendered", &ren) &&
		    !opt(argc, argv, &i, "--live", &live) &&
		    !opt(argc, argv, &i, "--socket", &sock) &&
		    !opt(argc, argv, &i, "--port", &port) &&
		    !opt(argc, argv, &i, "--interval", &iv) &&
		    !opt(argc, argv, &i, "--psql", &psql)) {
			db = NULL;
			break;
		}
	const char *e = NULL;
	long long sec = iv != NULL ? strtonum(iv, 1, 3600, &e) : 0;
	if (db == NULL || yml == NULL || ren == NULL || live == NULL || sock == NULL ||
	    port == NULL || e != NULL) {
		fprintf(stderr, "usage: gitlab-ctl pgb-watch --pg-database DB --patroni-config YML "
		                "--rendered INI --live INI --socket DIR --port N [--interval S] "
		                "[--psql PATH]\n");
		return 2;
	}
	struct pgb_target t = {.rendered = ren,
	                       .live = live,
	                       .socket = sock,
	                       .port = port,
	                       .psql = psql,
	                       .admin = "pgbouncer"};
	char last_err[512] = "";
	for (;; nap((long)sec)) {
		char hp[300], err[512] = "";
		struct buf r, want, have;
		buf_init(&r);
		buf_init(&want);
		buf_init(&have);
		if (patroni_leader(yml, NULL, NULL, hp, sizeof hp) == -1) {
			snprintf(err, sizeof err, "no running leader in patronictl list");
		} else {
			char *colon = strrchr(hp, ':');
			if (colon != NULL)
				*colon =
				    '\0'; /* databases.ini keeps its port: the members share one */
			const char *why = NULL;
			if (readfile(ren, &r, PGB_FILE_MAX) == -1)
				snprintf(err, sizeof err, "%s: %s", ren, strerror(errno));
			else if (pgb_databases_with(buf_str(&r), db, hp, &want, &why) == -1)
				snprintf(err, sizeof err, "%s: %s", db, why);
			else if (readfile(live, &have, PGB_FILE_MAX) == -1 ||
			         have.len != want.len ||
			         memcmp(buf_str(&have), buf_str(&want), want.len) != 0) {
				struct diags d;
				diags_init(&d);
				if (pgb_notify(&t, db, hp, &d) == 0) {
					printf("pgb-watch: %s now on %s\n", db, hp);
					fflush(stdout);
				} else {
					snprintf(err, sizeof err, "%s",
					         d.n > 0 ? d.v[0].msg : "pgb-notify failed");
				}
				diags_free(&d);
			}
		}
		/* each failure once, not every second */
		if (err[0] != '\0' && strcmp(err, last_err) != 0) {
			fprintf(stderr, "pgb-watch: %s\n", err);
			fflush(stderr);
		}
		snprintf(last_err, sizeof last_err, "%s", err);
		buf_free(&r);
		buf_free(&want);
		buf_free(&have);
	}
}
