/* Service selection: the entries of <install>/service, sorted. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "svsel.h"

bool svsel_valid_name(const char *name)
{
	return name[0] != '\0' && name[0] != '.' && strchr(name, '/') == NULL;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int push(struct svsel *sel, size_t *cap, const char *name)
{
	if (grow(&sel->names, cap, sel->n + 1, sizeof *sel->names, 16) == -1)
		return -1;
	char *s = strdup(name);
	if (s == NULL)
		return -1;
	sel->names[sel->n++] = s;
	return 0;
}

/* runsvdir supervises directories and symlinks to them; dot entries it ignores. */
static bool is_service(int dfd, const char *name, unsigned char type)
{
	if (name[0] == '.')
		return false;
	if (type == DT_LNK || type == DT_DIR)
		return true;
	if (type != DT_UNKNOWN)
		return false;
	struct stat sb;
	return fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (S_ISLNK(sb.st_mode) || S_ISDIR(sb.st_mode));
}

/* getdents64 straight into a stack buffer: no opendir allocation on the status path. */
static int load_all(struct svsel *sel)
{
	char buf[8192] __attribute__((aligned(8)));
	size_t cap = 0;
	for (;;) {
		ssize_t n = getdents64(sel->fd, buf, sizeof buf);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *e = (const struct dirent64 *)(buf + off);
			if (is_service(sel->fd, e->d_name, e->d_type) &&
			    push(sel, &cap, e->d_name) == -1)
				return -1;
			off += e->d_reclen;
		}
	}
	if (sel->n > 1)
		qsort(sel->names, sel->n, sizeof *sel->names, cmp_names);
	return 0;
}

static int load(struct svsel *sel, const char *name)
{
	sel->fd = open(sel->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sel->fd == -1)
		return -1;
	if (name == NULL)
		return load_all(sel);
	struct stat sb;
	if (!svsel_valid_name(name)) {
		errno = ENOENT;
		return -1;
	}
	if (fstatat(sel->fd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1)
		return -1;
	size_t cap = 0;
	return push(sel, &cap, name);
}

int svsel_load(const struct ctl *ctl, const char *name, struct svsel *sel)
{
	memset(sel, 0, sizeof *sel);
	sel->fd = -1;
	if (ctl_service_dir(ctl, sel->dir, sizeof sel->dir) == -1)
		return -1;
	if (load(sel, name) == 0)
		return 0;
	int saved = errno;
	svsel_free(sel);
	errno = saved;
	return -1;
}

void svsel_free(struct svsel *sel)
{
	for (size_t i = 0; i < sel->n; i++)
		free(sel->names[i]);
	free(sel->names);
	sel->names = NULL;
	sel->n = 0;
	if (sel->fd != -1)
		close(sel->fd);
	sel->fd = -1;
}

int svsel_path(const struct svsel *sel, const char *name, bool log, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/%s%s", sel->dir, name, log ? "/log" : "");
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int svsel_relpath(const char *name, bool log, char *out, size_t len)
{
	int n = snprintf(out, len, "%s%s", name, log ? "/log" : "");
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
