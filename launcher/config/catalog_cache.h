/*
 * catalog_cache: the parsed catalog kept between runs, so that a run whose
 * catalog files did not change skips libconfig.
 *
 * The file is a magic, a format version, the key (what decided the parse: see
 * catalog.c), the encoded catalog and a checksum. Anything that does not
 * match, does not add up or is not root's own private file is a miss: the
 * caller parses and writes it again. A cache problem is never an error.
 */
#ifndef GITLAB_CTL_CATALOG_CACHE_H
#define GITLAB_CTL_CATALOG_CACHE_H

#include <stddef.h>

#include "config/catalog.h"
#include "lib/buf.h"

/* c's services and omnibus list (not dir) appended to b. */
void catcodec_encode(struct buf *b, const struct catalog *c);
/*
 * Exactly the len bytes at p into out (out->dir NULL). 0, or -1 with out empty
 * for anything malformed: every count and length is checked against what is left.
 */
int catcodec_decode(const void *p, size_t len, struct catalog *out);

/* A whole cache file's bytes: 0 and out filled if they hold key's catalog, else -1. */
int catcache_parse(const void *p, size_t len, const struct buf *key, struct catalog *out);

/* The cache at path, trusted only as a regular 0600 file of this uid with one link. */
int catcache_read(const char *path, const struct buf *key, struct catalog *out);
/* Replace path atomically (temp file in its directory, fsync, rename). 0 or -1. */
int catcache_write(const char *path, const struct buf *key, const struct catalog *c);

#endif
