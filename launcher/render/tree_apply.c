/* tree_apply: the changes written, batched and published atomically (see tree.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/pathjoin.h"
#include "lib/alloc.h"
#include "lib/fdio.h"
#include "lib/grow.h"
#include "lib/names.h"
#include "render/tree.h"
#include "render/tree_int.h"

/* ---- apply -------------------------------------------------------------------------------- */

static void mark_parent_dirty(struct tree *t, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (slash != NULL)
		tr_mark_dirty(t, path, slash == path ? 1 : (size_t)(slash - path));
}

/* Rename a finished temp entry over its target in dfd, then make the rename durable. */
static int publish(struct tree *t, int dfd, const char *tmp, const char *base, const char *path)
{
	if (renameat(dfd, tmp, dfd, base) == -1) {
		int e = errno;
		unlinkat(dfd, tmp, 0);
		return tr_fail_at(t, path, e);
	}
	if (fsync(dfd) == -1)
		return tr_fail_at(t, path, errno);
	return 0;
}

/* Six random letters or digits (62^6 names): what an account cannot plant in advance. */
static void random_suffix(char sfx[7])
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[6]; /* one call: arc4random checks for a fork (getpid) per call */
	arc4random_buf(rnd, sizeof rnd);
	for (int i = 0; i < 6; i++)
		sfx[i] = set[rnd[i] % (sizeof set - 1)];
	sfx[6] = '\0';
}

/* A new ".BASE.gitlab-ctl-tmp.XXXXXX" in dfd: O_EXCL | O_NOFOLLOW, so nothing placed there is
 * reused. */
static int make_temp(int dfd, const char *base, char *tmp, size_t len)
{
	for (int tries = 0; tries < 100; tries++) {
		char sfx[7];
		random_suffix(sfx);
		if (path_fmt(tmp, len, ".%s" NAME_TEMP_MARK ".%s", base, sfx) == -1)
			return -1;
		int fd =
		    openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd != -1 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* Root's aside directory, opened (made 0700 at its first use); -1 when there is none. */
static int aside_fd(struct tree *t)
{
	if (t->aside_fd != -1)
		return t->aside_fd >= 0 ? t->aside_fd : -1;
	t->aside_fd = -2;
	char dir[PATH_MAX];
	const char *base;
	if (t->aside[0] == '\0' || tr_split(t->aside, dir, sizeof dir, &base) == -1)
		return -1;
	/* The install's var/: root's own, opened as named (like the anchor). */
	int pfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd == -1)
		return -1;
	if (mkdirat(pfd, base, 0700) == -1 && errno != EEXIST) {
		close(pfd);
		return -1;
	}
	int fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(pfd);
	struct stat st;
	if (fd != -1 && (fstat(fd, &st) == -1 || st.st_uid != t->euid ||
	                 ((st.st_mode & 077) != 0 && fchmod(fd, 0700) == -1))) {
		close(fd);
		fd = -1;
	}
	if (fd != -1)
		t->aside_fd = fd;
	return fd;
}

/* Rename base in dfd to name in tfd, never over anything: 0, or -1 with errno (EEXIST: taken). */
static int rename_new(int dfd, const char *base, int tfd, const char *name)
{
	if (renameat2(dfd, base, tfd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	/* A file system without RENAME_NOREPLACE: the name is random, nothing to race for. */
	struct stat st;
	if (fstatat(tfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return renameat(dfd, base, tfd, name);
}

/*
 * A directory where a file belongs, in another account's directory: its data, kept. It goes
 * into root's aside directory (no name there is the account's to take), or beside the file
 * when that is on another file system (EXDEV), under a random name either way, never over
 * anything; a name taken is tried again with another.
 */
static int move_aside(struct tree *t, struct tchange *c, int dfd, const char *base,
                      const char *path)
{
	struct stat st;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == -1 || !S_ISDIR(st.st_mode))
		return 0;
	char dir[PATH_MAX], name[NAME_MAX + 1], sfx[7];
	const char *b;
	if (tr_split(path, dir, sizeof dir, &b) == -1)
		return tr_fail_at(t, path, errno);
	const char *owner = strrchr(dir, '/') + 1; /* the home's name: whose data it was */
	int afd = aside_fd(t);
	for (int tries = 0; tries < 100; tries++) {
		random_suffix(sfx);
		int n = afd != -1
		            ? snprintf(name, sizeof name, "%.100s.%.100s.%s", owner, base, sfx)
		            : snprintf(name, sizeof name, ".%s.moved-aside.%s", base, sfx);
		if (n < 0 || (size_t)n >= sizeof name)
			return tr_fail_at(t, path, ENAMETOOLONG);
		if (rename_new(dfd, base, afd != -1 ? afd : dfd, name) == 0) {
			free(c->aside);
			c->aside = xasprintf("%s/%s", afd != -1 ? t->aside : dir, name);
			mark_parent_dirty(t, path);
			return 0;
		}
		if (errno == EXDEV && afd != -1)
			afd = -1; /* the home is a volume of its own: beside the file */
		else if (errno != EEXIST)
			return tr_fail_at(t, path, errno);
	}
	return tr_fail_at(t, path, EEXIST);
}

static int fill_temp(int fd, const struct tnode *n)
{
	if (fdio_write_all(fd, n->data, n->len) == -1)
		return -1;
	if ((n->uid != TREE_NO_OWNER || n->gid != (gid_t)TREE_NO_OWNER) &&
	    fchown(fd, n->uid, n->gid) == -1)
		return -1;
	return fchmod(fd, n->mode);
}

/* Is path below a directory the tree gives to service svc's account (its home)? */
static bool in_account(const struct tree *t, const char *path, int svc)
{
	char dir[PATH_MAX];
	if (svc < 0 || strlcpy(dir, path, sizeof dir) >= sizeof dir)
		return false;
	for (char *slash; (slash = strrchr(dir, '/')) != NULL && slash != dir;) {
		*slash = '\0';
		long d = tr_find_node(t, dir);
		if (d >= 0 && t->v[d].kind == TN_DIR && t->v[d].svc == svc &&
		    t->v[d].uid != TREE_NO_OWNER && t->v[d].uid != t->euid)
			return true;
	}
	return false;
}

static bool service_failed(const struct tree *t, int svc)
{
	return svc >= 0 && (size_t)svc < t->nfails && t->fails[svc] != NULL;
}

const struct tree_fail *tree_failed(const struct tree *t, int svc)
{
	return service_failed(t, svc) ? t->fails[svc] : NULL;
}

bool tr_fail_service(struct tree *t, int svc, const char *path)
{
	int e = errno;
	if (!in_account(t, path, svc))
		return false;
	if ((size_t)svc >= t->nfails) {
		size_t cap = t->nfails;
		grow(&t->fails, &cap, (size_t)svc + 1, sizeof *t->fails, 8);
		memset(t->fails + t->nfails, 0, (cap - t->nfails) * sizeof *t->fails);
		t->nfails = cap;
	}
	if (t->fails[svc] == NULL) {
		struct tree_fail *f = xcalloc(1, sizeof *f);
		f->err = e;
		strlcpy(f->path, path, sizeof f->path);
		f->why = t->errwhy;
		t->fails[svc] = f;
	}
	errno = e;
	return true;
}

/*
 * Change c failed at t->errpath (errno). Below its service's account directory that fails
 * the service only: its staged temps are unlinked, its later changes skipped, and true is
 * returned. Anywhere else: false (the batch fails).
 */
static bool drop_service(struct tree *t, const struct tchange *c)
{
	int svc = t->v[c->node].svc, e = errno;
	/* where it failed: a temp of root's failing under c is root's failure */
	if (!tr_fail_service(t, svc, t->errpath[0] ? t->errpath : t->v[c->node].path))
		return false;
	for (size_t k = 0; k < t->nc && t->staged > 0; k++) {
		struct tchange *o = &t->c[k];
		if (o->tmp == NULL || t->v[o->node].svc != svc)
			continue;
		const char *base;
		int dfd = tr_open_parent(t, t->v[o->node].path, false, &base);
		if (dfd != -1)
			unlinkat(dfd, o->tmp,
			         0); /* its fd, if still open, is closed by sync_temps */
		free(o->tmp);
		o->tmp = NULL;
		t->staged--;
	}
	errno = e;
	return true;
}

/*
 * fsync and close the temps written so far: the "fsync them all" of the batch, in chunks. A
 * failure in an account's directory drops that service's changes; any other fails (-1).
 */
int tr_sync_temps(struct tree *t)
{
	int rc = 0, e = 0;
	size_t n = t->ntfd;
	t->ntfd = 0;
	for (size_t i = 0; i < n; i++) {
		struct tchange *c = &t->c[t->tfc[i]];
		int bad = fsync(t->tfd[i]) == -1 ? errno : 0;
		close(t->tfd[i]);
		if (bad == 0 || rc == -1 || c->tmp == NULL) /* c->tmp NULL: dropped already */
			continue;
		tr_fail_at(t, t->v[c->node].path, bad);
		if (!drop_service(t, c)) {
			rc = -1;
			e = bad;
		}
	}
	errno = e;
	return rc;
}

/* Unlink the temps of a batch that will not be published (best effort: a later run's diff
 * deletes any left behind). */
void tr_abort_batch(struct tree *t)
{
	if (t->staged == 0 && t->ntfd == 0)
		return;
	int e = errno;
	char errpath[PATH_MAX]; /* the failure being reported, not this cleanup's */
	const char *errwhy = t->errwhy;
	strlcpy(errpath, t->errpath, sizeof errpath);
	for (size_t i = 0; i < t->ntfd; i++)
		close(t->tfd[i]);
	t->ntfd = 0;
	for (size_t k = 0; k < t->nc && t->staged > 0; k++) {
		struct tchange *c = &t->c[k];
		if (c->tmp == NULL)
			continue;
		const char *base;
		int dfd = tr_open_parent(t, t->v[c->node].path, false, &base);
		if (dfd != -1)
			unlinkat(dfd, c->tmp, 0);
		free(c->tmp);
		c->tmp = NULL;
		t->staged--;
	}
	t->staged = 0;
	strlcpy(t->errpath, errpath, sizeof t->errpath);
	t->errwhy = errwhy;
	errno = e;
}

/*
 * Content, owner and mode are set on a temp file beside the target; the batch's end fsyncs
 * and renames it (in place of any old file, link or fifo: a rename never follows).
 */
static int write_in(struct tree *t, struct tchange *c, const struct tnode *n, int dfd,
                    const char *base)
{
	struct stat ds;
	char tmp[NAME_MAX + 1];
	if (fstat(dfd, &ds) == -1)
		return tr_fail_at(t, n->path, errno);
	if (ds.st_uid != t->euid && move_aside(t, c, dfd, base, n->path) == -1)
		return -1;
	if (t->ntfd == t->ntemps && tr_sync_temps(t) == -1)
		return -1;
	int fd = make_temp(dfd, base, tmp, sizeof tmp);
	if (fd == -1 && tr_shed(t, dfd))
		fd = make_temp(dfd, base, tmp, sizeof tmp);
	if (fd == -1)
		return tr_fail_at(t, n->path, errno);
	if (fill_temp(fd, n) == -1) {
		int e = errno;
		close(fd);
		unlinkat(dfd, tmp, 0);
		return tr_fail_at(t, n->path, e);
	}
	t->tfc[t->ntfd] = (size_t)(c - t->c);
	t->tfd[t->ntfd++] = fd;
	c->tmp = xstrdup(tmp);
	t->staged++;
	return 0;
}

static int write_file(struct tree *t, struct tchange *c, const struct tnode *n)
{
	const char *base;
	int dfd = tr_open_parent(t, n->path, true, &base);
	return dfd == -1 ? -1 : write_in(t, c, n, dfd, base);
}

/*
 * A new link under a temporary name, renamed over the old one: never a moment without it.
 * An enable link (not in the batch) is published at once; any other waits for the batch.
 */
static int write_link(struct tree *t, struct tchange *c, const struct tnode *n, bool batch)
{
	const char *base;
	char tmp[NAME_MAX + 1];
	int dfd = tr_open_parent(t, n->path, true, &base);
	if (dfd == -1)
		return -1;
	for (int tries = 0;; tries++) {
		char sfx[7];
		random_suffix(sfx);
		if (path_fmt(tmp, sizeof tmp, ".%s" NAME_TEMP_MARK ".%s", base, sfx) == -1)
			return tr_fail_at(t, n->path, ENAMETOOLONG);
		if (symlinkat(n->data, dfd, tmp) == 0)
			break;
		if (errno != EEXIST || tries == 99) /* never a name an account put there */
			return tr_fail_at(t, n->path, errno);
	}
	if (!batch)
		return publish(t, dfd, tmp, base, n->path);
	c->tmp = xstrdup(tmp);
	t->staged++;
	return 0;
}

/* Owner, then mode (chown may clear set-id bits), through an fd. */
static int fd_meta(struct tree *t, int fd, const struct tnode *n, unsigned what)
{
	if ((what & TC_OWNER) && fchown(fd, n->uid, n->gid) == -1)
		return tr_fail_at(t, n->path, errno);
	if ((what & (TC_MODE | TC_OWNER)) && fchmod(fd, n->mode) == -1)
		return tr_fail_at(t, n->path, errno);
	return 0;
}

/*
 * Owner and mode of a file only through an fd that is the regular file with one link
 * that a name in its directory held when we opened it; anything else (a link or a hard
 * link to a victim swapped in since the diff) is replaced by a fresh file instead.
 */
static int file_meta(struct tree *t, struct tchange *c, const struct tnode *n)
{
	const char *base;
	int dfd = tr_open_parent(t, n->path, false, &base);
	if (dfd == -1)
		return -1;
	struct stat st;
	int fd = -1;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    st.st_nlink == 1)
		fd = tr_open_checked(dfd, base, &st, O_RDONLY);
	if (fd == -1 || fstat(fd, &st) == -1 || st.st_nlink != 1) {
		if (fd != -1)
			close(fd);
		return write_in(t, c, n, dfd, base);
	}
	int rc = fd_meta(t, fd, n, c->what);
	close(fd);
	return rc;
}

static int dir_apply(struct tree *t, const struct tnode *n, const struct tchange *c)
{
	const char *base;
	int dfd = tr_open_parent(t, n->path, true, &base);
	if (dfd == -1)
		return -1;
	unsigned what = c->what;
	if (c->kind == TC_CREATE) {
		if (mkdirat(dfd, base, n->mode) == -1 && errno != EEXIST)
			return tr_fail_at(t, n->path, errno);
		mark_parent_dirty(t, n->path);
		what = TC_MODE | (n->uid != TREE_NO_OWNER ? TC_OWNER : 0);
	}
	int fd = openat(dfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return errno == ELOOP || errno == ENOTDIR
		           ? tr_fail_why(t, n->path, ELOOP, WHY_SYMLINK)
		           : tr_fail_at(t, n->path, errno);
	int rc = fd_meta(t, fd, n, what);
	close(fd);
	return rc;
}

static int delete_entry(struct tree *t, const char *path)
{
	const char *base;
	int dfd = tr_open_parent(t, path, false, &base);
	if (dfd == -1)
		return errno == ENOENT ? 0 : -1;
	struct stat st;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : tr_fail_at(t, path, errno);
	if (S_ISDIR(st.st_mode)) /* swapped in since the diff: never removed */
		return tr_fail_at(t, path, EISDIR);
	if (unlinkat(dfd, base, 0) == -1 && errno != ENOENT)
		return tr_fail_at(t, path, errno);
	mark_parent_dirty(t, path);
	return 0;
}

static int dirty_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each directory whose entries changed, fsynced once. */
static int sync_dirs(struct tree *t)
{
	int rc = 0;
	qsort(t->dirty, t->ndirty, sizeof *t->dirty, dirty_cmp);
	for (size_t i = 0; i < t->ndirty && rc == 0; i++) {
		if (i > 0 && strcmp(t->dirty[i], t->dirty[i - 1]) == 0)
			continue;
		int dfd = tr_open_dir(t, t->dirty[i], false);
		if (dfd == -1 && errno != ENOENT) /* gone: a later change removed it */
			rc = -1;
		else if (dfd != -1 && fsync(dfd) == -1)
			rc = tr_fail_at(t, t->dirty[i], errno);
	}
	for (size_t i = 0; i < t->ndirty; i++)
		free(t->dirty[i]);
	t->ndirty = 0;
	return rc;
}

/* Rename the staged temps below an account's directory (account) or elsewhere (!account). */
static int rename_staged(struct tree *t, bool account)
{
	for (size_t k = 0; k < t->nc && t->staged > 0; k++) {
		struct tchange *c = &t->c[k];
		const char *path = t->v[c->node].path, *base;
		if (c->tmp == NULL || in_account(t, path, t->v[c->node].svc) != account)
			continue;
		int dfd = tr_open_parent(t, path, false, &base);
		if (dfd == -1 || renameat(dfd, c->tmp, dfd, base) == -1) {
			if (dfd != -1)
				tr_fail_at(t, path, errno);
			if (account && drop_service(t, c))
				continue;
			return -1;
		}
		mark_parent_dirty(t, path);
		free(c->tmp);
		c->tmp = NULL;
		t->staged--;
		c->published = true;
	}
	return 0;
}

/*
 * The batch's end: every temp fsynced, then renamed over its target (those in accounts'
 * directories first: a service whose rename fails there keeps its other files as they were),
 * then the directories.
 */
static int finish_batch(struct tree *t)
{
	if (tr_sync_temps(t) == -1 || rename_staged(t, true) == -1 ||
	    rename_staged(t, false) == -1) {
		tr_abort_batch(t);
		return -1;
	}
	return sync_dirs(t);
}

static int apply_one(struct tree *t, struct tchange *c, bool batch)
{
	const struct tnode *n = &t->v[c->node];
	if (c->kind == TC_DELETE)
		return delete_entry(t, c->path);
	switch (n->kind) {
	case TN_DIR:
		return dir_apply(t, n, c);
	case TN_FILE:
		if (c->kind == TC_CREATE || (c->what & (TC_CONTENT | TC_REPLACE | TC_RELINK)))
			return write_file(t, c, n);
		return file_meta(t, c, n);
	case TN_LINK:
		return write_link(t, c, n, batch);
	}
	return 0;
}

int tree_apply(struct tree *t, const struct tchange *cc)
{
	t->errpath[0] = '\0';
	t->errwhy = "";
	/* the caller's change, as ours: the batch keeps its temp name in it */
	size_t k = (size_t)(cc - t->c);
	if (cc < t->c || k >= t->nc) {
		errno = EINVAL;
		return -1;
	}
	struct tchange *c = &t->c[k];
	bool batch = k < t->batch_end && t->v[c->node].role != TR_ENABLE;
	if (!batch && (t->staged > 0 || t->ndirty > 0) && finish_batch(t) == -1)
		return -1; /* applied out of order: what the batch holds goes first */
	int rc = 0;
	if (service_failed(t, t->v[c->node].svc)) {
		rc = 1; /* its service's changes are dropped: none of it half done */
	} else if (apply_one(t, c, batch) == -1) {
		if (!drop_service(t, c)) {
			tr_abort_batch(t);
			return -1;
		}
		rc = 1;
	} else {
		c->published = c->tmp == NULL; /* else at the batch's end */
	}
	if (batch && k + 1 == t->batch_end && finish_batch(t) == -1)
		return -1;
	return rc;
}
