/*
 * ascii: the one set of character classes. Spelled out rather than <ctype.h>: the answer
 * must not depend on the locale the operator runs in, and a byte >= 0x80 (UTF-8) is never
 * a letter, digit or space. Any int or char may be passed (no cast to unsigned char).
 */
#ifndef GITLAB_CTL_ASCII_H
#define GITLAB_CTL_ASCII_H

#include <stdbool.h>
#include <stddef.h>

static inline bool ascii_digit(int c)
{
	return c >= '0' && c <= '9';
}

static inline bool ascii_lower(int c)
{
	return c >= 'a' && c <= 'z';
}

static inline bool ascii_upper(int c)
{
	return c >= 'A' && c <= 'Z';
}

static inline bool ascii_alpha(int c)
{
	return ascii_lower(c) || ascii_upper(c);
}

static inline bool ascii_alnum(int c)
{
	return ascii_alpha(c) || ascii_digit(c);
}

/* Space or tab. */
static inline bool ascii_blank(int c)
{
	return c == ' ' || c == '\t';
}

/* isspace(3) of the C locale: blank, \n, \v, \f, \r. */
static inline bool ascii_space(int c)
{
	return ascii_blank(c) || (c >= '\n' && c <= '\r');
}

/* n bytes at s, 1 to max of them, all digits (a bounded unsigned decimal). */
static inline bool ascii_digits(const char *s, size_t n, size_t max)
{
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!ascii_digit(s[i]))
			return false;
	return true;
}

/* The value of a hex digit, either case; -1 for any other character. */
static inline int ascii_hexval(int c)
{
	if (ascii_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
