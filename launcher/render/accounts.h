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

#include "config/attrs.h"
#include "lib/diag.h"

/*
 * Make sure group and user exist: a system group, and a system user in it
 * with the given home (not created) and no login shell, made by groupadd and
 * useradd (fixed argv, no shell). With dry_run only the lines are written.
 * Each creation writes "create group NAME" / "create user NAME" to d->live (diag_out) and
 * counts in *created. Returns 0, or -1 with the error recorded in d.
 */
int accounts_ensure(const char *user, const char *group, const char *home, bool manage,
                    bool dry_run, int *created, struct diags *d);

/*
 * The home useradd is given for a service's account: the data dir of the
 * root gitlab-ctl was given (gitlab_data_dir: /var/opt/gitlab, or
 * <root>/var/opt/gitlab under --root); a service with an account of its own
 * (a `username` setting: gitlab-psql) gets <data_dir>/<service>. Creation and
 * removal both ask here, so that remove-accounts recognises every account
 * reconfigure made for this root, and never one made for another root or
 * for the host (--root R remove-accounts keeps the machine's accounts).
 * 0, or -1 (ENAMETOOLONG).
 */
int accounts_home(const struct svc *s, char *home, size_t len);

/*
 * Undo accounts_ensure: delete user when it is a system account (uid 1..999) whose home is
 * `home`, as useradd was told, so that an account reconfigure did not create (e.g. Debian's
 * postgres, or an operator's) is never touched; then its primary group when it is named
 * `group`. userdel/groupdel with fixed argv. Each deletion prints "remove user NAME" /
 * "remove group NAME" to out and counts in *removed; an account kept says why.
 * Returns 0, or -1 with the error recorded in d.
 */
int accounts_remove(const char *user, const char *group, const char *home, FILE *out, int *removed,
                    struct diags *d);

/* uid and gid of user and group; -1 with errno ENOENT when either is missing. */
int accounts_lookup(const char *user, const char *group, uid_t *uid, gid_t *gid);

#endif
