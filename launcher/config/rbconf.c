/*
 * rbconf: the parser of the gitlab.rb subset (README: Configuration): literals,
 * statements and the public API; its cursor is rblex, its scanner of Ruby it
 * cannot evaluate is rbscan.
 *
 * Values are parsed as literals first. When a value turns out to be any other
 * Ruby (an identifier, an operator on non-integers, an interpolated string,
 * a heredoc, ...), the parser rewinds to the start of that value and skips
 * Ruby tokens (strings, brackets, heredocs, percent literals) until the value
 * ends, keeping the source text as one RB_OPAQUE value. Containers keep their
 * literal structure around an opaque element so that callers can point at it.
 *
 * The first error stops the parse: one precise location beats a cascade.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/rbconf.h"
#include "config/secret.h"
#include "config/rblex.h"
#include "config/rbscan.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/readfile.h"

/* Failed literal attempts and opaque copies may re-copy text; bound the total. */
#define ARENA_LIMIT ((size_t)RB_MAX_FILE * 8u)

/* --------------------------------------------------------------- literals */

static struct rb_value *new_value(struct parser *p, enum rb_kind kind, size_t pos)
{
	struct rb_value *v = p->spare ? p->spare : rbl_palloc(p, sizeof *v);
	p->spare = NULL;
	if (v == NULL)
		return NULL;
	memset(v, 0, sizeof *v);
	v->kind = kind;
	v->loc = rbl_loc_at(p, pos);
	return v;
}

static struct rb_value *scan_opaque(struct parser *p, int ctx)
{
	size_t start = p->pos;
	p->tok_end = start;
	rbscan_tokens(p, 0, 0, ctx);
	if (p->failed)
		return NULL;
	size_t end = p->tok_end;
	if (end == start) {
		char what[40];
		rbl_describe(p, start, what, sizeof what);
		rbl_fail_at(p, start, "expected a value, found %s", what);
		return NULL;
	}
	if (ctx == 0 && p->npend > 0 && peek(p) != ';') {
		/* The heredoc bodies follow this line: keep them in the value's text. */
		if (peek(p) == '#')
			rbl_skip_comment(p);
		if (peek(p) == '\n') {
			rbl_newline(p);
			if (p->failed)
				return NULL;
			end = p->hd_end;
			p->stmt_done = true;
		}
	}
	struct rb_value *v = new_value(p, RB_OPAQUE, start);
	if (v == NULL)
		return NULL;
	v->u.s.ptr = rbl_pstrndup(p, p->s + start, end - start);
	v->u.s.len = end - start;
	return v->u.s.ptr ? v : NULL;
}

static int hexval(int c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

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
	while (*i < end && n < max && hexval(at(p, *i)) >= 0) {
		cp = cp * 16 + hexval(at(p, *i));
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
		if (cp < 0 || hexval(at(p, *i)) >= 0) {
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

static struct rb_value *make_str(struct parser *p, enum rb_kind kind, size_t start, char *buf,
                                 size_t n)
{
	struct rb_value *v = new_value(p, kind, start);
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

/* 'single': only \\ and \' are escapes. pos is at the quote; start is the value's start. */
static struct rb_value *parse_sq(struct parser *p, enum rb_kind kind, size_t start)
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
	return make_str(p, kind, start, buf, o);
}

/* "double": NULL without failing when it needs Ruby (interpolation). */
static struct rb_value *parse_dq(struct parser *p, enum rb_kind kind, size_t start)
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
	return make_str(p, kind, start, buf, n);
}

/* :sym, :"sym", :'sym'. NULL without failing for other Ruby (::X, :+, :@x). */
static struct rb_value *parse_symbol(struct parser *p)
{
	size_t start = p->pos;
	int n = peek1(p);
	if (n == '"' || n == '\'') {
		p->pos++;
		return n == '"' ? parse_dq(p, RB_SYM, start) : parse_sq(p, RB_SYM, start);
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
	return make_str(p, RB_SYM, start, name, e - start - 1);
}

static bool base_digit(int c, int base)
{
	int v = hexval(c);
	return v >= 0 && v < base;
}

/* [start, e) is a decimal float literal with '_' separators. */
static struct rb_value *make_float(struct parser *p, size_t vstart, size_t start, size_t e,
                                   bool neg)
{
	char *buf = rbl_palloc(p, e - start + 2);
	if (buf == NULL)
		return NULL;
	size_t o = 0;
	if (neg)
		buf[o++] = '-';
	for (size_t i = start; i < e; i++)
		if (p->s[i] != '_')
			buf[o++] = p->s[i];
	buf[o] = '\0';
	errno = 0;
	double f = strtod(buf, NULL);
	if (errno == ERANGE && (f > 1.0 || f < -1.0)) {
		rbl_fail_at(p, start, "float literal out of range");
		return NULL;
	}
	struct rb_value *v = new_value(p, RB_FLOAT, vstart);
	if (v != NULL)
		v->u.f = f;
	return v;
}

/* Digits of `base` with single '_' between digits, from pos. Returns false on a bad '_'. */
static bool skip_digits(struct parser *p, int base, bool prev_digit)
{
	for (;;) {
		int c = peek(p);
		if (c == '_') {
			if (!prev_digit || !base_digit(peek1(p), base)) {
				rbl_fail_at(p, p->pos, "malformed number: misplaced '_'");
				return false;
			}
		} else if (!base_digit(c, base)) {
			return true;
		}
		prev_digit = c != '_';
		p->pos++;
	}
}

/*
 * Integer (0x 0o 0b 0d prefixes, leading-0 octal as in Ruby) or float at pos.
 * `start` is where the value starts (its '-' when neg).
 */
/* A 0x, 0o, 0b, 0d prefix or a leading 0 (octal): the base, -1 after an error. */
static int number_base(struct parser *p, bool *implicit_octal)
{
	size_t b = p->pos;
	*implicit_octal = false;
	if (at(p, b) != '0')
		return 10;
	int x = at(p, b + 1) | 0x20;
	if (x == 'x' || x == 'o' || x == 'b' || x == 'd') {
		int base = x == 'x' ? 16 : x == 'o' ? 8 : x == 'b' ? 2 : 10;
		p->pos += 2;
		if (!base_digit(peek(p), base)) {
			rbl_fail_at(p, p->pos, "malformed number");
			return -1;
		}
		return base;
	}
	if (is_digit(at(p, b + 1)) || at(p, b + 1) == '_') {
		*implicit_octal = true;
		p->pos++;
		return 8;
	}
	return 10;
}

/* A fraction and/or exponent after decimal digits: 1 a float, 0 none, -1 after an error. */
static int float_part(struct parser *p)
{
	bool isfloat = false;
	if (peek(p) == '.' && is_digit(peek1(p))) {
		p->pos++;
		if (!skip_digits(p, 10, false))
			return -1;
		isfloat = true;
	}
	int e1 = peek1(p), e2 = at(p, p->pos + 2);
	if ((peek(p) | 0x20) == 'e' &&
	    (is_digit(e1) || ((e1 == '+' || e1 == '-') && is_digit(e2)))) {
		p->pos += is_digit(e1) ? 1 : 2;
		if (!skip_digits(p, 10, false))
			return -1;
		isfloat = true;
	}
	return isfloat ? 1 : 0;
}

/* The digits [ds, p->pos) in base as an integer, range-checked (-2^63 fits when neg). */
static struct rb_value *make_int(struct parser *p, size_t start, size_t ds, int base, bool neg)
{
	unsigned long long mag = 0, limit = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
	for (size_t i = ds; i < p->pos; i++) {
		if (p->s[i] == '_')
			continue;
		unsigned d = (unsigned)hexval(p->s[i]);
		if (mag > (limit - d) / (unsigned)base) {
			rbl_fail_at(p, start, "integer literal out of range");
			return NULL;
		}
		mag = mag * (unsigned)base + d;
	}
	struct rb_value *v = new_value(p, RB_INT, start);
	if (v != NULL)
		v->u.i = !neg ? (long long)mag : mag == limit ? LLONG_MIN : -(long long)mag;
	return v;
}

static struct rb_value *parse_number(struct parser *p, bool neg, size_t start)
{
	size_t b = p->pos;
	bool implicit_octal;
	int base = number_base(p, &implicit_octal);
	if (base == -1)
		return NULL;
	size_t ds = p->pos;
	if (!skip_digits(p, base, implicit_octal))
		return NULL;
	int isfloat = base == 10 && ds == b ? float_part(p) : 0;
	if (isfloat == -1)
		return NULL;
	if (is_alpha(peek(p)) || peek(p) == '_') {
		/* 512mb, 1.5GB: a size or duration meant as a string */
		size_t e = rbl_ident_end(p, p->pos);
		int n = e - start > 40 ? 40 : (int)(e - start);
		if (rbl_hidden_at(p, start))
			rbl_fail_at(p, start, "this value is not a number: quote it");
		else
			rbl_fail_at(p, start, "%.*s is not a number: quote it: '%.*s'", n,
			            p->s + start, n, p->s + start);
		return NULL;
	}
	if (is_ident(peek(p))) {
		rbl_fail_at(p, p->pos, "malformed number");
		return NULL;
	}
	return isfloat ? make_float(p, start, b, p->pos, neg) : make_int(p, start, ds, base, neg);
}

static struct rb_value *parse_value(struct parser *p, int ctx, size_t open);
static struct rb_value *parse_sum(struct parser *p);

/* One element of a list into vec; false on failure or when the text is not a literal. */
typedef bool (*list_item_fn)(struct parser *p, size_t open, struct vec *vec);

/*
 * The items between the opener at p->pos and `closer`, separated by optional
 * commas, pushed by item(); on success the list is its new value of `type`.
 */
static struct rb_value *parse_list(struct parser *p, char closer, enum rb_kind type,
                                   list_item_fn item)
{
	size_t open = p->pos++, outer = p->item_start;
	if (!rbl_enter(p, open))
		return NULL;
	struct vec vec = {0};
	rbl_skip_ws_nl(p);
	while (!p->failed) {
		int c = peek(p);
		if (c == closer) {
			p->pos++;
			break;
		}
		if (c < 0 || is_closer(c)) {
			rbl_fail_unclosed(p, p->pos, open, closer);
			return NULL;
		}
		p->item_start = p->pos;
		if (!item(p, open, &vec))
			return NULL;
		if (peek(p) == ',') {
			p->pos++;
			rbl_skip_ws_nl(p);
		}
	}
	if (p->failed)
		return NULL;
	p->depth--;
	p->item_start = outer;
	struct rb_value *l = new_value(p, type, open);
	if (l == NULL)
		return NULL;
	if (type == RB_ARRAY) {
		l->u.a.v = vec.v;
		l->u.a.n = vec.n;
	} else {
		l->u.h.v = vec.v;
		l->u.h.n = vec.n;
	}
	return l;
}

static bool hash_item(struct parser *p, size_t open, struct vec *vec);

/* Whether a `key =>` or `key:` pair starts at p->pos (looks ahead, consumes nothing). */
static bool pair_ahead(const struct parser *p)
{
	size_t i = p->pos;
	int c = at(p, i);
	if (is_ident_start(c)) {
		size_t e = rbl_ident_end(p, i);
		return at(p, e) == ':' && at(p, e + 1) != ':';
	}
	if (c == '\'' || c == '"') {
		for (i++; i < p->len && p->s[i] != c; i += p->s[i] == '\\' ? 2 : 1)
			;
		if (i >= p->len)
			return false;
		if (at(p, i + 1) == ':' && at(p, i + 2) != ':')
			return true; /* "k": */
		i++;
	} else if (c == ':' && is_ident_start(at(p, i + 1))) {
		i = rbl_ident_end(p, i + 1);
	} else {
		return false;
	}
	while (at(p, i) == ' ' || at(p, i) == '\t')
		i++;
	return at(p, i) == '=' && at(p, i + 1) == '>';
}

/*
 * [ 'a' => 1, 'b' => 2 ]: as in Ruby, pairs at the end of an array literal
 * are one hash (Omnibus' own gitlab.rb writes static_configs that way).
 */
static bool trailing_hash(struct parser *p, size_t open, struct vec *vec)
{
	size_t start = p->pos;
	struct vec pairs = {0};
	while (!p->failed && peek(p) != ']') {
		if (peek(p) < 0 || is_closer(peek(p))) {
			rbl_fail_unclosed(p, p->pos, open, ']');
			return false;
		}
		p->item_start = p->pos;
		if (!hash_item(p, open, &pairs))
			return false;
		if (peek(p) == ',') {
			p->pos++;
			rbl_skip_ws_nl(p);
		}
	}
	struct rb_value *h = new_value(p, RB_HASH, start);
	if (h == NULL)
		return false;
	h->u.h.v = pairs.v;
	h->u.h.n = pairs.n;
	return rbl_vec_push(p, vec, &h, sizeof h);
}

static bool array_item(struct parser *p, size_t open, struct vec *vec)
{
	if (pair_ahead(p))
		return trailing_hash(p, open, vec);
	struct rb_value *v = parse_value(p, ']', open);
	return v != NULL && rbl_vec_push(p, vec, &v, sizeof v);
}

static struct rb_value *parse_array(struct parser *p)
{
	return parse_list(p, ']', RB_ARRAY, array_item);
}

/* After a hash key: "=>". NULL result means "not a literal hash" unless failed. */
static bool expect_arrow(struct parser *p)
{
	rbl_skip_ws_nl(p);
	if (peek(p) == '=' && peek1(p) == '>') {
		p->pos += 2;
		return true;
	}
	int c = peek(p);
	if (c == '\'' || c == '"' || c == ':' || is_ident(c))
		rbl_fail_at(p, p->pos, "expected '=>' after hash key");
	return false;
}

/* A literal hash key: 'k' =>, "k" =>, :k =>, k:, "k":. NULL means "not literal". */
static struct rb_value *parse_key(struct parser *p)
{
	size_t start = p->pos;
	int c = peek(p);
	struct rb_value *k = NULL;
	if (is_ident_start(c)) {
		size_t e = rbl_ident_end(p, start);
		if (at(p, e) != ':' || at(p, e + 1) == ':')
			return NULL;
		char *name = rbl_pstrndup(p, p->s + start, e - start);
		if (name == NULL)
			return NULL;
		p->pos = e + 1;
		return make_str(p, RB_SYM, start, name, e - start);
	}
	if (c == '\'' || c == '"') {
		k = c == '"' ? parse_dq(p, RB_STR, start) : parse_sq(p, RB_STR, start);
		if (k == NULL)
			return NULL;
		if (peek(p) == ':' && peek1(p) != ':') {
			p->pos++;
			k->kind = RB_SYM;
			return k;
		}
	} else if (c == ':') {
		k = parse_symbol(p);
		if (k == NULL)
			return NULL;
	} else {
		return NULL;
	}
	return expect_arrow(p) ? k : NULL;
}

static bool hash_item(struct parser *p, size_t open, struct vec *vec)
{
	struct rb_pair pair = {.key = parse_key(p)};
	if (pair.key == NULL)
		return false;
	rbl_skip_ws_nl(p);
	pair.val = parse_value(p, '}', open);
	return pair.val != NULL && rbl_vec_push(p, vec, &pair, sizeof pair);
}

static struct rb_value *parse_hash(struct parser *p)
{
	return parse_list(p, '}', RB_HASH, hash_item);
}

static struct rb_value *parse_paren(struct parser *p)
{
	size_t open = p->pos++;
	if (!rbl_enter(p, open))
		return NULL;
	rbl_skip_ws_nl(p);
	struct rb_value *v = parse_sum(p);
	if (v == NULL)
		return NULL;
	rbl_skip_ws_nl(p);
	int c = peek(p);
	if (c == ')') {
		p->pos++;
		p->depth--;
		return v;
	}
	if (c < 0 || c == ']' || c == '}')
		rbl_fail_unclosed(p, p->pos, open, ')');
	return NULL;
}

static struct rb_value *parse_primary(struct parser *p)
{
	size_t start = p->pos;
	int c = peek(p);
	switch (c) {
	case '\'':
		return parse_sq(p, RB_STR, start);
	case '"':
		return parse_dq(p, RB_STR, start);
	case '[':
		return parse_array(p);
	case '{':
		return parse_hash(p);
	case '(':
		return parse_paren(p);
	case ':':
		return parse_symbol(p);
	default:
		break;
	}
	if (is_digit(c))
		return parse_number(p, false, start);
	if (!is_ident_start(c) || rbl_fail_smart_quote(p, start))
		return NULL;
	size_t e = rbl_ident_end(p, start);
	int n = at(p, e);
	if (n == '?' || n == '!' || n == ':')
		return NULL;
	struct rb_value *v = NULL;
	if (rbl_word_is(p, start, e, "nil")) {
		v = new_value(p, RB_NIL, start);
	} else if (rbl_word_is(p, start, e, "true") || rbl_word_is(p, start, e, "false")) {
		v = new_value(p, RB_BOOL, start);
		if (v != NULL)
			v->u.b = p->s[start] == 't';
	}
	if (v != NULL)
		p->pos = e;
	return v;
}

static struct rb_value *parse_unary(struct parser *p)
{
	size_t start = p->pos;
	int c = peek(p);
	if (c != '-' && c != '+')
		return parse_primary(p);
	if (is_digit(peek1(p))) {
		p->pos++;
		return parse_number(p, c == '-', start);
	}
	if (!rbl_enter(p, start))
		return NULL;
	p->pos++;
	rbl_skip_sp(p);
	struct rb_value *v = parse_unary(p);
	if (v == NULL)
		return NULL;
	p->depth--;
	if (c == '+' && (v->kind == RB_INT || v->kind == RB_FLOAT))
		return v;
	if (v->kind == RB_FLOAT) {
		v->u.f = -v->u.f;
	} else if (v->kind == RB_INT) {
		if (v->u.i == LLONG_MIN) {
			rbl_fail_at(p, start, "integer overflow");
			return NULL;
		}
		v->u.i = -v->u.i;
	} else {
		return NULL;
	}
	v->loc = rbl_loc_at(p, start);
	return v;
}

/* Ruby's Integer#/ rounds toward negative infinity. */
static long long floor_div(long long a, long long b)
{
	long long q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static bool arith(struct parser *p, size_t op_pos, int op, struct rb_value *l,
                  const struct rb_value *r)
{
	long long a = l->u.i, b = r->u.i, res;
	bool ovf = false;
	switch (op) {
	case '+':
		ovf = __builtin_add_overflow(a, b, &res);
		break;
	case '-':
		ovf = __builtin_sub_overflow(a, b, &res);
		break;
	case '*':
		ovf = __builtin_mul_overflow(a, b, &res);
		break;
	default:
		if (b == 0) {
			rbl_fail_at(p, op_pos, "division by zero");
			return false;
		}
		ovf = a == LLONG_MIN && b == -1;
		res = ovf ? 0 : floor_div(a, b);
		break;
	}
	if (ovf) {
		rbl_fail_at(p, op_pos, "integer overflow in '%c'", op);
		return false;
	}
	l->u.i = res;
	return true;
}

/* A binary operator of `ops` at pos (not "**", "*=", "->", ...)? Consumes it. */
static int binary_op(struct parser *p, const char *ops)
{
	size_t save = p->pos;
	rbl_skip_sp(p);
	int c = peek(p), n = peek1(p);
	if (c > 0 && strchr(ops, c) != NULL && n != '=' && n != c && n != '>') {
		p->pos++;
		return c;
	}
	p->pos = save;
	return 0;
}

static struct rb_value *parse_binary(struct parser *p, const char *ops,
                                     struct rb_value *(*operand)(struct parser *))
{
	struct rb_value *v = operand(p);
	int op;
	while (v != NULL && (op = binary_op(p, ops)) != 0) {
		size_t op_pos = p->pos - 1;
		if (v->kind != RB_INT)
			return NULL;
		rbl_skip_ws_nl(p);
		struct rb_value *r = operand(p);
		if (r == NULL || r->kind != RB_INT || !arith(p, op_pos, op, v, r))
			return NULL;
		p->spare = r; /* folded into v: nothing points to it */
	}
	return v;
}

static struct rb_value *parse_term(struct parser *p)
{
	return parse_binary(p, "*/", parse_unary);
}

static struct rb_value *parse_sum(struct parser *p)
{
	return parse_binary(p, "+-", parse_term);
}

/*
 * After a literal: 1 when the value ends here, 0 when Ruby goes on (an
 * operator: the value is opaque), -1 on an error.
 */
/* Between the items of a list: the ',' or closer that is missing, reported where it belongs. */
static void fail_separator(struct parser *p, int ctx, size_t open, size_t vend, size_t b)
{
	char what[40];
	rbl_describe(p, b, what, sizeof what);
	struct loc item = rbl_loc_at(p, p->item_start);
	bool crossed = memchr(p->s + vend, '\n', b - vend) != NULL;
	rbl_fail_at(p, crossed ? vend : b, "expected ',' or '%c' after the %s at %d:%d, found %s",
	            closer_of(p->s[open]), ctx == '}' ? "hash entry" : "array element", item.line,
	            item.col, what);
}

/* After a list item and a line end, another value means a missing ',' (Ruby's error too). */
static bool missing_separator(const struct parser *p, int ctx, size_t vend, size_t b)
{
	int c = at(p, b);
	if (memchr(p->s + vend, '\n', b - vend) != NULL)
		return c == '\'' || c == '"' || c == ':' || c == '[' || c == '{' ||
		       is_ident_start(c) || is_digit(c);
	/* {'a' => 'x' 'b' => 1}: in an array, ['x' 'b' => 1] is Ruby's [{'xb' => 1}] */
	return ctx == '}' && (c == '\'' || c == '"') && pair_ahead(p);
}

static int value_end(struct parser *p, int ctx, size_t open, const struct rb_value *v)
{
	char what[40];
	size_t vend = p->pos;
	if (ctx == 0)
		rbl_skip_sp(p);
	else
		rbl_skip_ws_nl(p);
	if (p->failed)
		return -1;
	size_t b = p->pos;
	int c = peek(p);
	if (c < 0 || (ctx == 0 && (c == '#' || c == ';')) ||
	    (ctx != 0 && (c == ',' || is_closer(c))))
		return 1;
	if (c == '\n')
		return rbl_continues_next_line(p) ? 0 : 1;
	if (c == '\\' && peek1(p) == '\n')
		return 0;
	if (ctx == 0 && is_closer(c)) {
		rbl_fail_at(p, b, "unexpected '%c'", c);
		return -1;
	}
	if (ctx == 0 && c == ',')
		return 0;
	if (ctx != 0 && missing_separator(p, ctx, vend, b)) {
		if (!rbl_blame_open_string(p, b))
			fail_separator(p, ctx, open, vend, b);
		return -1;
	}
	if (strchr("+-*/%<>=!&|^~?:.[(", c) != NULL)
		return 0;
	if ((c == '\'' || c == '"') && v->kind == RB_STR)
		return 0; /* 'a' 'b' concatenates */
	if (is_ident_start(c)) {
		size_t e = rbl_ident_end(p, b);
		if (rbl_word_in(p, b, e, (const char *const[]){"and", "or", "do", NULL}))
			return 0;
		if (rbl_word_in(
		        p, b, e,
		        (const char *const[]){"if", "unless", "while", "until", "rescue", NULL})) {
			rbl_fail_at(
			    p, b,
			    "'%.*s' modifiers are not supported in gitlab.rb: conditions are "
			    "not evaluated; write the setting this host needs without it",
			    (int)(e - b), p->s + b);
			return -1;
		}
	}
	if (rbl_blame_open_string(p, b))
		return -1;
	if (ctx != 0) {
		fail_separator(p, ctx, open, vend, b);
		return -1;
	}
	rbl_describe(p, b, what, sizeof what);
	rbl_fail_at(p, b, "unexpected %s after value", what);
	return -1;
}

/* A value inside ctx: 0 for a statement, else the closer of the container opened at open. */
static struct rb_value *parse_value(struct parser *p, int ctx, size_t open)
{
	size_t start = p->pos;
	int c = peek(p);
	if (c < 0 || c == '\n' || c == '#' || c == ';' || c == ',' || is_closer(c)) {
		char what[40];
		rbl_describe(p, start, what, sizeof what);
		rbl_fail_at(p, start, "expected a value, found %s", what);
		return NULL;
	}
	struct rbl_mark m;
	rbl_mark(p, &m);
	struct rb_value *v = parse_sum(p);
	if (p->failed)
		return NULL;
	if (v != NULL) {
		int r = value_end(p, ctx, open, v);
		if (r > 0)
			return v;
		if (r < 0)
			return NULL;
	}
	rbl_restore(p, &m);
	return scan_opaque(p, ctx);
}

/* ------------------------------------------------------------- statements */

struct stmt_builder {
	char *keys[RB_MAX_DEPTH];
	struct loc key_locs[RB_MAX_DEPTH];
	size_t nkeys;
};

/* name['key'] or name[:key] after the name: subscripts written without a space. */
static bool parse_subscripts(struct parser *p, struct stmt_builder *sb)
{
	while (peek(p) == '[') {
		size_t open = p->pos++;
		if (sb->nkeys == RB_MAX_DEPTH) {
			rbl_fail_at(p, open, "more than %d subscripts", RB_MAX_DEPTH);
			return false;
		}
		rbl_skip_sp(p);
		size_t kpos = p->pos;
		int c = peek(p);
		struct rb_value *k = NULL;
		if (c == '\'')
			k = parse_sq(p, RB_STR, kpos);
		else if (c == '"')
			k = parse_dq(p, RB_STR, kpos);
		else if (c == ':')
			k = parse_symbol(p);
		if (k == NULL) {
			if (!p->failed && !rbl_fail_smart_quote(p, kpos))
				rbl_fail_at(p, kpos, "expected a literal string or symbol key");
			return false;
		}
		/* Keys are C strings from here on: "a\0b" would silently become "a". */
		if (strlen(k->u.s.ptr) != k->u.s.len) {
			rbl_fail_at(p, kpos, "a subscript key cannot contain a NUL byte");
			return false;
		}
		rbl_skip_sp(p);
		if (peek(p) != ']') {
			rbl_fail_unclosed(p, p->pos, open, ']');
			return false;
		}
		p->pos++;
		sb->keys[sb->nkeys] = k->u.s.ptr;
		sb->key_locs[sb->nkeys++] = k->loc;
	}
	return true;
}

/* After "name =" at the end of a line, Ruby reads the value from the next line. */
static bool value_on_next_line(const struct parser *p)
{
	size_t i = p->pos;
	while (i < p->len) {
		const char *nl = memchr(p->s + i, '\n', p->len - i);
		if (nl == NULL)
			return false;
		i = (size_t)(nl - p->s) + 1;
		size_t j = i;
		while (j < p->len && is_space(at(p, j)))
			j++;
		if (at(p, j) == '\n' || at(p, j) == '#')
			continue;
		/* An indented line continues the assignment; a new statement starts in column 1. */
		return j > i && j < p->len;
	}
	return false;
}

static bool is_op_assign(const struct parser *p)
{
	size_t i = p->pos;
	int c = at(p, i);
	if (c < 0 || strchr("+-*/%|&^<>", c) == NULL)
		return false;
	if (at(p, i + 1) == c && strchr("*|&<>", c) != NULL)
		i++;
	return at(p, i + 1) == '=';
}

static bool end_statement(struct parser *p)
{
	if (p->stmt_done) {
		p->stmt_done = false;
		return true;
	}
	rbl_skip_sp(p);
	int c = peek(p);
	if (c == ';')
		p->pos++;
	else if (c == '#')
		rbl_skip_comment(p);
	else if (c >= 0 && c != '\n') {
		char what[40];
		if (rbl_blame_open_string(p, p->pos))
			return false;
		rbl_describe(p, p->pos, what, sizeof what);
		rbl_fail_at(p, p->pos, "unexpected %s after value", what);
		return false;
	}
	return true;
}

/* The setting name a statement starts with; false after an error. */
static bool statement_name(struct parser *p, struct rb_stmt *st)
{
	size_t start = p->pos;
	int c = peek(p);
	if (!((c >= 'a' && c <= 'z') || c == '_')) {
		char what[40];
		rbl_describe(p, start, what, sizeof what);
		rbl_fail_at(p, start, "expected a setting name, found %s", what);
		return false;
	}
	size_t e = rbl_ident_end(p, start);
	if (rbl_word_in(p, start, e, rbl_forbidden_words)) {
		rbl_fail_keyword(p, start, e);
		return false;
	}
	st->loc = rbl_loc_at(p, start);
	st->name = rbl_pstrndup(p, p->s + start, e - start);
	p->pos = e;
	return st->name != NULL;
}

/* After "= ": the value, here or (after a comment or a line end that continues) below. */
static bool after_equals(struct parser *p)
{
	p->pos++;
	rbl_skip_sp(p);
	int c = peek(p);
	if ((c == '\n' || c == '#') && value_on_next_line(p)) {
		rbl_skip_ws_nl(p);
	} else if (c < 0 || c == '\n' || c == '#' || c == ';') {
		rbl_fail_at(p, p->pos, "missing value after '='");
		return false;
	}
	return true;
}

/* What follows the name (and subscripts): '=', or a call's argument (name value). */
static bool statement_operator(struct parser *p, struct rb_stmt *st, size_t nkeys)
{
	bool space = rbl_skip_sp(p);
	int c = peek(p), n = peek1(p);
	char what[40];
	if (is_op_assign(p)) {
		rbl_fail_at(p, p->pos, "only '=' assignments are supported in gitlab.rb");
		return false;
	}
	if (c == '=' && n != '=' && n != '~' && n != '>')
		return after_equals(p);
	if (c == '=' && n == '>') {
		rbl_fail_at(p, p->pos, "use '=' to assign; '=>' is for hash entries");
		return false;
	}
	if (nkeys == 0 && ((c == '(' && !space) ||
	                   (space && c >= 0 && c != '\n' && c != '#' && c != ';' && c != '='))) {
		st->call = true;
		return true;
	}
	rbl_describe(p, p->pos, what, sizeof what);
	if (nkeys == 0)
		rbl_fail_at(p, p->pos, "expected '=' or a value after '%s', found %s", st->name,
		            what);
	else
		rbl_fail_at(p, p->pos, "expected '=' after '%s[...]', found %s", st->name, what);
	return false;
}

/* The subscripts, copied into the arena with the statement. */
static bool statement_keys(struct parser *p, struct rb_stmt *st, const struct stmt_builder *sb)
{
	st->nkeys = sb->nkeys;
	if (sb->nkeys == 0)
		return true;
	st->keys = rbl_palloc(p, sb->nkeys * sizeof *st->keys);
	st->key_locs = rbl_palloc(p, sb->nkeys * sizeof *st->key_locs);
	if (st->keys == NULL || st->key_locs == NULL)
		return false;
	memcpy(st->keys, sb->keys, sb->nkeys * sizeof *st->keys);
	memcpy(st->key_locs, sb->key_locs, sb->nkeys * sizeof *st->key_locs);
	return true;
}

static bool parse_statement(struct parser *p, struct vec *stmts)
{
	struct rb_stmt st = {0};
	struct stmt_builder sb;
	sb.nkeys = 0;
	if (!statement_name(p, &st) || !parse_subscripts(p, &sb) ||
	    !statement_operator(p, &st, sb.nkeys))
		return false;
	st.value = parse_value(p, 0, 0);
	if (st.value == NULL || !end_statement(p) || !statement_keys(p, &st, &sb))
		return false;
	return rbl_vec_push(p, stmts, &st, sizeof st);
}

static bool line_is(const struct parser *p, const char *word, bool exact)
{
	size_t n = strlen(word);
	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
		return false;
	int c = at(p, p->pos + n);
	if (exact)
		return c < 0 || c == '\n' || (c == '\r' && at(p, p->pos + n + 1) == '\n') ||
		       (c == '\r' && at(p, p->pos + n + 1) < 0);
	return c < 0 || c == '\n' || is_space(c);
}

/* =begin ... =end block comment, from column 1. */
static void skip_block_comment(struct parser *p)
{
	size_t start = p->pos;
	for (;;) {
		rbl_skip_comment(p);
		if (peek(p) < 0) {
			rbl_fail_at(p, start, "unterminated '=begin' comment");
			return;
		}
		p->pos++;
		if (line_is(p, "=end", false)) {
			rbl_skip_comment(p);
			return;
		}
	}
}

static void parse_file(struct parser *p, struct vec *stmts)
{
	while (!p->failed) {
		bool bol = p->pos == 0 || p->s[p->pos - 1] == '\n';
		if (bol && line_is(p, "=begin", false)) {
			skip_block_comment(p);
			continue;
		}
		if (bol && line_is(p, "__END__", true))
			break;
		rbl_skip_sp(p);
		int c = peek(p);
		if (c < 0)
			break;
		if (c == '\n')
			rbl_newline(p);
		else if (c == '#')
			rbl_skip_comment(p);
		else if (c == ';')
			p->pos++;
		else if (!parse_statement(p, stmts))
			break;
	}
	if (!p->failed && p->npend > 0)
		rbl_fail_at(p, p->pend[0].start, "unterminated heredoc: no line '%.*s' closes it",
		            (int)p->pend[0].idlen, p->s + p->pend[0].id);
}

/* ------------------------------------------------------------ public API */

int rb_parse(const char *name, const char *text, size_t len, struct rb_file *out, struct diags *d)
{
	memset(out, 0, sizeof *out);
	if (name == NULL)
		name = "gitlab.rb";
	if (len > RB_MAX_FILE) {
		struct src big = {.name = name, .text = text, .len = len};
		struct parser tmp = {.src = &big, .s = text, .len = len, .lc_line = 1, .d = d};
		rbl_fail_at(&tmp, RB_MAX_FILE, "file larger than %u bytes", RB_MAX_FILE);
		return -1;
	}
	out->arena = rbl_arena_new(ARENA_LIMIT);
	struct src *src = rbl_arena_alloc(out->arena, sizeof *src);
	char *copy = rbl_arena_alloc(out->arena, len + 1);
	char *ncopy = rbl_arena_alloc(out->arena, strlen(name) + 1);
	if (src == NULL || copy == NULL || ncopy == NULL) { /* a name of 100 MiB */
		diag_file(d, DIAG_ERR, name, 0, "configuration too large");
		return -1;
	}
	if (len > 0)
		memcpy(copy, text, len);
	copy[len] = '\0';
	strcpy(ncopy, name);
	*src = (struct src){.name = ncopy, .text = copy, .len = len};
	/* Which lines a diagnostic may echo: those that hold no secret (secret.h). */
	size_t nlines = 2;
	for (const char *q = copy; (q = memchr(q, '\n', len - (size_t)(q - copy))) != NULL; q++)
		nlines++;
	src->hidden = rbl_arena_alloc(out->arena, nlines);
	if (src->hidden != NULL) {
		memset(src->hidden, 0, nlines);
		src->nhidden = nlines;
		secret_guess_lines(copy, len, src->hidden, nlines);
	}
	out->src = *src;

	struct parser p = {.src = src,
	                   .s = copy,
	                   .len = len,
	                   .arena = out->arena,
	                   .d = d,
	                   .lc_line = 1,
	                   .max_depth = RB_MAX_DEPTH};
	const char *nul = memchr(copy, '\0', len);
	if (nul != NULL) {
		rbl_fail_at(&p, (size_t)(nul - copy), "NUL byte in file");
		return -1;
	}
	struct vec stmts = {0};
	parse_file(&p, &stmts);
	if (p.failed)
		return -1;
	out->v = stmts.v;
	out->n = stmts.n;
	return 0;
}

int rb_load(const char *path, struct rb_file *out, struct diags *d)
{
	memset(out, 0, sizeof *out);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		diag_file(d, DIAG_ERR, path, 0, "%s", strerror(errno));
		return -1;
	}
	/* Past the limit it holds one byte more, so that rb_parse reports where. */
	struct buf b;
	buf_init(&b);
	int rc = readfile_fd(fd, &b, RB_MAX_FILE);
	int e = errno;
	close(fd);
	if (rc == -1 && e != EFBIG) {
		diag_file(d, DIAG_ERR, path, 0, "%s", strerror(e));
		buf_free(&b);
		return -1;
	}
	rc = rb_parse(path, buf_str(&b), b.len, out, d);
	buf_free(&b);
	return rc;
}

void rb_free(struct rb_file *f)
{
	if (f == NULL)
		return;
	rbl_arena_free(f->arena);
	memset(f, 0, sizeof *f);
}

const char *rb_kind_name(enum rb_kind k)
{
	switch (k) {
	case RB_NIL:
		return "nil";
	case RB_BOOL:
		return "boolean";
	case RB_INT:
		return "integer";
	case RB_FLOAT:
		return "float";
	case RB_STR:
		return "string";
	case RB_SYM:
		return "symbol";
	case RB_ARRAY:
		return "array";
	case RB_HASH:
		return "hash";
	case RB_OPAQUE:
		return "Ruby expression";
	}
	return "value";
}

bool rb_has_opaque(const struct rb_value *v, const struct rb_value **where)
{
	if (v == NULL)
		return false;
	switch (v->kind) {
	case RB_OPAQUE:
		if (where != NULL)
			*where = v;
		return true;
	case RB_ARRAY:
		for (size_t i = 0; i < v->u.a.n; i++)
			if (rb_has_opaque(v->u.a.v[i], where))
				return true;
		return false;
	case RB_HASH:
		for (size_t i = 0; i < v->u.h.n; i++)
			if (rb_has_opaque(v->u.h.v[i].key, where) ||
			    rb_has_opaque(v->u.h.v[i].val, where))
				return true;
		return false;
	default:
		return false;
	}
}
