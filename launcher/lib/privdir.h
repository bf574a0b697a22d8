/*
 * privdir: the one opener of a directory where root keeps what only it may say (owed
 * restarts, setup steps done): one policy for all of them. The directory is opened without
 * following a link and judged by fstat of what was opened: owned by the effective user, or
 * refused (never repaired: another account's directory); group or other bits are repaired
 * to 0700 through that fd when the caller is about to write (create), since nothing can swap
 * what the fd holds; without create, write bits for group or others are refused (whoever
 * could write there could forge a record), read bits are let be.
 */
#ifndef GITLAB_CTL_PRIVDIR_H
#define GITLAB_CTL_PRIVDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/ctl.h"

/*
 * Open dir, below parent. With create, parent is made first (pathsafe_mkdirs, 0755) and dir
 * (0700) if missing. The fd (O_DIRECTORY, close-on-exec), or -1 with errno: EPERM for a
 * directory the policy refuses, ENOENT where it does not exist and create is false.
 */
int privdir_open(const char *parent, const char *dir, bool create);

/* privdir_open of <install>/var/NAME, its path in dir (len bytes); ENAMETOOLONG when a path
 * does not fit. */
int privdir_open_var(const struct ctl *ctl, const char *name, char *dir, size_t len, bool create);

#endif
