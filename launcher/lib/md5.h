/*
 * md5: RFC 1321's digest, for PostgreSQL's md5 password hash (pg-password-md5). Not for
 * anything that needs collision resistance.
 */
#ifndef GITLAB_CTL_MD5_H
#define GITLAB_CTL_MD5_H

#include <stddef.h>

/* The digest of p[0..n) as 32 lowercase hex digits and a NUL into hex. */
void md5_hex(const void *p, size_t n, char hex[33]);

#endif
