/*
 * rbconf's strings: single- and double-quoted strings with Ruby's escapes
 * (\\n \\x \\u{...} octal, ...) decoded into the arena, and symbols. A
 * double-quoted string that interpolates is not a literal: the caller rewinds
 * and keeps it opaque.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config/rbconf_parse.h"
#include "lib/ascii.h"

static size_t utf8_put(char *out, unsigned long cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* One codepoint of hex digits at *i (at most `max` digits, at least one); -1 if none. */
static long read_hex(const struct parser *p, size_t *i, size_t end, int max)
{
	long cp = 0;
	int n = 0;
	while (*i < end && n < max && ascii_hexval(at(p, *i)) >= 0) {
		cp = cp * 16 + ascii_hexval(at(p, *i));
		(*i)++;
		n++;
	}
	return n == 0 ? -1 : cp;
}

static bool put_codepoint(struct parser *p, size_t esc, long cp, char *out, size_t *o)
{
	if (cp < 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
		rbl_fail_at(p, esc, "invalid Unicode escape");
		return false;
	}
	*o += utf8_put(out + *o, (unsigned long)cp);
	return true;
}

/* \u{41 42}: codepoints separated by blanks (Ruby takes "\u{}" as nothing). i is after "\u{". */
static bool decode_ubrace(struct parser *p, size_t esc, size_t *i, size_t end, char *out, size_t *o)
{
	for (;;) {
		while (*i < end && (at(p, *i) == ' ' || at(p, *i) == '\t'))
			(*i)++;
		if (*i < end && at(p, *i) == '}') {
			(*i)++;
			return true;
		}
		long cp = read_hex(p, i, end, 6);
		if (cp < 0 || ascii_hexval(at(p, *i)) >= 0) {
			rbl_fail_at(p, esc, "invalid Unicode escape");
			return false;
		}
		if (!put_codepoint(p, esc, cp, out, o))
			return false;
	}
}

/* "#{x}", "#@ivar", "#@@cvar", "#$global", "#$1": as Ruby's lexer decides after a '#'. */
static bool interpolates(const struct parser *p, size_t i)
{
	int c = at(p, i + 1), n = at(p, i + 2);
	if (c == '{')
		return true;
	if (c == '@')
		return is_ident_start(n == '@' ? at(p, i + 3) : n);
	if (c != '$')
		return false;
	if (n == '-')
		return is_ident(at(p, i + 3));
	return is_ident(n) || (n > 0 && strchr("~*$?!@/\\;,.=:<>\"&`'+", n) != NULL);
}

/* The byte of a one-letter escape (\n, \t, ...), or -1. */
static int letter_escape(int c)
{
	static const char from[] = "ntresabfv", to[] = "\n\t\r\x1b \a\b\f\v";
	const char *f = c > 0 ? strchr(from, c) : NULL;
	return f != NULL ? (unsigned char)to[f - from] : -1;
}

/* \uXXXX or \u{X...}; i is after the 'u'. false after an error. */
static bool decode_unicode(struct parser *p, size_t esc, size_t *i, size_t e, char *out, size_t *o)
{
	if (*i < e && at(p, *i) == '{') {
		(*i)++;
		return decode_ubrace(p, esc, i, e, out, o);
	}
	size_t h = *i;
	long cp = read_hex(p, i, e, 4);
	if (cp < 0 || *i - h != 4) {
		rbl_fail_at(p, esc, "invalid Unicode escape");
		return false;
	}
	return put_codepoint(p, esc, cp, out, o);
}

/* \0 to \377: up to three octal digits, the first already read as c. */
static char decode_octal(const struct parser *p, int c, size_t *i, size_t e)
{
	int v = c - '0';
	for (int k = 0; k < 2 && *i < e && at(p, *i) >= '0' && at(p, *i) <= '7'; k++)
		v = v * 8 + (at(p, (*i)++) - '0');
	return (char)(v & 0xff);
}

/* The escape at esc (a backslash); *i moves past it. 1, 0 when it needs Ruby, -1 on error. */
static int decode_escape(struct parser *p, size_t esc, size_t *i, size_t e, char *out, size_t *o)
{
	*i = esc + 1;
	int c = at(p, (*i)++);
	if (letter_escape(c) >= 0) {
		out[(*o)++] = (char)letter_escape(c);
	} else if (c == '\n') {
		/* a line continuation */
	} else if (c == 'x') {
		long v = read_hex(p, i, e, 2);
		if (v < 0) {
			rbl_fail_at(p, esc, "invalid hex escape");
			return -1;
		}
		out[(*o)++] = (char)v;
	} else if (c == 'u') {
		return decode_unicode(p, esc, i, e, out, o) ? 1 : -1;
	} else if (c == 'c' || c == 'C' || c == 'M') {
		return 0;
	} else if (c >= '0' && c <= '7') {
		out[(*o)++] = decode_octal(p, c, i, e);
	} else {
		out[(*o)++] = (char)c; /* \\ \" and unknown escapes: the character */
	}
	return 1;
}

/*
 * Decode a double-quoted body [b, e) into out (which has e - b + 1 bytes).
 * Returns 1, 0 when the string needs Ruby (interpolation, \M- \c escapes), -1 on error.
 */
static int decode_dq(struct parser *p, size_t b, size_t e, char *out, size_t *outlen)
{
	size_t o = 0;
	for (size_t i = b; i < e;) {
		int c = at(p, i);
		if (c == '#' && interpolates(p, i))
			return 0;
		if (c != '\\') {
			out[o++] = (char)c;
			i++;
			continue;
		}
		int rc = decode_escape(p, i, &i, e, out, &o);
		if (rc <= 0)
			return rc;
	}
	out[o] = '\0';
	*outlen = o;
	return 1;
}

struct rb_value *rbp_make_str(struct parser *p, enum rb_kind kind, size_t start, char *buf,
                              size_t n)
{
	struct rb_value *v = rbp_new_value(p, kind, start);
	if (v == NULL)
		return NULL;
	v->u.s.ptr = buf;
	v->u.s.len = n;
	return v;
}

/*
 * The closing quote of the string opened at p->pos (a backslash skips the
 * next byte) in *end, and an arena buffer big enough for its bytes; false
 * after failing.
 */
static bool quoted_extent(struct parser *p, char quote, size_t *end, char **buf)
{
	size_t q = p->pos, i = q + 1;
	while (i < p->len && p->s[i] != quote)
		i += p->s[i] == '\\' ? 2 : 1;
	if (i >= p->len) {
		rbl_fail_unterminated(p, q, "string");
		return false;
	}
	rbl_string_seen(p, q, i);
	*end = i;
	*buf = rbl_palloc(p, i - q);
	return *buf != NULL;
}

struct rb_value *rbp_parse_sq(struct parser *p, enum rb_kind kind, size_t start)
{
	size_t q = p->pos, i;
	char *buf;
	if (!quoted_extent(p, '\'', &i, &buf))
		return NULL;
	size_t o = 0;
	for (size_t k = q + 1; k < i; k++) {
		if (p->s[k] == '\\' && (p->s[k + 1] == '\\' || p->s[k + 1] == '\''))
			k++;
		buf[o++] = p->s[k];
	}
	buf[o] = '\0';
	p->pos = i + 1;
	return rbp_make_str(p, kind, start, buf, o);
}

struct rb_value *rbp_parse_dq(struct parser *p, enum rb_kind kind, size_t start)
{
	size_t q = p->pos, i;
	char *buf;
	if (!quoted_extent(p, '"', &i, &buf))
		return NULL;
	size_t n = 0;
	int r = decode_dq(p, q + 1, i, buf, &n);
	if (r <= 0)
		return NULL;
	p->pos = i + 1;
	return rbp_make_str(p, kind, start, buf, n);
}

struct rb_value *rbp_parse_symbol(struct parser *p)
{
	size_t start = p->pos;
	int n = peek1(p);
	if (n == '"' || n == '\'') {
		p->pos++;
		return n == '"' ? rbp_parse_dq(p, RB_SYM, start) : rbp_parse_sq(p, RB_SYM, start);
	}
	if (!is_ident_start(n))
		return NULL;
	size_t e = rbl_ident_end(p, start + 1);
	if (at(p, e) == '?' || at(p, e) == '!')
		e++;
	char *name = rbl_pstrndup(p, p->s + start + 1, e - start - 1);
	if (name == NULL)
		return NULL;
	p->pos = e;
	return rbp_make_str(p, RB_SYM, start, name, e - start - 1);
}

/* The end of the word at i of a %w list closed by close (a backslash takes the next byte). */
static size_t word_end(const struct parser *p, size_t i, char close)
{
	while (i < p->len && !ascii_space(p->s[i]) && p->s[i] != close)
		i += p->s[i] == '\\' && i + 1 < p->len ? 2 : 1;
	return i;
}

struct rb_value *rbp_parse_words(struct parser *p)
{
	static const char opens[] = "([{<", closes[] = ")]}>";
	size_t start = p->pos;
	int kind = at(p, start + 1), open = at(p, start + 2);
	const char *o = open > 0 ? strchr(opens, open) : NULL;
	if (at(p, start) != '%' || (kind != 'w' && kind != 'i') || o == NULL)
		return NULL;
	char close = closes[o - opens];
	struct vec vec = {0};
	size_t i = start + 3;
	for (;;) {
		while (i < p->len && ascii_space(p->s[i]))
			i++;
		if (i >= p->len) {
			rbl_fail_unterminated(p, start, "%-literal");
			return NULL;
		}
		if (p->s[i] == close)
			break;
		size_t e = word_end(p, i, close), n = 0;
		if (memchr(p->s + i, open, e - i) != NULL)
			return NULL; /* nested delimiters: Ruby's to judge, kept opaque */
		char *buf = rbl_palloc(p, e - i + 1);
		if (buf == NULL)
			return NULL;
		for (size_t k = i; k < e; k++)
			buf[n++] = p->s[k] == '\\' && k + 1 < e ? p->s[++k] : p->s[k];
		buf[n] = '\0';
		struct rb_value *v = rbp_make_str(p, kind == 'w' ? RB_STR : RB_SYM, i, buf, n);
		if (v == NULL || !rbl_vec_push(p, &vec, &v, sizeof v))
			return NULL;
		i = e;
	}
	rbl_string_seen(p, start, i);
	struct rb_value *l = rbp_new_value(p, RB_ARRAY, start);
	if (l == NULL)
		return NULL;
	l->u.a.v = vec.v;
	l->u.a.n = vec.n;
	p->pos = i + 1;
	return l;
}
