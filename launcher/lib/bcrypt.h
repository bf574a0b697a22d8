/*
 * bcrypt: the "$2b$" hash of a password, for the basic_auth_users of Prometheus' and
 * Alertmanager's --web.config.file. libxcrypt's crypt_gensalt_rn/crypt_rn (libcrypt.so.1,
 * loaded when first needed, as gitlab-ctl's start-up pays for no library it may not use).
 */
#ifndef GITLAB_CTL_BCRYPT_H
#define GITLAB_CTL_BCRYPT_H

#include <stddef.h>

/*
 * The hash of pw into out (at least 64 bytes). The salt is derived from the password
 * (libcrypt's sha256-crypt of it), so the same password renders the same file and a
 * reconfigure changes nothing; a random password gives a random salt. 0, or -1 with a reason
 * in *why.
 */
int bcrypt_hash(const char *pw, char *out, size_t len, const char **why);

#endif
