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
#include "engine/preflight.h"
#include "config/attrs.h"
#include "config/catalog.h"
#include "config/trust.h"
#include "lib/clock.h"
#include "lib/alloc.h"
#include "lib/rootlock.h"
#include "proc/validate.h"
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
	int rc = plan_services(r->ctl, &r->l.cat, &r->l.a, &r->ps, &r->l.d);
	diags_print(&r->l.d, stderr); /* warnings too */
	return rc;
}

/* Whether the tree changes the content of the file at path. */
static bool content_changes(const struct tree *t, const char *path)
{
	for (size_t k = 0; k < t->nc; k++) {
		const struct tchange *c = &t->c[k];
		if (c->kind != TC_DELETE && strcmp(t->v[c->node].path, path) == 0)
			return c->kind == TC_CREATE || (c->what & (TC_CONTENT | TC_REPLACE));
	}
	return false;
}

/* The validator's argv: "{{file}}" is the bytes on its stdin, the rest placeholders. */
static char **validator_argv(const struct recon *r, const struct svc *s,
                             const struct cat_template *ct)
{
	char **v = xcalloc(ct->nvalidate + 1, sizeof *v);
	for (size_t i = 0; i < ct->nvalidate; i++) {
		v[i] = strcmp(ct->validate[i], "{{file}}") == 0
		           ? xstrdup("/dev/stdin")
		           : attrs_expand(&r->l.a, s, ct->validate[i]);
		if (v[i] == NULL) {
			warnx("%s: validate: unknown placeholder in \"%s\"", s->def->file,
			      ct->validate[i]);
			for (size_t j = 0; j < i; j++)
				free(v[j]);
			free(v);
			return NULL;
		}
	}
	return v;
}

/* What gitlab.rb set for the service: where to look when its file is refused. */
static void point_at_settings(const struct svc *s)
{
	for (size_t i = 0; i < s->origin.n; i++)
		fprintf(stderr, "  %s['%s'] is set at %s\n", s->def->config_name,
		        s->origin.v[i].name, s->origin.v[i].value);
}

/* "line N" in a validator's output, mapped to the gitlab.rb line that wrote it. */
static void point_at_lines(const struct recon *r, const struct plan_extra *e, const char *out)
{
	int last = 0;
	for (const char *s = out; (s = strstr(s, "line ")) != NULL; s += 5) {
		const char *errstr = NULL;
		char num[12];
		size_t n = strspn(s + 5, "0123456789");
		if (n == 0 || n >= sizeof num)
			continue;
		memcpy(num, s + 5, n);
		num[n] = '\0';
		int line = (int)strtonum(num, 1, INT_MAX, &errstr);
		int src = errstr ? 0 : yaml_srcmap_find(&e->srcmap, line);
		if (src > 0 && src != last)
			fprintf(stderr, "  line %d of the new file comes from %s:%d\n", line,
			        r->ctl->config, src);
		last = src > 0 ? src : last;
	}
}

/* One rendered file through its validator; 0 when it passes. */
static int validate_one(const struct recon *r, const struct plan *p, const struct plan_extra *e)
{
	char **argv = validator_argv(r, p->svc, e->def);
	if (argv == NULL)
		return -1;
	struct buf out;
	buf_init(&out);
	long deadline = mono_ms() + (r->wait_ms > 0 ? r->wait_ms : 30000);
	int st = validate_run(argv, e->body.p ? e->body.p : "", e->body.len, p->svc->user,
	                      p->svc->group, deadline, &out);
	if (st != 0) {
		if (st == -1)
			warn("%s: cannot validate %s with %s", p->svc->def->name, e->dest, argv[0]);
		else if (st == 127)
			warnx(
			    "%s: cannot run %s to validate %s (is its package installed?); nothing "
			    "was written",
			    p->svc->def->name, argv[0], e->dest);
		else
			warnx("%s: %s refused the new %s (exit %d); nothing was written:",
			      p->svc->def->name, argv[0], e->dest, st);
		if (out.len > 0)
			fprintf(stderr, "%.*s%s", (int)out.len, out.p,
			        out.p[out.len - 1] == '\n' ? "" : "\n");
		buf_addc(&out, '\0');
		point_at_lines(r, e, out.p);
		point_at_settings(p->svc);
	}
	buf_free(&out);
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
	return st == 0 ? 0 : -1;
}

/* Every changed file with a validator must pass it before anything is published. */
static int validate_changes(const struct recon *r)
{
	int rc = 0;
	for (size_t k = 0; k < r->ps.np; k++) {
		const struct plan *p = &r->ps.p[k];
		for (size_t i = 0; i < p->nextra; i++)
			if (p->extra[i].def->nvalidate > 0 &&
			    content_changes(&r->ps.t, p->extra[i].dest) &&
			    validate_one(r, p, &p->extra[i]) == -1)
				rc = -1;
	}
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
	if (validate_changes(r) == -1)
		return -1;
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
	int rc = plan_owners(&r->ps, r->l.a.manage_accounts, r->dry_run, &d) == -1 ||
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
	long wait_s;
	const char *errstr;
	if (sv_wait_seconds(&wait_s, &errstr) == -1) {
		warnx("SVWAIT=%s: %s (seconds, 0 to %d)", getenv("SVWAIT"), errstr, SV_WAIT_MAX);
		return 2;
	}
	r->wait_ms = wait_s * 1000L;
	return 0;
}

int cmd_reconfigure(const struct ctl *ctl, int argc, char **argv)
{
	struct recon r;
	memset(&r, 0, sizeof r);
	r.t0 = mono_ms();
	r.ctl = ctl;
	umask(022); /* modes are set explicitly; directories made on the way stay traversable */
	int rc = parse(&r, argc, argv);
	if (rc != 0)
		return rc;
	diags_init(&r.l.d);
	plans_init(&r.ps);
	rc = run_reconfigure(&r);
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
