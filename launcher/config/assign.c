/*
 * The walk of gitlab.rb's statements (see assign.h). A statement names a
 * catalog service by its config name (gitlab_exporter[...]), or one of
 * gitlab-ctl's own settings: user[...], manage_accounts[...], logging[...];
 * any other name is ignored with a warning, as Omnibus settings for
 * services this build does not manage are. Inside a condition (never
 * evaluated) only what is ignored anyway may be set.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"
#include "config/assign.h"
#include "config/railsmtp.h"
#include "config/rbdata.h"
#include "config/secret.h"
#include "lib/alloc.h"
#include "lib/grow.h"
#include "lib/names.h"
#include "lib/pathsafe.h"
#include "lib/rbfloat.h"
#include "lib/suggest.h"

#define DEFAULT_USER  "git"
#define DEFAULT_GROUP "git"

/* ---- what a walk fills ---------------------------------------------------- */

struct walk {
	const struct ctl *ctl;
	const struct catalog *cat;
	struct diags *d;
	struct assigns *as;
	struct loc *unknown_locs; /* parallel to as->unknown.v */
	size_t unknown_cap, unknown_locs_cap;
	char **okeys; /* Omnibus keys of managed services we ignore: "redis['x']" */
	struct loc *okey_locs;
	size_t nokeys, okeys_cap, okey_locs_cap;
};

static void hash_clear(struct assign_hash *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].key);
		free(h->v[i].val);
	}
	h->n = 0;
}

static void hash_free(struct assign_hash *h)
{
	hash_clear(h);
	free(h->v);
	h->v = NULL;
	h->cap = 0;
}

/* Set key (later wins, keeping first position); val NULL records a nil. */
static void hash_set(struct assign_hash *h, const char *key, char *val, const struct rb_value *v)
{
	bool is_bool = v->kind == RB_BOOL;
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->v[i].key, key) == 0) {
			free(h->v[i].val);
			h->v[i].val = val;
			h->v[i].loc = v->loc;
			h->v[i].is_bool = is_bool;
			return;
		}
	grow(&h->v, &h->cap, h->n + 1, sizeof *h->v, 8);
	h->v[h->n++] = (struct assign_ent){xstrdup(key), val, v->loc, is_bool};
}

enum hash_merge assign_hash_merge(const struct assign_ent *e, const void *list, size_t n,
                                  const char *(*key)(const void *list, size_t i), size_t *at)
{
	size_t j = 0;
	while (j < n && strcmp(key(list, j), e->key) != 0)
		j++;
	*at = j;
	if (j == n)
		return e->val == NULL ? HASH_NOOP : HASH_ADD;
	return e->val == NULL ? HASH_REMOVE : HASH_REPLACE;
}

/* ---- values -------------------------------------------------------------- */

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

/*
 * A scalar as Ruby's to_s would write it into an env file or flag: strings,
 * symbols, numbers, booleans. *out = NULL for nil. Returns -1 after an error.
 */
static int scalar_text(struct walk *b, const char *path, const struct rb_value *v, char **out)
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
		rb_float_to_s(v->u.f, buf, sizeof buf);
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
static int int_value(struct walk *b, const char *path, const struct rb_value *v, long long min,
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

bool assign_address(const char *s, char **host, long long *port)
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
		*host = xstrndup(s + 1, hl - 2);
	} else {
		if (memchr(s, ':', hl) != NULL || memchr(s, '[', hl) != NULL)
			return false; /* IPv6 literals need brackets */
		*host = xstrndup(s, hl);
	}
	return true;
}

/* A string, an absolute path or a host:port. Returns -1 after an error. */
static int string_setting(struct walk *b, enum stype type, const char *path,
                          const struct rb_value *v, char **out)
{
	char *host;
	long long port;
	if ((v->kind != RB_STR && v->kind != RB_SYM) || has_nul(v)) {
		diag_at(b->d, DIAG_ERR, v->loc, "%s must be a string, not %s", path,
		        rb_kind_name(v->kind));
		return -1;
	}
	if (type == ST_PATH && v->u.s.ptr[0] != '/') {
		diag_at(b->d, DIAG_ERR, v->loc, "%s must be an absolute path, not \"%s\"", path,
		        v->u.s.ptr);
		return -1;
	}
	if (type == ST_ADDRESS) {
		if (!assign_address(v->u.s.ptr, &host, &port)) {
			diag_at(b->d, DIAG_ERR, v->loc,
			        "%s must be \"host:port\" with a port 1..65535, not \"%s\"", path,
			        v->u.s.ptr);
			return -1;
		}
		/* Go's listeners (every address setting's program) take ":PORT", not "*:PORT". */
		bool star = strcmp(host, "*") == 0;
		free(host);
		if (star) {
			diag_at(b->d, DIAG_ERR, v->loc,
			        "%s: host '*' cannot be listened on: write \":%lld\" for every "
			        "interface",
			        path, port);
			return -1;
		}
	}
	*out = xstrdup(v->u.s.ptr);
	return 0;
}

/* A user value for a scalar setting, as text. Returns -1 after an error. */
static int setting_text(struct walk *b, enum stype type, const char *path, const struct rb_value *v,
                        char **out)
{
	long long n;
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
		return string_setting(b, type, path, v, out);
	case ST_SCALAR:
		return scalar_text(b, path, v, out);
	default:
		return -1;
	}
}

/*
 * A path from gitlab.rb, normalised ("..", which could climb out of any
 * directory check, is refused). Under --root every path setting stays inside
 * the root: one written outside it is taken as relative to the root (an
 * Omnibus gitlab.rb names /var/opt/gitlab/...), so a test or an unprivileged
 * root never creates, chowns or initialises anything on the machine's own
 * paths. Only settings the catalog marks `host = true` (binaries read as
 * they are) are used as written.
 */
static int path_policy(struct walk *b, const struct cat_setting *cs, const char *path,
                       const struct rb_value *v, char **text)
{
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
	bool prefix = !cs->host && b->ctl != NULL && !pathsafe_below(norm, b->ctl->root);
	free(*text);
	*text = prefix ? xasprintf("%s%s", b->ctl->root, norm) : xstrdup(norm);
	return 0;
}

/* ---- statements ---------------------------------------------------------- */

/* Opaque Ruby under a managed setting cannot be honoured: report where it starts. */
static bool reject_opaque(struct walk *b, const struct rb_stmt *st)
{
	const struct rb_value *o;
	if (!rb_has_opaque(st->value, &o))
		return false;
	char *path = stmt_path(st, st->nkeys);
	diag_at(b->d, DIAG_ERR, o->loc,
	        "%s uses Ruby that gitlab-ctl cannot evaluate: " RB_LITERAL_HINT, path);
	free(path);
	return true;
}

/* name['k'] = { ... } or name['k']['sub'] = v for env and flags settings. */
static void assign_hash(struct walk *b, const struct rb_stmt *st, struct assign_hash *h)
{
	const struct rb_value *v = st->value;
	char *path = stmt_path(st, st->nkeys);
	if (st->nkeys > 2) {
		diag_at(b->d, DIAG_ERR, st->key_locs[2], "%s: values of %s['%s'] cannot be nested",
		        path, st->name, st->keys[0]);
	} else if (st->nkeys == 2) {
		char *text;
		if (scalar_text(b, path, v, &text) == 0)
			hash_set(h, st->keys[1], text, v);
	} else if (v->kind == RB_NIL) {
		hash_clear(h); /* back to the catalog defaults */
	} else if (v->kind != RB_HASH) {
		diag_at(b->d, DIAG_ERR, v->loc, "%s must be a hash, not %s", path,
		        rb_kind_name(v->kind));
	} else {
		/* Assigning a whole hash replaces what earlier lines set. */
		hash_clear(h);
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
				hash_set(h, k->u.s.ptr, text, val);
			free(epath);
		}
	}
	free(path);
}

/* svlogd_* under logging[...] or a service: integers >= 0 or strings; nil unsets. */
static int log_value(struct walk *b, const struct rb_stmt *st, int k, char **out)
{
	char *path = stmt_path(st, 1);
	long long n;
	int rc = 0;
	*out = NULL;
	if (st->value->kind == RB_NIL)
		rc = 0;
	else if (k <= SVLOG_TIMEOUT)
		rc = int_value(b, path, st->value, 0, LLONG_MAX, &n) == 0 ? 0 : -1;
	else
		rc = setting_text(b, ST_STRING, path, st->value, out);
	/* svlogd's config is one directive per line: say so here, not at render time. */
	if (rc == 0 && *out != NULL && text_has_control(*out)) {
		diag_at(b->d, DIAG_ERR, st->value->loc,
		        "%s must not contain a newline or control character", path);
		free(*out);
		*out = NULL;
		rc = -1;
	}
	if (rc == 0 && k <= SVLOG_TIMEOUT && st->value->kind != RB_NIL)
		*out = xasprintf("%lld", n);
	free(path);
	return rc;
}

static bool need_subscript(struct walk *b, const struct rb_stmt *st)
{
	if (st->call || st->nkeys == 0) {
		diag_at(b->d, DIAG_ERR, st->loc,
		        "%s is managed by gitlab-ctl: set its keys, e.g. %s['KEY'] = VALUE",
		        st->name, st->name);
		return false;
	}
	return true;
}

static bool no_nesting(struct walk *b, const struct rb_stmt *st, const char *what)
{
	if (st->nkeys > 1) {
		diag_at(b->d, DIAG_ERR, st->key_locs[1], "%s['%s'] is %s, not a hash", st->name,
		        st->keys[0], what);
		return false;
	}
	return true;
}

/* The catalog service gitlab.rb calls name (its config name), or NULL. */
static const struct cat_service *service_of(const struct walk *b, const char *name)
{
	for (size_t j = 0; j < b->cat->n; j++)
		if (strcmp(b->cat->v[j].config_name, name) == 0)
			return &b->cat->v[j];
	return NULL;
}

/* The known key of st's service (or global) closest to its mistyped one, or NULL. */
static const char *key_hint(const struct walk *b, const struct rb_stmt *st)
{
	const char *v[64];
	size_t n = 0;
	const struct cat_service *def = service_of(b, st->name);
	for (size_t k = 0; def != NULL && k < def->nsettings && n < 64 - SVLOG_N; k++)
		v[n++] = def->settings[k].name;
	if (strcmp(st->name, "user") == 0)
		v[n++] = "username", v[n++] = "group";
	else if (strcmp(st->name, "manage_accounts") == 0)
		v[n++] = "enable";
	else
		for (int k = 0; k < SVLOG_N; k++)
			v[n++] = svlog_keys[k];
	return suggest_pick(st->keys[0], v, n);
}

/*
 * The catalog's entry for an Omnibus key of def it does not apply: "key", or "key: why"
 * (why it cannot, and what to set instead). NULL when it is none.
 */
static const char *omnibus_key(const struct cat_service *def, const char *key)
{
	size_t n = strlen(key);
	for (size_t i = 0; def != NULL && i < def->nomnibus_keys; i++) {
		const char *e = def->omnibus_keys[i];
		if (strncmp(e, key, n) == 0 && (e[n] == '\0' || e[n] == ':'))
			return e;
	}
	return NULL;
}

static void note_unknown_key(struct walk *b, const struct rb_stmt *st)
{
	char *k = xasprintf("%s['%s']", st->name, st->keys[0]);
	for (size_t i = 0; i < b->nokeys; i++)
		if (strcmp(b->okeys[i], k) == 0) {
			free(k);
			return;
		}
	grow(&b->okeys, &b->okeys_cap, b->nokeys + 1, sizeof *b->okeys, 8);
	grow(&b->okey_locs, &b->okey_locs_cap, b->nokeys + 1, sizeof *b->okey_locs, 8);
	b->okey_locs[b->nokeys] = st->key_locs[0];
	b->okeys[b->nokeys++] = k;
}

static void unknown_key(struct walk *b, const struct rb_stmt *st)
{
	const struct cat_service *def = service_of(b, st->name);
	/*
	 * Omnibus' key of a service this build runs: a warning at its line, since the
	 * operator expects it to act on that service; under user[...] or logging[...], or of
	 * a service not run here: into the summary line.
	 */
	const char *ok = omnibus_key(def, st->keys[0]);
	if (ok != NULL && st->value->kind == RB_NIL)
		return; /* Omnibus' own default asked for: nothing of it is lost */
	if (ok != NULL) {
		const char *why = strchr(ok, ':');
		diag_at(b->d, DIAG_WARN, st->key_locs[0],
		        "%s['%s'] is an Omnibus setting this build does not apply to %s; "
		        "ignored%s%s",
		        st->name, st->keys[0], def->name, why ? ":" : "", why ? why + 1 : "");
		return;
	}
	if (catalog_omnibus_key(b->cat, st->name, st->keys[0])) {
		note_unknown_key(b, st);
		return;
	}
	const char *hint = key_hint(b, st);
	diag_at(b->d, DIAG_WARN, st->key_locs[0],
	        "%s['%s'] is not a setting gitlab-ctl knows; ignored%s%s%s", st->name, st->keys[0],
	        hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
}

/* A user or group name useradd accepts; else an error at loc. */
static bool account_ok(struct walk *b, struct loc loc, const char *path, const char *text)
{
	if (name_account_ok(text))
		return true;
	diag_at(b->d, DIAG_ERR, loc,
	        "%s must be a user or group name (letters, digits, '_', '-', '.'; at most 32), "
	        "not \"%s\"",
	        path, text);
	return false;
}

static bool is_account_setting(const char *name)
{
	return strcmp(name, "username") == 0 || strcmp(name, "group") == 0;
}

/* The text of a non-nil scalar setting, checked as its type says; false after an error. */
static bool scalar_setting(struct walk *b, const struct cat_setting *cs, const struct rb_stmt *st,
                           char **text)
{
	char *path = stmt_path(st, 1);
	/* A secret's source line never goes into a diagnostic: its location only. */
	struct rb_value quiet = *st->value;
	struct src nosrc;
	if (cs->secret)
		quiet.loc = secret_loc(quiet.loc, &nosrc);
	bool ok = setting_text(b, cs->type, path, &quiet, text) == 0 &&
	          (!is_account_setting(cs->name) || account_ok(b, st->value->loc, path, *text)) &&
	          path_policy(b, cs, path, &quiet, text) == 0;
	if (!ok) {
		free(*text);
		*text = NULL;
	}
	free(path);
	return ok;
}

/* <service>['svlogd_*']: overrides logging['svlogd_*'] for this service. */
static void assign_log(struct walk *b, struct assign_svc *w, const struct rb_stmt *st, int lk)
{
	char *text;
	if (no_nesting(b, st, "a logging setting") && log_value(b, st, lk, &text) == 0) {
		free(w->log[lk]);
		w->log[lk] = text;
		w->log_set[lk] = text != NULL;
	}
}

/* A yaml setting, whole (name['k'] = {...}) or one key deep inside (name['k']['a']['b'] = v). */
static void assign_data(struct walk *b, const struct rb_stmt *st, struct yval **data)
{
	char *path = stmt_path(st, st->nkeys);
	struct yval *v = rbdata_from(path, st->value, b->d);
	free(path);
	if (v == NULL)
		return;
	if (st->nkeys == 1 && v->kind == YV_NULL) { /* nil: back to unset */
		yval_free(v);
		yval_free(*data);
		*data = NULL;
		return;
	}
	rbdata_set_path(data, st->keys + 1, st->nkeys - 1, v);
}

/*
 * Under --root, a flag's value naming a path of the install (/var/opt/gitlab/..., as Omnibus'
 * prometheus['flags'] 'config.file' does) is that path inside the root, as a path setting's
 * is: a root never makes a service read or write the machine's own install. Other paths
 * (Debian's /usr/share/prometheus/consoles) stay as written.
 */
static void root_install_paths(const struct walk *b, struct assign_hash *h)
{
	static const char *const dirs[] = {GITLAB_CTL_INSTALL_DIR, GITLAB_CTL_DATA_DIR,
	                                   GITLAB_CTL_LOG_DIR};
	if (b->ctl == NULL || b->ctl->root[0] == '\0')
		return;
	for (size_t i = 0; i < h->n; i++) {
		char *v = h->v[i].val;
		for (size_t k = 0; v != NULL && k < sizeof dirs / sizeof dirs[0]; k++) {
			size_t n = strlen(dirs[k]);
			if (strncmp(v, dirs[k], n) == 0 && (v[n] == '/' || v[n] == '\0') &&
			    !pathsafe_below(v, b->ctl->root)) {
				h->v[i].val = xasprintf("%s%s", b->ctl->root, v);
				free(v);
				break;
			}
		}
	}
}

static void handle_service(struct walk *b, struct assign_svc *w, const struct rb_stmt *st)
{
	if (!need_subscript(b, st))
		return;
	int lk = svlog_key(st->keys[0]);
	const struct cat_setting *cs = cat_setting_key(w->def, st->keys[0]);
	if (cs == NULL && lk < 0) {
		unknown_key(b, st);
		return;
	}
	if (reject_opaque(b, st))
		return;
	if (cs == NULL) {
		assign_log(b, w, st, lk);
		return;
	}
	size_t i = (size_t)(cs - w->def->settings);
	if (cs->type == ST_YAML) {
		assign_data(b, st, &w->data[i]);
		w->vloc[i] = st->value->loc;
		return;
	}
	if (cs->type == ST_ENV || cs->type == ST_FLAGS) {
		assign_hash(b, st, &w->hash[i]);
		if (cs->type == ST_FLAGS)
			root_install_paths(b, &w->hash[i]);
		return;
	}
	char *text = NULL;
	if (!no_nesting(b, st, stype_name(cs->type)) ||
	    (st->value->kind != RB_NIL && !scalar_setting(b, cs, st, &text)))
		return;
	free(w->val[i]);
	w->val[i] = text; /* nil restores the default */
	w->vloc[i] = st->value->loc;
}

/* user['username'|'group']; nil restores git. */
static void set_user(struct walk *b, const struct rb_stmt *st, const char *path)
{
	bool is_name = strcmp(st->keys[0], "username") == 0;
	char **dst = is_name ? &b->as->user : &b->as->group;
	char *text = NULL;
	if (st->value->kind == RB_NIL) {
		text = xstrdup(is_name ? DEFAULT_USER : DEFAULT_GROUP);
	} else if (setting_text(b, ST_STRING, path, st->value, &text) == -1 ||
	           !account_ok(b, st->value->loc, path, text)) {
		free(text);
		return;
	}
	free(*dst);
	*dst = text;
}

/* manage_accounts['enable']; nil restores true. */
static void set_manage(struct walk *b, const struct rb_stmt *st, const char *path)
{
	char *text = NULL;
	if (st->value->kind == RB_NIL)
		b->as->manage_accounts = true;
	else if (setting_text(b, ST_BOOL, path, st->value, &text) == 0)
		b->as->manage_accounts = strcmp(text, "true") == 0;
	free(text);
}

static bool global_key_known(const struct rb_stmt *st, int lk)
{
	const char *key = st->keys[0];
	if (strcmp(st->name, "user") == 0)
		return strcmp(key, "username") == 0 || strcmp(key, "group") == 0;
	if (strcmp(st->name, "manage_accounts") == 0)
		return strcmp(key, "enable") == 0;
	return lk >= 0;
}

/* user[...], manage_accounts[...], logging[...]: settings of gitlab-ctl itself. */
static void handle_global(struct walk *b, const struct rb_stmt *st)
{
	if (!need_subscript(b, st))
		return;
	int lk = svlog_key(st->keys[0]);
	if (!global_key_known(st, lk)) {
		unknown_key(b, st);
		return;
	}
	if (reject_opaque(b, st) || !no_nesting(b, st, "a setting"))
		return;
	char *path = stmt_path(st, 1), *text = NULL;
	if (strcmp(st->name, "user") == 0) {
		set_user(b, st, path);
	} else if (strcmp(st->name, "manage_accounts") == 0) {
		set_manage(b, st, path);
	} else if (log_value(b, st, lk, &text) == 0) {
		svlog_set(&b->as->logging, lk, text);
		free(text);
	}
	free(path);
}

static bool role_known(const struct catalog *cat, const char *role)
{
	for (size_t i = 0; i < cat->n; i++)
		for (size_t j = 0; j < cat->v[i].nroles; j++)
			if (strcmp(cat->v[i].roles[j], role) == 0)
				return true;
	return false;
}

static bool is_switch(const struct catalog *cat, const char *name)
{
	for (size_t i = 0; i < cat->n; i++)
		if (cat->v[i].off_switch && strcmp(cat->v[i].off_switch, name) == 0)
			return true;
	return false;
}

static bool is_global(const char *name)
{
	return strcmp(name, "user") == 0 || strcmp(name, "manage_accounts") == 0 ||
	       strcmp(name, "logging") == 0;
}

static void note_unknown(struct walk *b, const struct rb_stmt *st)
{
	if (kv_get(&b->as->unknown, st->name) != NULL)
		return;
	size_t n = b->as->unknown.n;
	grow(&b->as->unknown.v, &b->unknown_cap, n + 1, sizeof *b->as->unknown.v, 8);
	grow(&b->unknown_locs, &b->unknown_locs_cap, n + 1, sizeof *b->unknown_locs, 8);
	struct kv *v = b->as->unknown.v;
	struct loc *l = b->unknown_locs;
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
	b->as->unknown.n = n + 1;
}

/* Does v hold a hash key naming a credential (env API_TOKEN), or opaque text that names one? */
static bool value_names_secret(const struct rb_value *v)
{
	if (v->kind == RB_OPAQUE)
		return text_names_secret(v->u.s.ptr, v->u.s.len);
	for (size_t i = 0; v->kind == RB_ARRAY && i < v->u.a.n; i++)
		if (value_names_secret(v->u.a.v[i]))
			return true;
	for (size_t i = 0; v->kind == RB_HASH && i < v->u.h.n; i++) {
		const struct rb_value *k = v->u.h.v[i].key;
		if (((k->kind == RB_STR || k->kind == RB_SYM) && env_is_secret(k->u.s.ptr)) ||
		    value_names_secret(v->u.h.v[i].val))
			return true;
	}
	return false;
}

/*
 * May the statement hold a secret value? A setting marked secret; a key or
 * hash key that names a credential (also under a misspelt setting or
 * service: what the operator meant cannot be known); a setting one typo away
 * from a secret one.
 */
static bool stmt_secret(const struct walk *b, const struct rb_stmt *st)
{
	const struct cat_service *def = service_of(b, st->name);
	const struct cat_setting *cs =
	    def && st->nkeys > 0 ? cat_setting_key(def, st->keys[0]) : NULL;
	if (cs != NULL && cs->secret)
		return true;
	for (size_t i = 0; i < st->nkeys; i++)
		if (text_names_secret(st->keys[i], strlen(st->keys[i])))
			return true;
	if (def != NULL && cs == NULL && st->nkeys > 0) {
		const char *hint = key_hint(b, st);
		const struct cat_setting *hs = hint ? cat_setting_find(def, hint) : NULL;
		if (hs != NULL && hs->secret)
			return true;
	}
	return text_names_secret(st->name, strlen(st->name)) || value_names_secret(st->value);
}

/*
 * A diagnostic never echoes a line of a statement that may hold a secret:
 * every line from its start to the next statement's is marked hidden.
 */
static void hide_secret_lines(const struct walk *b, const struct rb_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct rb_stmt *st = &f->v[i];
		const struct src *src = st->loc.src;
		if (src == NULL || src->hidden == NULL || !stmt_secret(b, st))
			continue;
		size_t end = i + 1 < f->n ? (size_t)f->v[i + 1].loc.line : src->nhidden;
		if (end == (size_t)st->loc.line)
			end++; /* the next statement is on the same line */
		for (size_t l = (size_t)st->loc.line; l < end && l < src->nhidden; l++)
			src->hidden[l] = 1;
	}
}

/*
 * A service whose roles exclude each other (redis: master or replica) named twice: an error
 * at the second role, which contradicts the first.
 */
static void check_exclusive(struct walk *b)
{
	const struct assigns *as = b->as;
	for (size_t i = 0; i < b->cat->n; i++) {
		const struct cat_service *s = &b->cat->v[i];
		const char *first = NULL;
		for (size_t j = 0; s->roles_exclusive && j < as->nroles; j++) {
			bool mine = false;
			for (size_t k = 0; k < s->nroles && !mine; k++)
				mine = strcmp(s->roles[k], as->roles[j]) == 0;
			if (!mine || (first != NULL && strcmp(first, as->roles[j]) == 0))
				continue;
			if (first == NULL) {
				first = as->roles[j];
				continue;
			}
			diag_at(b->d, DIAG_ERR, as->role_locs[j],
			        "roles '%s' and '%s' are both given: a node is one of them (%s)",
			        first, as->roles[j], s->name);
			break;
		}
	}
}

/* roles ['a', 'b'], roles(['a']) or roles = [...]: later statements replace earlier ones. */
static void set_roles(struct walk *b, const struct rb_stmt *st)
{
	const struct rb_value *v = st->value;
	if (st->nkeys > 0 || v->kind != RB_ARRAY) {
		diag_at(b->d, DIAG_ERR, v->loc,
		        "roles takes an array of role names, e.g. "
		        "roles(['monitoring_role'])");
		return;
	}
	strv_free(b->as->roles, b->as->nroles);
	free(b->as->role_locs);
	b->as->roles = xcalloc(v->u.a.n + 1, sizeof *b->as->roles);
	b->as->role_locs = xcalloc(v->u.a.n + 1, sizeof *b->as->role_locs);
	b->as->nroles = 0;
	b->as->roles_set = true;
	for (size_t i = 0; i < v->u.a.n; i++) {
		const struct rb_value *e = v->u.a.v[i];
		if ((e->kind != RB_STR && e->kind != RB_SYM) || has_nul(e)) {
			diag_at(b->d, DIAG_ERR, e->loc, "a role must be a string, not %s",
			        rb_kind_name(e->kind));
			continue;
		}
		if (!role_known(b->cat, e->u.s.ptr))
			diag_at(b->d, DIAG_WARN, e->loc,
			        "role '%s' enables no service gitlab-ctl manages", e->u.s.ptr);
		b->as->role_locs[b->as->nroles] = e->loc;
		b->as->roles[b->as->nroles++] = xstrdup(e->u.s.ptr);
	}
	check_exclusive(b);
}

/* NAME['enable'] = true|false for a catalog off_switch. */
static void set_switch(struct walk *b, const struct rb_stmt *st)
{
	if (!need_subscript(b, st))
		return;
	if (strcmp(st->keys[0], "enable") != 0) {
		unknown_key(b, st);
		return;
	}
	char *path = stmt_path(st, 1), *text = NULL;
	if (no_nesting(b, st, "a boolean") && !reject_opaque(b, st) &&
	    setting_text(b, ST_BOOL, path, st->value, &text) == 0) {
		struct assign_switch *sw = NULL;
		for (size_t i = 0; i < b->as->nswitches; i++)
			if (strcmp(b->as->switches[i].name, st->name) == 0)
				sw = &b->as->switches[i];
		if (sw == NULL) {
			grow(&b->as->switches, &b->as->switches_cap, b->as->nswitches + 1,
			     sizeof *b->as->switches, 4);
			sw = &b->as->switches[b->as->nswitches++];
			sw->name = xstrdup(st->name);
		}
		sw->off = text != NULL && strcmp(text, "false") == 0;
		sw->loc = st->value->loc;
	}
	free(text);
	free(path);
}

/*
 * gitlab_rails['db_host'|'db_port'|'db_password']: Omnibus' keys for a PostgreSQL not on
 * this node, which its exporter's connection_string uses; here settings of the exporter.
 */
static const struct cat_service *rails_db(const struct walk *b, const struct rb_stmt *st)
{
	if (st->call || st->nkeys < 1 || strcmp(st->name, "gitlab_rails") != 0 ||
	    (strcmp(st->keys[0], "db_host") != 0 && strcmp(st->keys[0], "db_port") != 0 &&
	     strcmp(st->keys[0], "db_password") != 0))
		return NULL;
	return service_of(b, "gitlab_exporter");
}

/*
 * Does st set something gitlab-ctl acts on? Not an Omnibus name or key it
 * ignores, nor a key it does not know (a warning wherever it is written).
 */
static bool stmt_managed(const struct walk *b, const struct rb_stmt *st)
{
	const struct cat_service *def = service_of(b, st->name);
	bool sw = is_switch(b->cat, st->name);
	if (rails_db(b, st) != NULL)
		return true;
	if (def == NULL && !sw && !is_global(st->name) && strcmp(st->name, "roles") != 0)
		return false;
	if (st->call || st->nkeys == 0)
		return true;
	int lk = svlog_key(st->keys[0]);
	if (def != NULL)
		return cat_setting_key(def, st->keys[0]) != NULL || lk >= 0;
	if (sw)
		return strcmp(st->keys[0], "enable") == 0;
	return strcmp(st->name, "roles") == 0 || global_key_known(st, lk);
}

/*
 * A managed setting inside a condition: gitlab-ctl would have to choose a
 * branch it cannot evaluate. The error is at the condition, which is what
 * the operator rewrites.
 */
static void refuse_conditional(struct walk *b, const struct rb_stmt *st)
{
	char *path = stmt_path(st, st->nkeys);
	diag_at(b->d, DIAG_ERR, st->cond.loc,
	        "gitlab-ctl does not evaluate conditions: %s (line %d) is set inside '%s': write "
	        "the value this host needs as a plain assignment, outside any condition",
	        path, st->loc.line, st->cond.word);
	free(path);
}

/*
 * gitlab_rails[KEY] = V where a setting declares gitlab_rails = "KEY" (GitLab's own client
 * settings, gitlab_rails['redis_sentinels']): assigned to that setting, as if written there.
 */
static bool rails_setting(struct walk *b, const struct rb_stmt *st)
{
	if (st->call || st->nkeys != 1 || strcmp(st->name, "gitlab_rails") != 0 || st->cond.word)
		return false;
	for (size_t i = 0; i < b->cat->n; i++) {
		const struct cat_service *def = &b->cat->v[i];
		for (size_t j = 0; j < def->nsettings; j++) {
			const struct cat_setting *cs = &def->settings[j];
			if (cs->gitlab_rails == NULL || strcmp(cs->gitlab_rails, st->keys[0]) != 0)
				continue;
			struct rb_stmt as = *st;
			char *key = cs->name;
			as.name = def->config_name;
			as.keys = &key;
			handle_service(b, &b->as->svc[i], &as);
			return true;
		}
	}
	return false;
}

static void walk(struct walk *b, const struct rb_file *f)
{
	hide_secret_lines(b, f);
	for (size_t i = 0; i < f->n; i++) {
		const struct rb_stmt *st = &f->v[i];
		const struct cat_service *def = service_of(b, st->name);
		if (st->cond.word != NULL && stmt_managed(b, st))
			refuse_conditional(b, st);
		else if (def != NULL)
			handle_service(b, &b->as->svc[def - b->cat->v], st);
		else if ((def = rails_db(b, st)) != NULL)
			handle_service(b, &b->as->svc[def - b->cat->v], st);
		else if (is_global(st->name))
			handle_global(b, st);
		else if (strcmp(st->name, "roles") == 0)
			set_roles(b, st);
		else if (is_switch(b->cat, st->name))
			set_switch(b, st);
		else if (rails_setting(b, st))
			continue;
		else if (st->cond.word != NULL ||
		         !railsmtp_reads(st)) /* railsmtp skips those too */
			note_unknown(b, st);
	}
}

/* The managed top-level name (else an Omnibus one) closest to name, or NULL. */
static const char *name_hint(const struct walk *b, const char *name)
{
	const char *v[64] = {"user", "manage_accounts", "logging"};
	size_t n = 3;
	for (size_t j = 0; j < b->cat->n && n < 64; j++)
		v[n++] = b->cat->v[j].config_name;
	const char *hint = suggest_pick(name, v, n);
	if (hint == NULL && b->cat->nomnibus > 0)
		hint = suggest_pick(name, (const char **)b->cat->omnibus, b->cat->nomnibus);
	return hint;
}

/*
 * With the catalog's list of Omnibus names, a name on neither list is an error, as Omnibus'
 * config_strict_mode makes it; without the list, a warning.
 */
static size_t report_strange(struct walk *b)
{
	bool strict = b->cat->omnibus != NULL;
	size_t known = 0;
	for (size_t i = 0; i < b->as->unknown.n; i++) {
		const char *name = b->as->unknown.v[i].name;
		if (catalog_omnibus_name(b->cat, name)) {
			known++;
			continue;
		}
		const char *hint = name_hint(b, name);
		if (strict)
			diag_at(b->d, DIAG_ERR, b->unknown_locs[i],
			        "%s is not a name gitlab-ctl or Omnibus knows%s%s%s", name,
			        hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
		else if (hint != NULL)
			diag_at(b->d, DIAG_WARN, b->unknown_locs[i],
			        "%s is not a service gitlab-ctl manages; ignored (did you mean "
			        "'%s'?)",
			        name, hint);
	}
	return strict ? known : b->as->unknown.n;
}

/* The summary line names this many settings, then counts the rest (-v names each one). */
#define SUMMARY_NAMES 8

/* Is the i-th ignored top-level name one of the summary's (not an error of its own)? */
static bool summed_name(const struct walk *b, size_t i)
{
	return b->cat->omnibus == NULL || catalog_omnibus_name(b->cat, b->as->unknown.v[i].name);
}

/* The first SUMMARY_NAMES of the summed names and keys, comma-separated, malloc'ed. */
static char *summary_list(const struct walk *b)
{
	const char *v[SUMMARY_NAMES];
	size_t n = 0, len = 1;
	for (size_t i = 0; i < b->as->unknown.n && n < SUMMARY_NAMES; i++)
		if (summed_name(b, i))
			v[n++] = b->as->unknown.v[i].name;
	for (size_t i = 0; i < b->nokeys && n < SUMMARY_NAMES; i++)
		v[n++] = b->okeys[i];
	for (size_t i = 0; i < n; i++)
		len += strlen(v[i]) + 2;
	char *list = xcalloc(len, 1);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			strlcat(list, ", ", len);
		strlcat(list, v[i], len);
	}
	return list;
}

/* Known Omnibus names and keys this build does not manage: one summary line, each with -v. */
static void report_unknown(struct walk *b, const struct rb_file *f)
{
	size_t nknown = report_strange(b) + b->nokeys;
	if (nknown == 0)
		return;
	bool verbose = b->ctl && b->ctl->verbose;
	char *list = summary_list(b), more[64] = "";
	if (nknown > SUMMARY_NAMES)
		snprintf(more, sizeof more, ", ... and %zu more", nknown - SUMMARY_NAMES);
	diag_file(b->d, DIAG_WARN, f->src.name, 0,
	          "ignoring %zu Omnibus setting%s this build does not manage: %s%s%s", nknown,
	          nknown == 1 ? "" : "s", list, more, verbose ? "" : " (-v: each one)");
	free(list);
	for (size_t i = 0; verbose && i < b->as->unknown.n; i++)
		if (summed_name(b, i))
			diag_at(b->d, DIAG_NOTE, b->unknown_locs[i],
			        "ignoring %s: not managed by this build", b->as->unknown.v[i].name);
	for (size_t i = 0; verbose && i < b->nokeys; i++)
		diag_at(b->d, DIAG_NOTE, b->okey_locs[i], "ignoring %s: not managed by this build",
		        b->okeys[i]);
}

/* ---- entry points -------------------------------------------------------- */

static void assigns_init(const struct catalog *cat, struct assigns *as)
{
	memset(as, 0, sizeof *as);
	as->user = xstrdup(DEFAULT_USER);
	as->group = xstrdup(DEFAULT_GROUP);
	as->manage_accounts = true;
	svlog_defaults(&as->logging);
	as->svc = xcalloc(cat->n, sizeof *as->svc);
	as->n = cat->n;
	for (size_t i = 0; i < cat->n; i++) {
		struct assign_svc *w = &as->svc[i];
		w->def = &cat->v[i];
		w->val = xcalloc(w->def->nsettings, sizeof *w->val);
		w->vloc = xcalloc(w->def->nsettings, sizeof *w->vloc);
		w->hash = xcalloc(w->def->nsettings, sizeof *w->hash);
		w->data = xcalloc(w->def->nsettings, sizeof *w->data);
	}
}

void assigns_walk(const struct ctl *ctl, const struct catalog *cat, const struct rb_file *f,
                  struct assigns *as, struct diags *d)
{
	struct walk b = {.ctl = ctl, .cat = cat, .d = d, .as = as};
	assigns_init(cat, as);
	if (f == NULL)
		return;
	walk(&b, f);
	report_unknown(&b, f);
	free(b.unknown_locs);
	strv_free(b.okeys, b.nokeys);
	free(b.okey_locs);
}

void assigns_free(struct assigns *as)
{
	for (size_t i = 0; i < as->n; i++) {
		struct assign_svc *w = &as->svc[i];
		for (size_t j = 0; j < w->def->nsettings; j++) {
			free(w->val[j]);
			hash_free(&w->hash[j]);
			yval_free(w->data[j]);
		}
		free(w->data);
		free(w->val);
		free(w->vloc);
		free(w->hash);
		for (int k = 0; k < SVLOG_N; k++)
			free(w->log[k]);
	}
	free(as->svc);
	free(as->user);
	free(as->group);
	svlog_free(&as->logging);
	kvlist_free(&as->unknown);
	strv_free(as->roles, as->nroles);
	free(as->role_locs);
	for (size_t i = 0; i < as->nswitches; i++)
		free(as->switches[i].name);
	free(as->switches);
	memset(as, 0, sizeof *as);
}
