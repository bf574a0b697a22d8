/* Environment vectors and envdir reading; see envdir.h for the format. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/envdir.h"
#include "lib/grow.h"
#include "lib/names.h"
#include "lib/readfile.h"

void envv_init(struct envv *e)
{
	memset(e, 0, sizeof *e);
}

void envv_free(struct envv *e)
{
	strv_free(e->v, e->n);
	envv_init(e);
}

/* Index of NAME in e, or -1. */
static ssize_t find(const struct envv *e, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '=')
			return (ssize_t)i;
	return -1;
}

const char *envv_get(const struct envv *e, const char *name)
{
	ssize_t i = find(e, name);
	return i < 0 ? NULL : e->v[i] + strlen(name) + 1;
}

static void set_owned(struct envv *e, const char *name, char *entry)
{
	ssize_t i = find(e, name);
	if (i >= 0) {
		free(e->v[i]);
		e->v[i] = entry;
		return;
	}
	grow(&e->v, &e->cap, e->n + 2, sizeof *e->v, 32); /* + the NULL */
	e->v[e->n++] = entry;
	e->v[e->n] = NULL;
}

void envv_set(struct envv *e, const char *name, const char *value)
{
	set_owned(e, name, xasprintf("%s=%s", name, value));
}

void envv_unset(struct envv *e, const char *name)
{
	ssize_t i = find(e, name);
	if (i < 0)
		return;
	free(e->v[i]);
	memmove(&e->v[i], &e->v[i + 1], (e->n - (size_t)i) * sizeof *e->v); /* with the NULL */
	e->n--;
}

static int cmp_entry(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	/* Compare names only: '=' sorts before every name character we allow. */
	for (; *x == *y && *x != '=' && *x != '\0'; x++, y++)
		;
	int cx = *x == '=' ? 0 : (unsigned char)*x, cy = *y == '=' ? 0 : (unsigned char)*y;
	return cx - cy;
}

void envv_sort(struct envv *e)
{
	if (e->n > 1)
		qsort(e->v, e->n, sizeof *e->v, cmp_entry);
}

/* One variable file, whole: a regular file, not a symlink, with no NUL byte. */
static int read_var(int dfd, const char *name, struct envv *e)
{
	struct buf entry;
	buf_init(&entry);
	buf_addf(&entry, "%s=", name);
	size_t start = entry.len;
	if (readfile_at(dfd, name, &entry, ENVDIR_MAX_VALUE) == -1) {
		int error = errno == ELOOP || errno == EISDIR ? EINVAL : errno;
		buf_free(&entry);
		errno = error;
		return -1;
	}
	if (memchr(entry.p + start, '\0', entry.len - start) != NULL) {
		buf_free(&entry); /* an env value cannot hold NUL */
		errno = EINVAL;
		return -1;
	}
	set_owned(e, name, buf_take(&entry));
	return 0;
}

int envdir_read(const char *dir, struct envv *e, char *bad, size_t badlen)
{
	if (badlen > 0)
		bad[0] = '\0';
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd == -1)
		return -1;
	DIR *d = fdopendir(dfd);
	if (d == NULL) {
		int saved = errno;
		close(dfd);
		errno = saved;
		return -1;
	}
	int rc = 0;
	size_t count = 0;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		int error = 0;
		if (!name_env_ok(de->d_name))
			error = EINVAL;
		else if (++count > ENVDIR_MAX_VARS)
			error = E2BIG;
		else if (read_var(dirfd(d), de->d_name, e) == -1)
			error = errno;
		if (error != 0) {
			strlcpy(bad, de->d_name, badlen);
			errno = error;
			rc = -1;
			break;
		}
		errno = 0;
	}
	if (rc == 0 && errno != 0)
		rc = -1;
	int saved = errno;
	closedir(d);
	errno = saved;
	if (rc == 0)
		envv_sort(e);
	return rc;
}
