/*
 * envdir: a service environment as a growable "NAME=value" vector, read from
 * an envdir written by reconfigure (one file per variable).
 *
 * Unlike runit's chpst -e / daemontools envdir, the value is the WHOLE file,
 * byte for byte: reconfigure writes values without a trailing newline, so a
 * value that itself ends in or contains newlines survives unchanged. An empty
 * file is an empty value (reconfigure removes the file to unset a variable).
 * Names starting with '.' are skipped (temporary files of an atomic write).
 */
#ifndef GITLAB_CTL_ENVDIR_H
#define GITLAB_CTL_ENVDIR_H

#include <stdbool.h>
#include <stddef.h>

/* Limits: more than this is not an environment reconfigure would write. */
#define ENVDIR_MAX_VARS  1024
#define ENVDIR_MAX_VALUE (128 * 1024) /* the kernel's MAX_ARG_STRLEN */

struct envv {
	char **v; /* "NAME=value", NULL-terminated, sorted by name after envdir_read */
	size_t n, cap;
};

void envv_init(struct envv *e);
void envv_free(struct envv *e);

/* Set (replace) NAME to value. */
void envv_set(struct envv *e, const char *name, const char *value);
/* The value of NAME, or NULL. */
const char *envv_get(const struct envv *e, const char *name);
void envv_unset(struct envv *e, const char *name);
void envv_sort(struct envv *e);

/*
 * Read every variable of dir into e (added to what it holds). Returns 0, or
 * -1 with errno and the offending file name (or "" for the directory) in
 * bad: EINVAL for a bad name, a NUL byte in a value, or something not a
 * regular file; EFBIG for a value over ENVDIR_MAX_VALUE; E2BIG for too many.
 */
int envdir_read(const char *dir, struct envv *e, char *bad, size_t badlen);

#endif
