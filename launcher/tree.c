/* The desired tree of reconfigure: diff against the disk, atomic writes (see tree.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grow.h"
#include "spawn.h"
#include "tree.h"

#define TREE_MAX_COMPARE (16u * 1024u * 1024u) /* larger files on disk just differ */

void tree_init(struct tree *t)
{
	memset(t, 0, sizeof *t);
}

void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].path);
		free(t->v[i].data);
	}
	for (size_t i = 0; i < t->nc; i++)
		free(t->c[i].path);
	free(t->v);
	free(t->c);
	tree_init(t);
}

static int fail_at(struct tree *t, const char *path, int err)
{
	strlcpy(t->errpath, path, sizeof t->errpath);
	errno = err;
	return -1;
}

static int add(struct tree *t, enum tnode_kind kind, const char *path, const char *data, size_t len,
               mode_t mode, uid_t uid, gid_t gid, int svc, enum tnode_role role, unsigned flags)
{
	if (grow(&t->v, &t->cap, t->n + 1, sizeof *t->v, 32) == -1)
		return -1;
	struct tnode *n = &t->v[t->n];
	memset(n, 0, sizeof *n);
	n->path = strdup(path);
	n->data = malloc(len + 1);
	if (n->path == NULL || n->data == NULL) {
		free(n->path);
		free(n->data);
		return -1;
	}
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

static int push(struct tree *t, enum tchange_kind kind, unsigned what, size_t node,
                const char *path, const struct stat *st)
{
	if (grow(&t->c, &t->ccap, t->nc + 1, sizeof *t->c, 16) == -1)
		return -1;
	struct tchange *c = &t->c[t->nc];
	memset(c, 0, sizeof *c);
	if (path != NULL && (c->path = strdup(path)) == NULL)
		return -1;
	c->kind = kind;
	c->what = what;
	c->node = node;
	if (st != NULL) {
		c->old_mode = st->st_mode & 07777;
		c->old_uid = st->st_uid;
		c->old_gid = st->st_gid;
	}
	t->nc++;
	return 0;
}

/* Does the regular file at path (size already known to match) hold exactly data? */
static int same_content(const char *path, const char *data, size_t len, bool *same)
{
	/* O_NONBLOCK: a fifo swapped in since the lstat must not hang reconfigure. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd == -1)
		return -1;
	char buf[8192];
	size_t off = 0;
	*same = true;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r == -1) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		if (off + (size_t)r > len || memcmp(buf, data + off, (size_t)r) != 0) {
			*same = false;
			break;
		}
		off += (size_t)r;
	}
	close(fd);
	if (off != len)
		*same = false;
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

static bool listed(const struct tree *t, const char *path)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].path, path) == 0)
			return true;
	return false;
}

/* Entries of an exclusive directory that the tree does not list are to be deleted. */
static int diff_strays(struct tree *t, size_t i)
{
	DIR *dir = opendir(t->v[i].path);
	if (dir == NULL)
		return errno == ENOENT ? 0 : fail_at(t, t->v[i].path, errno);
	struct dirent *de;
	char path[PATH_MAX];
	int rc = 0;
	errno = 0;
	while ((de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", t->v[i].path, de->d_name) >=
		    sizeof path) {
			rc = fail_at(t, t->v[i].path, ENAMETOOLONG);
			break;
		}
		if (!listed(t, path) && push(t, TC_DELETE, 0, i, path, NULL) == -1) {
			rc = -1;
			break;
		}
		errno = 0;
	}
	if (rc == 0 && errno != 0)
		rc = fail_at(t, t->v[i].path, errno);
	closedir(dir);
	return rc;
}

static int diff_node(struct tree *t, size_t i)
{
	const struct tnode *n = &t->v[i];
	struct stat st;

	if (lstat(n->path, &st) == -1) {
		if (errno != ENOENT)
			return fail_at(t, n->path, errno);
		return push(t, TC_CREATE, 0, i, NULL, NULL);
	}
	if (n->flags & TN_IF_MISSING)
		return 0;
	unsigned what = 0;
	switch (n->kind) {
	case TN_DIR:
		if (!S_ISDIR(st.st_mode))
			return fail_at(t, n->path, ENOTDIR);
		what = meta_diff(n, &st);
		break;
	case TN_FILE: {
		if (!S_ISREG(st.st_mode))
			return fail_at(t, n->path, S_ISDIR(st.st_mode) ? EISDIR : EEXIST);
		bool same = false;
		if ((size_t)st.st_size == n->len && n->len <= TREE_MAX_COMPARE &&
		    same_content(n->path, n->data, n->len, &same) == -1)
			return fail_at(t, n->path, errno);
		what = (same ? 0 : TC_CONTENT) | meta_diff(n, &st);
		break;
	}
	case TN_LINK: {
		if (!S_ISLNK(st.st_mode))
			return fail_at(t, n->path, EEXIST);
		char target[PATH_MAX];
		ssize_t r = readlink(n->path, target, sizeof target);
		if (r == -1)
			return fail_at(t, n->path, errno);
		if ((size_t)r != n->len || memcmp(target, n->data, n->len) != 0)
			what = TC_CONTENT;
		break;
	}
	}
	if (what != 0 && push(t, TC_UPDATE, what, i, NULL, &st) == -1)
		return -1;
	return 0;
}

int tree_diff(struct tree *t)
{
	for (size_t i = 0; i < t->nc; i++)
		free(t->c[i].path);
	t->nc = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (diff_node(t, i) == -1)
			return -1;
		if (t->v[i].kind == TN_DIR && (t->v[i].flags & TN_EXCLUSIVE) &&
		    diff_strays(t, i) == -1)
			return -1;
	}
	return 0;
}

int tree_mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	if (strlcpy(buf, path, sizeof buf) >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* From the second byte of an absolute path; "" fails (ENOENT) without reading past it. */
	for (char *p = buf + (buf[0] == '/');; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(buf, mode) == -1 && errno != EEXIST)
			return -1;
		*p = saved;
		if (saved == '\0')
			break;
	}
	return 0;
}

/* The directory part of path, into dir. */
static void dirname_of(const char *path, char *dir, size_t len)
{
	strlcpy(dir, path, len);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	int rc = fsync(fd);
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Rename a finished temp entry over its target, then make the rename durable. */
static int publish(struct tree *t, const char *tmp, const char *path, const char *dir)
{
	if (rename(tmp, path) == -1) {
		int e = errno;
		unlink(tmp);
		return fail_at(t, path, e);
	}
	if (fsync_dir(dir) == -1)
		return fail_at(t, dir, errno);
	return 0;
}

/*
 * Temp file in the target's directory, named with a leading dot so that
 * envdir readers and runsvdir skip it; content, owner and mode are set
 * before the rename makes it visible.
 */
static int write_file(struct tree *t, const struct tnode *n)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	dirname_of(n->path, dir, sizeof dir);
	const char *base = strrchr(n->path, '/');
	base = base ? base + 1 : n->path;
	if ((size_t)snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, base) >= sizeof tmp)
		return fail_at(t, n->path, ENAMETOOLONG);
	if (tree_mkdirs(dir, 0755) == -1)
		return fail_at(t, dir, errno);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd == -1)
		return fail_at(t, n->path, errno);
	if (write_all(fd, n->data, n->len) == -1 ||
	    ((n->uid != TREE_NO_OWNER || n->gid != (gid_t)TREE_NO_OWNER) &&
	     fchown(fd, n->uid, n->gid) == -1) ||
	    fchmod(fd, n->mode) == -1 || fsync(fd) == -1) {
		int e = errno;
		close(fd);
		unlink(tmp);
		return fail_at(t, n->path, e);
	}
	if (close(fd) == -1) {
		int e = errno;
		unlink(tmp);
		return fail_at(t, n->path, e);
	}
	return publish(t, tmp, n->path, dir);
}

/* A new link under a temporary name renamed over the old one: never a moment without it. */
static int write_link(struct tree *t, const struct tnode *n)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	dirname_of(n->path, dir, sizeof dir);
	if (tree_mkdirs(dir, 0755) == -1)
		return fail_at(t, dir, errno);
	const char *base = strrchr(n->path, '/');
	base = base ? base + 1 : n->path;
	if ((size_t)snprintf(tmp, sizeof tmp, "%s/.%s.%ld", dir, base, (long)getpid()) >=
	    sizeof tmp)
		return fail_at(t, n->path, ENAMETOOLONG);
	unlink(tmp);
	if (symlink(n->data, tmp) == -1)
		return fail_at(t, n->path, errno);
	return publish(t, tmp, n->path, dir);
}

/*
 * Never through a symlink: a home or log directory belongs to the service
 * user, who could swap a file for a link to /usr/bin/sudo between our diff
 * and this chmod. (glibc refuses AT_SYMLINK_NOFOLLOW on a link: EOPNOTSUPP.)
 */
static int set_meta(struct tree *t, const struct tnode *n, unsigned what)
{
	if ((what & TC_OWNER) && lchown(n->path, n->uid, n->gid) == -1)
		return fail_at(t, n->path, errno);
	/* chown may clear set-id bits: the mode goes second. */
	if ((what & (TC_MODE | TC_OWNER)) &&
	    fchmodat(AT_FDCWD, n->path, n->mode, AT_SYMLINK_NOFOLLOW) == -1)
		return fail_at(t, n->path, errno == EOPNOTSUPP ? ELOOP : errno);
	return 0;
}

int tree_apply(struct tree *t, const struct tchange *c)
{
	const struct tnode *n = &t->v[c->node];

	if (c->kind == TC_DELETE) {
		struct stat st;
		if (lstat(c->path, &st) == -1)
			return errno == ENOENT ? 0 : fail_at(t, c->path, errno);
		if ((S_ISDIR(st.st_mode) ? rmdir(c->path) : unlink(c->path)) == -1)
			return fail_at(t, c->path, errno);
		return 0;
	}
	switch (n->kind) {
	case TN_DIR:
		if (c->kind == TC_CREATE) {
			char dir[PATH_MAX];
			dirname_of(n->path, dir, sizeof dir);
			if (tree_mkdirs(dir, 0755) == -1)
				return fail_at(t, dir, errno);
			if (mkdir(n->path, n->mode) == -1 && errno != EEXIST)
				return fail_at(t, n->path, errno);
			return set_meta(t, n, TC_MODE | (n->uid != TREE_NO_OWNER ? TC_OWNER : 0));
		}
		return set_meta(t, n, c->what);
	case TN_FILE:
		if (c->kind == TC_CREATE || (c->what & TC_CONTENT))
			return write_file(t, n);
		return set_meta(t, n, c->what);
	case TN_LINK:
		return write_link(t, n);
	}
	return 0;
}

static const char *kind_name(enum tnode_kind k)
{
	return k == TN_DIR ? "directory" : k == TN_FILE ? "file" : "symlink";
}

void tree_describe(const struct tree *t, const struct tchange *c, FILE *fp)
{
	const struct tnode *n = &t->v[c->node];

	if (c->kind == TC_DELETE) {
		fprintf(fp, "delete %s\n", c->path);
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
	fprintf(fp, "update %s %s (", kind_name(n->kind), n->path);
	const char *sep = "";
	if (c->what & TC_CONTENT) {
		if (n->kind == TN_LINK)
			fprintf(fp, "target -> %s", n->data);
		else
			fprintf(fp, "content");
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

/* Run `diff -u` on two files (fixed argv, no shell); its output goes to fp's descriptor. */
static void run_diff(const char *old, const char *new, const char *label, FILE *fp)
{
	char la[PATH_MAX + 8], lb[PATH_MAX + 8];
	snprintf(la, sizeof la, "a%s", label);
	snprintf(lb, sizeof lb, "b%s", label);
	fflush(fp);
	char *argv[] = {"diff", "-u", "--label", la, "--label", lb, (char *)old, (char *)new, NULL};
	const struct spawn sp = {.out = fileno(fp), .err = SPAWN_INHERIT, .search = true};
	(void)spawn_wait("diff", argv, &sp); /* 1 means "differ"; a failure shows no diff */
}

void tree_print_diff(const struct tree *t, const struct tchange *c, FILE *fp)
{
	const struct tnode *n = &t->v[c->node];

	if (c->kind == TC_DELETE || n->kind != TN_FILE ||
	    (c->kind == TC_UPDATE && !(c->what & TC_CONTENT)))
		return;
	if (n->flags & TN_SECRET) {
		fprintf(fp, "    (content hidden: secret)\n");
		return;
	}
	if (memchr(n->data, '\0', n->len) != NULL) {
		fprintf(fp, "    (binary content)\n");
		return;
	}
	/*
	 * The new content goes to an unlinked temp file that diff reads as
	 * /dev/fd/N (inherited: no O_CLOEXEC), so nothing is left in /tmp even
	 * when we die mid-diff, e.g. of SIGPIPE under `reconfigure --diff | head`.
	 */
	char tmp[] = "/tmp/gitlab-ctl-diff.XXXXXX", fdpath[32];
	int fd = mkstemp(tmp);
	if (fd == -1)
		return;
	unlink(tmp);
	snprintf(fdpath, sizeof fdpath, "/dev/fd/%d", fd);
	if (write_all(fd, n->data, n->len) == 0)
		run_diff(c->kind == TC_CREATE ? "/dev/null" : n->path, fdpath, n->path, fp);
	close(fd);
}
