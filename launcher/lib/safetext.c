/* Escaping untrusted output for a terminal (see safetext.h). */
#include "lib/safetext.h"

/* Length of the UTF-8 sequence led by c, 0 if c cannot lead one. */
static size_t lead_len(unsigned char c)
{
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef)
		return 3;
	if (c >= 0xf0 && c <= 0xf4)
		return 4;
	return 0;
}

/*
 * Whether p[0..k) so far can begin a valid sequence of len bytes: continuation bytes,
 * no overlong form, no surrogate, nothing above U+10FFFF, and no C1 control (U+0080..9F).
 */
static int valid_prefix(const unsigned char *p, size_t k, size_t len)
{
	for (size_t i = 1; i < k; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (k < 2)
		return 1;
	if (len == 2)
		return p[0] != 0xc2 || p[1] >= 0xa0;
	if (len == 3)
		return !(p[0] == 0xe0 && p[1] < 0xa0) && !(p[0] == 0xed && p[1] >= 0xa0);
	return !(p[0] == 0xf0 && p[1] < 0x90) && !(p[0] == 0xf4 && p[1] >= 0x90);
}

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
		size_t len = lead_len(c), have = n - i < len ? n - i : len;
		if (len != 0 && valid_prefix(p + i, have, len)) {
			if (have < len && (flags & SAFETEXT_MORE))
				return i;
			if (have == len) {
				buf_add(dst, p + i, len);
				i += len;
				continue;
			}
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
