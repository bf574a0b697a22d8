/* Link-safe recursive removal (see rmtree.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/grow.h"
#include "lib/rmtree.h"

#define MAX_DEPTH 256

struct rm {
	FILE *warn;
	dev_t dev;
	int failed;
};

static void complain(struct rm *r, const char *path, const char *name, const char *why)
{
	fprintf(r->warn, "gitlab-ctl: cannot remove %s/%s: %s\n", path, name, why);
	r->failed = 1;
}

static void rm_at(struct rm *r, int dfd, const char *name, const char *path, int depth);

/* Empty the directory open as fd (path is for messages). */
static void rm_contents(struct rm *r, int fd, const char *path, int depth)
{
	DIR *d = fdopendir(fd);
	if (d == NULL) {
		complain(r, path, ".", strerror(errno));
		close(fd);
		return;
	}
	/* Names first: unlinking while readdir walks the same directory may skip entries. */
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		grow(&names, &cap, n + 1, sizeof *names, 16);
		names[n++] = xstrdup(de->d_name);
	}
	for (size_t i = 0; i < n; i++) {
		rm_at(r, dirfd(d), names[i], path, depth + 1);
		free(names[i]);
	}
	free(names);
	closedir(d);
}

static void rm_at(struct rm *r, int dfd, const char *name, const char *path, int depth)
{
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return;
	if (errno != EISDIR && errno != EPERM) {
		complain(r, path, name, strerror(errno));
		return;
	}
	if (depth > MAX_DEPTH) {
		complain(r, path, name, "too deep");
		return;
	}
	/* A link swapped in after unlinkat failed makes O_NOFOLLOW fail: nothing is followed. */
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd == -1 || fstat(fd, &st) == -1) {
		complain(r, path, name, strerror(errno));
		if (fd != -1)
			close(fd);
		return;
	}
	if (depth == 0)
		r->dev = st.st_dev; /* the tree may itself be a mount point: emptied, kept */
	if (st.st_dev != r->dev) {
		close(fd);
		complain(r, path, name, "on another file system (a mount point): left as is");
		return;
	}
	char sub[PATH_MAX];
	snprintf(sub, sizeof sub, "%s/%s", path, name);
	rm_contents(r, fd, sub, depth);
	if (unlinkat(dfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT) {
		if (errno == EBUSY && depth == 0) /* the mount point of the whole tree: emptied */
			fprintf(r->warn, "gitlab-ctl: %s/%s is a mount point: emptied, kept\n",
			        path, name);
		else
			complain(r, path, name, strerror(errno));
	}
}

int rmtree(const char *path, FILE *warn)
{
	struct rm r = {.warn = warn ? warn : stderr};
	char parent[PATH_MAX];
	if (strlcpy(parent, path, sizeof parent) >= sizeof parent || path[0] != '/') {
		fprintf(r.warn, "gitlab-ctl: cannot remove %s: not an absolute path\n", path);
		return -1;
	}
	char *slash = strrchr(parent, '/');
	const char *name = path + (slash - parent) + 1;
	if (*name == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		fprintf(r.warn, "gitlab-ctl: refusing to remove %s\n", path);
		return -1;
	}
	*slash = '\0';
	/* The parent is one of gitlab-ctl's own root-owned directories (or the --root). */
	int dfd = open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd == -1) {
		if (errno == ENOENT)
			return 0;
		fprintf(r.warn, "gitlab-ctl: cannot open %s: %s\n", parent, strerror(errno));
		return -1;
	}
	rm_at(&r, dfd, name, parent, 0);
	close(dfd);
	return r.failed ? -1 : 0;
}
