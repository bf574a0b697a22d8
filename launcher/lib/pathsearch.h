/*
 * pathsearch: the one PATH search, for exec (which execve's what it finds), reconfigure's
 * pre-flight (will each service's command be found, and can its account run it), the
 * runsvdir wrapper and spawn. execvp's rule, but for the current directory: only absolute
 * PATH elements are searched. An empty or relative element names a directory that depends
 * on the cwd, which pre-flight (gitlab-ctl's) and exec (the service's home, which its
 * account can write) do not share, and root runs nothing from a directory its cwd chose;
 * POSIX keeps the empty element only as a legacy feature.
 */
#ifndef GITLAB_CTL_PATHSEARCH_H
#define GITLAB_CTL_PATHSEARCH_H

#include <stdbool.h>
#include <stddef.h>

/* The search path when the environment has no PATH. */
#define PATHSEARCH_DEFAULT "/usr/local/bin:/usr/bin:/bin"

/* Whether whoever will run file (a regular file) may execute it; arg is path_search's. */
typedef bool (*path_runnable_fn)(const char *file, void *arg);

/*
 * cmd with a '/' is taken as it is (0, or -1 ENAMETOOLONG). Else the first <dir>/<cmd>, dir an
 * absolute element of path (NULL: PATHSEARCH_DEFAULT), that is a regular file (links
 * followed) runnable says yes to, so a directory or a file it may not run is skipped.
 * Returns 0 with it in out, or -1 with errno: EACCES when one was there but not runnable, or
 * a directory on the way was not searchable (out: the first such one); else ENAMETOOLONG when
 * cmd is longer than NAME_MAX or an element did not fit in len; else ENOENT.
 */
int path_search(const char *path, const char *cmd, path_runnable_fn runnable, void *arg, char *out,
                size_t len);

/* A path_runnable_fn for this process' own credentials: access(X_OK). */
bool path_runnable_self(const char *file, void *arg);

#endif
