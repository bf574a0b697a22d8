/*
 * buf: the one growable byte buffer. Always NUL-terminated once anything was
 * added (buf_str() is "" before), so text built in it can be handed to
 * string functions; growth is overflow-checked and dies with 111 when memory
 * runs out (lib/alloc.h), so appends cannot fail and callers check nothing.
 */
#ifndef GITLAB_CTL_BUF_H
#define GITLAB_CTL_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct buf {
	char *p; /* NULL until the first append */
	size_t len, cap;
};

void buf_init(struct buf *b);
/* Free the bytes; b is empty and reusable. */
void buf_free(struct buf *b);
/* Empty b, keeping its memory for the next use. */
void buf_reset(struct buf *b);
/* Drop everything after the first len bytes (len <= b->len): undo appends. */
void buf_truncate(struct buf *b, size_t len);

void buf_add(struct buf *b, const void *s, size_t n);
void buf_adds(struct buf *b, const char *s);
void buf_addc(struct buf *b, char c);
void buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Make room for n more bytes (and the NUL) and return where they go; after
 * writing k <= n of them, buf_commit(b, k) counts them. For read(2).
 */
char *buf_room(struct buf *b, size_t n);
void buf_commit(struct buf *b, size_t k);

/* The contents as a string: "" when empty, never NULL. */
const char *buf_str(const struct buf *b);

/* Hand the malloc'd string to the caller (never NULL); b is left empty. */
char *buf_take(struct buf *b);

#endif
