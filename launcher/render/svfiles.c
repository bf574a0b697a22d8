/* A service's home and rendered config files (see svfiles.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render/accounts.h"
#include "lib/pathjoin.h"
#include "lib/alloc.h"
#include "lib/diag.h"
#include "render/svfiles.h"
#include "render/svvars.h"
#include "render/tree.h"

/* A root-owned template stays root's; unmanaged owners (not root) stay unmanaged. */
static uid_t owner(const struct cat_template *ct, uid_t id)
{
	return ct->service_owned || id == TREE_NO_OWNER ? id : 0;
}

/* Render every catalog template of s into t. 0, or -1 with the problems in d. */
static int render_all(const struct ctl *ctl, const struct attrs *a, const struct svc *s, uid_t uid,
                      gid_t gid, struct tree *t, struct diags *d)
{
	const struct cat_service *def = s->def;
	struct svvars sv;
	struct tpl_vars vars = svvars_init(&sv, ctl, a, s);
	int rc = 0;
	for (size_t i = 0; i < def->ntemplates; i++) {
		const struct cat_template *ct = &def->templates[i];
		char src[PATH_MAX];
		char *dest = svc_expand(s, ct->dest);
		struct buf body;
		buf_init(&body);
		if (dest == NULL || dest[0] != '/') {
			diag_file(d, DIAG_ERR, def->file, ct->line,
			          "template %s: destination \"%s\" is not an absolute path",
			          ct->src ? ct->src : "(directory)", ct->dest);
			rc = -1;
		} else if (ct->src == NULL) {
			tree_add_dir(t, dest, ct->mode, owner(ct, uid),
			             (gid_t)owner(ct, (uid_t)gid), -1, TR_NONE, 0);
		} else if (path_fmt(src, sizeof src, "%s/templates/%s", ctl->datadir, ct->src) ==
		           -1) {
			diag_file(d, DIAG_ERR, def->file, ct->line, "template path too long");
			rc = -1;
		} else if (tpl_render_file(src, &vars, &body, d) == -1) {
			rc = -1;
		} else {
			gid_t g = ct->group_owned ? gid : (gid_t)owner(ct, (uid_t)gid);
			tree_add_file(t, dest, body.p, body.len, ct->mode, owner(ct, uid), g, -1,
			              TR_CONFIG, 0);
		}
		free(dest);
		buf_free(&body);
	}
	return rc;
}

int svfiles_write(const struct ctl *ctl, const struct attrs *a, const struct svc *s, FILE *out,
                  struct diags *d)
{
	uid_t uid = TREE_NO_OWNER;
	gid_t gid = (gid_t)TREE_NO_OWNER;
	if (geteuid() == 0 && accounts_lookup(s->user, s->group, &uid, &gid) == -1) {
		diag_add(d, DIAG_ERR,
		         "%s: user '%s' or group '%s' does not exist (create them in the image)",
		         s->def->name, s->user, s->group);
		return -1;
	}
	struct tree t;
	tree_init(&t);
	int rc = -1;
	char aside[PATH_MAX]; /* root's place for the account's directory in a file's place */
	if (ctl_var_dir(ctl, aside, sizeof aside) == 0 &&
	    strlcat(aside, "/" TREE_ASIDE_DIR, sizeof aside) < sizeof aside)
		(void)tree_set_aside(&t, aside); /* else it is moved beside its file */
	/*
	 * Not root (a pod's runAsUser): a home that exists is the orchestrator's (an emptyDir
	 * owned by root, group fsGroup): use it as it is; only a missing one is made.
	 */
	unsigned flags = uid == TREE_NO_OWNER ? TN_IF_MISSING : 0;
	tree_add_dir(&t, s->home, 0750, uid, gid, -1, TR_NONE, flags);
	if (render_all(ctl, a, s, uid, gid, &t, d) == -1)
		goto out;
	if (tree_diff(&t) == -1) {
		diag_add(d, DIAG_ERR, "cannot compare %s: %s", t.errpath, strerror(errno));
		goto out;
	}
	for (size_t k = 0; k < t.nc; k++) {
		if (tree_apply(&t, &t.c[k]) != 0) { /* its one service: any failure is its */
			diag_add(d, DIAG_ERR, "cannot write %s%s: %s", t.errpath, t.errwhy,
			         strerror(errno));
			goto out;
		}
		tree_describe(&t, &t.c[k], out);
		if (t.c[k].aside != NULL)
			fprintf(out, "moved the directory at %s to %s\n", t.v[t.c[k].node].path,
			        t.c[k].aside);
	}
	rc = 0;
out:
	tree_free(&t);
	return rc;
}
