/* The trust walk from kept directory fds (see dirtrust.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/dirtrust.h"
#include "lib/pathsafe.h"

#define WHY_PATH    "is not a usable absolute path"
#define WHY_EXAMINE "cannot be examined"
#define WHY_LOOSE   "is writable by others, and what root would create in it does not exist yet"
#define WHY_LINK    "is a symlink below the root (root does not follow it)"
#define WHY_OWNER   "is owned by an account other than root"
#define WHY_WRITE   "is writable by group or others"

/* One step of the walk: the component ending at path[len], and what the walk knows so far. */
struct step {
	const char *path;
	size_t len;
	bool last;
	char loose[PATH_MAX]; /* the sticky directory above, writable by others, or "" */
};

void dirtrust_init(struct dirtrust *c, const char *root)
{
	memset(c, 0, sizeof *c);
	c->root = root;
	c->euid = geteuid();
	struct rlimit rl; /* one fd in eight of the soft limit: `ulimit -n 10` still runs */
	c->max = DIRTRUST_FDS;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 8 < DIRTRUST_FDS)
		c->max = rl.rlim_cur / 8 < 2 ? 2 : (size_t)(rl.rlim_cur / 8);
	for (size_t i = 0; i < DIRTRUST_FDS; i++)
		c->v[i].fd = -1;
}

static void forget(struct dirtrust_dir *d)
{
	if (d->fd != -1)
		close(d->fd);
	free(d->path);
	d->path = NULL;
	d->fd = -1;
}

void dirtrust_free(struct dirtrust *c)
{
	for (size_t i = 0; i < DIRTRUST_FDS; i++)
		forget(&c->v[i]);
}

static int refuse(const char *at, size_t len, char *bad, size_t badlen, const char **why,
                  const char *w)
{
	size_t n = len < badlen ? len : badlen - 1;
	memcpy(bad, at, n);
	bad[n] = '\0';
	*why = w;
	return -1;
}

/* Up to the root the operator chose its path is followed; below it nothing is. */
static bool follows(const struct dirtrust *c, const char *path, size_t len)
{
	char cur[PATH_MAX];
	size_t rootlen = strlen(c->root);
	if (len > rootlen)
		return false;
	memcpy(cur, path, len);
	cur[len] = '\0';
	return pathsafe_below(c->root, cur);
}

/* The kept directory that is path[0, len) exactly, or NULL. */
static struct dirtrust_dir *kept(struct dirtrust *c, const char *path, size_t len)
{
	for (size_t i = 0; i < DIRTRUST_FDS; i++) {
		struct dirtrust_dir *d = &c->v[i];
		if (d->fd != -1 && d->len == len && memcmp(d->path, path, len) == 0)
			return d;
	}
	return NULL;
}

/*
 * Is the kept d still what its path names, with the mode and owner it was judged by (one
 * lstat; stat up to the root)? Else it is forgotten and examined again.
 */
static bool still(struct dirtrust *c, struct dirtrust_dir *d)
{
	struct stat st;
	int r = follows(c, d->path, d->len) ? stat(d->path, &st) : lstat(d->path, &st);
	if (r == 0 && st.st_dev == d->dev && st.st_ino == d->ino && st.st_mode == d->mode &&
	    st.st_uid == d->uid) {
		d->used = ++c->clock;
		return true;
	}
	forget(d);
	return false;
}

static void keep(struct dirtrust *c, const char *path, size_t len, int fd, const struct stat *st,
                 bool loose)
{
	struct dirtrust_dir *v = &c->v[0];
	for (size_t i = 0; i < c->max; i++) {
		if (c->v[i].fd == -1) {
			v = &c->v[i];
			break;
		}
		if (c->v[i].used < v->used)
			v = &c->v[i];
	}
	forget(v);
	*v = (struct dirtrust_dir){.fd = fd,
	                           .path = xstrndup(path, len),
	                           .len = len,
	                           .dev = st->st_dev,
	                           .ino = st->st_ino,
	                           .mode = st->st_mode,
	                           .uid = st->st_uid,
	                           .loose = loose,
	                           .used = ++c->clock};
}

/* The verdict on one existing component: 0, or -1 with bad/why. *loose is updated. */
static int judge(const struct dirtrust *c, struct step *s, const struct stat *st, char *bad,
                 size_t badlen, const char **why)
{
	if (S_ISLNK(st->st_mode))
		return refuse(s->path, s->len, bad, badlen, why, WHY_LINK);
	if (st->st_uid != 0 && st->st_uid != c->euid)
		return refuse(s->path, s->len, bad, badlen, why, WHY_OWNER);
	s->loose[0] = '\0';
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		if (!S_ISDIR(st->st_mode) || !(st->st_mode & S_ISVTX) || s->last)
			return refuse(s->path, s->len, bad, badlen, why, WHY_WRITE);
		memcpy(s->loose, s->path, s->len); /* sticky: the next one must be ours */
		s->loose[s->len] = '\0';
	}
	return 0;
}

/* A component that is not there: root creates it, unless it would go into a loose directory. */
static int missing(struct step *s, char *bad, size_t badlen, const char **why)
{
	if (s->loose[0] == '\0')
		return 1;
	return refuse(s->loose, strlen(s->loose), bad, badlen, why, WHY_LOOSE);
}

/* openat O_PATH; out of descriptors, once more after the kept ones but dfd are closed. */
static int open_below(struct dirtrust *c, int dfd, const char *name, bool follow)
{
	const int flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
	int fd = openat(dfd, name, flags);
	if (fd != -1 || (errno != EMFILE && errno != ENFILE))
		return fd;
	for (size_t i = 0; i < DIRTRUST_FDS; i++)
		if (c->v[i].fd != dfd)
			forget(&c->v[i]);
	return openat(dfd, name, flags);
}

#define WALK_END    (-2) /* the walk ends here, trusted (the last component, or a missing one) */
#define WALK_NOTDIR (-3) /* a file where the walk must go on: the next component is refused */

/*
 * The component path[off, s->len) below dfd: examined and, when it is a directory the walk
 * goes on from, opened and kept. Its fd, WALK_END, WALK_NOTDIR, or -1 with bad/why.
 */
static int visit(struct dirtrust *c, int dfd, size_t off, struct step *s, char *bad, size_t badlen,
                 const char **why)
{
	char name[NAME_MAX + 1];
	size_t n = s->len - off;
	if (n > NAME_MAX)
		return refuse(s->path, s->len, bad, badlen, why, WHY_EXAMINE);
	memcpy(name, s->path + off, n);
	name[n] = '\0';
	bool follow = follows(c, s->path, s->len);
	struct stat st;
	int fd = -1;
	int r = s->last ? fstatat(dfd, name, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW)
	                : (fd = open_below(c, dfd, name, follow));
	if (r != -1 && fd != -1 && fstat(fd, &st) == -1) {
		close(fd);
		r = -1;
	}
	if (r == -1 && errno == ENOENT)
		return missing(s, bad, badlen, why) == 1 ? WALK_END : -1;
	if (r == -1)
		return refuse(s->path, s->len, bad, badlen, why, WHY_EXAMINE);
	if (judge(c, s, &st, bad, badlen, why) == -1 || s->last || !S_ISDIR(st.st_mode)) {
		if (fd != -1)
			close(fd);
		return *why != NULL ? -1 : s->last ? WALK_END : WALK_NOTDIR;
	}
	keep(c, s->path, s->len, fd, &st, s->loose[0] != '\0');
	return fd;
}

/* The deepest kept directory path passes through, still in place; its end, or 0 for none. */
static size_t deepest(struct dirtrust *c, const char *path, size_t n, int *fd, bool *loose)
{
	for (size_t end = n; end > 1; end--) {
		if (end != n && path[end] != '/')
			continue;
		struct dirtrust_dir *d = kept(c, path, end);
		if (d != NULL && still(c, d)) {
			*fd = d->fd;
			*loose = d->loose;
			return end;
		}
	}
	struct dirtrust_dir *d = kept(c, "/", 1);
	if (d != NULL && still(c, d)) {
		*fd = d->fd;
		*loose = d->loose;
		return 1;
	}
	return 0;
}

/* "/" itself, opened and kept: its fd, or -1 (WALK_END when path is "/"). */
static int walk_root(struct dirtrust *c, struct step *s, char *bad, size_t badlen, const char **why)
{
	struct stat st;
	s->len = 1;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1) {
		if (fd != -1)
			close(fd);
		return refuse("/", 1, bad, badlen, why, WHY_EXAMINE);
	}
	if (judge(c, s, &st, bad, badlen, why) == -1) {
		close(fd);
		return -1;
	}
	keep(c, "/", 1, fd, &st, s->loose[0] != '\0');
	return s->last ? WALK_END : fd;
}

int dirtrust_check(struct dirtrust *c, const char *path, char *bad, size_t badlen, const char **why)
{
	size_t n = strlen(path);
	struct step s = {.path = path};
	*why = NULL;
	if (path[0] != '/' || n >= PATH_MAX)
		return refuse(path, n, bad, badlen, why, WHY_PATH);
	while (n > 1 && path[n - 1] == '/')
		n--;
	int fd = -1;
	bool loose = false;
	size_t off = deepest(c, path, n, &fd, &loose);
	if (off == n) /* path itself is a kept directory: the last one may not be loose */
		return loose ? refuse(path, n, bad, badlen, why, WHY_WRITE) : 0;
	if (off == 0) {
		s.last = n == 1;
		fd = walk_root(c, &s, bad, badlen, why);
		if (fd < 0)
			return fd == WALK_END ? 0 : -1;
		off = 1;
	} else if (loose) {
		memcpy(s.loose, path, off);
		s.loose[off] = '\0';
	}
	for (;;) {
		while (off < n && path[off] == '/')
			off++;
		size_t end = off;
		while (end < n && path[end] != '/')
			end++;
		s.len = end;
		s.last = end >= n;
		int r = fd == WALK_NOTDIR ? refuse(path, end, bad, badlen, why, WHY_EXAMINE)
		                          : visit(c, fd, off, &s, bad, badlen, why);
		if (r == -1 || r == WALK_END)
			return r == -1 ? -1 : 0;
		fd = r; /* kept (closed by dirtrust_free), or WALK_NOTDIR */
		off = end;
	}
}

int dirtrust_path(const char *root, const char *path, char *bad, size_t badlen, const char **why)
{
	struct dirtrust c;
	dirtrust_init(&c, root);
	int r = dirtrust_check(&c, path, bad, badlen, why);
	dirtrust_free(&c);
	return r;
}
