/*
 * rblex: the cursor of the gitlab.rb parser, shared by rbconf (literals and
 * statements) and rbscan (the Ruby it cannot evaluate, skipped token by
 * token): the arena the values live in, positions and their line:col, the
 * first error (which stops the parse), character classes, comments,
 * newlines and the heredoc bodies they owe. Internal to config/rb*: other
 * modules use rbconf.h. It sees no rb_value: limits are the parser's to set.
 */
#ifndef GITLAB_CTL_RBLEX_H
#define GITLAB_CTL_RBLEX_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/ascii.h"
#include "lib/diag.h"

/* Heredocs started on one line whose bodies are still to be read. */
#define RBL_MAX_HEREDOCS 16

struct rb_value;

/* The values of one parse, freed at once; limit bounds its total size. */
struct rb_arena;
struct rb_arena *rbl_arena_new(size_t limit);
/* 8-aligned memory, NULL only past the limit: out of memory dies (lib/alloc.h). */
void *rbl_arena_alloc(struct rb_arena *a, size_t n);
void rbl_arena_free(struct rb_arena *a);

struct heredoc {
	size_t start;     /* of "<<", for errors */
	size_t id, idlen; /* terminator word */
	bool indent;      /* <<- or <<~: the terminator may be indented */
};

struct parser {
	const struct src *src;
	const char *s;
	size_t len, pos;
	struct rb_arena *arena;
	struct diags *d;
	bool failed;
	int depth, max_depth; /* nesting now, and allowed */
	struct heredoc pend[RBL_MAX_HEREDOCS];
	size_t npend;
	size_t hd_end;          /* end of the last heredoc terminator line read */
	bool stmt_done;         /* the value consumed its statement's newline */
	size_t tok_end;         /* end of the last token skipped by rbscan_tokens() */
	size_t ml_open, ml_end; /* the last string that ran past a line end (ml_end 0: none) */
	size_t item_start;      /* of the array element or hash entry being parsed */
	struct rb_value *spare; /* a node arithmetic consumed, for reuse */
	size_t lc_pos;          /* location cache: lc_line and line start lc_ls of lc_pos */
	size_t lc_ls;
	int lc_line;
};

/* A rewind point for a failed literal attempt. */
struct rbl_mark {
	size_t pos;
	int depth;
	size_t npend;
	struct heredoc pend[RBL_MAX_HEREDOCS];
};

/* A growing array in the arena (statements, array elements, hash pairs). */
struct vec {
	void *v;
	size_t n, cap;
};

/* A rewind point, and going back to it after a failed literal attempt. */
void rbl_mark(const struct parser *p, struct rbl_mark *m);
void rbl_restore(struct parser *p, const struct rbl_mark *m);

/* The line:col of pos (cached: asked for mostly in order). */
struct loc rbl_loc_at(struct parser *p, size_t pos);
/* Record the first error, at pos; later ones are dropped. */
void rbl_fail_at(struct parser *p, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "expected ']' to close '[' at 3:14" */
void rbl_fail_unclosed(struct parser *p, size_t at, size_t open, int closer);

/* "unterminated WHAT opened here", naming a typographic quote meant to close it. */
void rbl_fail_unterminated(struct parser *p, size_t open, const char *what);
/* A string literal from open to its closing quote at end; one spanning lines is remembered. */
void rbl_string_seen(struct parser *p, size_t open, size_t end);
/*
 * An error at pos on the line where a multi-line string closed is most likely
 * an unclosed quote: blame the quote that opened it, and return true.
 */
bool rbl_blame_open_string(struct parser *p, size_t pos);

/* Arena memory; NULL after recording the size error. */
void *rbl_palloc(struct parser *p, size_t n);
char *rbl_pstrndup(struct parser *p, const char *s, size_t n);
/* One level deeper, unless past max_depth (an error). */
bool rbl_enter(struct parser *p, size_t at);
/* Append to an arena vector; false after an error. */
bool rbl_vec_push(struct parser *p, struct vec *vec, const void *elem, size_t size);

static inline int at(const struct parser *p, size_t i)
{
	return i < p->len ? (unsigned char)p->s[i] : -1;
}

static inline int peek(const struct parser *p)
{
	return at(p, p->pos);
}

static inline int peek1(const struct parser *p)
{
	return at(p, p->pos + 1);
}

/* Ruby identifiers may hold any non-ASCII (UTF-8) byte. */
static inline bool is_ident_start(int c)
{
	return ascii_alpha(c) || c == '_' || c >= 0x80;
}

static inline bool is_ident(int c)
{
	return is_ident_start(c) || ascii_digit(c);
}

/* Ruby's white space between tokens: a newline is a token of its own. */
static inline bool is_space(int c)
{
	return ascii_space(c) && c != '\n';
}

static inline bool is_closer(int c)
{
	return c == ')' || c == ']' || c == '}';
}

static inline int closer_of(int c)
{
	return c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : c == '<' ? '>' : c;
}

/* Blanks (not newlines); true if there were any. */
bool rbl_skip_sp(struct parser *p);
/* A '#' comment, up to the newline. */
void rbl_skip_comment(struct parser *p);
/* The body of heredoc h, from pos to its terminator line included. */
void rbl_read_heredoc(struct parser *p, const struct heredoc *h);
/* Past a newline, and past the bodies of the heredocs started on its line. */
void rbl_newline(struct parser *p);
/* Blanks, newlines and comments. */
void rbl_skip_ws_nl(struct parser *p);
/* Does the next line go on with the value (it starts with '.' or '&.')? */
bool rbl_continues_next_line(const struct parser *p);
/* Is the line holding pos one a diagnostic must not quote (it may hold a secret)? */
bool rbl_hidden_at(const struct parser *p, size_t pos);
/* What is at pos, for messages: "'x'", "end of line", "end of file", ... */
void rbl_describe(const struct parser *p, size_t pos, char *buf, size_t len);
/* The end of the identifier at i. */
size_t rbl_ident_end(const struct parser *p, size_t i);
/* Is [b, e) the word w, or one of list (NULL-terminated)? */
bool rbl_word_is(const struct parser *p, size_t b, size_t e, const char *w);
bool rbl_word_in(const struct parser *p, size_t b, size_t e, const char *const *list);
/* A typographic quote (U+2018/2019/201C/201D) at pos is an error naming it; true if so. */
bool rbl_fail_smart_quote(struct parser *p, size_t pos);
/* Keywords a gitlab.rb statement or value may not use, and the error naming one. */
extern const char *const rbl_forbidden_words[];
void rbl_fail_keyword(struct parser *p, size_t b, size_t e);
/*
 * Keywords that end a statement's value where a value could end: a modifier
 * (if, unless) or the next part of the block around the statement.
 */
extern const char *const rbl_value_end_words[];

#endif
