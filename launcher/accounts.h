/*
 * accounts: the service user and group, created by reconfigure when gitlab-ctl
 * runs as root and they are missing (manage_accounts['enable'], default true).
 * Never when not root: then services run as the invoking user.
 */
#ifndef GITLAB_CTL_ACCOUNTS_H
#define GITLAB_CTL_ACCOUNTS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Make sure group and user exist: a system group, and a system user in it
 * with the given home (not created) and no login shell, made by groupadd and
 * useradd (fixed argv, no shell). With dry_run only the lines are printed.
 * Each creation prints "create group NAME" / "create user NAME" to out and
 * counts in *created. Returns 0, or -1 after printing the error (warnx).
 */
int accounts_ensure(const char *user, const char *group, const char *home, bool manage,
                    bool dry_run, FILE *out, int *created);

/* uid and gid of user and group; -1 with errno ENOENT when either is missing. */
int accounts_lookup(const char *user, const char *group, uid_t *uid, gid_t *gid);

/*
 * A name useradd accepts and no option parser can mistake for a flag:
 * letters, digits, '_', '-', '.', not starting with '-', at most 32 bytes.
 */
bool accounts_valid_name(const char *s);

#endif
