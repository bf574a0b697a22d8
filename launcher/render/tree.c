/* The desired tree of reconfigure: diff against the disk, writes from dir fds (see tree.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/alloc.h"
#include "lib/grow.h"
#include "lib/names.h"
#include "lib/readfile.h"
#include "lib/spawn.h"
#include "render/tree.h"
#include "render/redact.h"

#define TREE_MAX_COMPARE (16u * 1024u * 1024u) /* larger files on disk just differ */

#define WHY_SYMLINK " (a symlink where a directory belongs: root does not follow it)"
#define WHY_OURDIR                                                                                 \
	" (a directory where a file belongs, in a directory only root can write: move it away)"

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

static void abort_batch(struct tree *t);

static void free_changes(struct tree *t)
{
	abort_batch(t);
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

static void dirs_close(struct tree *t)
{
	for (size_t i = 0; i < TREE_DIRFDS; i++) {
		if (t->dirs[i].fd != -1)
			close(t->dirs[i].fd);
		free(t->dirs[i].path);
		t->dirs[i].fd = -1;
		t->dirs[i].path = NULL;
	}
}

void tree_free(struct tree *t)
{
	free_changes(t); /* a batch never finished: its temps are unlinked, nothing published */
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].path);
		free(t->v[i].data);
		free(t->v[i].spans);
	}
	dirs_close(t);
	if (t->aside_fd >= 0)
		close(t->aside_fd);
	for (size_t i = 0; i < t->ndirty; i++)
		free(t->dirty[i]);
	free(t->dirty);
	for (size_t i = 0; i < t->nsecrets; i++)
		free(t->secrets[i]);
	free(t->secrets);
	free(t->byname);
	free(t->scanned);
	buf_free(&t->rbuf);
	free(t->v);
	free(t->c);
	tree_init(t);
}

static int fail_at(struct tree *t, const char *path, int err)
{
	strlcpy(t->errpath, path, sizeof t->errpath);
	t->errwhy = "";
	errno = err;
	return -1;
}

static int fail_why(struct tree *t, const char *path, int err, const char *why)
{
	fail_at(t, path, err);
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
	t->secrets = xreallocarray(t->secrets, t->nsecrets + 1, sizeof *t->secrets);
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

/* ---- paths and directory fds ------------------------------------------------------------ */

/* Split an absolute path into its directory and last component. -1 (ENAMETOOLONG/EINVAL). */
static int split(const char *path, char *dir, size_t dirlen, const char **base)
{
	const char *slash = strrchr(path, '/');
	if (slash == NULL || slash[1] == '\0') {
		errno = EINVAL;
		return -1;
	}
	size_t n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= dirlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, n);
	dir[n] = '\0';
	*base = slash + 1;
	return 0;
}

static bool below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return n == 0 || (strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/'));
}

/* ---- directory fds ------------------------------------------------------------------------ */

/* The kept fd of exactly dir, or -1. */
static int dirs_get(struct tree *t, const char *dir, size_t len)
{
	struct tree_dirfd *last = &t->dirs[t->last];
	if (last->fd != -1 && last->len == len && memcmp(last->path, dir, len) == 0) {
		last->used = ++t->clock;
		return last->fd; /* the same directory again: a service's files, an env dir */
	}
	for (size_t i = 0; i < t->ndirs; i++) {
		struct tree_dirfd *d = &t->dirs[i];
		if (d->fd != -1 && d->len == len && memcmp(d->path, dir, len) == 0) {
			d->used = ++t->clock;
			t->last = i;
			return d->fd;
		}
	}
	return -1;
}

/* Keep fd as dir's, in place of the least recently used one but never of `busy`. */
static void dirs_put(struct tree *t, const char *dir, size_t len, int fd, int busy)
{
	/* ndirs >= 2: one of the first two is not busy */
	struct tree_dirfd *v = &t->dirs[busy != -1 && t->dirs[0].fd == busy];
	for (size_t i = 0; i < t->ndirs; i++) {
		struct tree_dirfd *d = &t->dirs[i];
		if (d->fd == -1) {
			v = d;
			break;
		}
		if (d->fd != busy && d->used < v->used)
			v = d;
	}
	if (v->fd != -1)
		close(v->fd);
	free(v->path);
	v->path = xstrndup(dir, len);
	v->len = len;
	v->fd = fd;
	v->used = ++t->clock;
	t->last = (size_t)(v - t->dirs);
}

/* A directory whose entries changed: fsynced once when the batch ends. */
static void mark_dirty(struct tree *t, const char *dir, size_t len)
{
	if (t->ndirty > 0 && strncmp(t->dirty[t->ndirty - 1], dir, len) == 0 &&
	    t->dirty[t->ndirty - 1][len] == '\0')
		return; /* the common case: the same directory again */
	grow(&t->dirty, &t->dirtycap, t->ndirty + 1, sizeof *t->dirty, 16);
	t->dirty[t->ndirty++] = xstrndup(dir, len);
}

static int sync_temps(struct tree *t);

/*
 * Out of descriptors (other parts of the run hold some too): close the kept directories but
 * busy, and fsync and close the temps written so far; true when worth trying again.
 */
static bool shed(struct tree *t, int busy)
{
	if (errno != EMFILE && errno != ENFILE)
		return false;
	for (size_t i = 0; i < TREE_DIRFDS; i++) {
		struct tree_dirfd *d = &t->dirs[i];
		if (d->fd != -1 && d->fd != busy) {
			close(d->fd);
			free(d->path);
			d->path = NULL;
			d->fd = -1;
		}
	}
	return sync_temps(t) == 0;
}

/* openat, once more after shed() when out of descriptors. */
static int openat_shed(struct tree *t, int dfd, const char *name, int flags, mode_t mode)
{
	int fd = openat(dfd, name, flags, mode);
	if (fd == -1 && shed(t, dfd))
		fd = openat(dfd, name, flags, mode);
	return fd;
}

/* One component below the kept fd of part[0, off): opened, or made (0755) when create. */
static int step(struct tree *t, int fd, const char *dir, size_t off, size_t end, bool create)
{
	char at[PATH_MAX]; /* dir up to this component, for errors */
	memcpy(at, dir, end);
	at[end] = '\0';
	const char *name = at + off;
	if (end - off > NAME_MAX)
		return fail_at(t, at, ENAMETOOLONG);
	const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	int nfd = openat_shed(t, fd, name, flags, 0);
	if (nfd == -1 && errno == ENOENT && create) {
		if (mkdirat(fd, name, 0755) == -1 && errno != EEXIST)
			return fail_at(t, at, errno);
		mark_dirty(t, dir, off > 1 ? off - 1 : 1);
		nfd = openat_shed(t, fd, name, flags, 0);
	}
	if (nfd == -1) {
		int e = errno;
		struct stat st;
		bool link = (e == ELOOP || e == ENOTDIR) &&
		            fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
		return link ? fail_why(t, at, ELOOP, WHY_SYMLINK) : fail_at(t, at, e);
	}
	return nfd;
}

/*
 * An fd of directory dir, reached from the anchor one component at a time,
 * never through a symlink; missing components are made (0755) when create.
 * The fd is the tree's (kept for the next call, not to be closed) and valid
 * until the next open_dir. Starts from the deepest kept ancestor.
 * Returns the fd, or -1 with errno (ENOENT: missing and !create) and t->errpath.
 */
static int open_dir(struct tree *t, const char *dir, bool create)
{
	const char *anchor = below(dir, t->anchor) ? t->anchor : "";
	size_t alen = strlen(anchor), len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len >= PATH_MAX)
		return fail_at(t, dir, ENAMETOOLONG);
	/* the deepest kept directory on the way, at a component boundary below the anchor */
	size_t off = len;
	int fd = dirs_get(t, dir, len);
	while (fd == -1 && off > alen) {
		while (off > alen && dir[off - 1] != '/')
			off--;
		while (off > alen && dir[off - 1] == '/')
			off--;
		if (off > alen)
			fd = dirs_get(t, dir, off);
	}
	if (fd == -1) {
		const char *top = alen ? anchor : "/";
		off = alen;
		if ((fd = dirs_get(t, top, strlen(top))) == -1) {
			fd = openat_shed(t, AT_FDCWD, top, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
			if (fd == -1)
				return fail_at(t, top, errno);
			dirs_put(t, top, strlen(top), fd, -1);
		}
	}
	while (off < len) {
		while (dir[off] == '/')
			off++;
		size_t end = off + strcspn(dir + off, "/");
		if (end > len)
			end = len;
		if (end == off)
			break;
		int nfd = step(t, fd, dir, off, end, create);
		if (nfd == -1)
			return -1;
		dirs_put(t, dir, end, nfd, fd);
		fd = nfd;
		off = end;
	}
	return fd;
}

/* The parent of path as an fd, and its last component. */
static int open_parent(struct tree *t, const char *path, bool create, const char **base)
{
	char dir[PATH_MAX];
	if (split(path, dir, sizeof dir, base) == -1)
		return fail_at(t, path, errno);
	return open_dir(t, dir, create);
}

/* ---- reading through a checked fd --------------------------------------------------------- */

/*
 * Open name in dfd for reading only if it still is the regular file st described
 * (O_NOFOLLOW: no link; O_NONBLOCK: a fifo swapped in cannot hang us). -1 otherwise.
 */
static int open_checked(int dfd, const char *name, const struct stat *st, int flags)
{
	int fd = openat(dfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	struct stat now;
	if (fstat(fd, &now) == -1 || !S_ISREG(now.st_mode) || now.st_dev != st->st_dev ||
	    now.st_ino != st->st_ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

/*
 * All of fd (of size bytes when opened) into the tree's read buffer (kept between files: a
 * no-op run reads every file); *too_large when it holds more than max. One read(2) asks for a
 * byte more than the size: a shorter answer is the end of a regular file, so an unchanged
 * file costs one call; a file that grew since is read on. 0 or -1.
 */
static int read_fd(struct tree *t, int fd, off_t size, size_t max, bool *too_large)
{
	buf_reset(&t->rbuf);
	*too_large = false;
	if (size >= 0 && (size_t)size < max) {
		size_t want = (size_t)size + 1;
		ssize_t n;
		do
			n = read(fd, buf_room(&t->rbuf, want), want);
		while (n == -1 && errno == EINTR);
		if (n == -1)
			return -1;
		buf_commit(&t->rbuf, (size_t)n);
		if ((size_t)n == (size_t)size)
			return 0;
	}
	size_t have = t->rbuf.len; /* at most max */
	*too_large = readfile_fd(fd, &t->rbuf, max - have) == -1;
	return *too_large && errno != EFBIG ? -1 : 0;
}

/* ---- diff --------------------------------------------------------------------------------- */

static int push(struct tree *t, enum tchange_kind kind, unsigned what, size_t node,
                const char *path, const struct stat *st)
{
	grow(&t->c, &t->ccap, t->nc + 1, sizeof *t->c, 16);
	struct tchange *c = &t->c[t->nc];
	memset(c, 0, sizeof *c);
	if (path != NULL)
		c->path = xstrdup(path);
	c->kind = kind;
	c->what = what;
	c->node = node;
	if (st != NULL) {
		c->old_mode = st->st_mode & 07777;
		c->old_type = st->st_mode & S_IFMT;
		c->old_uid = st->st_uid;
		c->old_gid = st->st_gid;
		c->old_nlink = st->st_nlink;
	}
	t->nc++;
	return 0;
}

static unsigned meta_diff(const struct tnode *n, const struct stat *st)
{
	unsigned what = 0;
	if ((st->st_mode & 07777) != n->mode)
		what |= TC_MODE;
	if ((n->uid != TREE_NO_OWNER && st->st_uid != n->uid) ||
	    (n->gid != (gid_t)TREE_NO_OWNER && st->st_gid != n->gid))
		what |= TC_OWNER;
	return what;
}

static int byname_cmp(const void *a, const void *b, void *arg)
{
	const struct tree *t = arg;
	return strcmp(t->v[*(const size_t *)a].path, t->v[*(const size_t *)b].path);
}

static int build_index(struct tree *t)
{
	free(t->byname);
	t->byname = xcalloc(t->n + 1, sizeof *t->byname);
	free(t->scanned);
	t->scanned = xcalloc(t->n + 1, sizeof *t->scanned);
	for (size_t i = 0; i < t->n; i++)
		t->byname[i] = i;
	qsort_r(t->byname, t->n, sizeof *t->byname, byname_cmp, t);
	return 0;
}

/* The node at path, or -1: a binary search of the sorted index. */
static long find_node(const struct tree *t, const char *path)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->v[t->byname[mid]].path, path);
		if (c == 0)
			return (long)t->byname[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static bool env_name(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

/* Is name in dir a temp file of ours for a file or link the tree lists in dir? That node or -1. */
static long temp_of(const struct tree *t, const char *dir, const char *name)
{
	size_t baselen;
	if (!name_temp(name, &baselen))
		return -1;
	char path[PATH_MAX];
	int n = snprintf(path, sizeof path, "%s/%.*s", strcmp(dir, "/") ? dir : "", (int)baselen,
	                 name + 1);
	if (n < 0 || (size_t)n >= sizeof path)
		return -1;
	long k = find_node(t, path);
	return k >= 0 && t->v[k].kind != TN_DIR ? k : -1;
}

/* Entry name of dir (open as dfd) that the tree does not list: delete it, or refuse. */
static int diff_entry(struct tree *t, size_t dnode, const char *dir, int dfd, const char *name)
{
	bool exclusive = t->v[dnode].kind == TN_DIR && (t->v[dnode].flags & TN_EXCLUSIVE);
	if (!exclusive && name[0] != '.')
		return 0; /* neither a temp of ours nor ours to delete */
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
		return fail_at(t, dir, ENAMETOOLONG);
	if (find_node(t, path) >= 0)
		return 0;
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : fail_at(t, path, errno);
	bool plain = S_ISREG(st.st_mode) || S_ISLNK(st.st_mode);
	long tmp = temp_of(t, dir, name);
	if (tmp >= 0 && plain) {
		if (push(t, TC_DELETE, 0, exclusive ? dnode : (size_t)tmp, path, NULL) == -1)
			return -1;
		t->c[t->nc - 1].stale_temp = true;
		return 0;
	}
	if (!exclusive)
		return 0;
	if (S_ISREG(st.st_mode) && env_name(name))
		return push(t, TC_DELETE, 0, dnode, path, NULL);
	return fail_why(t, path, ENOTEMPTY,
	                " (gitlab-ctl did not write it: the env directory must hold only env "
	                "files; move it away or choose another env_directory)");
}

/*
 * Entries of a directory that the tree does not list: strays and stale temps. Read with
 * getdents64 from the kept fd itself, rewound (no *at call depends on its offset): no second
 * open and no DIR of its own per directory.
 */
static int diff_dir_entries(struct tree *t, size_t dnode, const char *dir)
{
	if (t->missing[0] != '\0' && below(dir, t->missing))
		return 0;
	int dfd = open_dir(t, dir, false);
	if (dfd == -1)
		return errno == ENOENT ? 0 : -1;
	if (lseek(dfd, 0, SEEK_SET) == -1)
		return fail_at(t, dir, errno);
	char ents[8192] __attribute__((aligned(8)));
	for (;;) {
		ssize_t n = getdents64(dfd, ents, sizeof ents);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return fail_at(t, dir, errno);
		if (n == 0)
			return 0;
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *de = (const struct dirent64 *)(ents + off);
			off += de->d_reclen;
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
			    diff_entry(t, dnode, dir, dfd, de->d_name) == -1)
				return -1;
		}
	}
}

/* Something other than a regular file where a file belongs. */
static int diff_not_regular(struct tree *t, size_t i, int dfd, const struct stat *st)
{
	const struct tnode *n = &t->v[i];
	if (S_ISDIR(st->st_mode)) {
		/* Another account's directory: its data, moved aside. Ours: only we put it there.
		 */
		struct stat ds;
		if (fstat(dfd, &ds) == -1)
			return fail_at(t, n->path, errno);
		if (ds.st_uid == t->euid)
			return fail_why(t, n->path, EISDIR, WHY_OURDIR);
	}
	return push(t, TC_UPDATE, TC_REPLACE, i, NULL, st);
}

/* A regular file, open as fd (st: its fstat), compared with node i. Closes fd. */
static int diff_regular(struct tree *t, size_t i, int fd, const struct stat *st)
{
	const struct tnode *n = &t->v[i];
	bool too_large = false;
	int r = read_fd(t, fd, st->st_size, TREE_MAX_COMPARE, &too_large);
	size_t len = too_large ? 0 : t->rbuf.len;
	int e = errno;
	close(fd);
	if (r == -1)
		return fail_at(t, n->path, e);
	unsigned what = meta_diff(n, st);
	if (too_large || len != n->len || memcmp(buf_str(&t->rbuf), n->data, len) != 0)
		what |= TC_CONTENT;
	if (st->st_nlink != 1)
		what |= TC_RELINK; /* never chmod a file that has another name */
	if (what == 0)
		return 0;
	if (push(t, TC_UPDATE, what, i, NULL, st) == -1)
		return -1;
	if (!too_large) { /* the old bytes, for --diff */
		t->c[t->nc - 1].old = buf_take(&t->rbuf);
		t->c[t->nc - 1].old_len = len;
	}
	return 0;
}

/*
 * A file node: opened first, O_NOFOLLOW | O_NONBLOCK (a link fails, a fifo cannot block), and
 * compared through that fd when its fstat shows a regular file, the common case; anything
 * else is closed at once and looked at with fstatat, never read.
 */
static int diff_file(struct tree *t, size_t i, int dfd, const char *base)
{
	const struct tnode *n = &t->v[i];
	const int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct stat st;
	int fd = openat_shed(t, dfd, base, flags, 0);
	if (fd == -1 && errno == ENOENT)
		return push(t, TC_CREATE, 0, i, NULL, NULL);
	if (fd == -1 && (errno == EMFILE || errno == ENFILE))
		return fail_at(t, n->path, errno);
	if (fd != -1 && fstat(fd, &st) == -1) {
		int e = errno;
		close(fd);
		return fail_at(t, n->path, e);
	}
	if (fd != -1 && S_ISREG(st.st_mode))
		return diff_regular(t, i, fd, &st);
	if (fd != -1)
		close(fd);
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? push(t, TC_CREATE, 0, i, NULL, NULL)
		                       : fail_at(t, n->path, errno);
	return diff_not_regular(t, i, dfd, &st);
}

static int diff_at(struct tree *t, size_t i, int dfd, const char *base)
{
	const struct tnode *n = &t->v[i];
	struct stat st;
	if (n->kind == TN_FILE && !(n->flags & TN_IF_MISSING))
		return diff_file(t, i, dfd, base);
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno != ENOENT)
			return fail_at(t, n->path, errno);
		return push(t, TC_CREATE, 0, i, NULL, NULL);
	}
	if (n->flags & TN_IF_MISSING)
		return 0;
	switch (n->kind) {
	case TN_DIR:
		if (S_ISLNK(st.st_mode))
			return fail_why(t, n->path, ELOOP, WHY_SYMLINK);
		if (!S_ISDIR(st.st_mode))
			return fail_at(t, n->path, ENOTDIR);
		if (meta_diff(n, &st) != 0)
			return push(t, TC_UPDATE, meta_diff(n, &st), i, NULL, &st);
		return 0;
	case TN_FILE:
		return 0; /* TN_IF_MISSING, and there */
	case TN_LINK: {
		if (S_ISDIR(st.st_mode))
			return fail_at(t, n->path, EISDIR);
		if (!S_ISLNK(st.st_mode))
			return push(t, TC_UPDATE, TC_REPLACE, i, NULL, &st);
		char target[PATH_MAX];
		ssize_t r = readlinkat(dfd, base, target, sizeof target);
		if (r == -1)
			return fail_at(t, n->path, errno);
		if ((size_t)r != n->len || memcmp(target, n->data, n->len) != 0)
			return push(t, TC_UPDATE, TC_CONTENT, i, NULL, &st);
		return 0;
	}
	}
	return 0;
}

/*
 * The stale temps of a directory holding a managed file or link, looked for while its fd is
 * the one at hand (a second pass would open every directory again). Directories the tree
 * does not list, and exclusive ones (scanned whole), are left to diff_temps and diff_all.
 */
static int scan_once(struct tree *t, const char *dir)
{
	long d = find_node(t, dir);
	if (d < 0 || t->v[d].kind != TN_DIR || (t->v[d].flags & TN_EXCLUSIVE) || t->scanned[d])
		return 0;
	t->scanned[d] = true;
	return diff_dir_entries(t, (size_t)d, dir);
}

/* Nodes of one directory come in a row (an env dir): one walk for all of them. */
static int diff_node(struct tree *t, size_t i)
{
	const char *base;
	char dir[PATH_MAX];
	if (split(t->v[i].path, dir, sizeof dir, &base) == -1)
		return fail_at(t, t->v[i].path, errno);
	if (t->missing[0] != '\0' && below(dir, t->missing))
		return push(t, TC_CREATE, 0, i, NULL, NULL); /* a first run: no walk per node */
	int dfd = open_dir(t, dir, false);
	if (dfd == -1 && errno == ENOENT) {
		strlcpy(t->missing, t->errpath, sizeof t->missing);
		return push(t, TC_CREATE, 0, i, NULL, NULL);
	}
	if (dfd == -1 || diff_at(t, i, dfd, base) == -1)
		return -1;
	return t->v[i].kind == TN_DIR ? 0 : scan_once(t, dir);
}

/* Directories holding a managed file or link: where temps of killed runs may lie. */
static int diff_temps(struct tree *t)
{
	char dir[PATH_MAX], prev[PATH_MAX] = "";
	for (size_t k = 0; k < t->n; k++) {
		const struct tnode *n = &t->v[t->byname[k]];
		const char *base;
		if (n->kind == TN_DIR || split(n->path, dir, sizeof dir, &base) == -1 ||
		    strcmp(dir, prev) == 0)
			continue; /* sorted: the files of a directory come in a row */
		long d = find_node(t, dir);
		if (d >= 0 && t->v[d].kind == TN_DIR &&
		    ((t->v[d].flags & TN_EXCLUSIVE) || t->scanned[d]))
			continue; /* scanned with the exclusive directory, or by diff_node */
		strlcpy(prev, dir, sizeof prev);
		if (diff_dir_entries(t, d >= 0 ? (size_t)d : t->byname[k], dir) == -1)
			return -1;
	}
	return 0;
}

static int diff_all(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (diff_node(t, i) == -1)
			return -1;
		if (t->v[i].kind == TN_DIR && (t->v[i].flags & TN_EXCLUSIVE) &&
		    diff_dir_entries(t, i, t->v[i].path) == -1)
			return -1;
	}
	return diff_temps(t);
}

int tree_diff(struct tree *t)
{
	free_changes(t);
	if (build_index(t) == -1)
		return -1;
	t->missing[0] = '\0';
	if (diff_all(t) == -1)
		return -1;
	for (size_t k = 0; k < t->nc; k++)
		if (t->v[t->c[k].node].role != TR_ENABLE)
			t->batch_end = k + 1;
	return 0;
}

/* ---- apply -------------------------------------------------------------------------------- */

static void mark_parent_dirty(struct tree *t, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (slash != NULL)
		mark_dirty(t, path, slash == path ? 1 : (size_t)(slash - path));
}

/* Rename a finished temp entry over its target in dfd, then make the rename durable. */
static int publish(struct tree *t, int dfd, const char *tmp, const char *base, const char *path)
{
	if (renameat(dfd, tmp, dfd, base) == -1) {
		int e = errno;
		unlinkat(dfd, tmp, 0);
		return fail_at(t, path, e);
	}
	if (fsync(dfd) == -1)
		return fail_at(t, path, errno);
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
		if ((size_t)snprintf(tmp, len, ".%s" NAME_TEMP_MARK ".%s", base, sfx) >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
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
	if (t->aside[0] == '\0' || split(t->aside, dir, sizeof dir, &base) == -1)
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
	if (split(path, dir, sizeof dir, &b) == -1)
		return fail_at(t, path, errno);
	const char *owner = strrchr(dir, '/') + 1; /* the home's name: whose data it was */
	int afd = aside_fd(t);
	for (int tries = 0; tries < 100; tries++) {
		random_suffix(sfx);
		int n = afd != -1
		            ? snprintf(name, sizeof name, "%.100s.%.100s.%s", owner, base, sfx)
		            : snprintf(name, sizeof name, ".%s.moved-aside.%s", base, sfx);
		if (n < 0 || (size_t)n >= sizeof name)
			return fail_at(t, path, ENAMETOOLONG);
		if (rename_new(dfd, base, afd != -1 ? afd : dfd, name) == 0) {
			free(c->aside);
			c->aside = xasprintf("%s/%s", afd != -1 ? t->aside : dir, name);
			mark_parent_dirty(t, path);
			return 0;
		}
		if (errno == EXDEV && afd != -1)
			afd = -1; /* the home is a volume of its own: beside the file */
		else if (errno != EEXIST)
			return fail_at(t, path, errno);
	}
	return fail_at(t, path, EEXIST);
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
		long d = find_node(t, dir);
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

/*
 * Change c failed at t->errpath (errno). Below its service's account directory that fails
 * the service only: its staged temps are unlinked, its later changes skipped, and true is
 * returned. Anywhere else: false (the batch fails).
 */
static bool drop_service(struct tree *t, const struct tchange *c)
{
	int svc = t->v[c->node].svc, e = errno;
	if (!in_account(t, t->errpath[0] ? t->errpath : t->v[c->node].path, svc))
		return false; /* where it failed: a temp of root's failing under c is root's failure
		               */
	if ((size_t)svc >= t->nfails) {
		size_t cap = t->nfails;
		grow(&t->fails, &cap, (size_t)svc + 1, sizeof *t->fails, 8);
		memset(t->fails + t->nfails, 0, (cap - t->nfails) * sizeof *t->fails);
		t->nfails = cap;
	}
	if (t->fails[svc] == NULL) {
		struct tree_fail *f = xcalloc(1, sizeof *f);
		f->err = e;
		strlcpy(f->path, t->errpath[0] ? t->errpath : t->v[c->node].path, sizeof f->path);
		f->why = t->errwhy;
		t->fails[svc] = f;
	}
	for (size_t k = 0; k < t->nc && t->staged > 0; k++) {
		struct tchange *o = &t->c[k];
		if (o->tmp == NULL || t->v[o->node].svc != svc)
			continue;
		const char *base;
		int dfd = open_parent(t, t->v[o->node].path, false, &base);
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
static int sync_temps(struct tree *t)
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
		fail_at(t, t->v[c->node].path, bad);
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
static void abort_batch(struct tree *t)
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
		int dfd = open_parent(t, t->v[c->node].path, false, &base);
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
		return fail_at(t, n->path, errno);
	if (ds.st_uid != t->euid && move_aside(t, c, dfd, base, n->path) == -1)
		return -1;
	if (t->ntfd == t->ntemps && sync_temps(t) == -1)
		return -1;
	int fd = make_temp(dfd, base, tmp, sizeof tmp);
	if (fd == -1 && shed(t, dfd))
		fd = make_temp(dfd, base, tmp, sizeof tmp);
	if (fd == -1)
		return fail_at(t, n->path, errno);
	if (fill_temp(fd, n) == -1) {
		int e = errno;
		close(fd);
		unlinkat(dfd, tmp, 0);
		return fail_at(t, n->path, e);
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
	int dfd = open_parent(t, n->path, true, &base);
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
	int dfd = open_parent(t, n->path, true, &base);
	if (dfd == -1)
		return -1;
	for (int tries = 0;; tries++) {
		char sfx[7];
		random_suffix(sfx);
		if ((size_t)snprintf(tmp, sizeof tmp, ".%s" NAME_TEMP_MARK ".%s", base, sfx) >=
		    sizeof tmp)
			return fail_at(t, n->path, ENAMETOOLONG);
		if (symlinkat(n->data, dfd, tmp) == 0)
			break;
		if (errno != EEXIST || tries == 99) /* never a name an account put there */
			return fail_at(t, n->path, errno);
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
		return fail_at(t, n->path, errno);
	if ((what & (TC_MODE | TC_OWNER)) && fchmod(fd, n->mode) == -1)
		return fail_at(t, n->path, errno);
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
	int dfd = open_parent(t, n->path, false, &base);
	if (dfd == -1)
		return -1;
	struct stat st;
	int fd = -1;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    st.st_nlink == 1)
		fd = open_checked(dfd, base, &st, O_RDONLY);
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
	int dfd = open_parent(t, n->path, true, &base);
	if (dfd == -1)
		return -1;
	unsigned what = c->what;
	if (c->kind == TC_CREATE) {
		if (mkdirat(dfd, base, n->mode) == -1 && errno != EEXIST)
			return fail_at(t, n->path, errno);
		mark_parent_dirty(t, n->path);
		what = TC_MODE | (n->uid != TREE_NO_OWNER ? TC_OWNER : 0);
	}
	int fd = openat(dfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return errno == ELOOP || errno == ENOTDIR ? fail_why(t, n->path, ELOOP, WHY_SYMLINK)
		                                          : fail_at(t, n->path, errno);
	int rc = fd_meta(t, fd, n, what);
	close(fd);
	return rc;
}

static int delete_entry(struct tree *t, const char *path)
{
	const char *base;
	int dfd = open_parent(t, path, false, &base);
	if (dfd == -1)
		return errno == ENOENT ? 0 : -1;
	struct stat st;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : fail_at(t, path, errno);
	if (S_ISDIR(st.st_mode)) /* swapped in since the diff: never removed */
		return fail_at(t, path, EISDIR);
	if (unlinkat(dfd, base, 0) == -1 && errno != ENOENT)
		return fail_at(t, path, errno);
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
		int dfd = open_dir(t, t->dirty[i], false);
		if (dfd == -1 && errno != ENOENT) /* gone: a later change removed it */
			rc = -1;
		else if (dfd != -1 && fsync(dfd) == -1)
			rc = fail_at(t, t->dirty[i], errno);
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
		int dfd = open_parent(t, path, false, &base);
		if (dfd == -1 || renameat(dfd, c->tmp, dfd, base) == -1) {
			if (dfd != -1)
				fail_at(t, path, errno);
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
	if (sync_temps(t) == -1 || rename_staged(t, true) == -1 || rename_staged(t, false) == -1) {
		abort_batch(t);
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
			abort_batch(t);
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

/* ---- output ------------------------------------------------------------------------------- */

static const char *kind_name(enum tnode_kind k)
{
	return k == TN_DIR ? "directory" : k == TN_FILE ? "file" : "symlink";
}

static const char *type_name(mode_t type)
{
	switch (type) {
	case S_IFLNK:
		return "symlink";
	case S_IFIFO:
		return "fifo";
	case S_IFSOCK:
		return "socket";
	case S_IFDIR:
		return "directory";
	case S_IFCHR:
	case S_IFBLK:
		return "device";
	default:
		return "file";
	}
}

static void describe_update(const struct tree *t, const struct tchange *c, FILE *fp)
{
	const struct tnode *n = &t->v[c->node];
	if (c->what & TC_REPLACE) {
		fprintf(fp, "replace %s %s with %s (mode %04o)%s\n", type_name(c->old_type),
		        n->path, kind_name(n->kind), (unsigned)n->mode,
		        c->old_type == S_IFDIR ? " (the directory is moved aside)" : "");
		return;
	}
	fprintf(fp, "update %s %s (", kind_name(n->kind), n->path);
	const char *sep = "";
	if (c->what & TC_CONTENT) {
		if (n->kind == TN_LINK)
			fprintf(fp, "target -> %s", n->data);
		else
			fprintf(fp, "content");
		sep = ", ";
	}
	if (c->what & TC_RELINK) {
		fprintf(fp, "%s%ld hard links: republished", sep, (long)c->old_nlink);
		sep = ", ";
	}
	if (c->what & TC_MODE) {
		fprintf(fp, "%smode %04o -> %04o", sep, (unsigned)c->old_mode, (unsigned)n->mode);
		sep = ", ";
	}
	if (c->what & TC_OWNER)
		fprintf(fp, "%sowner %ld:%ld -> %ld:%ld", sep, (long)c->old_uid, (long)c->old_gid,
		        (long)n->uid, (long)n->gid);
	fprintf(fp, ")\n");
}

void tree_describe(const struct tree *t, const struct tchange *c, FILE *fp)
{
	const struct tnode *n = &t->v[c->node];

	if (c->kind == TC_DELETE) {
		fprintf(fp, "delete %s%s\n", c->stale_temp ? "stale temp file " : "", c->path);
		return;
	}
	if (c->kind == TC_CREATE) {
		if (n->kind == TN_LINK)
			fprintf(fp, "create symlink %s -> %s\n", n->path, n->data);
		else
			fprintf(fp, "create %s %s (mode %04o)\n", kind_name(n->kind), n->path,
			        (unsigned)n->mode);
		return;
	}
	describe_update(t, c, fp);
}

/* An anonymous file holding p, inherited by diff as /dev/fd/N: no path anywhere. -1 on failure. */
static int memfile(const char *p, size_t len)
{
	int fd = memfd_create("gitlab-ctl-diff", 0);
	if (fd == -1)
		return -1;
	if (fdio_write_all(fd, p, len) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Run `diff -u` on the two fds (fixed argv, no shell); its output goes to fp's descriptor. */
static void run_diff(int a, int b, const char *label, FILE *fp)
{
	char la[PATH_MAX + 8], lb[PATH_MAX + 8], fa[32], fb[32];
	snprintf(la, sizeof la, "a%s", label);
	snprintf(lb, sizeof lb, "b%s", label);
	snprintf(fa, sizeof fa, "/dev/fd/%d", a);
	snprintf(fb, sizeof fb, "/dev/fd/%d", b);
	fflush(fp);
	char *argv[] = {"diff", "-u", "--label", la, "--label", lb, fa, fb, NULL};
	const struct spawn sp = {.out = fileno(fp), .err = SPAWN_INHERIT, .search = true};
	(void)spawn_wait("diff", argv, &sp); /* 1 means "differ"; a failure shows no diff */
}

/* Does p hold a known secret value outside the spans (none: anywhere)? */
static bool holds_secret(const struct tree *t, const char *p, size_t len,
                         const struct tpl_span *spans, size_t nspans)
{
	for (size_t i = 0; p != NULL && i < t->nsecrets; i++) {
		size_t sl = strlen(t->secrets[i]);
		for (const char *at = p;
		     (at = memmem(at, len - (size_t)(at - p), t->secrets[i], sl)) != NULL; at++) {
			size_t off = (size_t)(at - p);
			bool inside = false;
			for (size_t k = 0; k < nspans && !inside; k++)
				inside =
				    off >= spans[k].off && off + sl <= spans[k].off + spans[k].len;
			if (!inside)
				return true;
		}
	}
	return false;
}

static void diff_bufs(const char *a, size_t alen, const char *b, size_t blen, const char *label,
                      FILE *fp)
{
	int fa = memfile(a, alen);
	int fb = memfile(b, blen);
	if (fa != -1 && fb != -1)
		run_diff(fa, fb, label, fp);
	if (fa != -1)
		close(fa);
	if (fb != -1)
		close(fb);
}

/* Both sides as redact.h allows: nothing of a secret, old or new, is printed. */
static void print_redacted(const struct tnode *n, const struct tchange *c, FILE *fp)
{
	struct buf a, b;
	buf_init(&a);
	buf_init(&b);
	if (c->old != NULL)
		redact_old(c->old, c->old_len, n->data, n->len, n->spans, n->nspans, &a);
	redact_new(n->data, n->len, n->spans, n->nspans, &b);
	if (c->old != NULL && a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0))
		fprintf(fp, "    (secret changed)\n"); /* only redacted bytes differ */
	else
		diff_bufs(a.p ? a.p : "", a.len, b.p ? b.p : "", b.len, n->path, fp);
	buf_free(&a);
	buf_free(&b);
}

void tree_print_diff(const struct tree *t, const struct tchange *c, FILE *fp)
{
	const struct tnode *n = &t->v[c->node];

	if (c->kind == TC_DELETE || n->kind != TN_FILE ||
	    (c->kind == TC_UPDATE && !(c->what & (TC_CONTENT | TC_REPLACE))))
		return;
	if ((n->flags & TN_SECRET) || holds_secret(t, n->data, n->len, n->spans, n->nspans)) {
		fprintf(fp, "    (%s)\n",
		        c->kind == TC_CREATE || c->old == NULL ? "content hidden: secret"
		                                               : "secret changed");
		return;
	}
	if (memchr(n->data, '\0', n->len) != NULL ||
	    (c->old != NULL && memchr(c->old, '\0', c->old_len) != NULL)) {
		fprintf(fp, "    (binary content)\n");
		return;
	}
	if (c->kind == TC_UPDATE && (c->what & TC_CONTENT) && c->old == NULL &&
	    !(c->what & TC_REPLACE)) {
		fprintf(fp, "    (old content too large to compare)\n");
		return;
	}
	if ((n->flags & TN_MAY_SECRET) || holds_secret(t, c->old, c->old_len, NULL, 0)) {
		print_redacted(n, c, fp);
		return;
	}
	/* Old side: the bytes read through the checked fd (nothing for a replaced entry). */
	diff_bufs(c->old ? c->old : "", c->old ? c->old_len : 0, n->data, n->len, n->path, fp);
}
