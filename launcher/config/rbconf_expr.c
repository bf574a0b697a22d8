/*
 * rbconf's expressions: a value is a literal (string, number, array, hash,
 * true/false/nil), integer arithmetic `+ - * /` on literals, or any other
 * Ruby kept as one RB_OPAQUE value with its source text (rbscan skips it).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config/rbconf_parse.h"
#include "config/rbscan.h"

struct rb_value *rbp_new_value(struct parser *p, enum rb_kind kind, size_t pos)
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

struct rb_value *rbp_scan_opaque(struct parser *p, int ctx)
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
	struct rb_value *v = rbp_new_value(p, RB_OPAQUE, start);
	if (v == NULL)
		return NULL;
	v->u.s.ptr = rbl_pstrndup(p, p->s + start, end - start);
	v->u.s.len = end - start;
	return v->u.s.ptr ? v : NULL;
}

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
	struct rb_value *l = rbp_new_value(p, type, open);
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
	struct rb_value *h = rbp_new_value(p, RB_HASH, start);
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
	struct rb_value *v = rbp_parse_value(p, ']', open);
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
		return rbp_make_str(p, RB_SYM, start, name, e - start);
	}
	if (c == '\'' || c == '"') {
		k = c == '"' ? rbp_parse_dq(p, RB_STR, start) : rbp_parse_sq(p, RB_STR, start);
		if (k == NULL)
			return NULL;
		if (peek(p) == ':' && peek1(p) != ':') {
			p->pos++;
			k->kind = RB_SYM;
			return k;
		}
	} else if (c == ':') {
		k = rbp_parse_symbol(p);
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
	pair.val = rbp_parse_value(p, '}', open);
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
		return rbp_parse_sq(p, RB_STR, start);
	case '"':
		return rbp_parse_dq(p, RB_STR, start);
	case '[':
		return parse_array(p);
	case '{':
		return parse_hash(p);
	case '(':
		return parse_paren(p);
	case ':':
		return rbp_parse_symbol(p);
	case '%':
		return rbp_parse_words(p);
	default:
		break;
	}
	if (ascii_digit(c))
		return rbp_parse_number(p, false, start);
	if (!is_ident_start(c) || rbl_fail_smart_quote(p, start))
		return NULL;
	size_t e = rbl_ident_end(p, start);
	int n = at(p, e);
	if (n == '?' || n == '!' || n == ':')
		return NULL;
	struct rb_value *v = NULL;
	if (rbl_word_is(p, start, e, "nil")) {
		v = rbp_new_value(p, RB_NIL, start);
	} else if (rbl_word_is(p, start, e, "true") || rbl_word_is(p, start, e, "false")) {
		v = rbp_new_value(p, RB_BOOL, start);
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
	if (ascii_digit(peek1(p))) {
		p->pos++;
		return rbp_parse_number(p, c == '-', start);
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
		       is_ident_start(c) || ascii_digit(c);
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
		if (ctx == 0 && rbl_word_in(p, b, e, rbl_value_end_words))
			return 1; /* a modifier, or the next part of the block around */
		if (rbl_word_in(p, b, e, (const char *const[]){"if", "unless", NULL})) {
			rbl_fail_keyword(p, b, e);
			return -1;
		}
		if (rbl_word_in(p, b, e, (const char *const[]){"while", "until", "rescue", NULL})) {
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

struct rb_value *rbp_parse_value(struct parser *p, int ctx, size_t open)
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
	return rbp_scan_opaque(p, ctx);
}
