/*
 * attrs_int: what attrs' own files share, not part of its contract (attrs.h is). attrs
 * resolves a service's vars and computes it (compute_svc), over attrs_builtin (the
 * placeholders attrs provides itself: account, dirs, generated secrets, listen address,
 * groups), attrs_flags (flags settings and the argv they join), attrs_env, attrs_data (yaml
 * settings), attrs_origin (where gitlab.rb set things), attrs_check (refused values, TLS) and
 * attrs_scrape (Prometheus' scrape jobs).
 */
#ifndef GITLAB_CTL_ATTRS_INT_H
#define GITLAB_CTL_ATTRS_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "config/catalog.h"
#include "config/envcheck.h"
#include "config/secret.h"
#include "lib/diag.h"

/* Declared in config/attrs.h and config/assign.h, which this header leaves to its includers. */
struct assign_svc;
struct assigns;
struct attrs;
struct ctl;
struct rb_file;
struct svc;
struct yval;

struct build {
	const struct ctl *ctl;
	enum { C_TODO, C_BUSY, C_DONE, C_FAILED } * cstate; /* per service, computed on demand */
	const struct catalog *cat;
	struct diags *d;
	struct attrs *out;
	const struct assign_svc *w; /* what gitlab.rb set, per catalog service */
	const struct assigns *as;
	const struct rb_file *f;     /* the parsed gitlab.rb, NULL for none */
	char root_dirs[3][PATH_MAX]; /* install, data, log dir under the root; "": too long */
	bool root;                   /* run by root (asked once per run, not per service) */
	struct envcheck ec;          /* the env checks' answers, shared by every service */
	char genpw[64];              /* generated_web_password, "" until first asked for */
};

enum vstate { V_TODO, V_BUSY, V_DONE };

struct var {
	const char *name;
	char *raw;   /* owned */
	bool expand; /* a catalog default: may hold placeholders */
	int line;    /* catalog line, for messages */
	char *val;   /* owned, when V_DONE */
	enum vstate state;
	bool own_secret;     /* a catalog setting marked secret */
	bool in_root;        /* a path setting not marked host: kept inside --root */
	enum secrecy secret; /* when V_DONE: own, or taken from the vars it was built from */
	struct loc from;     /* the gitlab.rb position of the value or of one it was built from */
};

struct comp {
	struct build *b;
	const struct assign_svc *w;
	const struct cat_service *def;
	struct var *v;
	size_t n, cap;
	bool failed;
	enum secrecy taint; /* the most secret var the expansion under way looked up */
	struct loc from;    /* the first gitlab.rb-set value it looked up, for messages */
	struct src nosrc;   /* gitlab.rb without its text, for a position holding a secret */
};

/* One flag of a flags setting: name, value text, and whether it was a boolean. */
struct flag {
	char *name, *value;
	bool is_bool;
	bool keep_empty; /* the catalog's "key=": an explicitly empty value */
};

struct flags {
	struct flag *v;
	size_t n;
};

/* attrs.c: a service's vars, resolved on demand ({{placeholders}} expanded). */
struct var *var_find(struct comp *c, const char *name, size_t len);
void var_add(struct comp *c, const char *name, char *raw, bool expand, int line);
const char *var_resolve(struct comp *c, struct var *v);
char *comp_expand(struct comp *c, const char *tmpl, int line);

/* attrs_builtin.c */
extern const char *const builtin_dirs[3]; /* install, data, log dir (not root-prefixed) */
bool is_builtin(const char *name);
void add_builtins(struct comp *c, struct svc *out);
void add_listen(struct comp *c, struct svc *out);
void compute_groups(const struct attrs *a, bool root, struct svc *s);

/* attrs_flags.c */
struct flags merged_hash(struct comp *c, size_t si);
char *flags_text(enum flags_style style, const struct flags *l);
void flags_free(struct flags *l);
void compute_argv(struct comp *c, struct svc *out);

/* attrs_env.c */
void compute_env(struct comp *c, struct svc *out);
void compute_base_env(struct comp *c, struct svc *out);

/* attrs_data.c */
char *data_summary(const struct yval *v);
void data_add(struct svc *out, const char *name, struct yval *v, struct loc loc);
void data_set(struct svc *out, const char *name, struct yval *v, struct loc loc);
void compute_data(const struct assign_svc *w, struct svc *out);
struct yval *rails_global(struct comp *c);

/* attrs_origin.c */
void compute_origin(const struct assign_svc *w, struct svc *out);
void compute_where(const struct assign_svc *w, struct svc *out);
char *compute_role_where(const struct assigns *as, const struct assign_svc *w);

/* attrs_check.c */
void check_refused(struct build *b, const struct assign_svc *w, const struct svc *s);
void check_tls(struct build *b, const struct assign_svc *w, const struct svc *s);
void check_required(struct build *b, const struct assign_svc *w, const struct svc *s);

/* attrs_scrape.c */
void cap_scrape_timeout(struct comp *c);
void collect_scrape(struct build *b, struct svc *out);

#endif
