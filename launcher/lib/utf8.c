/* Validating one UTF-8 sequence (see utf8.h). */
#include "lib/utf8.h"

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

/* Whether p[0..k) so far can begin a valid sequence of len bytes. */
static bool valid_prefix(const unsigned char *p, size_t k, size_t len)
{
	for (size_t i = 1; i < k; i++)
		if ((p[i] & 0xc0) != 0x80)
			return false;
	if (k < 2)
		return true;
	if (len == 2)
		return p[0] != 0xc2 || p[1] >= 0xa0;
	if (len == 3)
		return !(p[0] == 0xe0 && p[1] < 0xa0) && !(p[0] == 0xed && p[1] >= 0xa0);
	return !(p[0] == 0xf0 && p[1] < 0x90) && !(p[0] == 0xf4 && p[1] >= 0x90);
}

size_t utf8_seq(const unsigned char *p, size_t n, bool *cut)
{
	size_t len = n > 0 ? lead_len(p[0]) : 0, have = n < len ? n : len;
	*cut = false;
	if (len == 0 || !valid_prefix(p, have, len))
		return 0;
	if (have < len) {
		*cut = true;
		return 0;
	}
	return len;
}
