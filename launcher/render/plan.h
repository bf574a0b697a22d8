/*
 * plan: what reconfigure wants on disk, computed before anything is written.
 * Every template of every enabled service is rendered, every setup step's
 * placeholders expanded and the whole desired tree built in memory here, so
 * that a bad template or placeholder fails the run while nothing has changed
 * (README: How it works). Nothing here changes the system: the accounts the tree's
 * owners need are made between plan_find_disabled and plan_tree by the engine step
 * owners_ensure (engine/owners.h), which fills each plan's uid and gid.
 */
#ifndef GITLAB_CTL_PLAN_H
#define GITLAB_CTL_PLAN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/attrs.h"
#include "config/catalog.h"
#include "lib/buf.h"
#include "lib/ctl.h"
#include "lib/diag.h"
#include "render/template.h"
#include "render/tree.h"
#include "render/yaml.h"

/* A catalog template rendered to its destination (catalog: templates). */
struct plan_extra {
	const struct cat_template *def;
	char *dest;
	struct buf body;
	struct tpl_spans sec; /* where secret values landed in body */
	mode_t mode;
	bool service_owned;
	bool is_dir;               /* a directory (a template without src), no body */
	bool group_owned;          /* root's, the service's group */
	struct yaml_srcmap srcmap; /* its lines written from gitlab.rb values */
};

/* A setup step with its placeholders expanded (catalog: setup). */
struct plan_step {
	const struct cat_step *def;
	char *creates;
	char
	    *staging; /* staged: where the command builds `creates`, a name root picked at random */
	char **argv;  /* NULL-terminated */
	char **verify; /* NULL-terminated, or NULL */
};

/*
 * The files runit needs of each service, each rendered from the template of its name
 * (render/plan.c's file_defs: template, directory, name, mode). In rendering order.
 */
enum plan_kind {
	PF_RUN,        /* sv/<svc>/run */
	PF_LOG_RUN,    /* sv/<svc>/log/run */
	PF_LOG_CONFIG, /* <log_dir>/config, svlogd's */
	PF_CHECK,      /* sv/<svc>/check: when the catalog's check can be probed */
	PF_CONTROL_T,  /* sv/<svc>/control/t: a stop signal other than TERM */
	PF_NKINDS
};

struct plan_file {
	bool on; /* the service has this file */
	struct buf body;
	struct tpl_spans sec; /* where secret values landed in body */
};

/* One enabled service as it should be. */
struct plan {
	const struct svc *svc;
	struct plan_step *steps;
	size_t nsteps;
	struct buf after; /* sv/<svc>/after: the enabled services it needs, one per line */
	int wave;         /* 0: needs nothing; else 1 + the highest wave it needs */
	char sv_dir[PATH_MAX];
	char log_sv[PATH_MAX];
	char link[PATH_MAX]; /* service/<svc> */
	struct plan_file files[PF_NKINDS];
	struct plan_extra *extra;
	size_t nextra;
	uid_t uid; /* the service account, TREE_NO_OWNER when not root */
	gid_t gid;
};

/* A catalog service to disable: its service/ link, and the data it leaves behind. */
struct plan_disable {
	char link[PATH_MAX];
	const char *kept; /* its `data` setting's path (into the attrs), NULL: none */
};

struct plans {
	struct plan *p; /* enabled services in dependency order: waves ascend */
	size_t np;
	struct tree t;                /* the desired tree; node svc = index in p */
	char service_dir[PATH_MAX];   /* <install>/service */
	struct plan_disable *disable; /* catalog services in service/ no longer enabled */
	size_t ndisable, disablecap;
	int accounts; /* accounts created (or, in a dry run, that would be) */
};

void plans_init(struct plans *ps);
void plans_free(struct plans *ps);

/*
 * Render every enabled service of a (catalog order, a->svcs[i].def ==
 * &cat->v[i]) in dependency order. Errors and warnings go to d (printed by
 * the caller); returns 0 or -1 after an error. Writes nothing.
 */
int plan_services(const struct ctl *ctl, const struct catalog *cat, const struct attrs *a,
                  struct plans *ps, struct diags *d);

/*
 * The entries of service/ to disable: catalog services of a (catalog order)
 * no longer enabled, each with the data it keeps (its `data` setting).
 * An operator's own services (not in the catalog) are left alone, as
 * Omnibus does (with ctl->verbose, a note in d says so). 0, or -1 with errno (the directory
 * cannot be read).
 */
int plan_find_disabled(const struct ctl *ctl, const struct catalog *cat, const struct attrs *a,
                       struct plans *ps, struct diags *d);

/*
 * Fill ps->t with every file, directory and link of the enabled services,
 * enabling links last (runsv must find a complete directory). 0, or -1 with
 * the error in d (the root unusable, a path too long).
 */
int plan_tree(const struct ctl *ctl, struct plans *ps, struct diags *d);

#endif
