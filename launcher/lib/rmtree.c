/* Link-safe removal without recursion or a depth limit (see rmtree.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/diag.h"
#include "lib/grow.h"
#include "lib/rmtree.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* A directory on the way down: what it is, and the entries left to remove. */
struct frame {
	char *name; /* in the directory above */
	dev_t dev;
	ino_t ino;
	char **names; /* read once, when entered: unlinking while readdir walks may skip entries */
	size_t n, next;
};

struct rm {
	FILE *warn;      /* where problems are printed as they happen, or */
	struct diags *d; /* where they are recorded */
	int failed;
	dev_t dev;          /* the tree's file system */
	int top;            /* the tree's parent, held open from the start */
	const char *parent; /* its path, for messages */
	struct frame *f;    /* the tree's directories from its top down to the current one */
	size_t depth, cap;
};

/* The path of the directory at depth (the parent, then frames 0..depth-1), for messages. */
static void path_of(const struct rm *r, size_t depth, char *out, size_t len)
{
	strlcpy(out, r->parent, len);
	for (size_t k = 0; k < depth; k++) {
		strlcat(out, "/", len);
		if (strlcat(out, r->f[k].name, len) >= len) {
			strlcpy(out + len - 4, "...",
			        4); /* deeper than PATH_MAX: the message is cut */
			return;
		}
	}
}

/* A problem, recorded in r->d or printed on r->warn. */
__attribute__((format(printf, 3, 4))) static void say(const struct rm *r, enum diag_sev sev,
                                                      const char *fmt, ...)
{
	char msg[2 * PATH_MAX + 128];
	va_list ap;
	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof msg, fmt, ap) < 0) /* a cut message still names the path */
		msg[0] = '\0';
	va_end(ap);
	if (r->d != NULL)
		diag_add(r->d, sev, "%s", msg);
	else if (r->warn != NULL) /* rmtree_diags(path, NULL): counted in the result only */
		fprintf(r->warn, "gitlab-ctl: %s\n", msg);
}

/* name in the directory at depth could not be removed. */
static void complain(struct rm *r, size_t depth, const char *name, const char *why)
{
	char dir[PATH_MAX];
	path_of(r, depth, dir, sizeof dir);
	say(r, DIAG_ERR, "cannot remove %s/%s: %s", dir, name, why);
	r->failed = 1;
}

static void pop(struct rm *r)
{
	struct frame *f = &r->f[--r->depth];
	strv_free(f->names, f->n);
	free(f->name);
}

/* The entry names of the directory open as fd, through a second fd of its own. */
static int read_names(int fd, struct frame *f)
{
	size_t cap = 0;
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd == -1 ? NULL : fdopendir(dfd);
	if (d == NULL) {
		if (dfd != -1)
			close(dfd);
		return -1;
	}
	const struct dirent *de;
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		grow(&f->names, &cap, f->n + 1, sizeof *f->names, 16);
		f->names[f->n++] = xstrdup(de->d_name);
	}
	int e = errno;
	closedir(d);
	errno = e;
	return e == 0 ? 0 : -1;
}

/*
 * Open the directory name in dfd (never through a link: O_NOFOLLOW) as the next frame, with its
 * entries read. Its fd, or -1 after saying why (a mount point is left as it is).
 */
static int enter(struct rm *r, int dfd, const char *name)
{
	int fd = openat(dfd, name, DIR_FLAGS);
	struct stat st;
	if (fd == -1 || fstat(fd, &st) == -1) {
		complain(r, r->depth, name, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (r->depth == 0)
		r->dev = st.st_dev; /* the tree may itself be a mount point: emptied, kept */
	if (st.st_dev != r->dev) {
		close(fd);
		complain(r, r->depth, name, "on another file system (a mount point): left as is");
		return -1;
	}
	grow(&r->f, &r->cap, r->depth + 1, sizeof *r->f, 16);
	struct frame *f = &r->f[r->depth++];
	*f = (struct frame){.name = xstrdup(name), .dev = st.st_dev, .ino = st.st_ino};
	if (read_names(fd, f) == -1)
		complain(r, r->depth - 1, name,
		         strerror(errno)); /* what was read is still removed */
	return fd;
}

static bool is(int fd, const struct frame *f)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
}

/*
 * The parent of the current directory, which must still be frame depth-2: through "..", else
 * (the account moved the current one) again from the top by name, each step checked.
 */
static int open_up(const struct rm *r, int fd)
{
	const struct frame *want = &r->f[r->depth - 2];
	int up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (up != -1 && is(up, want))
		return up;
	if (up != -1)
		close(up);
	up = r->top;
	for (size_t k = 0; k + 1 < r->depth; k++) {
		int next = openat(up, r->f[k].name, DIR_FLAGS);
		if (up != r->top)
			close(up);
		if (next == -1)
			return -1;
		if (!is(next, &r->f[k])) {
			close(next);
			return -1;
		}
		up = next;
	}
	return up;
}

/*
 * The current directory is done: remove it from its parent if that name still is the
 * directory we emptied, and continue in the parent. The parent's fd, or -1 at the top (or
 * when the way up is lost: an account moved the directories; said).
 */
static int leave(struct rm *r, int fd)
{
	const struct frame *cur = &r->f[r->depth - 1];
	int up = r->depth == 1 ? r->top : open_up(r, fd);
	close(fd);
	if (up == -1) {
		complain(r, r->depth - 1, cur->name, "moved while being removed: left");
		while (r->depth > 0)
			pop(r);
		return -1;
	}
	struct stat st;
	if (fstatat(up, cur->name, &st, AT_SYMLINK_NOFOLLOW) == -1 || st.st_dev != cur->dev ||
	    st.st_ino != cur->ino)
		complain(r, r->depth - 1, cur->name, "moved while being removed: left");
	else if (unlinkat(up, cur->name, AT_REMOVEDIR) == -1 && errno != ENOENT) {
		if (errno == EBUSY &&
		    r->depth == 1) /* the mount point of the whole tree: emptied */
			say(r, DIAG_WARN, "%s/%s is a mount point: emptied, kept", r->parent,
			    cur->name);
		else
			complain(r, r->depth - 1, cur->name, strerror(errno));
	}
	pop(r);
	return r->depth == 0 ? -1 : up;
}

/*
 * Depth first, one directory fd at a time (plus the parent held by the caller): the way down
 * is a stack of names with their dev/ino, the way up is "..", checked against it.
 */
static void walk(struct rm *r, const char *name)
{
	int fd = enter(r, r->top, name);
	while (fd != -1) {
		struct frame *cur = &r->f[r->depth - 1];
		if (cur->next == cur->n) {
			fd = leave(r, fd);
			continue;
		}
		const char *e = cur->names[cur->next++];
		if (unlinkat(fd, e, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			complain(r, r->depth, e, strerror(errno));
			continue;
		}
		/* A link swapped in after unlinkat failed makes O_NOFOLLOW fail: nothing is
		 * followed. */
		int sub = enter(r, fd, e);
		if (sub != -1) {
			close(fd);
			fd = sub;
		}
	}
}

static int remove_tree(const char *path, struct rm *r)
{
	char parent[PATH_MAX];
	if (strlcpy(parent, path, sizeof parent) >= sizeof parent || path[0] != '/') {
		say(r, DIAG_ERR, "cannot remove %s: not an absolute path", path);
		return -1;
	}
	char *slash = strrchr(parent, '/');
	const char *name = path + (slash - parent) + 1;
	if (*name == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		say(r, DIAG_ERR, "refusing to remove %s", path);
		return -1;
	}
	*slash = '\0';
	/* The parent is one of gitlab-ctl's own root-owned directories (or the --root). */
	int dfd = open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd == -1) {
		if (errno == ENOENT)
			return 0;
		say(r, DIAG_ERR, "cannot open %s: %s", parent, strerror(errno));
		return -1;
	}
	r->top = dfd;
	r->parent = parent;
	if (unlinkat(dfd, name, 0) == -1 && errno != ENOENT) {
		if (errno == EISDIR || errno == EPERM)
			walk(r, name);
		else
			complain(r, 0, name, strerror(errno));
	}
	free(r->f);
	r->parent = NULL; /* parent goes with this frame */
	close(dfd);
	return r->failed ? -1 : 0;
}

/* Only tests call it: one (test_rmtree_mounts) acts as each problem is printed. */
// cppcheck-suppress unusedFunction
int rmtree(const char *path, FILE *warn)
{
	struct rm r = {.warn = warn ? warn : stderr};
	return remove_tree(path, &r);
}

int rmtree_diags(const char *path, struct diags *d)
{
	struct rm r = {.d = d};
	return remove_tree(path, &r);
}
