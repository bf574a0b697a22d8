/* Escaping untrusted output for a terminal (see safetext.h). */
#include "lib/safetext.h"

#include "lib/utf8.h"

static int kept_control(unsigned char c, unsigned flags)
{
	if ((flags & SAFETEXT_NL) && (c == '\n' || c == '\t'))
		return 1;
	return (flags & SAFETEXT_TTY) && (c == '\r' || c == '\b');
}

size_t safetext_add(struct buf *dst, const char *s, size_t n, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned char c = p[i];
		if ((c >= 0x20 && c < 0x7f) || kept_control(c, flags)) {
			buf_addc(dst, (char)c);
			i++;
			continue;
		}
		bool cut;
		size_t len = utf8_seq(p + i, n - i, &cut);
		if (cut && (flags & SAFETEXT_MORE))
			return i;
		if (len != 0) {
			buf_add(dst, p + i, len);
			i += len;
			continue;
		}
		buf_addf(dst, "\\x%02x", c);
		i++;
	}
	return i;
}

void safetext_put(FILE *fp, const char *p, size_t n, unsigned flags)
{
	struct buf b;
	buf_init(&b);
	safetext_add(&b, p, n, flags & ~(unsigned)SAFETEXT_MORE);
	if (b.len > 0)
		fwrite(b.p, 1, b.len, fp);
	buf_free(&b);
}
