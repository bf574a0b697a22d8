/* The trust checks of a configuration (see trust.h). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/dirtrust.h"
#include "lib/pathsafe.h"
#include "config/trust.h"
#include "lib/names.h"

/* The enabled services' homes, sorted: which homes hold a path is one search per ancestor. */
struct homes {
	const struct attrs *a;
	struct home {
		const char *path;
		size_t len; /* without trailing slashes */
		size_t svc;
	} * v;
	size_t n;
	bool *len_used; /* [maxlen + 1]: some home is this long: only such prefixes are searched */
	size_t maxlen;
	struct dirtrust *dt;           /* the run's examined directories: each one examined once */
	char home_parent_ok[PATH_MAX]; /* the last home parent found safe: homes share one */
};

struct tpath {
	const char *setting; /* the setting that chose it, NULL for a fixed path */
	const char *path;
	const char *what; /* why root cares */
};

/* "file:line:col", from the right (a file name may hold ':'). 0, or -1 when malformed. */
static int parse_where(const char *w, char *file, size_t len, int *line, int *col)
{
	char buf[PATH_MAX + 32];
	const char *e1 = NULL, *e2 = NULL;
	if (strlcpy(buf, w, sizeof buf) >= sizeof buf)
		return -1;
	char *c2 = strrchr(buf, ':');
	if (c2 == NULL)
		return -1;
	*c2 = '\0';
	char *c1 = strrchr(buf, ':');
	if (c1 == NULL)
		return -1;
	*c1 = '\0';
	long long l = strtonum(c1 + 1, 0, INT_MAX, &e1), c = strtonum(c2 + 1, 0, INT_MAX, &e2);
	if (e1 != NULL || e2 != NULL)
		return -1;
	strlcpy(file, buf, len);
	*line = (int)l;
	*col = (int)c;
	return 0;
}

/* The setting's place: where gitlab.rb set it, else its line in the catalog. */
static void report(struct diags *d, const struct svc *s, const char *setting, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void report(struct diags *d, const struct svc *s, const char *setting, const char *fmt, ...)
{
	const char *w = setting ? kv_get(&s->where, setting) : NULL;
	const struct cat_setting *cs = setting ? cat_setting_find(s->def, setting) : NULL;
	char file[PATH_MAX];
	int line = cs ? cs->line : s->def->line, col = 0;
	strlcpy(file, s->def->file, sizeof file);
	if (w != NULL && parse_where(w, file, sizeof file, &line, &col) == -1) {
		strlcpy(file, s->def->file, sizeof file);
		line = cs ? cs->line : s->def->line;
		col = 0;
	}
	char msg[2 * PATH_MAX + 200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	struct src src = {.name = file};
	struct loc l = {.src = &src, .line = line, .col = col};
	if (setting != NULL)
		diag_at(d, DIAG_ERR, l, "%s['%s']: %s", s->def->config_name, setting, msg);
	else
		diag_at(d, DIAG_ERR, l, "%s: %s", s->def->name, msg);
}

static int home_cmp(const void *x, const void *y)
{
	const struct home *a = x, *b = y;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->path, b->path, n);
	if (c == 0)
		c = a->len < b->len ? -1 : a->len > b->len;
	return c != 0 ? c : (a->svc > b->svc) - (a->svc < b->svc);
}

static void homes_init(struct homes *h, const struct attrs *a)
{
	h->a = a;
	h->n = 0;
	h->v = xcalloc(a->nsvcs, sizeof *h->v);
	h->maxlen = 0;
	for (size_t k = 0; k < a->nsvcs; k++) {
		const struct svc *o = &a->svcs[k];
		if (!o->enabled || o->home == NULL)
			continue;
		size_t len = strlen(o->home);
		while (len > 0 && o->home[len - 1] == '/')
			len--;
		h->v[h->n++] = (struct home){o->home, len, k};
		h->maxlen = len > h->maxlen ? len : h->maxlen;
	}
	h->len_used = xcalloc(h->maxlen + 1, sizeof *h->len_used);
	for (size_t k = 0; k < h->n; k++)
		h->len_used[h->v[k].len] = true;
	qsort(h->v, h->n, sizeof *h->v, home_cmp);
}

/* Each home equal to path[0, len), in the sorted order. */
static int homes_at(const struct homes *h, const struct svc *s, const struct tpath *p, size_t len,
                    struct diags *d)
{
	struct home key = {p->path, len, 0};
	size_t lo = 0, hi = h->n;
	while (lo < hi) { /* the first home not below key */
		size_t mid = lo + (hi - lo) / 2;
		if (home_cmp(&h->v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	int rc = 0;
	for (; lo < h->n && h->v[lo].len == len && memcmp(h->v[lo].path, p->path, len) == 0; lo++) {
		const struct svc *o = &h->a->svcs[h->v[lo].svc];
		report(d, s, p->setting,
		       "%s: %s lies inside the home %s, which the account %s owns", p->what,
		       p->path, o->home, o->user ? o->user : "?");
		rc = -1;
	}
	return rc;
}

static int check_path(const struct homes *h, const struct svc *s, const struct tpath *p,
                      struct diags *d)
{
	char bad[PATH_MAX];
	const char *why;
	int rc = 0;
	if (dirtrust_check(h->dt, p->path, bad, sizeof bad, &why) == -1) {
		report(d, s, p->setting,
		       "%s: %s %s; it must sit below directories only root can write", p->what, bad,
		       why);
		rc = -1;
	}
	/* pathsafe_below(path, home) for every home: home is path or one of its ancestors */
	size_t len = strlen(p->path);
	for (size_t end = 0; end <= len; end++)
		if ((end == len || p->path[end] == '/') && end <= h->maxlen && h->len_used[end] &&
		    homes_at(h, s, p, end, d) == -1)
			rc = -1;
	return rc;
}

static void parent_of(const char *path, char *out, size_t len)
{
	strlcpy(out, path, len);
	char *slash = strrchr(out, '/');
	if (slash == out)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
}

/* The home's parent: another account able to write it could swap the home root chowns. */
static int check_home(struct homes *h, const struct svc *s, struct diags *d)
{
	char parent[PATH_MAX], bad[PATH_MAX];
	const char *why;
	if (s->home == NULL)
		return 0;
	parent_of(s->home, parent, sizeof parent);
	/* One verdict per path in this check, as for every directory dirtrust examines. */
	if (strcmp(parent, h->home_parent_ok) == 0)
		return 0;
	if (dirtrust_check(h->dt, parent, bad, sizeof bad, &why) == 0) {
		strlcpy(h->home_parent_ok, parent, sizeof h->home_parent_ok);
		return 0;
	}
	report(d, s, "home", "root chowns the home: %s %s", bad, why);
	return -1;
}

/* Is a[0, alen) b[0, blen) or one of its ancestors? */
static bool path_covers(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen <= blen && memcmp(a, b, alen) == 0 &&
	       (alen == blen || b[alen] == '/' || alen == 0);
}

/*
 * Each home is its service's alone: root chowns it to the account and moves aside what
 * it does not expect there, so a home that is, holds or lies inside another service's
 * home (or the data directory that holds them all) hands that service's data to this
 * account. Reported at the home gitlab.rb set, else at the later service's.
 */
static int check_homes_apart(const struct homes *h, struct diags *d)
{
	int rc = 0;
	for (size_t i = 0; i < h->n; i++) {
		const struct home *x = &h->v[i];
		const struct svc *s = &h->a->svcs[x->svc];
		const char *data = svc_var(s, "gitlab_data_dir");
		size_t dlen = data ? strlen(data) : 0;
		while (dlen > 1 && data[dlen - 1] == '/')
			dlen--;
		if (data != NULL && path_covers(x->path, x->len, data, dlen)) {
			report(
			    d, s, "home",
			    "%s is the data directory %.*s or above it: it would be chowned to %s "
			    "with every other service's home below it; give it a directory of its "
			    "own",
			    s->home, (int)dlen, data, s->user ? s->user : "?");
			rc = -1;
		}
		for (size_t j = i + 1; j < h->n; j++) {
			const struct home *y = &h->v[j];
			const struct svc *o = &h->a->svcs[y->svc];
			bool same = x->len == y->len && memcmp(x->path, y->path, x->len) == 0;
			if (!path_covers(x->path, x->len, y->path, y->len))
				continue;
			/* x covers y (sorted: x is the shorter or equal one) */
			if (same && !kv_get(&o->where, "home") && !kv_get(&s->where, "home")) {
				/* one catalog's home is the other's: alternatives (patroni,
				 * postgresql) */
				const struct svc *at = kv_get(&o->where, "enable") ? o : s;
				const struct svc *other = at == o ? s : o;
				report(
				    d, at, "enable",
				    "%s and %s run the same data (home %s): they never run "
				    "together; "
				    "turn one off (%s['enable'] = false, or roles that pick one)",
				    at->def->config_name, other->def->config_name, o->home,
				    other->def->config_name);
				rc = -1;
				continue;
			}
			const struct svc *at =
			    kv_get(&o->where, "home") || !kv_get(&s->where, "home") ? o : s;
			const struct svc *other = at == o ? s : o;
			const char *rel = same      ? "is also the home of"
			                  : at == o ? "lies inside the home of"
			                            : "holds the home of";
			report(d, at, "home",
			       "%s %s %s (%s, account %s): two services' homes never overlap",
			       at->home, rel, other->def->config_name, other->home,
			       other->user ? other->user : "?");
			rc = -1;
		}
	}
	return rc;
}

/* svlogd runs an absolute processor as root; a bare name is found in root's PATH. */
static int check_filter(const struct homes *h, const struct svc *s, struct diags *d)
{
	char proc[PATH_MAX];
	if (s->log.filter == NULL || s->log.filter[0] != '/')
		return 0;
	strlcpy(proc, s->log.filter, sizeof proc);
	proc[strcspn(proc, " \t")] = '\0';
	const struct tpath p = {NULL, proc, "svlogd (root) runs its processor"};
	return check_path(h, s, &p, d);
}

/* Is entry de of dirfd a regular file? Its d_type, or an lstat where the filesystem gives none. */
static bool entry_regular(int dirfd, const struct dirent64 *de)
{
	struct stat st;
	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_REG;
	return fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* An entry of the env directory gitlab-ctl did not write: its name, or NULL. */
static const char *env_stray(int dirfd, const struct dirent64 *de)
{
	const char *n = de->d_name;
	if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
		return NULL;
	if (entry_regular(dirfd, de) && (name_env_ok(n) || name_temp(n, &(size_t){0})))
		return NULL;
	return n;
}

/*
 * The env directory is gitlab-ctl's: reconfigure deletes what it does not list there. One
 * that holds anything else (a README, a subdirectory) is someone's data: refused here,
 * before reconfigure creates accounts or writes a file. Listed with getdents64, each entry
 * judged by its d_type (no stat per env file).
 */
static int check_env_dir(const struct svc *s, struct diags *d)
{
	int fd =
	    s->env_dir ? open(s->env_dir, O_RDONLY | O_NONBLOCK | O_DIRECTORY | O_CLOEXEC) : -1;
	if (fd == -1)
		return 0; /* missing: reconfigure creates it */
	char ents[8192] __attribute__((aligned(8)));
	const char *stray = NULL;
	ssize_t n;
	while (stray == NULL && (n = getdents64(fd, ents, sizeof ents)) > 0)
		for (ssize_t off = 0; stray == NULL && off < n;) {
			const struct dirent64 *de = (const struct dirent64 *)(ents + off);
			off += de->d_reclen;
			stray = env_stray(fd, de);
		}
	if (stray != NULL)
		report(d, s, "env_directory",
		       "%s holds %s, which gitlab-ctl did not write; an env directory holds only "
		       "env files (choose an empty or new directory)",
		       s->env_dir, stray);
	close(fd);
	return stray != NULL ? -1 : 0;
}

static int check_svc(const struct ctl *ctl, struct homes *h, const struct svc *s, struct diags *d)
{
	char sv[PATH_MAX];
	if (ctl_sv_dir(ctl, sv, sizeof sv, s->def->name) == -1)
		return -1;
	const struct tpath p[] = {
	    {NULL, sv, "root runs the run scripts"},
	    {"log_directory", s->log_dir, "svlogd (root) reads its config"},
	    {"env_directory", s->env_dir, "root reads the env directory"},
	};
	int rc = 0;
	for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
		if (p[i].path != NULL && check_path(h, s, &p[i], d) == -1)
			rc = -1;
	if (check_home(h, s, d) == -1 || check_filter(h, s, d) == -1)
		rc = -1;
	if (rc == 0 && check_env_dir(s, d) == -1)
		rc = -1;
	return rc;
}

int trust_check(const struct ctl *ctl, const struct attrs *a, struct diags *d)
{
	int rc = 0;
	struct homes h;
	struct dirtrust dt;
	dirtrust_init(&dt, ctl->root);
	homes_init(&h, a);
	h.dt = &dt;
	h.home_parent_ok[0] = '\0';
	for (size_t i = 0; i < a->nsvcs; i++)
		if (a->svcs[i].enabled && check_svc(ctl, &h, &a->svcs[i], d) == -1)
			rc = -1;
	if (check_homes_apart(&h, d) == -1)
		rc = -1;
	free(h.v);
	free(h.len_used);
	dirtrust_free(&dt);
	return rc;
}
