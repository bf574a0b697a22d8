/* A validator's output with the rendered file's secrets redacted (see toolout.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "render/redact.h"
#include "render/toolout.h"

struct secrets {
	const char *data;
	size_t len;
	const struct tpl_span *v;
	size_t n;
	char *pub; /* data with every span's bytes zeroed: what the file shows */
};

/* A secret's text at p: the longest span (or its unquoted inside) starting there; 0 if none. */
static size_t secret_at(const struct secrets *s, const char *p, size_t room)
{
	size_t best = 0;
	for (size_t i = 0; i < s->n; i++) {
		const char *v = s->data + s->v[i].off;
		size_t len = s->v[i].len;
		if (len >= 2 && v[0] == '"' && v[len - 1] == '"' && len - 2 > best &&
		    len - 2 <= room && memcmp(p, v + 1, len - 2) == 0)
			best = len - 2;
		if (len > best && len <= room && memcmp(p, v, len) == 0)
			best = len;
	}
	return best;
}

/* The file holds t only inside spans: a piece of a secret. */
static bool secret_piece(const struct secrets *s, const char *t, size_t n)
{
	if (n == 0 || memmem(s->pub, s->len, t, n) != NULL)
		return false;
	for (size_t i = 0; i < s->n; i++)
		if (memmem(s->data + s->v[i].off, s->v[i].len, t, n) != NULL)
			return true;
	return false;
}

static bool is_sep(char c)
{
	return strchr(" \t\n\"'`:,;()[]{}=", c) != NULL;
}

void toolout_redact(const char *out, size_t n, const char *data, size_t len,
                    const struct tpl_span *spans, size_t nspans, struct buf *res)
{
	if (nspans == 0) {
		buf_add(res, out, n);
		return;
	}
	struct secrets s = {data, len, spans, nspans, NULL};
	s.pub = memcpy(xmalloc(len + 1), data, len);
	for (size_t i = 0; i < nspans; i++)
		if (spans[i].off <= len && spans[i].len <= len - spans[i].off)
			memset(s.pub + spans[i].off, '\0', spans[i].len);
	size_t i = 0;
	while (i < n) {
		size_t k = secret_at(&s, out + i, n - i);
		if (k >
		    0) { /* a quoted secret keeps its quotes: the line still reads as the tool's */
			bool q = k >= 2 && out[i] == '"' && out[i + k - 1] == '"';
			buf_adds(res, q ? "\"" REDACTED "\"" : REDACTED);
			i += k;
			continue;
		}
		if (out[i] == '"') { /* a quoted string: whole, as the tool quoted it */
			const char *end = memchr(out + i + 1, '"', n - i - 1);
			const char *nl = memchr(out + i + 1, '\n', n - i - 1);
			if (end != NULL && (nl == NULL || end < nl) &&
			    secret_piece(&s, out + i + 1, (size_t)(end - out - i - 1))) {
				buf_adds(res, "\"" REDACTED "\"");
				i = (size_t)(end - out) + 1;
				continue;
			}
		}
		if (is_sep(out[i])) {
			buf_addc(res, out[i++]);
			continue;
		}
		size_t w = i;
		while (w < n && !is_sep(out[w]) && secret_at(&s, out + w, n - w) == 0)
			w++;
		if (w - i >= 2 && secret_piece(&s, out + i, w - i))
			buf_adds(res, REDACTED);
		else
			buf_add(res, out + i, w - i);
		i = w;
	}
	free(s.pub);
}
