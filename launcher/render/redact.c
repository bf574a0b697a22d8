/* What a diff may show of a file holding secrets (see redact.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/grow.h"
#include "render/redact.h"

void redact_new(const char *data, size_t len, const struct tpl_span *spans, size_t n,
                struct buf *out)
{
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		if (spans[i].off < at || spans[i].off > len)
			continue; /* not ascending: already covered */
		buf_add(out, data + at, spans[i].off - at);
		buf_adds(out, REDACTED);
		at = spans[i].off + spans[i].len < len ? spans[i].off + spans[i].len : len;
	}
	buf_add(out, data + at, len - at);
}

/* One line of the new content: public, or the text around its secret bytes. */
struct nline {
	const char *p;
	size_t len;
	bool secret;
	size_t pre, post; /* secret: bytes before the first span, after the last */
};

static void classify(struct nline *l, size_t off, const struct tpl_span *spans, size_t n)
{
	size_t end = off + l->len;
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		size_t s = spans[i].off, e = spans[i].off + spans[i].len;
		if (e <= off || s >= end + 1) /* the newline counts: a span may end past it */
			continue;
		if (first)
			l->pre = s > off ? s - off : 0;
		first = false;
		l->post = e < end ? end - e : 0;
		l->secret = true;
	}
}

static struct nline *new_lines(const char *data, size_t len, const struct tpl_span *spans, size_t n,
                               size_t *count)
{
	struct nline *v = NULL;
	size_t nv = 0, cap = 0;
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(data + off, '\n', len - off);
		size_t ll = nl ? (size_t)(nl - (data + off)) : len - off;
		grow(&v, &cap, nv + 1, sizeof *v, 16);
		v[nv] = (struct nline){data + off, ll, false, 0, 0};
		classify(&v[nv], off, spans, n);
		nv++;
		off += ll + (nl != NULL);
	}
	*count = nv;
	return v;
}

static bool same(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && memcmp(a, b, alen) == 0;
}

/* How one old line may show: as is, as a new secret line's shape, or REDACTED. */
static void old_line(const char *p, size_t len, const struct nline *v, size_t nv, struct buf *out)
{
	for (size_t i = 0; i < nv; i++)
		if (!v[i].secret && same(p, len, v[i].p, v[i].len)) {
			buf_add(out, p, len);
			return;
		}
	for (size_t i = 0; i < nv; i++) {
		const struct nline *l = &v[i];
		if (!l->secret || len < l->pre + l->post || memcmp(p, l->p, l->pre) != 0 ||
		    memcmp(p + len - l->post, l->p + l->len - l->post, l->post) != 0)
			continue;
		buf_add(out, p, l->pre);
		buf_adds(out, REDACTED);
		buf_add(out, p + len - l->post, l->post);
		return;
	}
	buf_adds(out, REDACTED);
}

void redact_old(const char *old, size_t oldlen, const char *data, size_t len,
                const struct tpl_span *spans, size_t n, struct buf *out)
{
	size_t nv;
	struct nline *v = new_lines(data, len, spans, n, &nv);
	for (size_t off = 0; off < oldlen;) {
		const char *nl = memchr(old + off, '\n', oldlen - off);
		size_t ll = nl ? (size_t)(nl - (old + off)) : oldlen - off;
		old_line(old + off, ll, v, nv, out);
		if (nl != NULL)
			buf_addc(out, '\n');
		off += ll + (nl != NULL);
	}
	free(v);
}
