/* The JSON string escaper (see json.h). */
#include "lib/json.h"

#include <string.h>

#include "lib/utf8.h"

void json_str_add(struct buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	buf_addc(b, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\') {
			buf_addc(b, '\\');
			buf_addc(b, (char)c);
			i++;
			continue;
		}
		if (c >= 0x20 && c < 0x7f) {
			buf_addc(b, (char)c);
			i++;
			continue;
		}
		bool cut;
		size_t len = utf8_seq(p + i, n - i, &cut);
		if (len != 0) {
			buf_add(b, p + i, len);
			i += len;
		} else if (c == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) {
			/* U+0080..U+009F: one escape for the character, not two for its bytes. */
			buf_addf(b, "\\u%04x", p[i + 1]);
			i += 2;
		} else {
			buf_addf(b, "\\u%04x", c);
			i++;
		}
	}
	buf_addc(b, '"');
}

void json_strn_put(FILE *fp, const char *s, size_t n)
{
	struct buf b;
	buf_init(&b);
	json_str_add(&b, s, n);
	fwrite(b.p, 1, b.len, fp);
	buf_free(&b);
}

void json_str_put(FILE *fp, const char *s)
{
	if (s == NULL)
		fputs("null", fp);
	else
		json_strn_put(fp, s, strlen(s));
}
