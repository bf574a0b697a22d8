/* RFC 1321 MD5 (see md5.h). */
#include <stdint.h>
#include <string.h>

#include "lib/md5.h"

static uint32_t rol(uint32_t x, unsigned c)
{
	return (x << c) | (x >> (32 - c));
}

/* One 64-byte block into the state h. */
static void block(uint32_t h[4], const unsigned char *b)
{
	static const unsigned s[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
	                               5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
	                               4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
	                               6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};
	/* RFC 1321's T[i] = floor(abs(sin(i + 1)) * 2^32) */
	static const uint32_t k[64] = {
	    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
	    0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
	    0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
	    0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
	    0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
	    0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
	    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
	    0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
	    0xeb86d391};
	uint32_t m[16];
	for (int i = 0; i < 16; i++)
		m[i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 |
		       (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24;
	uint32_t a = h[0], bb = h[1], c = h[2], d = h[3];
	for (unsigned i = 0; i < 64; i++) {
		uint32_t f;
		unsigned g;
		if (i < 16)
			f = (bb & c) | (~bb & d), g = i;
		else if (i < 32)
			f = (d & bb) | (~d & c), g = (5 * i + 1) % 16;
		else if (i < 48)
			f = bb ^ c ^ d, g = (3 * i + 5) % 16;
		else
			f = c ^ (bb | ~d), g = (7 * i) % 16;
		uint32_t t = d;
		d = c;
		c = bb;
		bb = bb + rol(a + f + k[i] + m[g], s[i]);
		a = t;
	}
	h[0] += a, h[1] += bb, h[2] += c, h[3] += d;
}

void md5_hex(const void *p, size_t n, char hex[33])
{
	uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
	const unsigned char *in = p;
	size_t left = n;
	for (; left >= 64; left -= 64, in += 64)
		block(h, in);
	unsigned char tail[128] = {0};
	memcpy(tail, in, left);
	tail[left] = 0x80;
	size_t tl = left < 56 ? 64 : 128;
	uint64_t bits = (uint64_t)n * 8;
	for (int i = 0; i < 8; i++)
		tail[tl - 8 + (size_t)i] = (unsigned char)(bits >> (8 * i));
	block(h, tail);
	if (tl == 128)
		block(h, tail + 64);
	memset(tail, 0, sizeof tail); /* it held the end of a password */
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		unsigned char byte = (unsigned char)(h[i / 4] >> (8 * (i % 4)));
		hex[2 * i] = digits[byte >> 4];
		hex[2 * i + 1] = digits[byte & 15];
	}
	hex[32] = '\0';
}
