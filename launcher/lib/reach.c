/* Path walk with a service account's permissions. */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/reach.h"

#define MAX_LINKS 40 /* the kernel's own limit */

void reach_who_account(struct reach_who *w, const char *user, const char *group)
{
	memset(w, 0, sizeof *w);
	w->name = user;
	w->uid = REACH_NOBODY;
	const struct passwd *pw = getpwnam(user);
	const struct group *gr = getgrnam(group);
	gid_t gid = gr ? gr->gr_gid : pw ? pw->pw_gid : (gid_t)REACH_NOBODY;
	w->gids[w->ngids++] = gid;
	if (pw == NULL)
		return;
	w->uid = pw->pw_uid;
	int n = (int)(sizeof w->gids / sizeof w->gids[0]) - 1;
	if (getgrouplist(user, gid, w->gids + 1, &n) != -1)
		w->ngids = n + 1;
}

void reach_who_self(struct reach_who *w, const char *name)
{
	memset(w, 0, sizeof *w);
	w->name = name;
	w->uid = geteuid();
	w->gids[w->ngids++] = getegid();
	int n = getgroups((int)(sizeof w->gids / sizeof w->gids[0]) - 1, w->gids + 1);
	if (n > 0)
		w->ngids += n;
}

/* The permission bits (rwx as 4/2/1) that apply to w for a file. */
static unsigned perms(const struct reach_who *w, const struct stat *st)
{
	if (w->uid != REACH_NOBODY && st->st_uid == w->uid)
		return (st->st_mode >> 6) & 7u;
	for (int i = 0; i < w->ngids; i++)
		if (w->gids[i] == st->st_gid)
			return (st->st_mode >> 3) & 7u;
	return st->st_mode & 7u;
}

static bool may(const struct reach_who *w, const struct stat *st, unsigned bit)
{
	if (w->uid == 0) /* root needs an x bit somewhere to execute, nothing to search */
		return bit != 1u || S_ISDIR(st->st_mode) || (st->st_mode & 0111) != 0;
	return (perms(w, st) & bit) != 0;
}

struct walk {
	const struct reach_who *w;
	char *why;
	size_t len;
	int links;
};

__attribute__((format(printf, 2, 3))) static int blocked(struct walk *k, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(k->why, k->len, fmt, ap);
	va_end(ap);
	return 1;
}

static int walk_path(struct walk *k, const char *path);

/* Resolve one existing component `cur` (a prefix of the path): follow a link, check a dir. */
static int step(struct walk *k, char *cur, bool last, struct stat *st)
{
	if (lstat(cur, st) == -1)
		return blocked(k, "%s: %s", cur, strerror(errno));
	if (S_ISLNK(st->st_mode)) {
		char target[PATH_MAX], next[PATH_MAX];
		ssize_t n = readlink(cur, target, sizeof target - 1);
		if (n == -1 || ++k->links > MAX_LINKS)
			return blocked(k, "%s: %s", cur, strerror(n == -1 ? errno : ELOOP));
		target[n] = '\0';
		if (target[0] == '/') {
			strlcpy(next, target, sizeof next);
		} else {
			char *slash = strrchr(cur, '/');
			int m =
			    snprintf(next, sizeof next, "%.*s/%s", (int)(slash - cur), cur, target);
			if (m < 0 || (size_t)m >= sizeof next)
				return blocked(k, "%s: %s", cur, strerror(ENAMETOOLONG));
		}
		int r = walk_path(k, next);
		if (r != 0)
			return r;
		if (stat(next, st) == -1)
			return blocked(k, "%s: %s", next, strerror(errno));
		strlcpy(cur, next, PATH_MAX);
	}
	if (!last && !S_ISDIR(st->st_mode))
		return blocked(k, "%s: %s", cur, strerror(ENOTDIR));
	if (!last && !may(k->w, st, 1u))
		return blocked(k, "%s is not searchable by %s (mode %04o)", cur, k->w->name,
		               (unsigned)(st->st_mode & 07777));
	return 0;
}

/* Every directory of path searchable, links followed; the last component must exist. */
static int walk_path(struct walk *k, const char *path)
{
	char cur[PATH_MAX] = "";
	const char *p = path;
	struct stat st;
	if (strlen(path) >= sizeof cur)
		return blocked(k, "%s: %s", path, strerror(ENAMETOOLONG));
	if (stat("/", &st) == 0 && !may(k->w, &st, 1u))
		return blocked(k, "%s is not searchable by %s (mode %04o)", "/", k->w->name,
		               (unsigned)(st.st_mode & 07777));
	while (*p != '\0') {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n == 0)
			break;
		size_t have = strlen(cur);
		if (have + 1 + n >= sizeof cur)
			return blocked(k, "%s: %s", path, strerror(ENAMETOOLONG));
		cur[have] = '/';
		memcpy(cur + have + 1, p, n);
		cur[have + 1 + n] = '\0';
		p += n;
		bool last = strspn(p, "/") == strlen(p);
		if (strcmp(cur + have + 1, ".") == 0 || strcmp(cur + have + 1, "..") == 0) {
			char real[PATH_MAX];
			if (realpath(cur, real) == NULL)
				return blocked(k, "%s: %s", cur, strerror(errno));
			strlcpy(cur, real, sizeof cur);
			continue;
		}
		int r = step(k, cur, last, &st);
		if (r != 0)
			return r;
	}
	return 0;
}

/* Every directory of path searchable by w, then the regular file at it: bit 1 (x) or 4 (r). */
static int reach_file(const struct reach_who *w, const char *path, unsigned bit, char *why,
                      size_t len)
{
	struct walk k = {.w = w, .why = why, .len = len};
	why[0] = '\0';
	if (path[0] != '/') {
		snprintf(why, len, "%s: not an absolute path", path);
		return 1;
	}
	int r = walk_path(&k, path);
	if (r != 0)
		return r;
	struct stat st;
	if (stat(path, &st) == -1)
		return blocked(&k, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return blocked(&k, "%s: %s", path, "not a regular file");
	if (!may(w, &st, bit))
		return blocked(&k, "%s is not %s by %s (mode %04o)", path,
		               bit == 1u ? "executable" : "readable", w->name,
		               (unsigned)(st.st_mode & 07777));
	return 0;
}

int reach_exec(const struct reach_who *w, const char *path, char *why, size_t len)
{
	return reach_file(w, path, 1u, why, len);
}

int reach_read(const struct reach_who *w, const char *path, char *why, size_t len)
{
	return reach_file(w, path, 4u, why, len);
}
