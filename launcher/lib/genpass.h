/*
 * genpass: a password gitlab-ctl makes itself and keeps, for an HTTP API whose gitlab.rb sets
 * none (Prometheus' and Alertmanager's basic auth): <install>/var/secrets/NAME, root's, 0600
 * in a 0700 directory (privdir.h), read again on every run so it stays the same.
 */
#ifndef GITLAB_CTL_GENPASS_H
#define GITLAB_CTL_GENPASS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The password kept as name below vardir into out (at least 33 bytes): read back when it is
 * there (a regular file of the effective user, no group or other bits, not a link), else 32
 * random letters and digits written there first. Where it cannot be written (not root, a
 * read-only tree), or without keep (check-config, a dry run: nothing written), a fresh one
 * for this run only. 0, or -1 with errno (out untouched).
 */
int genpass_get(const char *vardir, const char *name, bool keep, char *out, size_t len);

#endif
