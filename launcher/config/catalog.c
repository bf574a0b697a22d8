/*
 * The service catalog: one libconfig file per service in <datadir>/sv/.
 * The format is documented at the top of sv/gitlab-exporter.conf. Loading is
 * strict (unknown keys and wrong types are errors with file and line) because
 * a typo in a catalog file would otherwise silently drop a default. This file
 * lists the files and owns the loaded structs; catalog_int.h maps the rest.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config/catalog.h"
#include "config/catalog_int.h"
#include "lib/alloc.h"
#include "lib/ctl.h"
#include "lib/buf.h"
#include "lib/grow.h"
#include "lib/pathjoin.h"
#include "lib/readfile.h"

void catalog_service_free(struct cat_service *s)
{
	free(s->file);
	free(s->name);
	free(s->config_name);
	free(s->description);
	free(s->package);
	strv_free(s->omnibus_keys, s->nomnibus_keys);
	for (size_t i = 0; i < s->nsettings; i++) {
		free(s->settings[i].name);
		free(s->settings[i].def);
		for (size_t j = 0; j < s->settings[i].ndefs; j++) {
			free(s->settings[i].defs[j].name);
			free(s->settings[i].defs[j].value);
		}
		free(s->settings[i].defs);
		strv_free(s->settings[i].refuse, s->settings[i].nrefuse);
		free(s->settings[i].refuse_because);
		free(s->settings[i].gitlab_key);
		strv_free(s->settings[i].values, s->settings[i].nvalues);
		strv_free(s->settings[i].required_by, s->settings[i].nrequired_by);
		free(s->settings[i].gitlab_rails);
	}
	free(s->settings);
	for (size_t i = 0; i < s->nenv; i++) {
		free(s->env[i].name);
		free(s->env[i].value);
	}
	free(s->env);
	for (size_t i = 0; i < s->nbase_env; i++) {
		free(s->base_env[i].name);
		free(s->base_env[i].value);
	}
	free(s->base_env);
	strv_free(s->command, s->ncommand);
	strv_free(s->check_command, s->ncheck_command);
	strv_free(s->after, s->nafter);
	for (size_t i = 0; i < s->nsetup; i++) {
		free(s->setup[i].name);
		free(s->setup[i].creates);
		strv_free(s->setup[i].argv, s->setup[i].argc);
		strv_free(s->setup[i].verify, s->setup[i].nverify);
	}
	free(s->setup);
	free(s->check_send);
	free(s->check_expect);
	free(s->stop_signal);
	for (size_t i = 0; i < s->ntemplates; i++) {
		free(s->templates[i].src);
		free(s->templates[i].dest);
		strv_free(s->templates[i].validate, s->templates[i].nvalidate);
		strv_free(s->templates[i].contexts, s->templates[i].ncontexts);
	}
	free(s->templates);
	free(s->check);
	for (size_t i = 0; i < s->nscrape; i++) {
		free(s->scrape[i].job);
		free(s->scrape[i].path);
		free(s->scrape[i].needs);
		free(s->scrape[i].when);
	}
	free(s->scrape);
	free(s->scrape_collect);
	strv_free(s->roles, s->nroles);
	free(s->off_switch);
	free(s->off_with);
	memset(s, 0, sizeof *s);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cat_service *)a)->name, ((const struct cat_service *)b)->name);
}

static bool is_conf(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".conf") == 0;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the *.conf files in dir, sorted, so that load order is reproducible. */
static char **catalog_list(const char *dir, size_t *n, struct diags *d)
{
	DIR *dp = opendir(dir);
	if (dp == NULL) {
		diag_file(d, DIAG_ERR, dir, 0, "cannot open the service catalog: %s",
		          strerror(errno));
		return NULL;
	}
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	struct dirent *de;
	while ((de = readdir(dp)) != NULL) {
		if (!is_conf(de->d_name))
			continue;
		grow(&v, &cap, *n + 2, sizeof *v, 8); /* + the NULL */
		v[(*n)++] = xstrdup(de->d_name);
	}
	if (v == NULL)
		v = xcalloc(1, sizeof *v);
	qsort(v, *n, sizeof *v, cmp_strp);
	closedir(dp);
	return v;
}

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789_"

/* Is p[0..n) a gitlab.rb name, or NAME['KEY'] (*is_key)? */
static bool omnibus_entry(const char *p, size_t n, bool *is_key)
{
	size_t name = strspn(p, NAME_CHARS);
	*is_key = false;
	if (name == n)
		return n > 0;
	if (name == 0 || n < name + 5 || strncmp(p + name, "['", 2) != 0 ||
	    strncmp(p + n - 2, "']", 2) != 0)
		return false;
	size_t key = strspn(p + name + 2, NAME_CHARS);
	*is_key = key > 0 && name + 2 + key == n - 2;
	return *is_key;
}

/* One list of c (names or keys): p[0..n) appended. */
static void omnibus_add(char ***v, size_t *nv, size_t *cap, const char *p, size_t n)
{
	grow(v, cap, *nv + 1, sizeof **v, 64);
	(*v)[(*nv)++] = xstrndup(p, n);
}

/*
 * <dir>/omnibus-names.list, one name (or NAME['KEY']) per line, '#' comments; absent: no
 * list.
 */
static void load_omnibus_names(struct catalog *c, struct diags *d)
{
	struct buf b;
	char path[PATH_MAX];
	buf_init(&b);
	if (path_join(path, sizeof path, c->dir, OMNIBUS_NAMES) == -1 ||
	    readfile(path, &b, 1 << 20) == -1) {
		if (errno != ENOENT)
			diag_file(d, DIAG_ERR, c->dir, 0, OMNIBUS_NAMES ": cannot read: %s",
			          strerror(errno));
		buf_free(&b);
		return;
	}
	buf_addc(&b, '\0');
	size_t cap = 0, kcap = 0;
	int line = 0;
	bool is_key;
	for (char *p = b.p, *nl; p != NULL && *p != '\0'; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		line++;
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		n = strcspn(p, "#\n") < n ? strcspn(p, "#\n") : n;
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
			n--;
		if (n == 0)
			continue;
		if (!omnibus_entry(p, n, &is_key))
			diag_file(d, DIAG_ERR, path, line,
			          "not a gitlab.rb name or NAME['KEY']: \"%.*s\"", (int)n, p);
		else if (is_key)
			omnibus_add(&c->omnibus_keys, &c->nomnibus_keys, &kcap, p, n);
		else
			omnibus_add(&c->omnibus, &c->nomnibus, &cap, p, n);
	}
	if (c->omnibus == NULL)
		c->omnibus = xcalloc(1, sizeof *c->omnibus); /* present but empty: still strict */
	qsort(c->omnibus, c->nomnibus, sizeof *c->omnibus, cmp_strp);
	if (c->omnibus_keys != NULL)
		qsort(c->omnibus_keys, c->nomnibus_keys, sizeof *c->omnibus_keys, cmp_strp);
	buf_free(&b);
}

bool catalog_omnibus_name(const struct catalog *c, const char *name)
{
	return c->nomnibus > 0 &&
	       bsearch(&name, c->omnibus, c->nomnibus, sizeof *c->omnibus, cmp_strp) != NULL;
}

bool catalog_omnibus_key(const struct catalog *c, const char *name, const char *key)
{
	if (c->nomnibus_keys == 0)
		return false;
	char *k = xasprintf("%s['%s']", name, key);
	const char *kp = k;
	bool found = bsearch(&kp, c->omnibus_keys, c->nomnibus_keys, sizeof *c->omnibus_keys,
	                     cmp_strp) != NULL;
	free(k);
	return found;
}

static void load_files(const char *dir, char **files, size_t nfiles, struct catalog *out,
                       struct diags *d)
{
	char path[PATH_MAX];
	out->v = xcalloc(nfiles + 1, sizeof *out->v);
	for (size_t i = 0; i < nfiles; i++) {
		if (path_join(path, sizeof path, dir, files[i]) == -1)
			diag_file(d, DIAG_ERR, dir, 0, "%s: %s", files[i], strerror(errno));
		else if (catalog_load_file(path, &out->v[out->n], d) == 0)
			out->n++;
		free(files[i]);
	}
	free(files);
	if (nfiles == 0)
		diag_file(d, DIAG_ERR, dir, 0, "no service definitions (*.conf) in the catalog");
}

int catalog_load(const char *dir, struct catalog *out, struct diags *d)
{
	size_t nfiles, nerr = d->nerr;
	memset(out, 0, sizeof *out);
	char **files = catalog_list(dir, &nfiles, d);
	if (files == NULL)
		return -1;
	out->dir = xstrdup(dir);
	load_files(dir, files, nfiles, out, d);
	qsort(out->v, out->n, sizeof *out->v, by_name);
	load_omnibus_names(out, d);
	catalog_check_unique(out, d);
	catalog_check_deps(out, d);
	for (size_t i = 0; i < out->n; i++) {
		out->v[i].src.name = out->v[i].file;
		out->v[i].src.text = NULL;
		out->v[i].src.len = 0;
	}
	return d->nerr > nerr ? -1 : 0;
}

int catalog_load_ctl(const struct ctl *ctl, struct catalog *out, struct diags *d)
{
	char dir[PATH_MAX];
	memset(out, 0, sizeof *out);
	if (path_join(dir, sizeof dir, ctl->datadir, "sv") == -1) {
		diag_file(d, DIAG_ERR, ctl->datadir, 0, "catalog path too long");
		return -1;
	}
	return catalog_load(dir, out, d);
}

void catalog_free(struct catalog *c)
{
	for (size_t i = 0; i < c->n; i++)
		catalog_service_free(&c->v[i]);
	free(c->v);
	free(c->dir);
	strv_free(c->omnibus, c->nomnibus);
	strv_free(c->omnibus_keys, c->nomnibus_keys);
	memset(c, 0, sizeof *c);
}

const struct cat_service *catalog_find(const struct catalog *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->v[i].name, name) == 0 || strcmp(c->v[i].config_name, name) == 0)
			return &c->v[i];
	return NULL;
}

const struct cat_setting *cat_setting_find(const struct cat_service *s, const char *name)
{
	for (size_t i = 0; i < s->nsettings; i++)
		if (strcmp(s->settings[i].name, name) == 0)
			return &s->settings[i];
	return NULL;
}

const struct cat_setting *cat_setting_key(const struct cat_service *s, const char *key)
{
	for (size_t i = 0; i < s->nsettings; i++)
		if (s->settings[i].gitlab_key != NULL &&
		    strcmp(s->settings[i].gitlab_key, key) == 0)
			return &s->settings[i];
	return cat_setting_find(s, key);
}

struct loc cat_loc(const struct cat_service *s, int line)
{
	struct loc l = {.src = &s->src, .line = line, .col = 0};
	return l;
}

bool catalog_has_check(const struct cat_service *def)
{
	return def->check != NULL || def->check_command != NULL;
}
