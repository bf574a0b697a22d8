/* The tree writer's directory fds: each directory reached from the anchor without following a
 * symlink, kept for the next file in it (see tree.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/grow.h"
#include "render/tree.h"
#include "render/tree_int.h"

/* ---- paths and directory fds ------------------------------------------------------------ */

/* Split an absolute path into its directory and last component. -1 (ENAMETOOLONG/EINVAL). */
int tr_split(const char *path, char *dir, size_t dirlen, const char **base)
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

bool tr_below(const char *path, const char *dir)
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
	v->listed = false;
	v->used = ++t->clock;
	t->last = (size_t)(v - t->dirs);
}

/* A directory whose entries changed: fsynced once when the batch ends. */
void tr_mark_dirty(struct tree *t, const char *dir, size_t len)
{
	if (t->ndirty > 0 && strncmp(t->dirty[t->ndirty - 1], dir, len) == 0 &&
	    t->dirty[t->ndirty - 1][len] == '\0')
		return; /* the common case: the same directory again */
	grow(&t->dirty, &t->dirtycap, t->ndirty + 1, sizeof *t->dirty, 16);
	t->dirty[t->ndirty++] = xstrndup(dir, len);
}

/*
 * Out of descriptors (other parts of the run hold some too): close the kept directories but
 * busy, and fsync and close the temps written so far; true when worth trying again.
 */
bool tr_shed(struct tree *t, int busy)
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
	return tr_sync_temps(t) == 0;
}

/* openat, once more after tr_shed() when out of descriptors. */
int tr_openat_shed(struct tree *t, int dfd, const char *name, int flags, mode_t mode)
{
	int fd = openat(dfd, name, flags, mode);
	if (fd == -1 && tr_shed(t, dfd))
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
		return tr_fail_at(t, at, ENAMETOOLONG);
	const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	int nfd = tr_openat_shed(t, fd, name, flags, 0);
	if (nfd == -1 && errno == ENOENT && create) {
		if (mkdirat(fd, name, 0755) == -1 && errno != EEXIST)
			return tr_fail_at(t, at, errno);
		tr_mark_dirty(t, dir, off > 1 ? off - 1 : 1);
		nfd = tr_openat_shed(t, fd, name, flags, 0);
	}
	if (nfd == -1) {
		int e = errno;
		struct stat st;
		bool link = (e == ELOOP || e == ENOTDIR) &&
		            fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
		return link ? tr_fail_why(t, at, ELOOP, WHY_SYMLINK) : tr_fail_at(t, at, e);
	}
	return nfd;
}

/*
 * The rest of dir below fd, dir[off, len) of two components or more, opened by one openat2
 * that follows no symlink on the way (RESOLVE_NO_SYMLINKS: the walk's guarantee, without an
 * fd per directory in between). -1 when it fails for any reason (a missing directory, a link,
 * a kernel without openat2): the walk then goes one component at a time and says why.
 */
static int open_rest(int fd, const char *dir, size_t off, size_t len)
{
	while (off < len && dir[off] == '/')
		off++;
	if (off >= len || memchr(dir + off, '/', len - off) == NULL)
		return -1; /* one component: a step */
	char rest[PATH_MAX];
	memcpy(rest, dir + off, len - off);
	rest[len - off] = '\0';
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
	                       .resolve = RESOLVE_NO_SYMLINKS};
	return (int)syscall(SYS_openat2, fd, rest, &how, sizeof how);
}

/*
 * An fd of directory dir, reached from the anchor one component at a time,
 * never through a symlink; missing components are made (0755) when create.
 * The fd is the tree's (kept for the next call, not to be closed) and valid
 * until the next open_dir. Starts from the deepest kept ancestor.
 * Returns the fd, or -1 with errno (ENOENT: missing and !create) and t->errpath.
 */
int tr_open_dir(struct tree *t, const char *dir, bool create)
{
	const char *anchor = tr_below(dir, t->anchor) ? t->anchor : "";
	size_t alen = strlen(anchor), len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len >= PATH_MAX)
		return tr_fail_at(t, dir, ENAMETOOLONG);
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
			fd =
			    tr_openat_shed(t, AT_FDCWD, top, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
			if (fd == -1)
				return tr_fail_at(t, top, errno);
			dirs_put(t, top, strlen(top), fd, -1);
		}
	}
	int rest = create ? -1 : open_rest(fd, dir, off, len);
	if (rest != -1) {
		dirs_put(t, dir, len, rest, fd);
		return rest;
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
int tr_open_parent(struct tree *t, const char *path, bool create, const char **base)
{
	char dir[PATH_MAX];
	if (tr_split(path, dir, sizeof dir, base) == -1)
		return tr_fail_at(t, path, errno);
	return tr_open_dir(t, dir, create);
}

/* ---- reading through a checked fd --------------------------------------------------------- */

/*
 * Open name in dfd for reading only if it still is the regular file st described
 * (O_NOFOLLOW: no link; O_NONBLOCK: a fifo swapped in cannot hang us). -1 otherwise.
 */
int tr_open_checked(int dfd, const char *name, const struct stat *st, int flags)
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

void tr_dirs_close(struct tree *t)
{
	for (size_t i = 0; i < TREE_DIRFDS; i++) {
		if (t->dirs[i].fd != -1)
			close(t->dirs[i].fd);
		free(t->dirs[i].path);
		t->dirs[i].fd = -1;
		t->dirs[i].path = NULL;
	}
}
