/* Service selection: the entries of <install>/service, sorted. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/grow.h"
#include "lib/pathjoin.h"
#include "lib/readfile.h"
#include "runit/svsel.h"

/* An after file lists service names, one a line: far below this. */
#define AFTER_MAX (1024 * 1024)

bool svsel_valid_name(const char *name)
{
	return name[0] != '\0' && name[0] != '.' && strchr(name, '/') == NULL;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void push(struct svsel *sel, const char *name)
{
	grow(&sel->names, &sel->cap, sel->n + 1, sizeof *sel->names, 16);
	sel->names[sel->n++] = xstrdup(name);
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

/*
 * getdents64 on sel->fd itself, into a stack buffer: opendir would dup the fd, fstat and
 * fcntl it and allocate 32 KiB, all of it start-up cost of every `status`. The *at calls
 * that follow ignore the offset this moves. The buffer is small: `status` runs this at its
 * deepest point, where each further 4 KiB of stack is a page fault, dearer than the few
 * more getdents64 calls of a long list (one per ~60 names).
 */
static int load_all(struct svsel *sel)
{
	char buf[1024] __attribute__((aligned(8)));
	for (;;) {
		long n = syscall(SYS_getdents64, sel->fd, buf, sizeof buf);
		if (n == -1)
			return -1;
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			/* glibc's 64-bit struct dirent is the kernel's linux_dirent64 */
			const struct dirent *de = (const struct dirent *)(void *)(buf + off);
			if (is_service(sel->fd, de->d_name, de->d_type))
				push(sel, de->d_name);
			off += de->d_reclen;
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
	push(sel, name);
	return 0;
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
	free(sel->wave);
	free(sel->deps);
	sel->wave = NULL;
	sel->deps = NULL;
	strv_free(sel->names, sel->n);
	sel->names = NULL;
	sel->n = 0;
	sel->cap = 0;
	if (sel->fd != -1)
		close(sel->fd);
	sel->fd = -1;
}

int svsel_path(const struct svsel *sel, const char *name, bool log, char *out, size_t len)
{
	return path_fmt(out, len, "%s/%s%s", sel->dir, name, log ? "/log" : "");
}

/* memcpy, not snprintf: status calls this for every service. */
int svsel_relpath(const char *name, bool log, char *out, size_t len)
{
	size_t n = strlen(name);
	const char *sfx = log ? "/log" : "";
	size_t m = strlen(sfx);
	if (n + m + 1 > len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(out, name, n);
	memcpy(out + n, sfx, m + 1);
	return 0;
}

static ssize_t find_name(const struct svsel *sel, const char *name, size_t len)
{
	for (size_t i = 0; i < sel->n; i++)
		if (strlen(sel->names[i]) == len && strncmp(sel->names[i], name, len) == 0)
			return (ssize_t)i;
	return -1;
}

/* deps[i*n + j]: names[i] needs names[j], from names[i]/after (root's, in its sv dir). */
static int read_deps(const struct svsel *sel, bool *deps)
{
	char path[NAME_MAX + 16];
	struct buf b;
	buf_init(&b);
	int rc = 0;
	for (size_t i = 0; i < sel->n && rc == 0; i++) {
		buf_reset(&b);
		if (path_join(path, sizeof path, sel->names[i], "after") == -1)
			continue;
		if (readfile_at(sel->fd, path, &b, AFTER_MAX) == -1) {
			rc = errno == ENOENT ? 0 : -1;
			continue;
		}
		for (const char *p = buf_str(&b); *p;) {
			size_t l = strcspn(p, "\n");
			ssize_t j = find_name(sel, p, l);
			if (j >= 0 && (size_t)j != i)
				deps[i * sel->n + (size_t)j] = true;
			p += l + (p[l] == '\n');
		}
	}
	int e = errno;
	buf_free(&b);
	errno = e;
	return rc;
}

static int cmp_wave(const void *a, const void *b, void *arg)
{
	const struct svsel *sel = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (sel->wave[i] != sel->wave[j])
		return sel->wave[i] < sel->wave[j] ? -1 : 1;
	return strcmp(sel->names[i], sel->names[j]);
}

int svsel_order(struct svsel *sel, bool reverse)
{
	size_t n = sel->n;
	bool *deps = xcalloc(n * n + 1, sizeof *deps);
	if (read_deps(sel, deps) == -1) {
		int e = errno;
		free(deps);
		errno = e;
		return -1;
	}
	int *wave = xcalloc(n, sizeof *wave);
	/* Longest path from a service without dependencies; n rounds end even a hand-made cycle. */
	for (size_t round = 0; round < n; round++)
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++)
				if (deps[i * n + j] && wave[i] < wave[j] + 1)
					wave[i] = wave[j] + 1;
	size_t *idx = xcalloc(n, sizeof *idx);
	int max = 0;
	for (size_t i = 0; i < n; i++) {
		idx[i] = i;
		max = wave[i] > max ? wave[i] : max;
	}
	if (reverse)
		for (size_t i = 0; i < n; i++)
			wave[i] = max - wave[i];
	sel->wave = wave;
	qsort_r(idx, n, sizeof *idx, cmp_wave, sel);
	char **names = xcalloc(n, sizeof *names);
	int *sorted = xcalloc(n, sizeof *sorted);
	for (size_t i = 0; i < n; i++) {
		names[i] = sel->names[idx[i]];
		sorted[i] = wave[idx[i]];
	}
	memcpy(sel->names, names, n * sizeof *names);
	sel->wave = sorted;
	/* The dependency matrix in the new order, for svsel_waiting_for. */
	sel->deps = xcalloc(n * n + 1, sizeof *sel->deps);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			sel->deps[i * n + j] = deps[idx[i] * n + idx[j]];
	free(deps);
	free(wave);
	free(idx);
	free(names);
	return 0;
}

const char *svsel_waiting_for(const struct svsel *sel, size_t i, const bool *up)
{
	for (size_t j = 0; sel->deps != NULL && j < sel->n; j++)
		if (sel->deps[i * sel->n + j] && sel->wave[j] < sel->wave[i] && !up[j])
			return sel->names[j];
	return NULL;
}

size_t svsel_wave_end(const struct svsel *sel, size_t i)
{
	if (sel->wave == NULL)
		return sel->n;
	size_t e = i + 1;
	while (e < sel->n && sel->wave[e] == sel->wave[i])
		e++;
	return e;
}
