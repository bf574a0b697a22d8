/*
 * rbconf's numbers: integers in Ruby's bases (0x 0o 0b 0d, leading-0 octal,
 * `_` between digits) within long long, and floats.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config/rbconf_parse.h"
#include "lib/ascii.h"

static bool base_digit(int c, int base)
{
	int v = ascii_hexval(c);
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
	struct rb_value *v = rbp_new_value(p, RB_FLOAT, vstart);
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
	if (ascii_digit(at(p, b + 1)) || at(p, b + 1) == '_') {
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
	if (peek(p) == '.' && ascii_digit(peek1(p))) {
		p->pos++;
		if (!skip_digits(p, 10, false))
			return -1;
		isfloat = true;
	}
	int e1 = peek1(p), e2 = at(p, p->pos + 2);
	if ((peek(p) | 0x20) == 'e' &&
	    (ascii_digit(e1) || ((e1 == '+' || e1 == '-') && ascii_digit(e2)))) {
		p->pos += ascii_digit(e1) ? 1 : 2;
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
		unsigned d = (unsigned)ascii_hexval(p->s[i]);
		if (mag > (limit - d) / (unsigned)base) {
			rbl_fail_at(p, start, "integer literal out of range");
			return NULL;
		}
		mag = mag * (unsigned)base + d;
	}
	struct rb_value *v = rbp_new_value(p, RB_INT, start);
	if (v != NULL)
		v->u.i = !neg ? (long long)mag : mag == limit ? LLONG_MIN : -(long long)mag;
	return v;
}

struct rb_value *rbp_parse_number(struct parser *p, bool neg, size_t start)
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
	if (ascii_alpha(peek(p)) || peek(p) == '_') {
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
