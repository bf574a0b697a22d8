/*
 * pathsafe: the path policy of README's Trust section, on path strings and lstat()
 * only (no configuration knowledge; trust.h applies it to a configuration).
 *
 * Root must never act on a path that another account can change: a path
 * from gitlab.rb is normalised and kept inside --root, and anything root
 * executes or interprets must sit below directories only root (or, when not
 * running as root, the invoking user) can write. The walk is OpenSSH's
 * StrictModes check: from / down to the path, every existing component is
 * owned by a trusted uid and not writable by group or others, unless it is
 * sticky and the next component is itself trusted.
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
 * StrictModes walk of an absolute, normalised path. Components down to and
 * including root (the operator's --root, "" for none) are followed; below it
 * a symlink is refused. Components that do not exist yet end the walk: root
 * creates them. Returns 0 when the path is safe, else -1 with the offending
 * path in bad and the reason in why (a static string).
 */
int pathsafe_trusted(const char *root, const char *path, char *bad, size_t badlen,
                     const char **why);

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
