/* The desired tree of reconfigure: its nodes (see tree.h; the diff, writing and output are
 * in tree_diff.c, tree_apply.c and tree_print.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/resource.h>

#include "lib/alloc.h"
#include "lib/grow.h"
#include "render/tree.h"
#include "render/tree_int.h"

/* One fd in eight of the soft limit for each kind (at least 2 directories, 1 temp): a caller
 * under `ulimit -n 10` still runs, one directory and one temp at a time. */
static size_t fd_budget(size_t most, size_t least)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur == RLIM_INFINITY)
		return most;
	size_t n = (size_t)(rl.rlim_cur / 8);
	return n < least ? least : n > most ? most : n;
}

void tree_init(struct tree *t)
{
	memset(t, 0, sizeof *t);
	t->errwhy = "";
	t->euid = geteuid();
	t->ndirs = fd_budget(TREE_DIRFDS, 2);
	t->ntemps = fd_budget(TREE_TEMP_FDS, 1);
	t->aside_fd = -1;
	for (size_t i = 0; i < TREE_DIRFDS; i++)
		t->dirs[i].fd = -1;
}

void tr_free_changes(struct tree *t)
{
	tr_abort_batch(t);
	for (size_t i = 0; i < t->nc; i++) {
		free(t->c[i].path);
		free(t->c[i].old);
		free(t->c[i].aside);
	}
	t->nc = 0;
	t->batch_end = 0;
	for (size_t i = 0; i < t->nfails; i++)
		free(t->fails[i]);
	free(t->fails);
	t->fails = NULL;
	t->nfails = 0;
}

void tree_free(struct tree *t)
{
	tr_free_changes(t); /* a batch never finished: its temps are unlinked, nothing published */
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].path);
		free(t->v[i].data);
		free(t->v[i].spans);
	}
	tr_dirs_close(t);
	if (t->aside_fd >= 0)
		close(t->aside_fd);
	strv_free(t->dirty, t->ndirty);
	strv_free(t->secrets, t->nsecrets);
	free(t->byname);
	free(t->scanned);
	buf_free(&t->rbuf);
	free(t->v);
	free(t->c);
	tree_init(t);
}

int tr_fail_at(struct tree *t, const char *path, int err)
{
	strlcpy(t->errpath, path, sizeof t->errpath);
	t->errwhy = "";
	errno = err;
	return -1;
}

int tr_fail_why(struct tree *t, const char *path, int err, const char *why)
{
	tr_fail_at(t, path, err);
	t->errwhy = why;
	return -1;
}

int tree_set_anchor(struct tree *t, const char *dir)
{
	size_t n = strlcpy(t->anchor, dir, sizeof t->anchor);
	if (n >= sizeof t->anchor || (n > 0 && dir[0] != '/')) {
		t->anchor[0] = '\0';
		errno = EINVAL;
		return -1;
	}
	while (n > 0 && t->anchor[n - 1] == '/')
		t->anchor[--n] = '\0';
	return 0;
}

int tree_set_aside(struct tree *t, const char *dir)
{
	if (dir[0] != '/' || strlcpy(t->aside, dir, sizeof t->aside) >= sizeof t->aside) {
		t->aside[0] = '\0';
		errno = EINVAL;
		return -1;
	}
	return 0;
}

void tree_add_secret(struct tree *t, const char *value)
{
	if (value == NULL || value[0] == '\0')
		return;
	grow(&t->secrets, &t->secretcap, t->nsecrets + 1, sizeof *t->secrets, 8);
	t->secrets[t->nsecrets++] = xstrdup(value);
}

void tree_set_spans(struct tree *t, int node, const struct tpl_spans *sp)
{
	struct tnode *n = &t->v[node];
	if (sp == NULL || (!sp->may && sp->n == 0))
		return;
	n->flags |= TN_MAY_SECRET;
	free(n->spans);
	n->spans = xcalloc(sp->n + 1, sizeof *n->spans);
	if (sp->n > 0)
		memcpy(n->spans, sp->v, sp->n * sizeof *n->spans);
	n->nspans = sp->n;
}

static int add(struct tree *t, enum tnode_kind kind, const char *path, const char *data, size_t len,
               mode_t mode, uid_t uid, gid_t gid, int svc, enum tnode_role role, unsigned flags)
{
	grow(&t->v, &t->cap, t->n + 1, sizeof *t->v, 32);
	struct tnode *n = &t->v[t->n];
	memset(n, 0, sizeof *n);
	n->path = xstrdup(path);
	n->data = xmalloc(len + 1);
	if (len > 0)
		memcpy(n->data, data, len);
	n->data[len] = '\0';
	n->len = len;
	n->kind = kind;
	n->mode = mode & 07777;
	n->uid = uid;
	n->gid = gid;
	n->svc = svc;
	n->role = role;
	n->flags = flags;
	return (int)t->n++;
}

int tree_add_dir(struct tree *t, const char *path, mode_t mode, uid_t uid, gid_t gid, int svc,
                 enum tnode_role role, unsigned flags)
{
	return add(t, TN_DIR, path, "", 0, mode, uid, gid, svc, role, flags);
}

int tree_add_file(struct tree *t, const char *path, const char *data, size_t len, mode_t mode,
                  uid_t uid, gid_t gid, int svc, enum tnode_role role, unsigned flags)
{
	return add(t, TN_FILE, path, data, len, mode, uid, gid, svc, role, flags);
}

int tree_add_link(struct tree *t, const char *path, const char *target, int svc,
                  enum tnode_role role, unsigned flags)
{
	return add(t, TN_LINK, path, target, strlen(target), 0777, TREE_NO_OWNER, TREE_NO_OWNER,
	           svc, role, flags);
}
