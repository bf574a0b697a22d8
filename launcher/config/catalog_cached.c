/*
 * catalog_load_cached: the listing, keyed, then the cache or a parse. The key
 * is what decided the parse: this build (the binary's identity), libconfig's
 * version, the directory, and each file's identity, size and times.
 */
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build_config.h"
#include "config/catalog.h"
#include "config/catalog_cache.h"
#include "config/catalog_int.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/ctl.h"
#include "lib/pathjoin.h"

/* A listing's cache key, while it is made. */
struct keyed {
	struct buf key;
	const struct catalog_cache *cc;
	bool racy;
};

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
	int dfd = -1;
	char **files = catalog_list(dir, &nfiles, d, cc->path ? &dfd : NULL);
	if (files == NULL)
		return -1;
	if (dfd != -1 && key_files(&k.key, dfd, files, nfiles, cc, dir, &k.racy) == -1)
		buf_free(&k.key);
	if (dfd != -1)
		close(dfd);
	if (k.key.p && from_cache(dir, &k, out) == 0) {
		for (size_t i = 0; i < nfiles; i++)
			free(files[i]);
		free(files);
		buf_free(&k.key);
		cc->hit = true;
		return 0;
	}
	out->dir = xstrdup(dir);
	int rc = catalog_parse(dir, files, nfiles, out, d);
	/* Only a clean parse is kept: a cache hit could not repeat its diagnostics. */
	if (rc == 0 && d->n == ndiag && k.key.p && !k.racy)
		(void)catcache_write(cc->path, &k.key, out);
	buf_free(&k.key);
	return rc;
}

int catalog_load_ctl(const struct ctl *ctl, struct catalog *out, struct diags *d)
{
	char dir[PATH_MAX], var[PATH_MAX], cache[PATH_MAX], build[PATH_MAX + 128];
	struct catalog_cache cc = {.path = cache, .build = build, .now = time(NULL)};
	struct stat st;
	memset(out, 0, sizeof *out);
	if (path_join(dir, sizeof dir, ctl->datadir, "sv") == -1) {
		diag_file(d, DIAG_ERR, ctl->datadir, 0, "catalog path too long");
		return -1;
	}
	/* Another binary (a rebuild, an upgrade) may read the catalog otherwise. */
	if (ctl->self[0] == '\0' || stat(ctl->self, &st) == -1 ||
	    ctl_var_dir(ctl, var, sizeof var) == -1 ||
	    path_join(cache, sizeof cache, var, "catalog.cache") == -1)
		cc.path = NULL;
	else
		snprintf(build, sizeof build, "%s %jd %jd %jd %jd.%09ld", ctl->self,
		         (intmax_t)st.st_dev, (intmax_t)st.st_ino, (intmax_t)st.st_size,
		         (intmax_t)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	return catalog_load_cached(dir, &cc, out, d);
}
