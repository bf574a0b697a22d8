/*
 * libFuzzer harness for the effective configuration: each input is parsed as
 * gitlab.rb and, when it parses, merged with the real catalog (sv/ of the
 * source tree) by attrs_build(), which also runs envcheck on the computed
 * env. Contracts checked: no crash, leak or undefined behaviour; -1 exactly
 * when an error was recorded; on success every service is complete (paths
 * absolute, env names valid, argv NULL-terminated, port in range), the
 * shipped templates render with reconfigure's variables or refuse a value
 * only at the gitlab.rb position that set it, and the run script passes every
 * value to gitlab-ctl as exactly one unchanged shell word. Build and run: see README.md here.
 *
 * The source dir comes from env GITLAB_CTL_SRCDIR, else from SRCDIR given
 * at compile time.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/attrs.h"
#include "config/envcheck.h"
#include "shwords.h"
#include "slurp.h"
#include "render/svvars.h"
#include "render/template.h"
#include "lib/names.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Loaded once: read-only afterwards. */
static struct catalog cat;
static struct ctl ctl;
static char root[] = "/tmp/fuzz-attrs.XXXXXX";
static char *tpl_text[3];
static size_t tpl_len[3];
static const char *const tpl_names[3] = {"run", "log-config", "gitlab-exporter.yml"};
static FILE *devnull;

static void cleanup(void)
{
	rmdir(root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *src = getenv("GITLAB_CTL_SRCDIR");
	char dir[PATH_MAX];
	struct diags d;
	if (src == NULL || *src == '\0')
		src = SRCDIR;
	snprintf(dir, sizeof dir, "%s/sv", src);
	diags_init(&d);
	if (catalog_load(dir, &cat, &d) == -1) {
		diags_print(&d, stderr);
		abort();
	}
	diags_free(&d);
	for (int i = 0; i < 3; i++) {
		char tpl_path[PATH_MAX];
		snprintf(tpl_path, sizeof tpl_path, "%s/templates/%s", src, tpl_names[i]);
		tpl_text[i] = slurp(tpl_path, &tpl_len[i]);
		if (tpl_text[i] == NULL) {
			perror(tpl_path);
			abort();
		}
	}
	if (mkdtemp(root) == NULL || ctl_init(&ctl, root, NULL) == -1) {
		perror("fuzz_attrs: temp root");
		abort();
	}
	atexit(cleanup);
	devnull = fopen("/dev/null", "w");
	if (devnull == NULL)
		abort();
	return 0;
}

static const struct attrs *cur_attrs; /* for {{svc.setting}} in gitlab-exporter.yml */

/* Errors of a render that failed: each must be at a gitlab.rb position (the value's origin). */
static bool errors_at_gitlab_rb(const struct diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].sev == DIAG_ERR &&
		    (d->v[i].file == NULL || strcmp(d->v[i].file, "gitlab.rb") != 0 ||
		     d->v[i].line < 1))
			return false;
	return true;
}

static void check_kvlist(const struct kvlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].name == NULL || l->v[i].value == NULL)
			abort();
		if (i > 0 && strcmp(l->v[i - 1].name, l->v[i].name) >= 0)
			abort(); /* sorted, unique: kv_get bsearches */
	}
}

/* The run script must hand each value to gitlab-ctl as one unchanged word. */
static void check_run(const struct svc *s, const char *text)
{
	const char **want = calloc(s->argc + 18, sizeof *want);
	size_t n = 0;
	if (want == NULL)
		abort();
	const char *r = svc_var(s, "root");
	want[n++] = svc_var(s, "gitlab_ctl");
	if (r != NULL && r[0] != '\0') {
		want[n++] = "--root";
		want[n++] = r;
	}
	const char *fixed[][2] = {{"exec", NULL},      {"--envdir", "env_directory"},
	                          {"--user", "user"},  {"--group", "group"},
	                          {"--chdir", "home"}, {NULL, "service"},
	                          {"--", NULL}};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		if (fixed[i][0] != NULL)
			want[n++] = fixed[i][0];
		if (fixed[i][1] != NULL)
			want[n++] = svc_var(s, fixed[i][1]);
		if (i == 3 && s->groups != NULL && s->groups[0] != '\0') {
			want[n++] = "--groups";
			want[n++] = s->groups;
		}
	}
	for (size_t i = 0; i < s->argc; i++)
		want[n++] = s->argv[i];
	for (size_t i = 0; i < n; i++)
		if (want[i] == NULL)
			abort();
	if (!sh_run_ok(text, want, n))
		abort();
	free(want);
}

static void render(const struct svc *s)
{
	struct svvars sv;
	struct tpl_vars vars = svvars_init(&sv, &ctl, cur_attrs, s);
	for (int i = 0; i < 3; i++) {
		if (i == 2 && strcmp(s->def->name, "gitlab-exporter") != 0)
			continue;
		struct buf out;
		struct diags d;
		buf_init(&out);
		diags_init(&d);
		int rc = tpl_render(tpl_names[i], tpl_text[i], tpl_len[i], &vars, &out, &d);
		/* A value a template refuses is reported where gitlab.rb set it. */
		if ((rc == -1) != (d.nerr > 0) || (rc == -1 && !errors_at_gitlab_rb(&d)))
			abort();
		if (i == 0 && rc == 0)
			check_run(s, out.p);
		diags_print(&d, devnull);
		diags_free(&d);
		buf_free(&out);
	}
}

static void check_svc(const struct svc *s)
{
	if (s->def == NULL || s->argv == NULL || s->argv[s->argc] != NULL)
		abort();
	for (size_t i = 0; i < s->argc; i++)
		if (s->argv[i] == NULL)
			abort();
	check_kvlist(&s->vars);
	check_kvlist(&s->env);
	check_kvlist(&s->base_env);
	check_kvlist(&s->origin);
	if (s->home == NULL || s->log_dir == NULL || s->env_dir == NULL || s->user == NULL ||
	    s->group == NULL)
		abort();
	if (s->home[0] != '/' || s->log_dir[0] != '/' || s->env_dir[0] != '/')
		abort();
	for (size_t i = 0; i < s->env.n; i++)
		if (!name_env_ok(s->env.v[i].name))
			abort();
	if (s->listen_port < 0 || s->listen_port > 65535)
		abort();
	render(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rb_file f;
	struct diags d;
	diags_init(&d);
	if (rb_parse("gitlab.rb", (const char *)data, size, &f, &d) == 0) {
		struct attrs a;
		size_t nerr = d.nerr;
		int rc = attrs_build(&ctl, &cat, &f, &a, &d);
		if ((rc == -1) != (d.nerr > nerr))
			abort();
		for (size_t i = 0; i < d.n; i++)
			if (d.v[i].msg == NULL || d.v[i].msg[0] == '\0')
				abort();
		cur_attrs = &a;
		if (rc == 0) {
			if (a.nsvcs != cat.n || a.user == NULL || a.group == NULL)
				abort();
			for (size_t i = 0; i < a.nsvcs; i++)
				check_svc(&a.svcs[i]);
		}
		attrs_free(&a);
	}
	diags_print(&d, devnull);
	rb_free(&f);
	diags_free(&d);
	return 0;
}
