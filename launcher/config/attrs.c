/*
 * The effective configuration: catalog defaults merged with the statements of
 * gitlab.rb in order (later assignments win), then each service's vars, env,
 * base env and argv computed and validated (SPEC section 5).
 *
 * Everything the user wrote is checked where it is written, so that every
 * message points at the gitlab.rb line; values that come from the catalog
 * point at the .conf line instead. Nothing here knows any particular service:
 * settings, defaults, env and command all come from the catalog.
 */
#include <errno.h>
#include <grp.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/attrs.h"
#include "build_config.h"
#include "config/envcheck.h"
#include "lib/grow.h"
#include "lib/pathsafe.h"
#include "lib/suggest.h"
#include "lib/names.h"

#define DEFAULT_USER  "git"
#define DEFAULT_GROUP "git"

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (p == NULL)
		abort(); /* small allocations; nothing sensible is left to do */
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (p == NULL)
		abort();
	return p;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n == -1)
		abort();
	return s;
}

/* ---- svlogd settings ---------------------------------------------------- */

enum { LOG_SIZE, LOG_NUM, LOG_TIMEOUT, LOG_FILTER, LOG_UDP, LOG_PREFIX, NLOG };

static const char *const log_keys[NLOG] = {
    "svlogd_size", "svlogd_num", "svlogd_timeout", "svlogd_filter", "svlogd_udp", "svlogd_prefix",
};

static int log_key(const char *key)
{
	for (int i = 0; i < NLOG; i++)
		if (strcmp(log_keys[i], key) == 0)
			return i;
	return -1;
}

/* Omnibus' logging defaults: 200 MB files, 30 of them, rotated daily, gzipped. */
static void svlog_defaults(struct svlog *l)
{
	l->size = 200LL * 1024 * 1024;
	l->num = 30;
	l->timeout = 24 * 60 * 60;
	l->filter = xstrdup("gzip");
	l->udp = NULL;
	l->prefix = NULL;
}

static void svlog_free(struct svlog *l)
{
	free(l->filter);
	free(l->udp);
	free(l->prefix);
	l->filter = l->udp = l->prefix = NULL;
}

/* Text form of one field, "" when unset; caller frees. */
static char *svlog_text(const struct svlog *l, int k)
{
	long long n = k == LOG_SIZE ? l->size : k == LOG_NUM ? l->num : l->timeout;
	const char *s = k == LOG_FILTER ? l->filter : k == LOG_UDP ? l->udp : l->prefix;
	if (k <= LOG_TIMEOUT)
		return n < 0 ? xstrdup("") : xasprintf("%lld", n);
	return xstrdup(s ? s : "");
}

/* Store text (NULL = nil) into field k. */
static void svlog_set(struct svlog *l, int k, const char *text)
{
	if (k <= LOG_TIMEOUT) {
		long long n = text ? strtonum(text, 0, LLONG_MAX, NULL) : -1;
		*(k == LOG_SIZE ? &l->size : k == LOG_NUM ? &l->num : &l->timeout) = n;
		return;
	}
	char **p = k == LOG_FILTER ? &l->filter : k == LOG_UDP ? &l->udp : &l->prefix;
	free(*p);
	*p = text ? xstrdup(text) : NULL;
}

/* ---- work state while walking gitlab.rb ---------------------------------- */

struct hent {
	char *key;
	char *val; /* NULL: nil (removes a default) */
	struct loc loc;
};

struct hlist {
	struct hent *v;
	size_t n, cap;
};

struct wsvc {
	const struct cat_service *def;
	char **val; /* per setting: the user's value as text, NULL = default */
	struct loc *vloc;
	struct hlist *hash; /* per setting, for env and flags */
	char *log[NLOG];    /* per-service svlogd_* overrides */
	bool log_set[NLOG];
};

struct build {
	const struct ctl *ctl;
	enum { C_TODO, C_BUSY, C_DONE, C_FAILED } * cstate; /* per service, computed on demand */
	const struct catalog *cat;
	struct diags *d;
	struct attrs *out;
	struct wsvc *w;
	struct kvlist unknown;    /* sorted: name -> "file:line" */
	struct loc *unknown_locs; /* parallel to unknown.v */
};

static void hlist_clear(struct hlist *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].key);
		free(h->v[i].val);
	}
	h->n = 0;
}

static void hlist_free(struct hlist *h)
{
	hlist_clear(h);
	free(h->v);
	h->v = NULL;
	h->cap = 0;
}

/* Set key (later wins, keeping first position); val NULL records a nil. */
static void hlist_set(struct hlist *h, const char *key, char *val, struct loc loc)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->v[i].key, key) == 0) {
			free(h->v[i].val);
			h->v[i].val = val;
			h->v[i].loc = loc;
			return;
		}
	if (grow(&h->v, &h->cap, h->n + 1, sizeof *h->v, 8) == -1)
		abort();
	h->v[h->n++] = (struct hent){xstrdup(key), val, loc};
}

/* ---- values -------------------------------------------------------------- */

/* The first opaque value in v, depth first, or NULL. */
static const struct rb_value *find_opaque(const struct rb_value *v)
{
	const struct rb_value *o = NULL;
	if (v == NULL)
		return NULL;
	switch (v->kind) {
	case RB_OPAQUE:
		return v;
	case RB_ARRAY:
		for (size_t i = 0; i < v->u.a.n && o == NULL; i++)
			o = find_opaque(v->u.a.v[i]);
		return o;
	case RB_HASH:
		for (size_t i = 0; i < v->u.h.n && o == NULL; i++) {
			o = find_opaque(v->u.h.v[i].key);
			if (o == NULL)
				o = find_opaque(v->u.h.v[i].val);
		}
		return o;
	default:
		return NULL;
	}
}

struct sbuf {
	char *s;
	size_t len, cap;
};

static void sb_add(struct sbuf *sb, const char *s, size_t n)
{
	if (sb->len + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap : 64;
		while (cap < sb->len + n + 1)
			cap *= 2;
		char *p = realloc(sb->s, cap);
		if (p == NULL)
			abort();
		sb->s = p;
		sb->cap = cap;
	}
	memcpy(sb->s + sb->len, s, n);
	sb->len += n;
	sb->s[sb->len] = '\0';
}

/*
 * Float#to_s: the shortest digits that read back the same, in fixed
 * notation for 1e-4 <= |x| < 1e16 (always with a fraction), else d.ddde+XX.
 */
static void ruby_float(double x, char *buf, size_t len)
{
	char digits[40];
	int prec;
	if (isnan(x) || isinf(x)) {
		snprintf(buf, len, "%s", isnan(x) ? "NaN" : x < 0 ? "-Infinity" : "Infinity");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(digits, sizeof digits, "%.*e", prec - 1, x);
		if (strtod(digits, NULL) == x)
			break;
	}
	snprintf(digits, sizeof digits, "%.*e", prec - 1, x);
	/* digits: [-]d[.ddd]e[+-]XX */
	char *e = strchr(digits, 'e');
	int exp = atoi(e + 1);
	*e = '\0';
	const char *neg = digits[0] == '-' ? "-" : "";
	char mant[40];
	size_t m = 0;
	for (const char *p = digits + (*neg ? 1 : 0); *p; p++)
		if (*p != '.')
			mant[m++] = *p;
	mant[m] = '\0';
	struct sbuf sb = {0};
	sb_add(&sb, neg, strlen(neg));
	if (exp < -4 || exp >= 16) {
		char e10[16];
		sb_add(&sb, mant, 1);
		sb_add(&sb, ".", 1);
		sb_add(&sb, m > 1 ? mant + 1 : "0", m > 1 ? m - 1 : 1);
		snprintf(e10, sizeof e10, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
		sb_add(&sb, e10, strlen(e10));
	} else if (exp < 0) {
		sb_add(&sb, "0.", 2);
		for (int i = 0; i < -exp - 1; i++)
			sb_add(&sb, "0", 1);
		sb_add(&sb, mant, m);
	} else {
		size_t ip = (size_t)exp + 1;
		sb_add(&sb, mant, ip < m ? ip : m);
		for (size_t i = m; i < ip; i++)
			sb_add(&sb, "0", 1);
		sb_add(&sb, ".", 1);
		sb_add(&sb, ip < m ? mant + ip : "0", ip < m ? m - ip : 1);
	}
	strlcpy(buf, sb.s, len);
	free(sb.s);
}

/* Name as the user wrote it: gitlab_exporter['env']['X'] (nkeys subscripts). */
static char *stmt_path(const struct rb_stmt *st, size_t nkeys)
{
	size_t len = strlen(st->name) + 1;
	for (size_t i = 0; i < nkeys && i < st->nkeys; i++)
		len += strlen(st->keys[i]) + 4;
	char *s = xcalloc(len, 1);
	strlcpy(s, st->name, len);
	for (size_t i = 0; i < nkeys && i < st->nkeys; i++) {
		strlcat(s, "['", len);
		strlcat(s, st->keys[i], len);
		strlcat(s, "']", len);
	}
	return s;
}

static bool has_nul(const struct rb_value *v)
{
	return strlen(v->u.s.ptr) != v->u.s.len;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/*
 * A scalar as Ruby's to_s would write it into an env file or flag: strings,
 * symbols, numbers, booleans. *out = NULL for nil. Returns -1 after an error.
 */
static int scalar_text(struct build *b, const char *path, const struct rb_value *v, char **out)
{
	char buf[64];
	*out = NULL;
	switch (v->kind) {
	case RB_NIL:
		return 0;
	case RB_STR:
	case RB_SYM:
		if (has_nul(v)) {
			diag_at(b->d, DIAG_ERR, v->loc, "%s contains a NUL byte", path);
			return -1;
		}
		*out = xstrdup(v->u.s.ptr);
		return 0;
	case RB_INT:
		*out = xasprintf("%lld", v->u.i);
		return 0;
	case RB_FLOAT:
		ruby_float(v->u.f, buf, sizeof buf);
		*out = xstrdup(buf);
		return 0;
	case RB_BOOL:
		*out = xstrdup(v->u.b ? "true" : "false");
		return 0;
	default:
		diag_at(b->d, DIAG_ERR, v->loc, "%s must be a string, number or boolean, not %s",
		        path, rb_kind_name(v->kind));
		return -1;
	}
}

/* An integer or a numeric string (Omnibus writes listen_port = '9168'). */
static int int_value(struct build *b, const char *path, const struct rb_value *v, long long min,
                     long long max, long long *out)
{
	const char *errstr = NULL;
	if (v->kind == RB_INT) {
		*out = v->u.i;
	} else if (v->kind == RB_STR && !has_nul(v)) {
		*out = strtonum(v->u.s.ptr, LLONG_MIN, LLONG_MAX, &errstr);
		if (errstr) {
			diag_at(b->d, DIAG_ERR, v->loc, "%s must be an integer, not \"%s\"", path,
			        v->u.s.ptr);
			return -1;
		}
	} else {
		diag_at(b->d, DIAG_ERR, v->loc, "%s must be an integer or numeric string, not %s",
		        path, rb_kind_name(v->kind));
		return -1;
	}
	if (*out < min || *out > max) {
		if (max == LLONG_MAX)
			diag_at(b->d, DIAG_ERR, v->loc, "%s must be %lld or greater, not %lld",
			        path, min, *out);
		else
			diag_at(b->d, DIAG_ERR, v->loc,
			        "%s must be between %lld and %lld, not %lld", path, min, max, *out);
		return -1;
	}
	return 0;
}

static bool valid_address(const char *s, char **host, long long *port)
{
	const char *colon = strrchr(s, ':');
	const char *errstr = NULL;
	if (colon == NULL)
		return false;
	*port = strtonum(colon + 1, 1, 65535, &errstr);
	if (errstr)
		return false;
	size_t hl = (size_t)(colon - s);
	if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
		*host = strndup(s + 1, hl - 2);
	} else {
		if (memchr(s, ':', hl) != NULL || memchr(s, '[', hl) != NULL)
			return false; /* IPv6 literals need brackets */
		*host = strndup(s, hl);
	}
	if (*host == NULL)
		abort();
	return true;
}

/* A user value for a scalar setting, as text. Returns -1 after an error. */
static int setting_text(struct build *b, enum stype type, const char *path,
                        const struct rb_value *v, char **out)
{
	long long n;
	char *host;
	*out = NULL;
	switch (type) {
	case ST_BOOL:
		if (v->kind != RB_BOOL) {
			diag_at(b->d, DIAG_ERR, v->loc, "%s must be true or false, not %s", path,
			        rb_kind_name(v->kind));
			return -1;
		}
		*out = xstrdup(v->u.b ? "true" : "false");
		return 0;
	case ST_INT:
		if (int_value(b, path, v, LLONG_MIN, LLONG_MAX, &n) == -1)
			return -1;
		*out = xasprintf("%lld", n);
		return 0;
	case ST_PORT:
		if (int_value(b, path, v, 1, 65535, &n) == -1)
			return -1;
		*out = xasprintf("%lld", n);
		return 0;
	case ST_STRING:
	case ST_PATH:
	case ST_ADDRESS:
		if ((v->kind != RB_STR && v->kind != RB_SYM) || has_nul(v)) {
			diag_at(b->d, DIAG_ERR, v->loc, "%s must be a string, not %s", path,
			        rb_kind_name(v->kind));
			return -1;
		}
		if (type == ST_PATH && v->u.s.ptr[0] != '/') {
			diag_at(b->d, DIAG_ERR, v->loc, "%s must be an absolute path, not \"%s\"",
			        path, v->u.s.ptr);
			return -1;
		}
		if (type == ST_ADDRESS) {
			if (!valid_address(v->u.s.ptr, &host, &n)) {
				diag_at(b->d, DIAG_ERR, v->loc,
				        "%s must be \"host:port\" with a port 1..65535, not \"%s\"",
				        path, v->u.s.ptr);
				return -1;
			}
			free(host);
		}
		*out = xstrdup(v->u.s.ptr);
		return 0;
	default:
		return -1;
	}
}

/*
 * A path from gitlab.rb, normalised ("..", which could climb out of any
 * directory check, is refused). The directories reconfigure creates and
 * chowns stay inside --root: one written outside it is taken as relative to
 * the root (an Omnibus gitlab.rb names /var/opt/gitlab/...), so a test or
 * unprivileged root never reaches the machine's files.
 */
static int path_policy(struct build *b, const struct cat_setting *cs, const char *path,
                       const struct rb_value *v, char **text)
{
	static const char *const written[] = {"home", "log_directory", "env_directory"};
	char norm[PATH_MAX];
	const char *why = NULL;
	if (cs->type != ST_PATH)
		return 0;
	if (pathsafe_normalize(*text, norm, sizeof norm, &why) == -1) {
		diag_at(b->d, DIAG_ERR, v->loc, "%s \"%s\" %s", path, *text, why);
		free(*text);
		*text = NULL;
		return -1;
	}
	bool prefix = false;
	if (b->ctl != NULL && !pathsafe_below(norm, b->ctl->root))
		for (size_t i = 0; i < sizeof written / sizeof written[0]; i++)
			prefix |= strcmp(cs->name, written[i]) == 0;
	free(*text);
	*text = prefix ? xasprintf("%s%s", b->ctl->root, norm) : xstrdup(norm);
	return 0;
}

/* ---- statements ---------------------------------------------------------- */

/* Opaque Ruby under a managed setting cannot be honoured: report where it starts. */
static bool reject_opaque(struct build *b, const struct rb_stmt *st)
{
	const struct rb_value *o = find_opaque(st->value);
	if (o == NULL)
		return false;
	char *path = stmt_path(st, st->nkeys);
	diag_at(b->d, DIAG_ERR, o->loc, "%s uses Ruby that gitlab-ctl cannot evaluate", path);
	free(path);
	return true;
}

/* name['k'] = { ... } or name['k']['sub'] = v for env and flags settings. */
static void assign_hash(struct build *b, const struct rb_stmt *st, struct hlist *h)
{
	const struct rb_value *v = st->value;
	char *path = stmt_path(st, st->nkeys);
	if (st->nkeys > 2) {
		diag_at(b->d, DIAG_ERR, st->key_locs[2], "%s: values of %s['%s'] cannot be nested",
		        path, st->name, st->keys[0]);
	} else if (st->nkeys == 2) {
		char *text;
		if (scalar_text(b, path, v, &text) == 0)
			hlist_set(h, st->keys[1], text, v->loc);
	} else if (v->kind == RB_NIL) {
		hlist_clear(h); /* back to the catalog defaults */
	} else if (v->kind != RB_HASH) {
		diag_at(b->d, DIAG_ERR, v->loc, "%s must be a hash, not %s", path,
		        rb_kind_name(v->kind));
	} else {
		/* Assigning a whole hash replaces what earlier lines set. */
		hlist_clear(h);
		for (size_t i = 0; i < v->u.h.n; i++) {
			const struct rb_value *k = v->u.h.v[i].key, *val = v->u.h.v[i].val;
			char *text;
			if (k->kind != RB_STR && k->kind != RB_SYM) {
				diag_at(b->d, DIAG_ERR, k->loc,
				        "keys of %s must be strings, not %s", path,
				        rb_kind_name(k->kind));
				continue;
			}
			if (has_nul(k)) { /* "A\0B" would silently name A */
				diag_at(b->d, DIAG_ERR, k->loc, "a key of %s contains a NUL byte",
				        path);
				continue;
			}
			char *epath = xasprintf("%s['%s']", path, k->u.s.ptr);
			if (scalar_text(b, epath, val, &text) == 0)
				hlist_set(h, k->u.s.ptr, text, val->loc);
			free(epath);
		}
	}
	free(path);
}

/* svlogd_* under logging[...] or a service: integers >= 0 or strings; nil unsets. */
static int log_value(struct build *b, const struct rb_stmt *st, int k, char **out)
{
	char *path = stmt_path(st, 1);
	long long n;
	int rc = 0;
	*out = NULL;
	if (st->value->kind == RB_NIL)
		rc = 0;
	else if (k <= LOG_TIMEOUT)
		rc = int_value(b, path, st->value, 0, LLONG_MAX, &n) == 0 ? 0 : -1;
	else
		rc = setting_text(b, ST_STRING, path, st->value, out);
	/* svlogd's config is one directive per line: say so here, not at render time. */
	if (rc == 0 && *out != NULL && has_control(*out)) {
		diag_at(b->d, DIAG_ERR, st->value->loc,
		        "%s must not contain a newline or control character", path);
		free(*out);
		*out = NULL;
		rc = -1;
	}
	if (rc == 0 && k <= LOG_TIMEOUT && st->value->kind != RB_NIL)
		*out = xasprintf("%lld", n);
	free(path);
	return rc;
}

static bool need_subscript(struct build *b, const struct rb_stmt *st)
{
	if (st->call || st->nkeys == 0) {
		diag_at(b->d, DIAG_ERR, st->loc,
		        "%s is managed by gitlab-ctl: set its keys, e.g. %s['KEY'] = VALUE",
		        st->name, st->name);
		return false;
	}
	return true;
}

static bool no_nesting(struct build *b, const struct rb_stmt *st, const char *what)
{
	if (st->nkeys > 1) {
		diag_at(b->d, DIAG_ERR, st->key_locs[1], "%s['%s'] is %s, not a hash", st->name,
		        st->keys[0], what);
		return false;
	}
	return true;
}

/* The known key of st's service (or global) closest to its mistyped one, or NULL. */
static const char *key_hint(const struct build *b, const struct rb_stmt *st)
{
	const char *v[64];
	size_t n = 0;
	const struct cat_service *def = NULL;
	for (size_t j = 0; j < b->cat->n && def == NULL; j++)
		if (strcmp(b->cat->v[j].config_name, st->name) == 0)
			def = &b->cat->v[j];
	for (size_t k = 0; def != NULL && k < def->nsettings && n < 64 - NLOG; k++)
		v[n++] = def->settings[k].name;
	if (strcmp(st->name, "user") == 0)
		v[n++] = "username", v[n++] = "group";
	else if (strcmp(st->name, "manage_accounts") == 0)
		v[n++] = "enable";
	else
		for (int k = 0; k < NLOG; k++)
			v[n++] = log_keys[k];
	return suggest_pick(st->keys[0], v, n);
}

static void unknown_key(struct build *b, const struct rb_stmt *st)
{
	const char *hint = key_hint(b, st);
	diag_at(b->d, DIAG_WARN, st->key_locs[0],
	        "%s['%s'] is not a setting gitlab-ctl knows; ignored%s%s%s", st->name, st->keys[0],
	        hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
}

static void handle_service(struct build *b, struct wsvc *w, const struct rb_stmt *st)
{
	if (!need_subscript(b, st))
		return;
	const struct cat_service *def = w->def;
	int lk = log_key(st->keys[0]);
	const struct cat_setting *cs = cat_setting_find(def, st->keys[0]);
	if (cs == NULL && lk < 0) {
		unknown_key(b, st);
		return;
	}
	if (reject_opaque(b, st))
		return;
	if (cs == NULL) {
		char *text;
		if (no_nesting(b, st, "a logging setting") && log_value(b, st, lk, &text) == 0) {
			free(w->log[lk]);
			w->log[lk] = text;
			w->log_set[lk] = text != NULL;
		}
		return;
	}
	size_t i = (size_t)(cs - def->settings);
	if (cs->type == ST_ENV || cs->type == ST_FLAGS) {
		assign_hash(b, st, &w->hash[i]);
		return;
	}
	if (!no_nesting(b, st, stype_name(cs->type)))
		return;
	char *path = stmt_path(st, 1), *text = NULL;
	/* A secret's source line never goes into a diagnostic: its location only. */
	struct rb_value quiet = *st->value;
	struct src nosrc = {.name = quiet.loc.src ? quiet.loc.src->name : NULL};
	if (cs->secret)
		quiet.loc.src = &nosrc;
	if (st->value->kind != RB_NIL && setting_text(b, cs->type, path, &quiet, &text) == 0 &&
	    (strcmp(cs->name, "username") == 0 || strcmp(cs->name, "group") == 0) &&
	    !name_account_ok(text)) {
		diag_at(b->d, DIAG_ERR, st->value->loc,
		        "%s must be a user or group name (letters, digits, '_', '-', '.'; at most "
		        "32), not \"%s\"",
		        path, text);
		free(text);
	} else if (st->value->kind == RB_NIL ||
	           (text != NULL && path_policy(b, cs, path, &quiet, &text) == 0)) {
		free(w->val[i]);
		w->val[i] = text; /* nil restores the default */
		w->vloc[i] = st->value->loc;
	}
	free(path);
}

/* user[...], manage_accounts[...], logging[...]: settings of gitlab-ctl itself. */
static void handle_global(struct build *b, const struct rb_stmt *st)
{
	if (!need_subscript(b, st))
		return;
	struct attrs *a = b->out;
	const char *key = st->keys[0];
	bool is_user = strcmp(st->name, "user") == 0;
	bool is_manage = strcmp(st->name, "manage_accounts") == 0;
	int lk = log_key(key);
	if ((is_user && strcmp(key, "username") != 0 && strcmp(key, "group") != 0) ||
	    (is_manage && strcmp(key, "enable") != 0) || (!is_user && !is_manage && lk < 0)) {
		unknown_key(b, st);
		return;
	}
	if (reject_opaque(b, st) || !no_nesting(b, st, "a setting"))
		return;
	char *path = stmt_path(st, 1), *text = NULL;
	if (is_user) {
		char **dst = strcmp(key, "username") == 0 ? &a->user : &a->group;
		const char *def = strcmp(key, "username") == 0 ? DEFAULT_USER : DEFAULT_GROUP;
		if (st->value->kind == RB_NIL) {
			free(*dst);
			*dst = xstrdup(def);
		} else if (setting_text(b, ST_STRING, path, st->value, &text) == 0) {
			if (!name_account_ok(text)) {
				diag_at(
				    b->d, DIAG_ERR, st->value->loc,
				    "%s must be a user or group name (letters, digits, '_', '-', "
				    "'.'; at most 32), not \"%s\"",
				    path, text);
				free(text);
			} else {
				free(*dst);
				*dst = text;
			}
		}
	} else if (is_manage) {
		if (st->value->kind == RB_NIL)
			a->manage_accounts = true;
		else if (setting_text(b, ST_BOOL, path, st->value, &text) == 0)
			a->manage_accounts = strcmp(text, "true") == 0;
		free(text);
	} else if (log_value(b, st, lk, &text) == 0) {
		svlog_set(&a->logging, lk, text);
		free(text);
	}
	free(path);
}

static bool is_global(const char *name)
{
	return strcmp(name, "user") == 0 || strcmp(name, "manage_accounts") == 0 ||
	       strcmp(name, "logging") == 0;
}

static void note_unknown(struct build *b, const struct rb_stmt *st)
{
	if (kv_get(&b->unknown, st->name) != NULL)
		return;
	size_t n = b->unknown.n;
	struct kv *v = reallocarray(b->unknown.v, n + 1, sizeof *v);
	struct loc *l = reallocarray(b->unknown_locs, n + 1, sizeof *l);
	if (v == NULL || l == NULL)
		abort();
	b->unknown.v = v;
	b->unknown_locs = l;
	/* Keep sorted by inserting in place, so kv_get's bsearch stays valid. */
	size_t i = n;
	while (i > 0 && strcmp(v[i - 1].name, st->name) > 0) {
		v[i] = v[i - 1];
		l[i] = l[i - 1];
		i--;
	}
	const char *file = st->loc.src && st->loc.src->name ? st->loc.src->name : "gitlab.rb";
	v[i].name = xstrdup(st->name);
	v[i].value = xasprintf("%s:%d", file, st->loc.line);
	l[i] = st->loc;
	b->unknown.n = n + 1;
}

static void walk(struct build *b, const struct rb_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct rb_stmt *st = &f->v[i];
		const struct cat_service *def = NULL;
		for (size_t j = 0; j < b->cat->n && def == NULL; j++)
			if (strcmp(b->cat->v[j].config_name, st->name) == 0)
				def = &b->cat->v[j];
		if (def != NULL)
			handle_service(b, &b->w[def - b->cat->v], st);
		else if (is_global(st->name))
			handle_global(b, st);
		else
			note_unknown(b, st);
	}
}

/* A top-level name one typo away from a managed one gets its own located warning. */
static const char *name_hint(const struct build *b, const char *name)
{
	const char *v[64] = {"user", "manage_accounts", "logging"};
	size_t n = 3;
	for (size_t j = 0; j < b->cat->n && n < 64; j++)
		v[n++] = b->cat->v[j].config_name;
	return suggest_pick(name, v, n);
}

static void report_unknown(struct build *b, const struct rb_file *f)
{
	for (size_t i = 0; i < b->unknown.n; i++) {
		const char *hint = name_hint(b, b->unknown.v[i].name);
		if (hint != NULL)
			diag_at(b->d, DIAG_WARN, b->unknown_locs[i],
			        "%s is not a service gitlab-ctl manages; ignored (did you mean "
			        "'%s'?)",
			        b->unknown.v[i].name, hint);
	}
	if (b->unknown.n == 0)
		return;
	size_t len = 1;
	for (size_t i = 0; i < b->unknown.n; i++)
		len += strlen(b->unknown.v[i].name) + 2;
	char *list = xcalloc(len, 1);
	for (size_t i = 0; i < b->unknown.n; i++) {
		if (i)
			strlcat(list, ", ", len);
		strlcat(list, b->unknown.v[i].name, len);
	}
	diag_file(b->d, DIAG_WARN, f->src.name, 0,
	          "ignoring settings for services this build does not manage: %s", list);
	free(list);
	if (b->ctl && b->ctl->verbose)
		for (size_t i = 0; i < b->unknown.n; i++)
			diag_at(b->d, DIAG_WARN, b->unknown_locs[i],
			        "ignoring %s: not managed by this build", b->unknown.v[i].name);
}

/* ---- computing a service ------------------------------------------------- */

enum vstate { V_TODO, V_BUSY, V_DONE };

struct var {
	const char *name;
	char *raw;   /* owned */
	bool expand; /* a catalog default: may hold placeholders */
	int line;    /* catalog line, for messages */
	char *val;   /* owned, when V_DONE */
	enum vstate state;
};

struct comp {
	struct build *b;
	struct wsvc *w;
	const struct cat_service *def;
	struct var *v;
	size_t n, cap;
	bool failed;
};

static struct var *var_find(struct comp *c, const char *name, size_t len)
{
	for (size_t i = 0; i < c->n; i++)
		if (strlen(c->v[i].name) == len && strncmp(c->v[i].name, name, len) == 0)
			return &c->v[i];
	return NULL;
}

static void var_add(struct comp *c, const char *name, char *raw, bool expand, int line)
{
	if (grow(&c->v, &c->cap, c->n + 1, sizeof *c->v, 32) == -1)
		abort();
	c->v[c->n++] = (struct var){name, raw, expand, line, NULL, V_TODO};
}

typedef const char *(*lookup_fn)(void *ctx, const char *name, size_t len, int line);

/*
 * Expand {{name}} and @JEMALLOC@. Returns a malloc'ed string, or NULL when
 * lookup failed (it reports why).
 */
static char *expand_with(const char *tmpl, lookup_fn lookup, void *ctx, int line)
{
	struct sbuf sb = {0};
	const char *p = tmpl;
	sb_add(&sb, "", 0);
	while (*p) {
		const char *open = strstr(p, "{{"), *jem = strstr(p, "@JEMALLOC@");
		const char *next = open && (!jem || open < jem) ? open : jem;
		if (next == NULL) {
			sb_add(&sb, p, strlen(p));
			break;
		}
		sb_add(&sb, p, (size_t)(next - p));
		if (next == jem) {
			sb_add(&sb, GITLAB_CTL_JEMALLOC, strlen(GITLAB_CTL_JEMALLOC));
			p = jem + 10;
			continue;
		}
		const char *close = strstr(open + 2, "}}");
		if (close == NULL) {
			sb_add(&sb, open, strlen(open));
			break;
		}
		const char *val = lookup(ctx, open + 2, (size_t)(close - open - 2), line);
		if (val == NULL) {
			free(sb.s);
			return NULL;
		}
		sb_add(&sb, val, strlen(val));
		p = close + 2;
	}
	return sb.s;
}

static const char *comp_lookup(void *ctx, const char *name, size_t len, int line);

static const char *var_resolve(struct comp *c, struct var *v)
{
	if (v->state == V_DONE)
		return v->val;
	if (v->state == V_BUSY) {
		diag_at(c->b->d, DIAG_ERR, cat_loc(c->def, v->line),
		        "the default of '%s' refers to itself through {{placeholders}}", v->name);
		c->failed = true;
		return NULL;
	}
	v->state = V_BUSY;
	char *val = v->expand ? expand_with(v->raw, comp_lookup, c, v->line) : xstrdup(v->raw);
	if (val == NULL) {
		v->state = V_TODO;
		return NULL;
	}
	v->val = val;
	v->state = V_DONE;
	return v->val;
}

static void compute_at(struct build *b, size_t i);

/* {{svc.setting}}: a var of another service (runit or config name), computed first. */
static const char *cross_lookup(struct comp *c, const char *name, size_t len, const char *dot,
                                int line)
{
	struct build *b = c->b;
	size_t sl = (size_t)(dot - name);
	const char *why = "no such service";
	for (size_t j = 0; j < b->cat->n; j++) {
		const struct cat_service *o = &b->cat->v[j];
		if (!((strlen(o->name) == sl && strncmp(o->name, name, sl) == 0) ||
		      (strlen(o->config_name) == sl && strncmp(o->config_name, name, sl) == 0)))
			continue;
		if (b->cstate[j] == C_BUSY) {
			why = "the two services' placeholders refer to each other";
			break;
		}
		compute_at(b, j);
		char key[128];
		const char *v = NULL;
		if (len - sl - 1 < sizeof key) {
			memcpy(key, dot + 1, len - sl - 1);
			key[len - sl - 1] = '\0';
			v = kv_get(&b->out->svcs[j].vars, key);
		}
		if (v != NULL)
			return v;
		why = b->cstate[j] == C_FAILED ? "that service has errors" : "no such setting";
		break;
	}
	diag_at(b->d, DIAG_ERR, cat_loc(c->def, line),
	        "unknown placeholder {{%.*s}} in service %s: %s", (int)len, name, c->def->name,
	        why);
	c->failed = true;
	return NULL;
}

static const char *comp_lookup(void *ctx, const char *name, size_t len, int line)
{
	struct comp *c = ctx;
	const char *dot = memchr(name, '.', len);
	if (dot != NULL)
		return cross_lookup(c, name, len, dot, line);
	struct var *v = var_find(c, name, len);
	if (v == NULL) {
		diag_at(c->b->d, DIAG_ERR, cat_loc(c->def, line),
		        "unknown placeholder {{%.*s}} in service %s", (int)len, name, c->def->name);
		c->failed = true;
		return NULL;
	}
	return var_resolve(c, v);
}

static char *comp_expand(struct comp *c, const char *tmpl, int line)
{
	char *s = expand_with(tmpl, comp_lookup, c, line);
	if (s == NULL)
		c->failed = true;
	return s;
}

/*
 * Names attrs provides itself; a catalog setting must not shadow them, with
 * these exceptions: a port setting may be listen_port; `group` is the
 * service's own group (Omnibus' postgresql['group']); and install_dir,
 * data_dir and log_dir, older names of gitlab_install_dir, gitlab_data_dir
 * and gitlab_log_dir, may be settings (Omnibus' postgresql['data_dir']): in
 * such a service the name means the setting, and its defaults say
 * {{gitlab_data_dir}} for the directory.
 */
static const char *const builtin_vars[] = {
    "service",        "root",        "user",        "gitlab_ctl",         "sv_dir",
    "jemalloc",       "listen_host", "listen_port", "gitlab_install_dir", "gitlab_data_dir",
    "gitlab_log_dir",
};

static const char *const shadowable_dirs[] = {"install_dir", "data_dir", "log_dir"};
static const char *const gitlab_dirs[] = {"gitlab_install_dir", "gitlab_data_dir",
                                          "gitlab_log_dir"};

static bool is_builtin(const char *name)
{
	for (size_t i = 0; i < sizeof builtin_vars / sizeof builtin_vars[0]; i++)
		if (strcmp(builtin_vars[i], name) == 0)
			return strcmp(name, "listen_port") != 0; /* a port setting may be it */
	return log_key(name) >= 0;
}

static char *root_path(struct comp *c, const char *abs)
{
	char buf[PATH_MAX];
	if (ctl_path(c->b->ctl, buf, sizeof buf, abs, (char *)NULL) == -1) {
		diag_file(c->b->d, DIAG_ERR, abs, 0, "path too long under the root");
		c->failed = true;
		return xstrdup(abs);
	}
	return xstrdup(buf);
}

/* The run-as account: configured when root, else whoever runs gitlab-ctl. */
static void run_as(const struct attrs *a, char **user, char **group)
{
	if (geteuid() == 0) {
		*user = xstrdup(a->user);
		*group = xstrdup(a->group);
		return;
	}
	const struct passwd *pw = getpwuid(geteuid());
	*user = pw ? xstrdup(pw->pw_name) : xasprintf("%u", (unsigned)geteuid());
	gid_t gid = pw ? pw->pw_gid : getegid();
	const struct group *gr = getgrgid(gid);
	*group = gr ? xstrdup(gr->gr_name) : xasprintf("%u", (unsigned)gid);
}

/*
 * The run-as account. As root: the service's own username / group settings
 * when it declares them (postgresql runs as gitlab-psql), else user[...].
 * Not root: whoever runs gitlab-ctl, whatever the settings say.
 */
static void add_account(struct comp *c)
{
	char *user, *group;
	bool root = geteuid() == 0;
	run_as(c->b->out, &user, &group);
	var_add(c, "gitlab_user", xstrdup(user), false, 0);
	if (root && cat_setting_find(c->def, "username") != NULL) {
		free(user);
		var_add(c, "user", xstrdup("{{username}}"), true, 0);
	} else {
		var_add(c, "user", user, false, 0);
	}
	if (cat_setting_find(c->def, "group") == NULL)
		var_add(c, "group", group, false, 0);
	else if (!root)
		var_add(c, "group", group, false, 0); /* add_settings skips the setting */
	else
		free(group);
}

static void add_builtins(struct comp *c, struct svc *out)
{
	const struct ctl *ctl = c->b->ctl;
	static const char *const dirs[] = {GITLAB_CTL_INSTALL_DIR, GITLAB_CTL_DATA_DIR,
	                                   GITLAB_CTL_LOG_DIR};
	char buf[PATH_MAX];
	add_account(c);
	var_add(c, "service", xstrdup(c->def->name), false, 0);
	var_add(c, "root", xstrdup(ctl->root), false, 0);
	var_add(c, "gitlab_ctl", xstrdup(ctl->self), false, 0);
	if (ctl_sv_dir(ctl, buf, sizeof buf, c->def->name) == -1)
		buf[0] = '\0';
	var_add(c, "sv_dir", xstrdup(buf), false, 0);
	for (size_t i = 0; i < 3; i++) {
		var_add(c, gitlab_dirs[i], root_path(c, dirs[i]), false, 0);
		if (cat_setting_find(c->def, shadowable_dirs[i]) == NULL)
			var_add(c, shadowable_dirs[i], root_path(c, dirs[i]), false, 0);
	}
	var_add(c, "jemalloc", xstrdup(GITLAB_CTL_JEMALLOC), false, 0);
	for (int k = 0; k < NLOG; k++)
		var_add(c, log_keys[k], svlog_text(&out->log, k), false, 0);
}

/* The effective svlogd settings: global logging[...] with per-service overrides. */
static void merge_log(const struct attrs *a, const struct wsvc *w, struct svlog *l)
{
	l->size = a->logging.size;
	l->num = a->logging.num;
	l->timeout = a->logging.timeout;
	l->filter = a->logging.filter ? xstrdup(a->logging.filter) : NULL;
	l->udp = a->logging.udp ? xstrdup(a->logging.udp) : NULL;
	l->prefix = a->logging.prefix ? xstrdup(a->logging.prefix) : NULL;
	for (int k = 0; k < NLOG; k++)
		if (w->log_set[k])
			svlog_set(l, k, w->log[k]);
}

/* Defaults of flags settings, expanded, with the user's entries merged over them. */
static struct kvlist merged_hash(struct comp *c, size_t si)
{
	const struct cat_setting *cs = &c->def->settings[si];
	const struct hlist *h = &c->w->hash[si];
	struct kvlist l = {xcalloc(cs->ndefs + h->n + 1, sizeof(struct kv)), 0};
	for (size_t i = 0; i < cs->ndefs; i++) {
		char *v = comp_expand(c, cs->defs[i].value, cs->defs[i].line);
		if (v == NULL)
			continue;
		l.v[l.n++] = (struct kv){xstrdup(cs->defs[i].name), v};
	}
	for (size_t i = 0; i < h->n; i++) {
		size_t j = 0;
		while (j < l.n && strcmp(l.v[j].name, h->v[i].key) != 0)
			j++;
		if (j < l.n) {
			free(l.v[j].value);
			if (h->v[i].val == NULL) { /* nil removes */
				free(l.v[j].name);
				l.v[j] = l.v[--l.n];
				continue;
			}
			l.v[j].value = xstrdup(h->v[i].val);
		} else if (h->v[i].val != NULL) {
			l.v[l.n++] = (struct kv){xstrdup(h->v[i].key), xstrdup(h->v[i].val)};
		}
	}
	qsort(l.v, l.n, sizeof *l.v, kv_cmp);
	return l;
}

/* "--key=value", or "--key" for an empty value (e.g. Go's --no-collector.x). */
static char *flag_arg(const struct kv *kv)
{
	return kv->value[0] ? xasprintf("--%s=%s", kv->name, kv->value)
	                    : xasprintf("--%s", kv->name);
}

static char *flags_text(const struct kvlist *l)
{
	struct sbuf sb = {0};
	sb_add(&sb, "", 0);
	for (size_t i = 0; i < l->n; i++) {
		char *a = flag_arg(&l->v[i]);
		if (i)
			sb_add(&sb, " ", 1);
		sb_add(&sb, a, strlen(a));
		free(a);
	}
	return sb.s;
}

static void add_settings(struct comp *c)
{
	const struct cat_service *def = c->def;
	for (size_t i = 0; i < def->nsettings; i++) {
		const struct cat_setting *cs = &def->settings[i];
		if (is_builtin(cs->name)) {
			diag_at(c->b->d, DIAG_ERR, cat_loc(def, cs->line),
			        "setting '%s' clashes with a built-in placeholder", cs->name);
			c->failed = true;
			continue;
		}
		if (cs->type == ST_ENV || var_find(c, cs->name, strlen(cs->name)) != NULL)
			continue; /* `group` when not root: the invoking user's, added already */
		if (cs->type == ST_FLAGS) {
			struct kvlist l = merged_hash(c, i);
			var_add(c, cs->name, flags_text(&l), false, cs->line);
			kvlist_free(&l);
		} else if (c->w->val[i] != NULL) {
			var_add(c, cs->name, xstrdup(c->w->val[i]), false, cs->line);
		} else {
			var_add(c, cs->name, xstrdup(cs->def ? cs->def : ""), cs->def != NULL,
			        cs->line);
		}
	}
}

/* listen_host / listen_port from an address setting or listen_address + a port setting. */
static void add_listen(struct comp *c, struct svc *out)
{
	const struct cat_service *def = c->def;
	const struct cat_setting *addr = cat_setting_find(def, "listen_address");
	const struct cat_setting *port = NULL;
	for (size_t i = 0; i < def->nsettings && port == NULL; i++)
		if (def->settings[i].type == ST_PORT)
			port = &def->settings[i];
	if (addr == NULL) {
		for (size_t i = 0; i < def->nsettings && addr == NULL; i++)
			if (def->settings[i].type == ST_ADDRESS)
				addr = &def->settings[i];
	}
	if (addr == NULL)
		return;
	struct var *av = var_find(c, addr->name, strlen(addr->name));
	const char *a = av ? var_resolve(c, av) : NULL;
	if (a == NULL || *a == '\0')
		return; /* no TCP listener (postgresql['listen_address'] unset) */
	char *host = NULL;
	long long p = 0;
	if (addr->type == ST_ADDRESS) {
		if (!valid_address(a, &host, &p)) {
			diag_at(c->b->d, DIAG_ERR, cat_loc(def, addr->line),
			        "%s['%s'] = \"%s\" is not host:port", def->config_name, addr->name,
			        a);
			c->failed = true;
			return;
		}
	} else {
		host = xstrdup(a);
		struct var *pv = port ? var_find(c, port->name, strlen(port->name)) : NULL;
		const char *ps = pv ? var_resolve(c, pv) : NULL;
		p = ps ? strtonum(ps, 1, 65535, NULL) : 0;
	}
	var_add(c, "listen_host", host, false, addr->line);
	if (var_find(c, "listen_port", 11) == NULL)
		var_add(c, "listen_port", xasprintf("%lld", p), false, addr->line);
	out->listen_port = (int)p;
}

static int resolve_all(struct comp *c, struct svc *out)
{
	out->vars.v = xcalloc(c->n, sizeof *out->vars.v);
	for (size_t i = 0; i < c->n; i++) {
		const char *v = var_resolve(c, &c->v[i]);
		if (v == NULL)
			return -1;
		out->vars.v[out->vars.n++] = (struct kv){xstrdup(c->v[i].name), xstrdup(v)};
	}
	qsort(out->vars.v, out->vars.n, sizeof *out->vars.v, kv_cmp);
	return 0;
}

/* Where each env value came from, for messages. */
struct envloc {
	struct kvlist *env;
	struct loc *locs;
};

static struct loc env_where(const char *name, void *ctx)
{
	const struct envloc *e = ctx;
	for (size_t i = 0; i < e->env->n; i++)
		if (strcmp(e->env->v[i].name, name) == 0)
			return e->locs[i];
	return (struct loc){0};
}

static int env_entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kv *)a)->name, ((const struct kv *)b)->name);
}

/* Catalog env, then the user's env settings merged over it; validated at the source. */
static void compute_env(struct comp *c, struct svc *out)
{
	const struct cat_service *def = c->def;
	size_t cap = def->nenv + 1;
	for (size_t i = 0; i < def->nsettings; i++)
		if (def->settings[i].type == ST_ENV)
			cap += c->w->hash[i].n;
	struct kv *v = xcalloc(cap, sizeof *v);
	struct loc *locs = xcalloc(cap, sizeof *locs);
	size_t n = 0;
	for (size_t i = 0; i < def->nenv; i++) {
		char *val = comp_expand(c, def->env[i].value, def->env[i].line);
		if (val == NULL)
			continue;
		v[n] = (struct kv){xstrdup(def->env[i].name), val};
		locs[n++] = cat_loc(def, def->env[i].line);
	}
	for (size_t si = 0; si < def->nsettings; si++) {
		if (def->settings[si].type != ST_ENV)
			continue;
		const struct hlist *h = &c->w->hash[si];
		for (size_t i = 0; i < h->n; i++) {
			size_t j = 0;
			while (j < n && strcmp(v[j].name, h->v[i].key) != 0)
				j++;
			if (j == n && h->v[i].val == NULL)
				continue;
			if (j == n) {
				v[j].name = xstrdup(h->v[i].key);
				n++;
			} else {
				free(v[j].value);
			}
			if (h->v[i].val == NULL) { /* nil removes a default */
				free(v[j].name);
				v[j] = v[n - 1];
				locs[j] = locs[n - 1];
				n--;
				continue;
			}
			v[j].value = xstrdup(h->v[i].val);
			locs[j] = h->v[i].loc;
		}
	}
	/* Sort names and locations together. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && env_entry_cmp(&v[j - 1], &v[j]) > 0; j--) {
			struct kv tv = v[j];
			struct loc tl = locs[j];
			v[j] = v[j - 1];
			locs[j] = locs[j - 1];
			v[j - 1] = tv;
			locs[j - 1] = tl;
		}
	out->env.v = v;
	out->env.n = n;
	for (size_t i = 0; i < n; i++)
		envcheck_var(v[i].name, v[i].value, locs[i], c->b->d);
	struct envloc el = {&out->env, locs};
	envcheck_env_at(&out->env, env_where, &el, c->b->d);
	free(locs);
}

static void compute_base_env(struct comp *c, struct svc *out)
{
	const struct cat_service *def = c->def;
	out->base_env.v = xcalloc(def->nbase_env, sizeof *out->base_env.v);
	for (size_t i = 0; i < def->nbase_env; i++) {
		char *val = comp_expand(c, def->base_env[i].value, def->base_env[i].line);
		if (val != NULL)
			out->base_env.v[out->base_env.n++] =
			    (struct kv){xstrdup(def->base_env[i].name), val};
	}
	qsort(out->base_env.v, out->base_env.n, sizeof *out->base_env.v, kv_cmp);
}

/* A command element that is exactly {{X}} for a flags setting X. */
static const struct cat_setting *flags_elem(const struct cat_service *def, const char *e)
{
	size_t len = strlen(e);
	if (len < 5 || strncmp(e, "{{", 2) != 0 || strcmp(e + len - 2, "}}") != 0)
		return NULL;
	for (size_t i = 0; i < def->nsettings; i++)
		if (def->settings[i].type == ST_FLAGS && strlen(def->settings[i].name) == len - 4 &&
		    strncmp(def->settings[i].name, e + 2, len - 4) == 0)
			return &def->settings[i];
	return NULL;
}

static void compute_argv(struct comp *c, struct svc *out)
{
	const struct cat_service *def = c->def;
	size_t cap = def->ncommand + 1;
	char **argv = xcalloc(cap, sizeof *argv);
	size_t n = 0;
	for (size_t i = 0; i < def->ncommand; i++) {
		const struct cat_setting *fs = flags_elem(def, def->command[i]);
		if (fs == NULL) {
			char *a = comp_expand(c, def->command[i], def->command_line);
			if (a != NULL)
				argv[n++] = a;
			continue;
		}
		struct kvlist l = merged_hash(c, (size_t)(fs - def->settings));
		char **nv = reallocarray(argv, cap + l.n, sizeof *argv);
		if (nv == NULL)
			abort();
		argv = nv;
		cap += l.n;
		for (size_t j = 0; j < l.n; j++)
			argv[n++] = flag_arg(&l.v[j]);
		kvlist_free(&l);
	}
	argv[n] = NULL;
	out->argv = argv;
	out->argc = n;
	/* Where the command comes from: the gitlab.rb line of a `command` setting, or the catalog.
	 */
	const struct cat_setting *cs = cat_setting_find(def, "command");
	struct loc at = cat_loc(def, def->command_line);
	if (cs != NULL && c->w->val[cs - def->settings] != NULL)
		at = c->w->vloc[cs - def->settings];
	envcheck_argv(argv, at, c->b->d);
}

static char *loc_text(struct loc l)
{
	return xasprintf("%s:%d", l.src && l.src->name ? l.src->name : "gitlab.rb", l.line);
}

/* What gitlab.rb set, for show-config: setting -> "file:line", "env:NAME" -> "file:line". */
static void compute_origin(const struct wsvc *w, struct svc *out)
{
	const struct cat_service *def = w->def;
	size_t cap = def->nsettings + 1;
	for (size_t i = 0; i < def->nsettings; i++)
		cap += w->hash[i].n;
	struct kv *v = xcalloc(cap, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < def->nsettings; i++) {
		const struct hlist *h = &w->hash[i];
		if (w->val[i] != NULL)
			v[n++] = (struct kv){xstrdup(def->settings[i].name), loc_text(w->vloc[i])};
		else if (def->settings[i].type == ST_FLAGS && h->n > 0)
			v[n++] = (struct kv){xstrdup(def->settings[i].name),
			                     loc_text(h->v[h->n - 1].loc)};
		for (size_t j = 0; def->settings[i].type == ST_ENV && j < h->n; j++)
			if (h->v[j].val != NULL && kv_get(&out->env, h->v[j].key) != NULL &&
			    strcmp(kv_get(&out->env, h->v[j].key), h->v[j].val) == 0)
				v[n++] = (struct kv){xasprintf("env:%s", h->v[j].key),
				                     loc_text(h->v[j].loc)};
	}
	/* Several env settings could name the same variable; keep the names unique. */
	qsort(v, n, sizeof *v, kv_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++) {
		if (u > 0 && strcmp(v[u - 1].name, v[i].name) == 0) {
			free(v[u - 1].name);
			free(v[u - 1].value);
			u--;
		}
		v[u++] = v[i];
	}
	out->origin.v = v;
	out->origin.n = u;
}

/* Where gitlab.rb set each path setting, "file:line:col", for trust.c's refusals. */
static void compute_where(const struct wsvc *w, struct svc *out)
{
	const struct cat_service *def = w->def;
	struct kv *v = xcalloc(def->nsettings + 1, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < def->nsettings; i++) {
		struct loc l = w->vloc[i];
		if (def->settings[i].type == ST_PATH && w->val[i] != NULL)
			v[n++] = (struct kv){
			    xstrdup(def->settings[i].name),
			    xasprintf("%s:%d:%d", l.src && l.src->name ? l.src->name : "gitlab.rb",
			              l.line, l.col)};
	}
	qsort(v, n, sizeof *v, kv_cmp);
	out->where.v = v;
	out->where.n = n;
}

static void compute_svc(struct build *b, struct wsvc *w, struct svc *out)
{
	struct comp c = {.b = b, .w = w, .def = w->def};
	out->def = w->def;
	merge_log(b->out, w, &out->log);
	add_builtins(&c, out);
	add_settings(&c);
	add_listen(&c, out);
	if (!c.failed && resolve_all(&c, out) == 0) {
		compute_env(&c, out);
		compute_base_env(&c, out);
		compute_argv(&c, out);
		compute_origin(w, out);
		compute_where(w, out);
	}
	for (size_t i = 0; i < c.n; i++) {
		free(c.v[i].raw);
		free(c.v[i].val);
	}
	free(c.v);
	if (out->argv == NULL)
		out->argv = xcalloc(1, sizeof *out->argv);
	const char *en = kv_get(&out->vars, "enable");
	out->enabled = en != NULL && strcmp(en, "true") == 0;
	out->home = kv_get(&out->vars, "home");
	out->log_dir = kv_get(&out->vars, "log_directory");
	out->env_dir = kv_get(&out->vars, "env_directory");
	out->user = kv_get(&out->vars, "user");
	out->group = kv_get(&out->vars, "group");
	out->listen_host = kv_get(&out->vars, "listen_host");
	if (out->listen_host == NULL)
		out->listen_port = 0;
}

/* Services are computed on demand: {{postgresql.port}} computes postgresql first. */
static void compute_at(struct build *b, size_t i)
{
	if (b->cstate[i] != C_TODO)
		return;
	b->cstate[i] = C_BUSY;
	size_t nerr = b->d->nerr;
	compute_svc(b, &b->w[i], &b->out->svcs[i]);
	b->cstate[i] = b->d->nerr > nerr ? C_FAILED : C_DONE;
}

/* ---- entry points -------------------------------------------------------- */

static void build_free(struct build *b)
{
	for (size_t i = 0; b->w && i < b->cat->n; i++) {
		struct wsvc *w = &b->w[i];
		for (size_t j = 0; j < w->def->nsettings; j++) {
			free(w->val[j]);
			hlist_free(&w->hash[j]);
		}
		free(w->val);
		free(w->vloc);
		free(w->hash);
		for (int k = 0; k < NLOG; k++)
			free(w->log[k]);
	}
	free(b->w);
	free(b->unknown_locs);
}

int attrs_build(const struct ctl *ctl, const struct catalog *cat, const struct rb_file *f,
                struct attrs *out, struct diags *d)
{
	size_t nerr = d->nerr;
	struct build b = {.ctl = ctl, .cat = cat, .d = d, .out = out};
	memset(out, 0, sizeof *out);
	out->user = xstrdup(DEFAULT_USER);
	out->group = xstrdup(DEFAULT_GROUP);
	out->manage_accounts = true;
	svlog_defaults(&out->logging);
	b.w = xcalloc(cat->n, sizeof *b.w);
	for (size_t i = 0; i < cat->n; i++) {
		struct wsvc *w = &b.w[i];
		w->def = &cat->v[i];
		w->val = xcalloc(w->def->nsettings, sizeof *w->val);
		w->vloc = xcalloc(w->def->nsettings, sizeof *w->vloc);
		w->hash = xcalloc(w->def->nsettings, sizeof *w->hash);
	}
	if (f != NULL) {
		walk(&b, f);
		report_unknown(&b, f);
	}
	out->svcs = xcalloc(cat->n, sizeof *out->svcs);
	out->nsvcs = cat->n;
	b.cstate = xcalloc(cat->n, sizeof *b.cstate);
	for (size_t i = 0; i < cat->n; i++)
		compute_at(&b, i);
	free(b.cstate);
	out->unknown_names = b.unknown;
	build_free(&b);
	return d->nerr > nerr ? -1 : 0;
}

/* The default config may be absent (all defaults); an explicit -c FILE may not. */
static bool is_default_config(const struct ctl *ctl)
{
	char def[PATH_MAX];
	return ctl_path(ctl, def, sizeof def, GITLAB_CTL_CONFIG_FILE, (char *)NULL) == 0 &&
	       strcmp(def, ctl->config) == 0;
}

int attrs_load(const struct ctl *ctl, const struct catalog *cat, struct attrs *out, struct diags *d)
{
	struct stat st;
	if (stat(ctl->config, &st) == -1 && errno == ENOENT && is_default_config(ctl)) {
		diag_file(d, DIAG_WARN, ctl->config, 0,
		          "no configuration file; using the defaults of every setting");
		return attrs_build(ctl, cat, NULL, out, d);
	}
	/* Root runs what gitlab.rb says: refuse one that someone else can edit. */
	char msg[PATH_MAX + 160];
	if (geteuid() == 0 && pathsafe_config_file(ctl->config, msg, sizeof msg) == -1) {
		diag_file(d, DIAG_ERR, ctl->config, 0, "%s", msg);
		memset(out, 0, sizeof *out);
		return -1;
	}
	struct rb_file f;
	memset(&f, 0, sizeof f);
	if (rb_load(ctl->config, &f, d) == -1) {
		rb_free(&f);
		memset(out, 0, sizeof *out);
		return -1;
	}
	int rc = attrs_build(ctl, cat, &f, out, d);
	rb_free(&f);
	return rc;
}

void attrs_free(struct attrs *a)
{
	free(a->user);
	free(a->group);
	svlog_free(&a->logging);
	for (size_t i = 0; i < a->nsvcs; i++) {
		struct svc *s = &a->svcs[i];
		kvlist_free(&s->vars);
		kvlist_free(&s->env);
		kvlist_free(&s->base_env);
		kvlist_free(&s->origin);
		kvlist_free(&s->where);
		for (size_t j = 0; s->argv && j < s->argc; j++)
			free(s->argv[j]);
		free(s->argv);
		svlog_free(&s->log);
	}
	free(a->svcs);
	kvlist_free(&a->unknown_names);
	memset(a, 0, sizeof *a);
}

const struct svc *attrs_svc(const struct attrs *a, const char *name)
{
	for (size_t i = 0; i < a->nsvcs; i++)
		if (strcmp(a->svcs[i].def->name, name) == 0 ||
		    strcmp(a->svcs[i].def->config_name, name) == 0)
			return &a->svcs[i];
	return NULL;
}

const char *svc_var(const struct svc *s, const char *name)
{
	return kv_get(&s->vars, name);
}

static const char *svc_lookup(void *ctx, const char *name, size_t len, int line)
{
	const struct svc *s = ctx;
	(void)line;
	char key[128];
	if (len >= sizeof key) {
		errno = EINVAL;
		return NULL;
	}
	memcpy(key, name, len);
	key[len] = '\0';
	const char *v = svc_var(s, key);
	if (v == NULL)
		errno = EINVAL;
	return v;
}

char *svc_expand(const struct svc *s, const char *tmpl)
{
	return expand_with(tmpl, svc_lookup, (void *)s, 0);
}

const char *attrs_var(const struct attrs *a, const struct svc *s, const char *name)
{
	const char *dot = strchr(name, '.');
	if (dot == NULL)
		return svc_var(s, name);
	for (size_t i = 0; i < a->nsvcs; i++) {
		const struct cat_service *o = a->svcs[i].def;
		size_t n = (size_t)(dot - name);
		if ((strlen(o->name) == n && strncmp(o->name, name, n) == 0) ||
		    (strlen(o->config_name) == n && strncmp(o->config_name, name, n) == 0))
			return svc_var(&a->svcs[i], dot + 1);
	}
	return NULL;
}

struct actx {
	const struct attrs *a;
	const struct svc *s;
};

static const char *attrs_lookup(void *ctx, const char *name, size_t len, int line)
{
	const struct actx *x = ctx;
	char key[256];
	(void)line;
	if (len >= sizeof key) {
		errno = EINVAL;
		return NULL;
	}
	memcpy(key, name, len);
	key[len] = '\0';
	const char *v = attrs_var(x->a, x->s, key);
	if (v == NULL)
		errno = EINVAL;
	return v;
}

char *attrs_expand(const struct attrs *a, const struct svc *s, const char *tmpl)
{
	struct actx x = {a, s};
	return expand_with(tmpl, attrs_lookup, &x, 0);
}

bool env_is_secret(const char *name)
{
	static const char *const words[] = {"PASSWORD", "SECRET", "TOKEN", "KEY"};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strcasestr(name, words[i]) != NULL)
			return true;
	return false;
}

int attrs_load_all(const struct ctl *ctl, struct catalog *cat, struct attrs *out, struct diags *d)
{
	char dir[PATH_MAX];
	memset(cat, 0, sizeof *cat);
	memset(out, 0, sizeof *out);
	if ((size_t)snprintf(dir, sizeof dir, "%s/sv", ctl->datadir) >= sizeof dir) {
		diag_file(d, DIAG_ERR, ctl->datadir, 0, "catalog path too long");
		return -1;
	}
	if (catalog_load(dir, cat, d) == 0 && attrs_load(ctl, cat, out, d) == 0)
		return 0;
	attrs_free(out);
	catalog_free(cat);
	return -1;
}
