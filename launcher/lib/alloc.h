/*
 * alloc: the one out-of-memory policy. Like runit and s6, gitlab-ctl dies
 * with exit status 111 (temporary failure) when an allocation fails: every
 * write it makes is atomic and every owed restart is on disk (render/pending),
 * so running the command again converges, whereas threading ENOMEM through
 * every caller buys nothing but untested error paths.
 */
#ifndef GITLAB_CTL_ALLOC_H
#define GITLAB_CTL_ALLOC_H

#include <stdarg.h>
#include <stddef.h>

#define ALLOC_EXIT 111

/* "gitlab-ctl: fatal: out of memory" on stderr, then exit 111. */
_Noreturn void die_nomem(void);

void *xmalloc(size_t size);
/* n == 0 still returns a unique pointer, so callers need no special case. */
void *xcalloc(size_t n, size_t size);
/* realloc of n * size, the multiplication checked for overflow. */
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Free the n strings of v, then v (NULL with n 0: nothing). */
void strv_free(char **v, size_t n);

#endif
