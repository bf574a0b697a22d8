/*
 * Skipping Ruby gitlab-ctl cannot evaluate (see rbscan.h): strings,
 * brackets, heredocs, percent literals and regexps are scanned as Ruby
 * would, so that the value ends where Ruby's would.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config/rbscan.h"

static void scan_group(struct parser *p, size_t open, int closer)
{
	if (!rbl_enter(p, open))
		return;
	rbscan_tokens(p, open, closer, 0);
	p->depth--;
}

static void scan_sq(struct parser *p, int quote)
{
	size_t start = p->pos++;
	while (p->pos < p->len) {
		int c = peek(p);
		if (c == '\\') {
			p->pos += 2;
			continue;
		}
		p->pos++;
		if (c == quote) {
			rbl_string_seen(p, start, p->pos - 1);
			return;
		}
	}
	p->pos = p->len;
	rbl_fail_unterminated(p, start, "string");
}

/* A string-like token with #{} interpolation, ending at `close` (nesting `open` if a bracket). */
static void scan_interp(struct parser *p, size_t start, int open, int close, const char *what)
{
	int nest = 0;
	while (p->pos < p->len && !p->failed) {
		int c = peek(p);
		if (c == '\\') {
			p->pos += 2;
			continue;
		}
		if (c == '#' && peek1(p) == '{') {
			size_t ob = p->pos + 1;
			p->pos += 2;
			scan_group(p, ob, '}');
			continue;
		}
		p->pos++;
		if (c == close && nest == 0) {
			rbl_string_seen(p, start, p->pos - 1);
			return;
		}
		if (c == close)
			nest--;
		else if (c == open)
			nest++;
	}
	if (p->pos > p->len)
		p->pos = p->len;
	rbl_fail_unterminated(p, start, what);
}

/* Percent literals: %w[a b], %i(x), %q{...}, %Q|...|, %(...), %r{...}. */
static bool try_percent(struct parser *p, bool prev_value, bool space_before)
{
	size_t start = p->pos, i = p->pos + 1;
	int c = at(p, i);
	bool interp = true, letter = false;
	if (c > 0 && strchr("qwisQWIrx", c) != NULL) {
		interp = strchr("QWIrx", c) != NULL;
		letter = true;
		i++;
		if (prev_value && !space_before)
			return false;
	} else if (prev_value && !(space_before && at(p, i) != ' ' && at(p, i) != '=')) {
		return false;
	}
	int open = at(p, i);
	if (open < 0x21 || open > 0x7e || is_ident(open) || (!letter && open == '='))
		return false;
	int close = closer_of(open);
	p->pos = i + 1;
	if (interp) {
		scan_interp(p, start, open, close, "%-literal");
		return true;
	}
	int nest = 0;
	while (p->pos < p->len) {
		int ch = peek(p);
		p->pos += ch == '\\' ? 2 : 1;
		if (ch == close && nest == 0)
			return true;
		if (ch == close)
			nest--;
		else if (ch == open)
			nest++;
	}
	p->pos = p->len;
	rbl_fail_unterminated(p, start, "%-literal");
	return true;
}

/* "<<~EOS", "<<-'EOS'", "<<EOS": registers the heredoc, whose body follows the line. */
static bool try_heredoc(struct parser *p, bool prev_value, bool prev_ident, bool space_before)
{
	size_t i = p->pos + 2, id, idlen, end;
	bool indent = false;
	if (prev_value && !(prev_ident && space_before))
		return false;
	if (at(p, i) == '~' || at(p, i) == '-') {
		indent = true;
		i++;
	}
	int c = at(p, i);
	if (c == '\'' || c == '"' || c == '`') {
		size_t j = i + 1;
		while (j < p->len && p->s[j] != c && p->s[j] != '\n')
			j++;
		if (at(p, j) != c || j == i + 1)
			return false;
		id = i + 1;
		idlen = j - id;
		end = j + 1;
	} else if (is_ident_start(c)) {
		id = i;
		end = rbl_ident_end(p, i);
		idlen = end - id;
	} else {
		return false;
	}
	if (p->npend == RBL_MAX_HEREDOCS) {
		rbl_fail_at(p, p->pos, "more than %d heredocs on one line", RBL_MAX_HEREDOCS);
		return true;
	}
	p->pend[p->npend++] =
	    (struct heredoc){.start = p->pos, .id = id, .idlen = idlen, .indent = indent};
	p->pos = end;
	return true;
}

static bool try_regexp(struct parser *p, bool prev_value, bool prev_ident, bool space_before)
{
	int n = peek1(p);
	if (prev_value && !(prev_ident && space_before && n != ' ' && n != '='))
		return false;
	size_t start = p->pos++;
	scan_interp(p, start, '/', '/', "regexp");
	while (ascii_alpha(peek(p)))
		p->pos++;
	return true;
}

/* Identifiers after '.', '&.' or '::' are method or constant names, not keywords. */
static bool after_dot(const struct parser *p, size_t b)
{
	return (b >= 1 && p->s[b - 1] == '.') ||
	       (b >= 2 && p->s[b - 1] == ':' && p->s[b - 2] == ':');
}

/* A value cannot end after a binary operator or a comma. */
static void value_stop(struct parser *p, size_t b, bool last_op)
{
	if (last_op) {
		char what[40];
		rbl_describe(p, b, what, sizeof what);
		rbl_fail_at(p, b, "expected a value, found %s", what);
	}
}

/* Where rbscan_tokens() is: the group it scans and what came before. */
struct scan {
	size_t open; /* the group's opener, for errors */
	int closer;  /* 0: value level */
	int ctx;     /* at value level: 0 a statement's value, else inside a literal container */
	bool first, prev_value, prev_ident, prev_str, last_op;
};

/* One token: where it starts and what it is. */
struct tok {
	size_t b;
	int c;
	bool space_before;
	bool value;   /* an operand (a literal, a name, a group), not an operator */
	bool ident;   /* a name: a value may follow it (a call's argument) */
	bool str;     /* a string: another may follow ('a' 'b') */
	bool operand; /* false for a call, an index or a block after a value */
};

enum step {
	STEP_TOKEN, /* a token was consumed */
	STEP_SKIP,  /* blanks, a newline or a comment: not a token */
	STEP_STOP,  /* the group or value ends here (or failed) */
};

/* A one-character operator (or the last of a longer one). */
static enum step scan_operator(struct parser *p, struct tok *t)
{
	p->pos++;
	t->value = false;
	return STEP_TOKEN;
}

/* The input ended: fine for a value, not inside a group. */
static void scan_eof(struct parser *p, const struct scan *s, size_t b)
{
	if (s->closer != 0)
		rbl_fail_unclosed(p, b, s->open, s->closer);
	else
		value_stop(p, b, s->last_op);
}

/* Blanks, an escaped newline, a newline (which may end the statement), a comment. */
static enum step scan_layout(struct parser *p, const struct scan *s, const struct tok *t)
{
	if (is_space(t->c)) {
		p->pos++;
		return STEP_SKIP;
	}
	switch (t->c) {
	case '\\':
		if (peek1(p) != '\n') {
			rbl_fail_at(p, t->b, "unexpected '\\'");
			return STEP_STOP;
		}
		p->pos++;
		rbl_newline(p);
		return STEP_SKIP;
	case '\n':
		if (s->closer == 0 && s->ctx == 0 && !s->last_op && !rbl_continues_next_line(p))
			return STEP_STOP; /* the statement ends here */
		rbl_newline(p);
		return STEP_SKIP;
	case '#':
		rbl_skip_comment(p);
		return STEP_SKIP;
	default:
		return STEP_TOKEN;
	}
}

/* ';' or ',': a separator inside a group; at value level the end of the value. */
static enum step scan_separator(struct parser *p, const struct scan *s, struct tok *t)
{
	if (s->closer == 0 && (t->c == ';' || s->ctx != 0)) {
		value_stop(p, t->b, s->last_op);
		return STEP_STOP;
	}
	return scan_operator(p, t);
}

/* ')', ']' or '}': the end of the group (it must be its closer), or of a value. */
static enum step scan_closer(struct parser *p, const struct scan *s, const struct tok *t)
{
	if (s->closer == 0) {
		if (s->ctx == 0)
			rbl_fail_at(p, t->b, "unexpected '%c'", t->c);
		else
			value_stop(p, t->b, s->last_op);
		return STEP_STOP;
	}
	if (t->c != s->closer) {
		rbl_fail_unclosed(p, t->b, s->open, s->closer);
		return STEP_STOP;
	}
	p->pos++;
	p->tok_end = p->pos;
	return STEP_STOP;
}

/* '(', '[' or '{': a whole group; a block '{ |x| ... }' is refused. */
static enum step scan_opener(struct parser *p, struct tok *t)
{
	if (t->c == '{') {
		size_t i = t->b + 1;
		while (at(p, i) == ' ' || at(p, i) == '\t')
			i++;
		if (at(p, i) == '|') {
			rbl_fail_at(p, t->b,
			            "blocks ('{ |...| ... }') are not supported in gitlab.rb");
			return STEP_STOP;
		}
	}
	p->pos++;
	scan_group(p, t->b, closer_of(t->c));
	t->operand = false; /* a call, an index or a block after a value */
	return STEP_TOKEN;
}

/* A string: '...', "..." or `...`. */
static enum step scan_quoted(struct parser *p, struct tok *t)
{
	if (t->c == '\'') {
		scan_sq(p, t->c);
	} else {
		p->pos++;
		scan_interp(p, t->b, t->c, t->c, "string");
	}
	t->str = true;
	return STEP_TOKEN;
}

/* ':': '::', a symbol (:name, :"..."), or an operator (the ternary's ':'). */
static enum step scan_colon(struct parser *p, const struct scan *s, struct tok *t)
{
	if (peek1(p) == ':') {
		p->pos++;
		return scan_operator(p, t);
	} else if (peek1(p) == '"' || peek1(p) == '\'') {
		p->pos++;
		if (peek(p) == '"') {
			p->pos++;
			scan_interp(p, t->b, '"', '"', "string");
		} else {
			scan_sq(p, '\'');
		}
	} else if (is_ident_start(peek1(p)) && !(s->prev_value && !t->space_before)) {
		p->pos = rbl_ident_end(p, t->b + 1);
		if (peek(p) == '?' || peek(p) == '!')
			p->pos++;
	} else {
		return scan_operator(p, t);
	}
	return STEP_TOKEN;
}

/* ?x, a character literal where a value may start. */
static bool try_char_literal(struct parser *p, const struct scan *s)
{
	if (s->prev_value || peek1(p) <= 0x20)
		return false;
	p->pos += peek1(p) == '\\' ? 3 : 2;
	while (at(p, p->pos) >= 0x80 && at(p, p->pos) < 0xc0)
		p->pos++;
	if (p->pos > p->len)
		p->pos = p->len;
	return true;
}

/* '<', '%', '/', '?': a literal where a value may start (heredoc, %w[], regexp, ?x), else an
 * operator. */
static enum step scan_ambiguous(struct parser *p, const struct scan *s, struct tok *t)
{
	bool literal;
	if (t->c == '<')
		literal = peek1(p) == '<' &&
		          try_heredoc(p, s->prev_value, s->prev_ident, t->space_before);
	else if (t->c == '%')
		literal = try_percent(p, s->prev_value, t->space_before);
	else if (t->c == '/')
		literal = try_regexp(p, s->prev_value, s->prev_ident, t->space_before);
	else
		literal = try_char_literal(p, s);
	return literal ? STEP_TOKEN : scan_operator(p, t);
}

/* $global, $0, @ivar, @@cvar. */
static enum step scan_sigil(struct parser *p, const struct tok *t)
{
	p->pos++;
	if (t->c == '@') {
		if (peek(p) == '@')
			p->pos++;
		p->pos = rbl_ident_end(p, p->pos);
	} else if (is_ident(peek(p))) {
		p->pos = rbl_ident_end(p, p->pos);
	} else if (peek(p) > 0x20) {
		p->pos++;
	}
	return STEP_TOKEN;
}

/*
 * After a whole statement value, `if`/`unless` start a modifier and `else`, `end`, ... the
 * next part of the block around the statement: the value ends before them.
 */
static bool ends_value(const struct parser *p, const struct scan *s, size_t b, size_t e)
{
	return s->closer == 0 && s->ctx == 0 && !s->first && !s->last_op &&
	       rbl_word_in(p, b, e, rbl_value_end_words);
}

/*
 * A name: a hash label (key:), a method, a keyword that ends the value, a refused keyword, an
 * operator word, or an identifier.
 */
static enum step scan_name(struct parser *p, const struct scan *s, struct tok *t)
{
	size_t e = rbl_ident_end(p, t->b);
	if ((at(p, e) == '?' || at(p, e) == '!') && at(p, e + 1) != '=')
		e++;
	p->pos = e;
	if (at(p, e) == ':' && at(p, e + 1) != ':') {
		p->pos++; /* label of a hash: key: value */
		t->value = false;
	} else if (after_dot(p, t->b)) {
		t->ident = true;
	} else if (ends_value(p, s, t->b, e)) {
		p->pos = t->b;
		return STEP_STOP;
	} else if (rbl_word_in(p, t->b, e, rbl_forbidden_words)) {
		rbl_fail_keyword(p, t->b, e);
		return STEP_STOP;
	} else if (rbl_word_in(p, t->b, e, (const char *const[]){"and", "or", "not", NULL})) {
		t->value = false;
	} else {
		t->ident = true;
	}
	return STEP_TOKEN;
}

/* A number, a name, or a one-character operator; a control character is refused. */
static enum step scan_word(struct parser *p, const struct scan *s, struct tok *t)
{
	if (ascii_digit(t->c)) {
		while (is_ident(peek(p)) || (peek(p) == '.' && ascii_digit(peek1(p))))
			p->pos++;
	} else if (is_ident_start(t->c)) {
		if (rbl_fail_smart_quote(p, t->b))
			return STEP_STOP;
		return scan_name(p, s, t);
	} else if (t->c < 0x20 || t->c == 0x7f) {
		rbl_fail_at(p, t->b, "unexpected control character 0x%02x", (unsigned)t->c);
		return STEP_STOP;
	} else {
		return scan_operator(p, t);
	}
	return STEP_TOKEN;
}

static enum step scan_token(struct parser *p, const struct scan *s, struct tok *t)
{
	switch (t->c) {
	case ';':
	case ',':
		return scan_separator(p, s, t);
	case ')':
	case ']':
	case '}':
		return scan_closer(p, s, t);
	case '(':
	case '[':
	case '{':
		return scan_opener(p, t);
	case '\'':
	case '"':
	case '`':
		return scan_quoted(p, t);
	case ':':
		return scan_colon(p, s, t);
	case '<':
	case '%':
	case '/':
	case '?':
		return scan_ambiguous(p, s, t);
	case '$':
	case '@':
		return scan_sigil(p, t);
	default:
		return scan_word(p, s, t);
	}
}

/* Check a token against the one before it and remember it; false after an error. */
static bool token_done(struct parser *p, struct scan *s, const struct tok *t)
{
	if (p->pos > p->len)
		p->pos = p->len;
	if (s->closer == 0 && s->first && !t->value && strchr("<>=|^.?%&", t->c) != NULL) {
		rbl_fail_at(p, t->b, "expected a value, found '%c'", t->c);
		return false;
	}
	/* Values follow each other only as arguments (foo 'x') or strings ('a' 'b'). */
	if (t->value && t->operand && s->prev_value && !s->prev_ident && !(t->str && s->prev_str)) {
		char what[40];
		if (rbl_blame_open_string(p, t->b))
			return false;
		rbl_describe(p, t->b, what, sizeof what);
		rbl_fail_at(p, t->b, "unexpected %s after value", what);
		return false;
	}
	p->tok_end = p->pos;
	s->first = false;
	s->prev_value = t->value;
	s->prev_ident = t->ident;
	s->prev_str = t->str;
	s->last_op = !t->value;
	return true;
}

/*
 * Skip Ruby tokens. In a group (closer != 0, opened at `open`), stop after the
 * matching closer. At value level (closer == 0), stop before a ',' or a closer
 * when inside a literal container (ctx != 0), or before the end of the
 * statement (ctx == 0).
 */
void rbscan_tokens(struct parser *p, size_t open, int closer, int ctx)
{
	struct scan s = {.open = open, .closer = closer, .ctx = ctx, .first = true};
	while (!p->failed) {
		struct tok t = {.b = p->pos, .c = peek(p), .value = true, .operand = true};
		t.space_before = t.b > 0 && (p->s[t.b - 1] == ' ' || p->s[t.b - 1] == '\t');
		if (t.c < 0) {
			scan_eof(p, &s, t.b);
			return;
		}
		enum step st = scan_layout(p, &s, &t);
		if (st == STEP_TOKEN)
			st = scan_token(p, &s, &t);
		if (st == STEP_STOP || (st == STEP_TOKEN && !token_done(p, &s, &t)))
			return;
	}
}
