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
 * The hash of pw into out (at least 64 bytes), with a random salt. A password hashed or kept
 * already in this run (bcrypt_keep_open) gets the same hash again, so an unchanged password
 * renders the same file and a reconfigure changes nothing. 0, or -1 with a reason in *why.
 */
int bcrypt_hash(const char *pw, char *out, size_t len, const char **why);

/*
 * One run's hashes, kept across runs in <vardir>/secrets/bcrypt (privdir.h; a regular file
 * of the effective user, exactly 0600, opened without following a link, else ignored): a
 * random key, then each hash beside its password's digest under that key (sha256-crypt, the
 * key as its salt), so that a password unchanged costs no bcrypt (cost 10, tens of ms each)
 * and the hash in the service's file keeps its random salt. With write, hashes made in the
 * run are saved by bcrypt_keep_close (reconfigure and exec --from-config; check-config and a
 * dry run pass false). Failures only cost the keeping: without a record each run hashes
 * anew, to another salt.
 */
void bcrypt_keep_open(const char *vardir, bool write);
/* Save (with write, when a hash was made) and forget the run's hashes and key. */
void bcrypt_keep_close(void);

#endif
