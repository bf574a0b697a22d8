/*
 * arena: the strings of one run, allocated by bumping a pointer in large chunks and freed all
 * at once. For the many small strings that live as long as a structure does (a service's
 * vars): one malloc per chunk instead of one per string, and one free per chunk at the end.
 * Out of memory: lib/alloc's policy (exit 111).
 */
#ifndef GITLAB_CTL_ARENA_H
#define GITLAB_CTL_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *head; /* the chunk being filled; the older ones behind it */
	size_t used, size;        /* of head's bytes */
};

#define ARENA_CHUNK 16384 /* bytes per chunk; a larger request gets a chunk of its own */

/* An empty arena: nothing is allocated until the first request. */
void arena_init(struct arena *a);

/* n bytes (n == 0: a unique pointer), aligned for any type, valid until arena_free. */
void *arena_alloc(struct arena *a, size_t n);
char *arena_strdup(struct arena *a, const char *s);
/* The first n bytes of s (fewer at its NUL), NUL-terminated. */
char *arena_strndup(struct arena *a, const char *s, size_t n);

/* Free every chunk: each pointer the arena gave is invalid; a is empty again. */
void arena_free(struct arena *a);

#endif
