/* The growable byte buffer (see buf.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/grow.h"

void buf_init(struct buf *b)
{
	memset(b, 0, sizeof *b);
}

void buf_free(struct buf *b)
{
	free(b->p);
	buf_init(b);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->p != NULL)
		b->p[0] = '\0';
}

char *buf_room(struct buf *b, size_t n)
{
	if (n > SIZE_MAX - 1 - b->len)
		die_nomem(); /* no size_t can hold it: no allocation could either */
	grow(&b->p, &b->cap, b->len + n + 1, 1, 256);
	return b->p + b->len;
}

void buf_commit(struct buf *b, size_t k)
{
	b->len += k;
	b->p[b->len] = '\0';
}

void buf_truncate(struct buf *b, size_t len)
{
	if (b->p == NULL || len >= b->len)
		return;
	b->len = len;
	b->p[len] = '\0';
}

void buf_add(struct buf *b, const void *s, size_t n)
{
	char *to = buf_room(b, n);
	if (n > 0)
		memcpy(to, s, n);
	buf_commit(b, n);
}

void buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		die_nomem(); /* glibc fails only on allocation, or EOVERFLOW past INT_MAX */
	char *to = buf_room(b, (size_t)n);
	va_start(ap, fmt);
	(void)vsnprintf(to, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf_commit(b, (size_t)n);
}

const char *buf_str(const struct buf *b)
{
	return b->p != NULL ? b->p : "";
}

char *buf_take(struct buf *b)
{
	char *s = b->p != NULL ? b->p : xstrdup("");
	buf_init(b);
	return s;
}
