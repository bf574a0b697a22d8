#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/alloc.h"

_Noreturn void die_nomem(void)
{
	/* write(2), not stdio: stdio may itself need memory to format. */
	static const char msg[] = "gitlab-ctl: fatal: out of memory\n";
	(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
	_exit(ALLOC_EXIT);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (p == NULL)
		die_nomem();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (p == NULL)
		die_nomem();
	return p;
}

void *xreallocarray(void *p, size_t n, size_t size)
{
	void *q = reallocarray(p, n ? n : 1, size ? size : 1); /* NULL on overflow too */
	if (q == NULL)
		die_nomem();
	return q;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (p == NULL)
		die_nomem();
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (p == NULL)
		die_nomem();
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;
	if (vasprintf(&s, fmt, ap) == -1)
		die_nomem();
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
