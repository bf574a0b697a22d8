/* tree_diff: the desired tree compared with the disk (see tree.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "lib/ascii.h"
#include "lib/fdio.h"
#include "lib/pathjoin.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/grow.h"
#include "lib/names.h"
#include "lib/readfile.h"
#include "render/tree.h"
#include "render/tree_int.h"

#define TREE_MAX_COMPARE (16u * 1024u * 1024u) /* larger files on disk just differ */
#define WHY_OURDIR                                                                                 \
	" (a directory where a file belongs, in a directory only root can write: move it away)"

/*
 * All of fd (of size bytes when opened) into the tree's read buffer (kept between files: a
 * no-op run reads every file); *too_large when it holds more than max. One read(2) asks for a
 * byte more than the size: a shorter answer is the end of a regular file, so an unchanged
 * file costs one call (an empty one none); a file that grew since is read on. 0 or -1.
 */
static int read_fd(struct tree *t, int fd, off_t size, size_t max, bool *too_large)
{
	buf_reset(&t->rbuf);
	*too_large = false;
	if (size == 0)
		return 0; /* empty when opened: a write since is the next run's to see */
	if (size >= 0 && (size_t)size < max) {
		size_t want = (size_t)size + 1;
		ssize_t n = fdio_read(fd, buf_room(&t->rbuf, want), want);
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
long tr_find_node(const struct tree *t, const char *path)
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
	if (!(ascii_alpha(*s) || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!(ascii_alnum(*s) || *s == '_'))
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
	if (path_fmt(path, sizeof path, "%s/%.*s", strcmp(dir, "/") ? dir : "", (int)baselen,
	             name + 1) == -1)
		return -1;
	long k = tr_find_node(t, path);
	return k >= 0 && t->v[k].kind != TN_DIR ? k : -1;
}

/* Entry name of dir (open as dfd) that the tree does not list: delete it, or refuse. */
static int diff_entry(struct tree *t, size_t dnode, const char *dir, int dfd, const char *name)
{
	bool exclusive = t->v[dnode].kind == TN_DIR && (t->v[dnode].flags & TN_EXCLUSIVE);
	if (!exclusive && name[0] != '.')
		return 0; /* neither a temp of ours nor ours to delete */
	char path[PATH_MAX];
	if (path_join(path, sizeof path, dir, name) == -1)
		return tr_fail_at(t, dir, ENAMETOOLONG);
	if (tr_find_node(t, path) >= 0)
		return 0;
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : tr_fail_at(t, path, errno);
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
	return tr_fail_why(t, path, ENOTEMPTY,
	                   " (gitlab-ctl did not write it: the env directory must hold only env "
	                   "files; move it away or choose another env_directory)");
}

/*
 * Entries of a directory that the tree does not list: strays and stale temps. Read with
 * getdents64 from the kept fd itself, rewound when listed before (no *at call depends on its
 * offset): no second open and no DIR of its own per directory.
 */
static int diff_dir_entries(struct tree *t, size_t dnode, const char *dir)
{
	if (t->missing[0] != '\0' && tr_below(dir, t->missing))
		return 0;
	int dfd = tr_open_dir(t, dir, false);
	if (dfd == -1)
		return errno == ENOENT ? 0 : -1;
	struct tree_dirfd *kept = &t->dirs[t->last]; /* tr_open_dir's fd is the last one found */
	if ((kept->fd != dfd || kept->listed) && lseek(dfd, 0, SEEK_SET) == -1)
		return tr_fail_at(t, dir, errno);
	kept->listed = kept->fd == dfd;
	char ents[8192] __attribute__((aligned(8)));
	for (;;) {
		ssize_t n = getdents64(dfd, ents, sizeof ents);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return tr_fail_at(t, dir, errno);
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
			return tr_fail_at(t, n->path, errno);
		if (ds.st_uid == t->euid)
			return tr_fail_why(t, n->path, EISDIR, WHY_OURDIR);
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
		return tr_fail_at(t, n->path, e);
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
	int fd = tr_openat_shed(t, dfd, base, flags, 0);
	if (fd == -1 && errno == ENOENT)
		return push(t, TC_CREATE, 0, i, NULL, NULL);
	if (fd == -1 && (errno == EMFILE || errno == ENFILE))
		return tr_fail_at(t, n->path, errno);
	if (fd != -1 && fstat(fd, &st) == -1) {
		int e = errno;
		close(fd);
		return tr_fail_at(t, n->path, e);
	}
	if (fd != -1 && S_ISREG(st.st_mode))
		return diff_regular(t, i, fd, &st);
	if (fd != -1)
		close(fd);
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? push(t, TC_CREATE, 0, i, NULL, NULL)
		                       : tr_fail_at(t, n->path, errno);
	return diff_not_regular(t, i, dfd, &st);
}

/*
 * A link that already points where node n says: one readlinkat (it fails on anything but a
 * link), no fstatat. A link's mode and owner are not compared anyway.
 */
static bool link_unchanged(const struct tnode *n, int dfd, const char *base)
{
	char target[PATH_MAX];
	ssize_t r = readlinkat(dfd, base, target, sizeof target);
	return r >= 0 && (size_t)r == n->len && memcmp(target, n->data, n->len) == 0;
}

static int diff_at(struct tree *t, size_t i, int dfd, const char *base)
{
	const struct tnode *n = &t->v[i];
	struct stat st;
	if (n->kind == TN_FILE && !(n->flags & TN_IF_MISSING))
		return diff_file(t, i, dfd, base);
	if (n->kind == TN_LINK && !(n->flags & TN_IF_MISSING) && link_unchanged(n, dfd, base))
		return 0;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno != ENOENT)
			return tr_fail_at(t, n->path, errno);
		return push(t, TC_CREATE, 0, i, NULL, NULL);
	}
	if (n->flags & TN_IF_MISSING)
		return 0;
	switch (n->kind) {
	case TN_DIR:
		if (S_ISLNK(st.st_mode))
			return tr_fail_why(t, n->path, ELOOP, WHY_SYMLINK);
		if (!S_ISDIR(st.st_mode))
			return tr_fail_at(t, n->path, ENOTDIR);
		if (meta_diff(n, &st) != 0)
			return push(t, TC_UPDATE, meta_diff(n, &st), i, NULL, &st);
		return 0;
	case TN_FILE:
		return 0; /* TN_IF_MISSING, and there */
	case TN_LINK: {
		if (S_ISDIR(st.st_mode))
			return tr_fail_at(t, n->path, EISDIR);
		if (!S_ISLNK(st.st_mode))
			return push(t, TC_UPDATE, TC_REPLACE, i, NULL, &st);
		char target[PATH_MAX];
		ssize_t r = readlinkat(dfd, base, target, sizeof target);
		if (r == -1)
			return tr_fail_at(t, n->path, errno);
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
	long d = tr_find_node(t, dir);
	if (d < 0 || t->v[d].kind != TN_DIR || (t->v[d].flags & TN_EXCLUSIVE) || t->scanned[d])
		return 0;
	t->scanned[d] = true;
	return diff_dir_entries(t, (size_t)d, dir);
}

/*
 * A directory node the next node lies in (its files follow it): opened itself, as their walk
 * would, and judged by fstat of that fd, never its parent opened for an fstatat. 1 when
 * judged; 0 when it could not be opened (missing, a link, not a directory...): diff_at then
 * looks at it from its parent and says why.
 */
static int diff_dir_open(struct tree *t, size_t i)
{
	const struct tnode *n = &t->v[i];
	struct stat st;
	if (n->kind != TN_DIR || (n->flags & TN_IF_MISSING) || i + 1 >= t->n ||
	    !tr_below(t->v[i + 1].path, n->path) || strcmp(t->v[i + 1].path, n->path) == 0)
		return 0;
	int fd = tr_open_dir(t, n->path, false);
	if (fd == -1)
		return 0;
	if (fstat(fd, &st) == -1)
		return tr_fail_at(t, n->path, errno);
	unsigned what = meta_diff(n, &st);
	return what != 0 && push(t, TC_UPDATE, what, i, NULL, &st) == -1 ? -1 : 1;
}

/* Nodes of one directory come in a row (an env dir): one walk for all of them. */
static int diff_node(struct tree *t, size_t i)
{
	const char *base;
	char dir[PATH_MAX];
	if (tr_split(t->v[i].path, dir, sizeof dir, &base) == -1)
		return tr_fail_at(t, t->v[i].path, errno);
	if (t->missing[0] != '\0' && tr_below(dir, t->missing))
		return push(t, TC_CREATE, 0, i, NULL, NULL); /* a first run: no walk per node */
	int opened = diff_dir_open(t, i);
	if (opened != 0)
		return opened == 1 ? 0 : -1;
	int dfd = tr_open_dir(t, dir, false);
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
		if (n->kind == TN_DIR || tr_split(n->path, dir, sizeof dir, &base) == -1 ||
		    strcmp(dir, prev) == 0)
			continue; /* sorted: the files of a directory come in a row */
		long d = tr_find_node(t, dir);
		if (d >= 0 && t->v[d].kind == TN_DIR &&
		    ((t->v[d].flags & TN_EXCLUSIVE) || t->scanned[d]))
			continue; /* scanned with the exclusive directory, or by diff_node */
		strlcpy(prev, dir, sizeof prev);
		if (diff_dir_entries(t, d >= 0 ? (size_t)d : t->byname[k], dir) == -1)
			return -1;
	}
	return 0;
}

/*
 * What cannot be compared in an account's directory (a link, fifo or file where its
 * directory belongs): that service's failure, the others' changes go on.
 */
static int diff_failed(struct tree *t, size_t i)
{
	return tr_fail_service(t, t->v[i].svc, t->errpath[0] ? t->errpath : t->v[i].path) ? 0 : -1;
}

static int diff_all(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		t->errpath[0] = '\0';
		t->errwhy = "";
		if (diff_node(t, i) == -1 && diff_failed(t, i) == -1)
			return -1;
		if (t->v[i].kind == TN_DIR && (t->v[i].flags & TN_EXCLUSIVE) &&
		    diff_dir_entries(t, i, t->v[i].path) == -1 && diff_failed(t, i) == -1)
			return -1;
	}
	return diff_temps(t);
}

int tree_diff(struct tree *t)
{
	tr_free_changes(t);
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
