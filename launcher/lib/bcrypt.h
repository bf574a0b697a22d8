/*
 * bcrypt: the "$2b$" hash of a password, for the basic_auth_users of Prometheus' and
 * Alertmanager's --web.config.file. libxcrypt's crypt_gensalt_rn/crypt_rn (libcrypt.so.1,
 * loaded when first needed, as gitlab-ctl's start-up pays for no library it may not use).
 */
#ifndef GITLAB_CTL_BCRYPT_H
#define GITLAB_CTL_BCRYPT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The hash of pw into out (at least 64 bytes). The salt is derived from the password
 * (libcrypt's sha256-crypt of it), so the same password renders the same file and a
 * reconfigure changes nothing; a random password gives a random salt. A hash made or kept in
 * this run (bcrypt_keep_open) is not made again. 0, or -1 with a reason in *why.
 */
int bcrypt_hash(const char *pw, char *out, size_t len, const char **why);

/*
 * One run's hashes, kept across runs as root in <vardir>/secrets/bcrypt (privdir.h; a regular
 * file of root's, exactly 0600, opened without following a link, else ignored), so that a
 * password unchanged costs no bcrypt (cost 10, tens of ms each). A kept hash is found by the
 * salt the password derives, which identifies the password (96 bits of its digest): the
 * record holds nothing the rendered files do not already show. With write, the hashes made
 * in the run are saved by bcrypt_keep_close (a dry run passes false). Failures only cost
 * the keeping.
 */
void bcrypt_keep_open(const char *vardir, bool write);
/* Save (with write, when a hash was made) and forget the run's hashes. */
void bcrypt_keep_close(void);

#endif
