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

/* memcpy, not snprintf: status joins several paths per service. */
int path_join(char *out, size_t len, const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	/* "/" + "x" must give "/x", not "//x": callers compare paths as strings. */
	size_t sep = (dl > 0 && dir[dl - 1] == '/') ? 0 : 1;
	if (dl + sep + nl >= len)
		return fits(out, len, -1);
	memmove(out, dir, dl); /* dir may be out itself */
	out[dl] = '/';
	memcpy(out + dl + sep, name, nl + 1);
	return 0;
}

int path_fmt(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return fits(out, len, n);
}
