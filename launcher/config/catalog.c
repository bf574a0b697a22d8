/*
 * The service catalog: one libconfig file per service in <datadir>/sv/.
 * The format is documented at the top of sv/gitlab-exporter.conf. Loading is
 * strict (unknown keys and wrong types are errors with file and line) because
 * a typo in a catalog file would otherwise silently drop a default. This file
 * lists the files and owns the loaded structs; catalog_int.h maps the rest.
 */
#include <dirent.h>
#include <errno.h>
#include <libconfig.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"
#include "config/catalog_cache.h"
#include "config/catalog_int.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/ctl.h"
#include "lib/grow.h"
#include "lib/pathjoin.h"
#include "lib/readfile.h"

#define OMNIBUS_NAMES "omnibus-names.list"

/* A listing's cache key, while it is made. */
struct keyed {
	struct buf key;
	const struct catalog_cache *cc;
	bool racy;
};

static void free_argv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void catalog_service_free(struct cat_service *s)
{
	free(s->file);
	free(s->name);
	free(s->config_name);
	free(s->description);
	free(s->package);
	for (size_t i = 0; i < s->nomnibus_keys; i++)
		free(s->omnibus_keys[i]);
	free(s->omnibus_keys);
	for (size_t i = 0; i < s->nsettings; i++) {
		free(s->settings[i].name);
		free(s->settings[i].def);
		for (size_t j = 0; j < s->settings[i].ndefs; j++) {
			free(s->settings[i].defs[j].name);
			free(s->settings[i].defs[j].value);
		}
		free(s->settings[i].defs);
		free_argv(s->settings[i].refuse, s->settings[i].nrefuse);
		free(s->settings[i].refuse_because);
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
	free_argv(s->command, s->ncommand);
	free_argv(s->check_command, s->ncheck_command);
	free_argv(s->after, s->nafter);
	for (size_t i = 0; i < s->nsetup; i++) {
		free(s->setup[i].name);
		free(s->setup[i].creates);
		free_argv(s->setup[i].argv, s->setup[i].argc);
		free_argv(s->setup[i].verify, s->setup[i].nverify);
	}
	free(s->setup);
	free(s->check_send);
	free(s->check_expect);
	free(s->stop_signal);
	for (size_t i = 0; i < s->ntemplates; i++) {
		free(s->templates[i].src);
		free(s->templates[i].dest);
		free_argv(s->templates[i].validate, s->templates[i].nvalidate);
	}
	free(s->templates);
	free(s->check);
	for (size_t i = 0; i < s->nscrape; i++) {
		free(s->scrape[i].job);
		free(s->scrape[i].path);
		free(s->scrape[i].needs);
	}
	free(s->scrape);
	free(s->scrape_collect);
	free_argv(s->roles, s->nroles);
	free(s->off_switch);
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

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * What decides a file's parse, as the cache key records it. ctime too: a
 * rewrite that restores size and mtime still moves it. A file changed in the
 * last seconds could change again within the same timestamp: racy, not cached.
 */
static int key_file(struct buf *key, int dfd, const char *name, time_t now, bool *racy)
{
	struct stat st;
	if (fstatat(dfd, name, &st, 0) == -1) {
		if (errno != ENOENT || strcmp(name, OMNIBUS_NAMES) != 0)
			return -1;
		buf_addf(key, "%s absent\n", name); /* an optional file may come later */
		return 0;
	}
	int64_t v[] = {(int64_t)st.st_dev,          (int64_t)st.st_ino,
	               (int64_t)st.st_size,         (int64_t)st.st_mtim.tv_sec,
	               (int64_t)st.st_mtim.tv_nsec, (int64_t)st.st_ctim.tv_sec,
	               (int64_t)st.st_ctim.tv_nsec, (int64_t)st.st_mode};
	buf_adds(key, name);
	buf_add(key, "", 1);
	buf_add(key, v, sizeof v);
	*racy |= st.st_ctim.tv_sec >= now - 2 || st.st_mtim.tv_sec >= now - 2;
	return 0;
}

/* The key of a catalog: this build, the directory, and each file (-1: no cache this run). */
static int key_files(struct buf *key, int dfd, char **files, size_t n,
                     const struct catalog_cache *cc, const char *dir, bool *racy)
{
	buf_addf(key, "gitlab-ctl %s libconfig %d.%d.%d\n%s\n%s\n", GITLAB_CTL_VERSION,
	         LIBCONFIG_VER_MAJOR, LIBCONFIG_VER_MINOR, LIBCONFIG_VER_REVISION,
	         cc->build ? cc->build : "", dir);
	for (size_t i = 0; i < n; i++)
		if (key_file(key, dfd, files[i], cc->now, racy) == -1)
			return -1;
	return key_file(key, dfd, OMNIBUS_NAMES, cc->now, racy);
}

/*
 * Names of the *.conf files in dir, sorted, so that load order is reproducible.
 * With key: their cache key too (key->p NULL when one could not be made).
 */
static char **list_confs(const char *dir, size_t *n, struct diags *d, struct keyed *k)
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
	qsort(v, *n, sizeof *v, cmpstr);
	if (k && key_files(&k->key, dirfd(dp), v, *n, k->cc, dir, &k->racy) == -1)
		buf_free(&k->key);
	closedir(dp);
	return v;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* <dir>/omnibus-names.list, one name per line, '#' comments; absent: no list. */
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
	size_t cap = 0;
	int line = 0;
	for (char *p = b.p, *nl; p != NULL && *p != '\0'; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		line++;
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		n = strcspn(p, "#\n") < n ? strcspn(p, "#\n") : n;
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
			n--;
		if (n == 0)
			continue;
		if (strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_") != n) {
			diag_file(d, DIAG_ERR, path, line, "not a gitlab.rb name: \"%.*s\"", (int)n,
			          p);
			continue;
		}
		grow(&c->omnibus, &cap, c->nomnibus + 1, sizeof *c->omnibus, 64);
		c->omnibus[c->nomnibus++] = xstrndup(p, n);
	}
	if (c->omnibus == NULL)
		c->omnibus = xcalloc(1, sizeof *c->omnibus); /* present but empty: still strict */
	qsort(c->omnibus, c->nomnibus, sizeof *c->omnibus, cmp_strp);
	buf_free(&b);
}

bool catalog_omnibus_name(const struct catalog *c, const char *name)
{
	return c->nomnibus > 0 &&
	       bsearch(&name, c->omnibus, c->nomnibus, sizeof *c->omnibus, cmp_strp) != NULL;
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

/* Parse dir's files (their names already listed), then check them as a whole. */
static int load_parsed(const char *dir, char **files, size_t nfiles, struct catalog *out,
                       struct diags *d)
{
	size_t nerr = d->nerr;
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

int catalog_load(const char *dir, struct catalog *out, struct diags *d)
{
	struct catalog_cache none = {.path = NULL};
	return catalog_load_cached(dir, &none, out, d);
}

/*
 * A cached catalog passes the checks across files again (cheap): the checksum
 * guards against damage, this against a cache that would break their promises.
 */
static int from_cache(const char *dir, const struct keyed *k, struct catalog *out)
{
	struct diags scratch;
	if (catcache_read(k->cc->path, &k->key, out) == -1)
		return -1;
	out->dir = xstrdup(dir);
	diags_init(&scratch);
	catalog_check_unique(out, &scratch);
	catalog_check_deps(out, &scratch);
	int rc = scratch.n == 0 ? 0 : -1;
	diags_free(&scratch);
	if (rc == -1)
		catalog_free(out);
	return rc;
}

int catalog_load_cached(const char *dir, struct catalog_cache *cc, struct catalog *out,
                        struct diags *d)
{
	struct keyed k = {.cc = cc};
	size_t nfiles, ndiag = d->n;
	buf_init(&k.key);
	cc->hit = false;
	memset(out, 0, sizeof *out);
	char **files = list_confs(dir, &nfiles, d, cc->path ? &k : NULL);
	if (files == NULL)
		return -1;
	if (k.key.p && from_cache(dir, &k, out) == 0) {
		for (size_t i = 0; i < nfiles; i++)
			free(files[i]);
		free(files);
		buf_free(&k.key);
		cc->hit = true;
		return 0;
	}
	out->dir = xstrdup(dir);
	int rc = load_parsed(dir, files, nfiles, out, d);
	/* Only a clean parse is kept: a cache hit could not repeat its diagnostics. */
	if (rc == 0 && d->n == ndiag && k.key.p && !k.racy)
		(void)catcache_write(cc->path, &k.key, out);
	buf_free(&k.key);
	return rc;
}

int catalog_load_ctl(const struct ctl *ctl, struct catalog *out, struct diags *d)
{
	char dir[PATH_MAX], cache[PATH_MAX], build[PATH_MAX + 128];
	struct catalog_cache cc = {.path = cache, .build = build, .now = time(NULL)};
	struct stat st;
	memset(out, 0, sizeof *out);
	if (path_join(dir, sizeof dir, ctl->datadir, "sv") == -1) {
		diag_file(d, DIAG_ERR, ctl->datadir, 0, "catalog path too long");
		return -1;
	}
	/* Another binary (a rebuild, an upgrade) may read the catalog otherwise. */
	if (ctl->self[0] == '\0' || stat(ctl->self, &st) == -1 ||
	    ctl_var_dir(ctl, cache, sizeof cache) == -1 ||
	    path_join(cache, sizeof cache, cache, "catalog.cache") == -1)
		cc.path = NULL;
	else
		snprintf(build, sizeof build, "%s %jd %jd %jd %jd.%09ld", ctl->self,
		         (intmax_t)st.st_dev, (intmax_t)st.st_ino, (intmax_t)st.st_size,
		         (intmax_t)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	return catalog_load_cached(dir, &cc, out, d);
}

void catalog_free(struct catalog *c)
{
	for (size_t i = 0; i < c->n; i++)
		catalog_service_free(&c->v[i]);
	free(c->v);
	free(c->dir);
	for (size_t i = 0; i < c->nomnibus; i++)
		free(c->omnibus[i]);
	free(c->omnibus);
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

struct loc cat_loc(const struct cat_service *s, int line)
{
	struct loc l = {.src = &s->src, .line = line, .col = 0};
	return l;
}

bool catalog_has_check(const struct cat_service *def)
{
	return def->check != NULL || def->check_command != NULL;
}
