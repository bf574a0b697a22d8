/*
 * pathjoin: the one way to build a path into a fixed buffer. A path that does
 * not fit is an error (-1, errno ENAMETOOLONG), never a silently cut name that
 * could denote another file.
 */
#ifndef GITLAB_CTL_PATHJOIN_H
#define GITLAB_CTL_PATHJOIN_H

#include <stddef.h>

/* dir "/" name into out; "" or "/" as dir gives "/name". 0 or -1 (ENAMETOOLONG). */
int path_join(char *out, size_t len, const char *dir, const char *name);

/* snprintf into out for paths with a suffix or prefix. 0 or -1 (ENAMETOOLONG). */
int path_fmt(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
