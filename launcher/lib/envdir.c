/* Environment vectors and envdir reading; see envdir.h for the format. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/envdir.h"
#include "lib/grow.h"
#include "lib/names.h"

void envv_init(struct envv *e)
{
	memset(e, 0, sizeof *e);
}

void envv_free(struct envv *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
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

static char *join(const char *name, const char *value, size_t vlen)
{
	size_t nlen = strlen(name);
	char *s = malloc(nlen + 1 + vlen + 1);
	if (s == NULL)
		return NULL;
	memcpy(s, name, nlen);
	s[nlen] = '=';
	memcpy(s + nlen + 1, value, vlen);
	s[nlen + 1 + vlen] = '\0';
	return s;
}

static int set_owned(struct envv *e, const char *name, char *entry)
{
	ssize_t i = find(e, name);
	if (i >= 0) {
		free(e->v[i]);
		e->v[i] = entry;
		return 0;
	}
	if (grow(&e->v, &e->cap, e->n + 2, sizeof *e->v, 32) == -1) { /* + the NULL */
		free(entry);
		return -1;
	}
	e->v[e->n++] = entry;
	e->v[e->n] = NULL;
	return 0;
}

int envv_set(struct envv *e, const char *name, const char *value)
{
	char *entry = join(name, value, strlen(value));
	if (entry == NULL)
		return -1;
	return set_owned(e, name, entry);
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

/* Read one variable file (a regular file, not a symlink) whole. */
static int read_var(int dfd, const char *name, struct envv *e)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd == -1)
		return errno == ELOOP ? (errno = EINVAL, -1) : -1;
	struct stat st;
	if (fstat(fd, &st) == -1)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		goto fail;
	}
	if (st.st_size > ENVDIR_MAX_VALUE) {
		errno = EFBIG;
		goto fail;
	}
	size_t nlen = strlen(name);
	char *entry = malloc(nlen + 1 + (size_t)st.st_size + 1);
	if (entry == NULL)
		goto fail;
	char *val = entry + nlen + 1;
	/* Files are replaced by rename, never rewritten in place: st_size is the value's size. */
	size_t len = 0, want = (size_t)st.st_size;
	while (len < want) {
		ssize_t r = read(fd, val + len, want - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			free(entry);
			goto fail;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (memchr(val, '\0', len) != NULL) { /* an env value cannot hold NUL */
		free(entry);
		errno = EINVAL;
		return -1;
	}
	memcpy(entry, name, nlen);
	entry[nlen] = '=';
	val[len] = '\0';
	return set_owned(e, name, entry);
fail:;
	int saved = errno;
	close(fd);
	errno = saved;
	return -1;
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
