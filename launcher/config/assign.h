/*
 * assign: what gitlab.rb assigns, statement by statement, before anything is
 * computed. Every value is checked where it is written (its type, a path's
 * policy, an account name, Ruby gitlab-ctl cannot evaluate), so that each
 * message points at the gitlab.rb line, and kept as text with its location;
 * later assignments win. attrs merges the result over the catalog defaults.
 */
#ifndef GITLAB_CTL_ASSIGN_H
#define GITLAB_CTL_ASSIGN_H

#include <stdbool.h>
#include <stddef.h>

#include "config/catalog.h"
#include "config/rbconf.h"
#include "config/svlog.h"
#include "lib/ctl.h"
#include "lib/diag.h"
#include "lib/kvlist.h"
#include "lib/yval.h"

/* One key of a hash setting (env, flags). */
struct assign_ent {
	char *key;
	char *val; /* NULL: nil (removes a default) */
	struct loc loc;
	bool is_bool; /* written as true/false, not as a string (flags spell those apart) */
};

/* A hash setting's keys in the order first assigned. */
struct assign_hash {
	struct assign_ent *v;
	size_t n, cap;
};

/*
 * What one gitlab.rb hash entry does to n entries merged so far over the
 * catalog defaults (key(list, i) names entry i): a key not there is added at
 * *at == n (nil over it: nothing); a key there is replaced at *at, or with
 * nil removed: the caller frees *at's entry and moves entry n - 1 into it.
 */
enum hash_merge { HASH_NOOP, HASH_ADD, HASH_REPLACE, HASH_REMOVE };
enum hash_merge assign_hash_merge(const struct assign_ent *e, const void *list, size_t n,
                                  const char *(*key)(const void *list, size_t i), size_t *at);

/* A top-level switch (a catalog off_switch): NAME['enable'] = false turns its services off. */
struct assign_switch {
	char *name;
	bool off;
	struct loc loc;
};

/* What gitlab.rb set for one catalog service. */
struct assign_svc {
	const struct cat_service *def;
	char **val;               /* per setting: the value as text, NULL = the default */
	struct loc *vloc;         /* per setting: where */
	struct assign_hash *hash; /* per setting, for env and flags */
	struct yval **data;       /* per setting, for yaml: NULL = nil */
	char *log[SVLOG_N];       /* per-service svlogd_* overrides */
	bool log_set[SVLOG_N];
};

struct assigns {
	struct assign_svc *svc; /* one per catalog service, catalog order */
	size_t n;
	char *user, *group; /* user['username'], user['group'] */
	bool manage_accounts;
	struct svlog logging;
	struct kvlist unknown; /* ignored top-level names -> first "file:line" */
	char **roles;          /* roles([...]): services list the roles that enable them */
	struct loc *role_locs; /* where each was written */
	size_t nroles;
	bool roles_set;
	struct assign_switch *switches; /* prometheus_monitoring['enable'] and the like */
	size_t nswitches, switches_cap;
};

/*
 * Walk the statements of f (NULL: nothing assigned) against cat. Errors and
 * warnings (unknown keys and names, with "did you mean") go to d; a bad
 * statement is skipped, so one run reports them all.
 */
void assigns_walk(const struct ctl *ctl, const struct catalog *cat, const struct rb_file *f,
                  struct assigns *as, struct diags *d);

/* Free everything still owned (a field taken over by the caller is NULLed first). */
void assigns_free(struct assigns *as);

/* "host:port", port 1..65535, an IPv6 host in brackets; *host malloc'ed on success. */
bool assign_address(const char *s, char **host, long long *port);

#endif
