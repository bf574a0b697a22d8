/*
 * pathsafe: the path policy of README's Trust section, on path strings and lstat()
 * only (no configuration knowledge; trust.h applies it to a configuration).
 *
 * Root must never act on a path that another account can change: a path
 * from gitlab.rb is normalised and kept inside --root, and anything root
 * executes or interprets must sit below directories only root (or, when not
 * running as root, the invoking user) can write. That walk (OpenSSH's
 * StrictModes check) is lib/dirtrust's: one implementation, from directory fds.
 */
#ifndef GITLAB_CTL_PATHSAFE_H
#define GITLAB_CTL_PATHSAFE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Normalise an absolute path lexically: "//" and "/./" collapse, a trailing
 * '/' goes. ".." is refused, not resolved: resolving it lexically would be
 * wrong across a symlink. Returns 0, or -1 with *why.
 */
int pathsafe_normalize(const char *in, char *out, size_t outlen, const char **why);

/* Is path dir itself or below it (component-wise)? Every path is below "" and "/". */
bool pathsafe_below(const char *path, const char *dir);

/*
 * What doas asks of its config, for gitlab.rb read by root: a regular file
 * owned by root, writable by nobody else, in directories only root can write
 * to (sticky ones aside). Returns 0, or -1 with a message
 * that says how to fix it in msg. Callers run it only as root.
 */
int pathsafe_config_file(const char *path, char *msg, size_t msglen);
/* mkdir -p with mode for the missing components. 0, or -1 with errno. */
int pathsafe_mkdirs(const char *path, mode_t mode);

#endif
