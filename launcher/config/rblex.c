/* The cursor of the gitlab.rb parser (see rblex.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/rblex.h"
#include "lib/alloc.h"

#define CHUNK_SIZE ((size_t)64 * 1024)

/* ---- the arena ------------------------------------------------------------ */

struct rb_chunk {
	struct rb_chunk *next;
	size_t used, cap;
	long long data[]; /* 8-aligned, see rbl_arena_alloc() */
};

struct rb_arena {
	struct rb_chunk *head;
	size_t total, limit;
};

struct rb_arena *rbl_arena_new(size_t limit)
{
	struct rb_arena *a = xcalloc(1, sizeof *a);
	a->limit = limit;
	return a;
}

void *rbl_arena_alloc(struct rb_arena *a, size_t n)
{
	/* Everything stored here (pointers, long long, double) needs at most 8. */
	const size_t al = 8;
	if (n > a->limit || a->total + n > a->limit)
		return NULL;
	n = (n + al - 1) & ~(al - 1);
	struct rb_chunk *c = a->head;
	if (c != NULL && c->cap - c->used >= n) {
		void *ptr = (char *)c->data + c->used;
		c->used += n;
		return ptr;
	}
	size_t cap = n > CHUNK_SIZE / 4 ? n : CHUNK_SIZE;
	struct rb_chunk *nc = xmalloc(sizeof *nc + cap);
	nc->cap = cap;
	nc->used = n;
	a->total += sizeof *nc + cap;
	/* A big dedicated chunk goes behind the current one, which keeps its free space. */
	if (c != NULL && cap != CHUNK_SIZE) {
		nc->next = c->next;
		c->next = nc;
	} else {
		nc->next = c;
		a->head = nc;
	}
	return nc->data;
}

void rbl_arena_free(struct rb_arena *a)
{
	if (a == NULL)
		return;
	for (struct rb_chunk *c = a->head, *next; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

/* ---- the cursor ----------------------------------------------------------- */

void rbl_mark(const struct parser *p, struct rbl_mark *m)
{
	m->pos = p->pos;
	m->depth = p->depth;
	m->npend = p->npend;
	memcpy(m->pend, p->pend, p->npend * sizeof *p->pend);
}

void rbl_restore(struct parser *p, const struct rbl_mark *m)
{
	p->pos = m->pos;
	p->depth = m->depth;
	p->npend = m->npend;
	memcpy(p->pend, m->pend, m->npend * sizeof *m->pend);
}

/* Locations are computed lazily from a cache, as they are asked for mostly in order. */
struct loc rbl_loc_at(struct parser *p, size_t pos)
{
	if (pos > p->len)
		pos = p->len;
	if (pos >= p->lc_pos) {
		const char *q = p->s + p->lc_pos, *end = p->s + pos, *nl;
		while (q < end && (nl = memchr(q, '\n', (size_t)(end - q))) != NULL) {
			p->lc_line++;
			q = nl + 1;
			p->lc_ls = (size_t)(q - p->s);
		}
	} else {
		for (size_t i = pos; i < p->lc_pos; i++)
			if (p->s[i] == '\n')
				p->lc_line--;
		const char *nl = memrchr(p->s, '\n', pos);
		p->lc_ls = nl ? (size_t)(nl - p->s) + 1 : 0;
	}
	p->lc_pos = pos;
	return (struct loc){.src = p->src, .line = p->lc_line, .col = (int)(pos - p->lc_ls) + 1};
}

void rbl_fail_at(struct parser *p, size_t pos, const char *fmt, ...)
{
	if (p->failed)
		return;
	p->failed = true;
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_at(p->d, DIAG_ERR, rbl_loc_at(p, pos), "%s", msg);
}

/* "expected ']' to close '[' at 3:14" */
void rbl_fail_unclosed(struct parser *p, size_t at, size_t open, int closer)
{
	struct loc o = rbl_loc_at(p, open);
	rbl_fail_at(p, at, "expected '%c' to close '%c' at %d:%d", closer, p->s[open], o.line,
	            o.col);
}

/* Word processors turn quotes into these; Ruby reads them as part of a name. */
struct smart_quote {
	unsigned char b3; /* after E2 80 */
	const char *name, *use;
};

static const struct smart_quote *smart_quote_at(const struct parser *p, size_t pos)
{
	static const struct smart_quote quotes[] = {
	    {0x98, "U+2018 LEFT SINGLE QUOTATION MARK", "'"},
	    {0x99, "U+2019 RIGHT SINGLE QUOTATION MARK", "'"},
	    {0x9c, "U+201C LEFT DOUBLE QUOTATION MARK", "\""},
	    {0x9d, "U+201D RIGHT DOUBLE QUOTATION MARK", "\""},
	};
	if (at(p, pos) != 0xe2 || at(p, pos + 1) != 0x80)
		return NULL;
	for (size_t i = 0; i < sizeof quotes / sizeof *quotes; i++)
		if (at(p, pos + 2) == quotes[i].b3)
			return &quotes[i];
	return NULL;
}

/* 'abc’: a typographic quote on the opening line was meant to close the string. */
static bool fail_smart_close(struct parser *p, size_t open, const char *what)
{
	for (size_t i = open + 1; i < p->len && p->s[i] != '\n'; i++) {
		const struct smart_quote *q = smart_quote_at(p, i);
		if (q == NULL)
			continue;
		struct loc l = rbl_loc_at(p, i);
		rbl_fail_at(p, open,
		            "unterminated %s opened here: %s at %d:%d does not close it: use %s",
		            what, q->name, l.line, l.col, q->use);
		return true;
	}
	return false;
}

void rbl_fail_unterminated(struct parser *p, size_t open, const char *what)
{
	if (!fail_smart_close(p, open, what))
		rbl_fail_at(p, open, "unterminated %s opened here", what);
}

void rbl_string_seen(struct parser *p, size_t open, size_t end)
{
	if (end > open && memchr(p->s + open, '\n', end - open) != NULL) {
		p->ml_open = open;
		p->ml_end = end;
	}
}

bool rbl_blame_open_string(struct parser *p, size_t pos)
{
	if (p->ml_end == 0 || p->ml_end >= pos ||
	    memchr(p->s + p->ml_end, '\n', pos - p->ml_end) != NULL)
		return false;
	if (fail_smart_close(p, p->ml_open, "string"))
		return true;
	struct loc e = rbl_loc_at(p, p->ml_end);
	rbl_fail_at(p, p->ml_open,
	            "unterminated string opened here: the quote at %d:%d closes it, and what "
	            "follows does not parse",
	            e.line, e.col);
	return true;
}

void *rbl_palloc(struct parser *p, size_t n)
{
	void *ptr = rbl_arena_alloc(p->arena, n);
	if (ptr == NULL)
		rbl_fail_at(p, p->pos, "configuration too large: its values need more than %zu MiB",
		            p->arena->limit >> 20);
	return ptr;
}

char *rbl_pstrndup(struct parser *p, const char *s, size_t n)
{
	char *d = rbl_palloc(p, n + 1);
	if (d != NULL) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

bool rbl_enter(struct parser *p, size_t at)
{
	if (p->depth >= p->max_depth) {
		rbl_fail_at(p, at, "nesting deeper than %d levels", p->max_depth);
		return false;
	}
	p->depth++;
	return true;
}

bool rbl_vec_push(struct parser *p, struct vec *vec, const void *elem, size_t size)
{
	if (vec->n == vec->cap) {
		size_t cap = 4, bytes;
		/* An overflow is past the arena's limit too: palloc refuses SIZE_MAX. */
		if ((vec->cap && __builtin_mul_overflow(vec->cap, 2, &cap)) ||
		    __builtin_mul_overflow(cap, size, &bytes))
			bytes = SIZE_MAX;
		void *nv = rbl_palloc(p, bytes);
		if (nv == NULL)
			return false;
		if (vec->n > 0)
			memcpy(nv, vec->v, vec->n * size);
		vec->v = nv;
		vec->cap = cap;
	}
	memcpy((char *)vec->v + vec->n * size, elem, size);
	vec->n++;
	return true;
}

bool rbl_skip_sp(struct parser *p)
{
	size_t from = p->pos;
	while (is_space(peek(p)))
		p->pos++;
	return p->pos > from;
}

void rbl_skip_comment(struct parser *p)
{
	const char *nl = memchr(p->s + p->pos, '\n', p->len - p->pos);
	p->pos = nl ? (size_t)(nl - p->s) : p->len;
}

/* Read a heredoc body, from pos to the terminator line included. */
void rbl_read_heredoc(struct parser *p, const struct heredoc *h)
{
	const char *id = p->s + h->id;
	while (p->pos < p->len) {
		size_t ls = p->pos;
		const char *nl = memchr(p->s + ls, '\n', p->len - ls);
		size_t le = nl ? (size_t)(nl - p->s) : p->len;
		size_t b = ls, e = le;
		if (e > b && p->s[e - 1] == '\r')
			e--;
		if (h->indent)
			while (b < e && (p->s[b] == ' ' || p->s[b] == '\t'))
				b++;
		p->pos = nl ? le + 1 : p->len;
		if (e - b == h->idlen && memcmp(p->s + b, id, h->idlen) == 0) {
			p->hd_end = e;
			return;
		}
	}
	rbl_fail_at(p, h->start, "unterminated heredoc: no line '%.*s' closes it", (int)h->idlen,
	            id);
}

/* Consume the '\n' at pos, then the bodies of the heredocs started on its line. */
void rbl_newline(struct parser *p)
{
	p->pos++;
	for (size_t i = 0; i < p->npend && !p->failed; i++)
		rbl_read_heredoc(p, &p->pend[i]);
	p->npend = 0;
}

/* Spaces, comments and newlines: used where a statement cannot end. */
void rbl_skip_ws_nl(struct parser *p)
{
	while (!p->failed) {
		rbl_skip_sp(p);
		int c = peek(p);
		if (c == '#')
			rbl_skip_comment(p);
		else if (c == '\n')
			rbl_newline(p);
		else if (c == '\\' && peek1(p) == '\n') {
			p->pos++;
			rbl_newline(p);
		} else
			return;
	}
}

/* Ruby continues a statement on a next line that starts with ".method" or "&.method". */
bool rbl_continues_next_line(const struct parser *p)
{
	if (p->npend > 0)
		return false;
	size_t i = p->pos + 1;
	while (at(p, i) == ' ' || at(p, i) == '\t')
		i++;
	return (at(p, i) == '.' && at(p, i + 1) != '.') || (at(p, i) == '&' && at(p, i + 1) == '.');
}

bool rbl_hidden_at(const struct parser *p, size_t pos)
{
	const struct src *src = p->src;
	if (src == NULL || src->hidden == NULL)
		return false;
	size_t line = 1;
	for (const char *q = p->s; (q = memchr(q, '\n', pos - (size_t)(q - p->s))) != NULL; q++)
		line++;
	return line < src->nhidden && src->hidden[line];
}

/* A short description of the token at pos for messages: 'x', 'word' or byte 0xNN. */
void rbl_describe(const struct parser *p, size_t pos, char *buf, size_t len)
{
	int c = at(p, pos);
	if (c < 0) {
		snprintf(buf, len, "end of file");
	} else if (c == '\n') {
		snprintf(buf, len, "end of line");
	} else if (is_ident(c) && c < 0x80 && rbl_hidden_at(p, pos)) {
		snprintf(buf, len, "a word");
	} else if (is_ident(c) && c < 0x80) {
		size_t e = pos;
		while (e < p->len && e - pos < 24 && is_ident(at(p, e)) && at(p, e) < 0x80)
			e++;
		snprintf(buf, len, "'%.*s'", (int)(e - pos), p->s + pos);
	} else if (c == '\'') {
		snprintf(buf, len, "\"'\"");
	} else if (c > 0x20 && c < 0x7f) {
		snprintf(buf, len, "'%c'", c);
	} else {
		snprintf(buf, len, "byte 0x%02x", (unsigned)c);
	}
}

size_t rbl_ident_end(const struct parser *p, size_t i)
{
	while (is_ident(at(p, i)))
		i++;
	return i;
}

bool rbl_word_is(const struct parser *p, size_t b, size_t e, const char *w)
{
	size_t n = strlen(w);
	return e - b == n && memcmp(p->s + b, w, n) == 0;
}

bool rbl_word_in(const struct parser *p, size_t b, size_t e, const char *const *list)
{
	for (; *list; list++)
		if (rbl_word_is(p, b, e, *list))
			return true;
	return false;
}

bool rbl_fail_smart_quote(struct parser *p, size_t pos)
{
	const struct smart_quote *q = smart_quote_at(p, pos);
	if (q == NULL)
		return false;
	rbl_fail_at(p, pos, "typographic quote %s: use %s", q->name, q->use);
	return true;
}

/* Ruby that would need evaluation of control flow: never a setting value. */
const char *const rbl_forbidden_words[] = {
    "if",     "unless", "while",  "until",   "do",
    "begin",  "case",   "def",    "for",     "class",
    "module", "end",    "rescue", "ensure",  "then",
    "elsif",  "else",   "when",   "require", "require_relative",
    "BEGIN",  "END",    "yield",  "return",  "break",
    "next",   "redo",   "retry",  "alias",   "undef",
    NULL,
};

const char *const rbl_value_end_words[] = {"if",    "unless", "then", "else",
                                           "elsif", "when",   "end",  NULL};

void rbl_fail_keyword(struct parser *p, size_t b, size_t e)
{
	int n = (int)(e - b);
	const char *w = p->s + b;
	if (rbl_word_in(p, b, e, (const char *const[]){"require", "require_relative", NULL}))
		rbl_fail_at(p, b, "'%.*s' is not supported in gitlab.rb", n, w);
	else if (rbl_word_is(p, b, e, "do"))
		rbl_fail_at(p, b, "blocks ('do ... end') are not supported in gitlab.rb");
	else if (rbl_word_in(p, b, e, (const char *const[]){"def", "class", "module", NULL}))
		rbl_fail_at(p, b, "'%.*s' definitions are not supported in gitlab.rb", n, w);
	else if (rbl_word_in(p, b, e, (const char *const[]){"if", "unless", "case", NULL}))
		rbl_fail_at(p, b,
		            "'%.*s' cannot be used inside a value in gitlab.rb: conditions are not "
		            "evaluated; write the value this host needs",
		            n, w);
	else if (rbl_word_in(p, b, e,
	                     (const char *const[]){"while", "until", "for", "begin", NULL}))
		rbl_fail_at(p, b,
		            "'%.*s' is not supported in gitlab.rb: conditions are not evaluated; "
		            "write the settings this host needs as plain assignments",
		            n, w);
	else
		rbl_fail_at(p, b, "unexpected '%.*s'", n, w);
}
