/* The one PATH search (see pathsearch.h). */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/pathjoin.h"
#include "lib/pathsearch.h"

enum candidate { FOUND, DENIED, TOO_LONG, MISSING };

static enum candidate try_dir(const char *dir, size_t n, const char *cmd, path_runnable_fn runnable,
                              void *arg, char *out, size_t len)
{
	struct stat st;
	if (n >= len || path_fmt(out, len, "%.*s/%s", (int)n, dir, cmd) == -1)
		return TOO_LONG;
	if (stat(out, &st) == -1)
		return errno == EACCES ? DENIED : MISSING;
	if (!S_ISREG(st.st_mode))
		return MISSING;
	return runnable(out, arg) ? FOUND : DENIED;
}

static int fail(int e)
{
	errno = e;
	return -1;
}

int path_search(const char *path, const char *cmd, path_runnable_fn runnable, void *arg, char *out,
                size_t len)
{
	if (strchr(cmd, '/') != NULL)
		return strlcpy(out, cmd, len) < len ? 0 : fail(ENAMETOOLONG);
	if (strnlen(cmd, NAME_MAX + 1) > NAME_MAX)
		return fail(ENAMETOOLONG);
	const char *denied = NULL;
	size_t denied_n = 0;
	bool too_long = false;
	for (const char *p = path != NULL ? path : PATHSEARCH_DEFAULT;; p++) {
		const char *end = strchrnul(p, ':');
		size_t n = (size_t)(end - p);
		enum candidate c = *cmd != '\0' && *p == '/'
		                       ? try_dir(p, n, cmd, runnable, arg, out, len)
		                       : MISSING;
		if (c == FOUND)
			return 0;
		if (c == DENIED && denied == NULL) {
			denied = p;
			denied_n = n;
		}
		too_long |= c == TOO_LONG;
		if (*end == '\0')
			break;
		p = end;
	}
	if (denied != NULL) { /* it fitted before */
		(void)path_fmt(out, len, "%.*s/%s", (int)denied_n, denied, cmd);
		return fail(EACCES);
	}
	return fail(too_long ? ENAMETOOLONG : ENOENT);
}

bool path_runnable_self(const char *file, void *arg)
{
	(void)arg;
	return access(file, X_OK) == 0;
}
