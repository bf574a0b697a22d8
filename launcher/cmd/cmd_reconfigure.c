/*
 * reconfigure and runsvdir.
 *
 * reconfigure: lock the root (lib/rootlock.h); parse and validate; render
 * every template and build the desired tree in memory (render/plan.h); only
 * then touch the disk: accounts, the differences of the tree (each file
 * atomically), runsvdir, and finally the services (engine/converge.h). This
 * file keeps the options and that sequence.
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/commands.h"
#include "cmd/load.h"
#include "engine/converge.h"
#include "engine/owners.h"
#include "engine/prepublish.h"
#include "engine/preflight.h"
#include "engine/redisfollow.h"
#include "config/attrs.h"
#include "config/catalog.h"
#include "config/trust.h"
#include "lib/clock.h"
#include "lib/alloc.h"
#include "lib/bcrypt.h"
#include "lib/rootlock.h"
#include "render/plan.h"
#include "runit/runit.h"
#include "runit/svdir.h"

struct recon {
	const struct ctl *ctl;
	bool dry_run, show_diff;
	long wait_ms;    /* SVWAIT */
	long t0;         /* mono_ms() at the start */
	struct loaded l; /* the configuration and every diagnostic of the run */
	struct plans ps;
};

/* Load, validate and render everything; nothing is written. */
static int prepare(struct recon *r)
{
	if (cmd_load(r->ctl, &r->l, CMD_REPORT_FAILED, "reconfigure", stderr) == -1)
		return -1;
	if (trust_check(r->ctl, &r->l.a, &r->l.d) == -1) {
		diags_print(&r->l.d, stderr);
		return -1;
	}
	/* check-config's checks, before anything is written or stopped. */
	preflight_commands(r->ctl, &r->l.a, &r->l.d);
	preflight_ports(r->ctl, &r->l.a, &r->l.d);
	if (r->l.d.nerr > 0) {
		diags_print(&r->l.d, stderr);
		fprintf(stderr, "gitlab-ctl reconfigure: pre-flight failed: nothing was changed\n");
		return -1;
	}
	/* A failover is never undone: Redis follows the master the sentinels name. */
	struct diags follow;
	diags_init(&follow);
	follow.live = stdout;
	redis_follow(&r->l.a, &follow);
	diags_free(&follow);
	char var[PATH_MAX];
	if (ctl_var_dir(r->ctl, var, sizeof var) == 0) /* a no-op makes no bcrypt */
		bcrypt_keep_open(var, !r->dry_run);
	int rc = plan_services(r->ctl, &r->l.cat, &r->l.a, &r->ps, &r->l.d);
	bcrypt_keep_close();
	diags_print(&r->l.d, stderr); /* warnings too */
	return rc;
}

/* The desired tree against the disk, each difference described (and shown with --diff). */
static int diff_tree(struct recon *r)
{
	struct tree *t = &r->ps.t;
	if (tree_diff(t) == -1) {
		warn("cannot compare %s%s", t->errpath, t->errwhy);
		return -1;
	}
	struct diags d;
	diags_init(&d);
	int rc = prepublish_check(r->ctl, &r->l.a, &r->ps, true, r->wait_ms, &d);
	diags_flush(&d, stderr);
	diags_free(&d);
	if (rc == -1) {
		fprintf(stderr, "gitlab-ctl reconfigure: validation failed: nothing was written\n");
		return -1;
	}
	for (size_t k = 0; k < t->nc; k++) {
		tree_describe(t, &t->c[k], stdout);
		if (r->dry_run || r->show_diff)
			tree_print_diff(t, &t->c[k], stdout);
	}
	return 0;
}

/* "N/M resources updated": M counts every file, account, disable, deletion and step. */
static void summary(const struct recon *r, int rc, int updated)
{
	const struct plans *ps = &r->ps;
	size_t total = ps->t.n + (size_t)ps->accounts + ps->ndisable;
	for (size_t k = 0; k < ps->t.nc; k++)
		total += ps->t.c[k].kind == TC_DELETE;
	for (size_t k = 0; k < ps->np; k++)
		total += ps->p[k].nsteps;
	if (rc == 0 && !r->dry_run)
		printf("gitlab Reconfigured!\n");
	printf("%d/%zu resources %s in %ld ms\n", updated, total,
	       r->dry_run ? "would be updated (dry run)" : "updated", mono_ms() - r->t0);
}

/*
 * Converge (or in a dry run, say what it would do). Its output is a live log: each line on
 * stdout as it happens, each step's problems on stderr as the step ends, the problems it went
 * on past after it, then the summary.
 */
static int converge(struct recon *r)
{
	struct diags d;
	diags_init(&d);
	d.live = stdout;
	d.report = stderr;
	struct converge cv;
	converge_init(&cv, r->ctl, &r->l.a, &r->ps, r->dry_run, r->wait_ms, r->t0, &d);
	/* Files count when written (converge), not when planned. */
	cv.updated = r->ps.accounts + (r->dry_run ? (int)r->ps.t.nc : 0);
	fflush(stdout);
	int rc = 0;
	if (r->dry_run)
		converge_dry_run(&cv);
	else
		rc = converge_run(&cv) == -1 ? 1 : 0;
	diags_report(&d);
	summary(r, rc, cv.updated);
	converge_free(&cv);
	diags_free(&d);
	return rc;
}

/* Plan, accounts, tree, then converge (or in a dry run, say what it would do). */
static int apply(struct recon *r)
{
	if (prepare(r) == -1)
		return 1;
	struct diags notes;
	diags_init(&notes);
	int found = plan_find_disabled(r->ctl, &r->l.cat, &r->l.a, &r->ps, &notes);
	diags_print(&notes, stderr);
	diags_free(&notes);
	if (found == -1) {
		warn("cannot read %s", r->ps.service_dir);
		return 1;
	}
	struct diags d;
	diags_init(&d);
	d.live = stdout;
	int rc = owners_ensure(&r->ps, r->l.a.manage_accounts, r->dry_run, &d) == -1 ||
	                 plan_tree(r->ctl, &r->ps, &d) == -1
	             ? -1
	             : 0;
	diags_flush(&d, stderr);
	if (rc == -1 || diff_tree(r) == -1)
		return 1;
	return converge(r);
}

static int run_reconfigure(struct recon *r)
{
	int lockfd;
	if (command_lock(r->ctl, !r->dry_run, &lockfd) == -1)
		return 1;
	int rc = apply(r);
	rootlock_release(lockfd);
	return rc;
}

static int usage(void)
{
	fprintf(stderr, "usage: gitlab-ctl reconfigure [--dry-run] [--diff]\n");
	return 2;
}

/* The options; 0, or the exit status of a usage error. */
static int parse(struct recon *r, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"dry-run", no_argument, NULL, 'n'},
	    {"diff", no_argument, NULL, 'd'},
	    {NULL, 0, NULL, 0},
	};
	int ch;
	while ((ch = command_getopt(argc, argv, "nd", opts)) != -1) {
		if (ch == 'n')
			r->dry_run = true;
		else if (ch == 'd')
			r->show_diff = true;
		else
			return usage();
	}
	if (optind != argc)
		return usage();
	return 0;
}

int cmd_reconfigure(const struct ctl *ctl, int argc, char **argv)
{
	struct recon r;
	memset(&r, 0, sizeof r);
	long t0 = mono_ms();
	int rc = parse(&r, argc, argv);
	if (rc != 0)
		return rc;
	return command_reconfigure(ctl, r.dry_run, r.show_diff, t0);
}

int command_reconfigure(const struct ctl *ctl, bool dry_run, bool show_diff, long t0)
{
	struct recon r;
	memset(&r, 0, sizeof r);
	struct ctl dry = *ctl;
	dry.read_only = true; /* a dry run writes nothing, caches included */
	r.t0 = t0;
	r.ctl = dry_run ? &dry : ctl;
	r.dry_run = dry_run;
	r.show_diff = show_diff;
	long wait_s;
	const char *errstr;
	if (sv_wait_seconds(&wait_s, &errstr) == -1) {
		warnx("SVWAIT=%s: %s (seconds, 0 to %d)", getenv("SVWAIT"), errstr, SV_WAIT_MAX);
		return 2;
	}
	r.wait_ms = wait_s * 1000L;
	umask(022); /* modes are set explicitly; directories made on the way stay traversable */
	diags_init(&r.l.d);
	plans_init(&r.ps);
	int rc = run_reconfigure(&r);
	plans_free(&r.ps);
	cmd_unload(&r.l);
	return rc;
}

int cmd_runsvdir(const struct ctl *ctl, int argc, char **argv)
{
	if (argc > 1) {
		fprintf(stderr, "usage: gitlab-ctl runsvdir\n");
		return 2;
	}
	(void)argv;
	return svdir_run(ctl);
}
