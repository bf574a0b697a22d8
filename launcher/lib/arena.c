/* Bump allocation in chunks, freed at once (see arena.h). */
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/arena.h"

struct arena_chunk {
	struct arena_chunk *next;
	alignas(max_align_t) unsigned char data[];
};

#define ALIGN alignof(max_align_t)

void arena_init(struct arena *a)
{
	a->head = NULL;
	a->used = a->size = 0;
}

/* A new head chunk of at least need bytes; the one it replaces keeps what it gave. */
static void new_chunk(struct arena *a, size_t need)
{
	size_t size = need > ARENA_CHUNK ? need : ARENA_CHUNK;
	if (size > SIZE_MAX - sizeof(struct arena_chunk))
		die_nomem();
	struct arena_chunk *c = xmalloc(sizeof *c + size);
	c->next = a->head;
	a->head = c;
	a->used = 0;
	a->size = size;
}

void *arena_alloc(struct arena *a, size_t n)
{
	if (n > SIZE_MAX - ALIGN)
		die_nomem();
	size_t want = (n + ALIGN - 1) / ALIGN * ALIGN;
	if (want == 0)
		want = ALIGN;
	if (a->head == NULL || a->size - a->used < want)
		new_chunk(a, want);
	void *p = a->head->data + a->used;
	a->used += want;
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	if (len == SIZE_MAX)
		die_nomem();
	char *p = arena_alloc(a, len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, SIZE_MAX);
}

void arena_free(struct arena *a)
{
	while (a->head != NULL) {
		struct arena_chunk *next = a->head->next;
		free(a->head);
		a->head = next;
	}
	arena_init(a);
}
