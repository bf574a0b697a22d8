#include "lib/pathjoin.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int fits(char *out, size_t len, int n)
{
	if (n < 0 || (size_t)n >= len) {
		if (len > 0)
			out[0] = '\0';
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int path_join(char *out, size_t len, const char *dir, const char *name)
{
	size_t dl = strlen(dir);
	/* "/" + "x" must give "/x", not "//x": callers compare paths as strings. */
	const char *sep = (dl > 0 && dir[dl - 1] == '/') ? "" : "/";
	return fits(out, len, snprintf(out, len, "%s%s%s", dir, sep, name));
}

int path_fmt(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return fits(out, len, n);
}
