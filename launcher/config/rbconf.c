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
 * Blocks (if/unless/case) are parsed statement by statement, their conditions
 * skipped like opaque values; nesting them counts toward the depth limit.
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
#include "config/rbconf_parse.h"
#include "config/secret.h"
#include "config/rblex.h"
#include "config/rbscan.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/readfile.h"

/* Failed literal attempts and opaque copies may re-copy text; bound the total. */
#define ARENA_LIMIT ((size_t)RB_MAX_FILE * 8u)

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
			k = rbp_parse_sq(p, RB_STR, kpos);
		else if (c == '"')
			k = rbp_parse_dq(p, RB_STR, kpos);
		else if (c == ':')
			k = rbp_parse_symbol(p);
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

static bool parse_modifier(struct parser *p, struct rb_cond *cond);

/*
 * After a value (or a block's 'end'): the statement ends here, after its
 * modifiers (the first sets *cond unless a block around has), or before the
 * next part of the block around it ('else', 'end', ...: the block checks
 * that it belongs there).
 */
static bool end_statement(struct parser *p, struct rb_cond *cond)
{
	for (;;) {
		if (p->stmt_done) {
			p->stmt_done = false;
			return true;
		}
		rbl_skip_sp(p);
		int c = peek(p);
		size_t e = is_ident_start(c) ? rbl_ident_end(p, p->pos) : p->pos;
		if (!rbl_word_in(p, p->pos, e, (const char *const[]){"if", "unless", NULL}))
			break;
		if (!parse_modifier(p, cond))
			return false;
	}
	int c = peek(p);
	size_t e = is_ident_start(c) ? rbl_ident_end(p, p->pos) : p->pos;
	if (c == ';') {
		p->pos++;
	} else if (c == '#') {
		rbl_skip_comment(p);
	} else if (e > p->pos && rbl_word_in(p, p->pos, e, rbl_value_end_words)) {
		return true;
	} else if (e > p->pos && rbl_word_in(p, p->pos, e, rbl_forbidden_words)) {
		rbl_fail_keyword(p, p->pos, e); /* `end while x` */
		return false;
	} else if (c >= 0 && c != '\n') {
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

static bool parse_statement(struct parser *p, struct vec *stmts, const struct rb_cond *in)
{
	struct rb_stmt st = {.cond = *in};
	struct stmt_builder sb;
	sb.nkeys = 0;
	if (!statement_name(p, &st) || !parse_subscripts(p, &sb) ||
	    !statement_operator(p, &st, sb.nkeys))
		return false;
	st.value = rbp_parse_value(p, 0, 0);
	if (st.value == NULL || !end_statement(p, &st.cond) || !statement_keys(p, &st, &sb))
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

/* ------------------------------------------------------------- conditions */

/* The parts of a block that follow its statements. */
enum part { PART_NONE, PART_ELSIF, PART_ELSE, PART_WHEN, PART_END };

static enum part part_at(const struct parser *p, size_t b, size_t e)
{
	static const char *const words[] = {"elsif", "else", "when", "end", NULL};
	for (size_t i = 0; words[i] != NULL; i++)
		if (rbl_word_is(p, b, e, words[i]))
			return (enum part)(i + 1);
	return PART_NONE;
}

/* The keyword at p->pos, as a string that outlives the parse, or NULL. */
static const char *cond_word(const struct parser *p)
{
	static const char *const words[] = {"if", "unless", "case", NULL};
	size_t e = rbl_ident_end(p, p->pos);
	for (size_t i = 0; words[i] != NULL; i++)
		if (rbl_word_is(p, p->pos, e, words[i]))
			return words[i];
	return NULL;
}

/* Where a condition (or a case's subject) is missing: the line ends, or 'then' follows. */
static bool condition_absent(const struct parser *p, bool subject)
{
	int c = peek(p);
	size_t e = rbl_ident_end(p, p->pos);
	return c < 0 || c == '\n' || c == '#' || c == ';' || rbl_word_is(p, p->pos, e, "then") ||
	       (subject && rbl_word_is(p, p->pos, e, "when"));
}

/* Blanks, line ends, comments and ';' between statements. */
static void skip_separators(struct parser *p)
{
	for (;;) {
		rbl_skip_ws_nl(p);
		if (peek(p) != ';')
			break;
		p->pos++;
	}
}

/* Ruby takes 'then' on a line of its own after a condition, too. */
static void then_below(struct parser *p)
{
	skip_separators(p);
	size_t e = rbl_ident_end(p, p->pos);
	if (rbl_word_is(p, p->pos, e, "then"))
		p->pos = e;
}

/*
 * The condition after the keyword at [kw, e), skipped as Ruby (it is never
 * evaluated), then what may end it: 'then', ';', a comment or the line end.
 * A case's subject may be absent, and followed by 'when' on its line.
 */
static bool skip_condition(struct parser *p, size_t kw, size_t e, bool subject)
{
	p->pos = e;
	rbl_skip_sp(p);
	if (condition_absent(p, subject)) {
		if (!subject) {
			rbl_fail_at(p, kw, "expected a condition after '%.*s'", (int)(e - kw),
			            p->s + kw);
			return false;
		}
	} else if (rbp_scan_opaque(p, 0) == NULL) {
		return false;
	}
	rbl_skip_sp(p);
	int c = peek(p);
	size_t te = rbl_ident_end(p, p->pos);
	if (p->stmt_done) { /* a heredoc's body took the line end */
		p->stmt_done = false;
	} else if (rbl_word_is(p, p->pos, te, "then")) {
		p->pos = te;
		return true;
	} else if (subject && rbl_word_is(p, p->pos, te, "when")) {
		return true; /* case x when 1 ... on one line */
	} else if (c >= 0 && c != '\n' && c != ';' && c != '#') {
		char what[40];
		rbl_describe(p, p->pos, what, sizeof what);
		rbl_fail_at(p, p->pos, "unexpected %s after the condition of '%.*s'", what,
		            (int)(e - kw), p->s + kw);
		return false;
	}
	if (!subject)
		then_below(p);
	return !p->failed;
}

/* `STATEMENT if COND`: the condition is skipped; the statement is inside it. */
static bool parse_modifier(struct parser *p, struct rb_cond *cond)
{
	size_t kw = p->pos, e = rbl_ident_end(p, kw);
	if (cond->word == NULL)
		*cond = (struct rb_cond){cond_word(p), rbl_loc_at(p, kw)};
	p->pos = e;
	rbl_skip_sp(p);
	if (condition_absent(p, false)) {
		rbl_fail_at(p, kw, "expected a condition after '%.*s'", (int)(e - kw), p->s + kw);
		return false;
	}
	return rbp_scan_opaque(p, 0) != NULL;
}

static enum part parse_body(struct parser *p, struct vec *stmts, const struct rb_cond *in);

/* Past the keyword of the part at p->pos. */
static void skip_word(struct parser *p)
{
	p->pos = rbl_ident_end(p, p->pos);
}

/* The block opened at [kw, e) ends with part; 'end' is the only right one left. */
static bool close_block(struct parser *p, enum part part, size_t kw, size_t e)
{
	if (p->failed)
		return false;
	if (part == PART_NONE) {
		rbl_fail_at(p, kw,
		            "'%.*s' has no matching 'end': add 'end' after its last statement",
		            (int)(e - kw), p->s + kw);
		return false;
	}
	if (part != PART_END) {
		rbl_fail_keyword(p, p->pos, rbl_ident_end(p, p->pos));
		return false;
	}
	skip_word(p);
	p->depth--;
	struct rb_cond after = {0}; /* `end if x`: the statements inside are conditional already */
	return end_statement(p, &after);
}

/* if COND / elsif COND / else / end, or unless COND / else / end. */
static bool parse_if(struct parser *p, struct vec *stmts, const struct rb_cond *c, size_t kw,
                     size_t e)
{
	bool is_if = rbl_word_is(p, kw, e, "if");
	size_t word = kw, word_end = e; /* if, then each elsif */
	enum part part;
	for (;;) {
		if (!skip_condition(p, word, word_end, false))
			return false;
		part = parse_body(p, stmts, c);
		if (part != PART_ELSIF || !is_if)
			break;
		word = p->pos;
		word_end = rbl_ident_end(p, word);
	}
	if (part == PART_ELSE) {
		skip_word(p);
		part = parse_body(p, stmts, c);
	}
	return close_block(p, part, kw, e);
}

/* case [SUBJECT] / when VALUE[, ...] [then] ... / else / end */
static bool parse_case(struct parser *p, struct vec *stmts, const struct rb_cond *c, size_t kw,
                       size_t e)
{
	if (!skip_condition(p, kw, e, true))
		return false;
	skip_separators(p);
	if (p->failed)
		return false;
	if (part_at(p, p->pos, rbl_ident_end(p, p->pos)) != PART_WHEN) {
		char what[40];
		rbl_describe(p, p->pos, what, sizeof what);
		rbl_fail_at(p, p->pos, "expected 'when' after 'case', found %s", what);
		return false;
	}
	enum part part;
	do {
		size_t when = p->pos;
		if (!skip_condition(p, when, rbl_ident_end(p, when), false))
			return false;
		part = parse_body(p, stmts, c);
	} while (part == PART_WHEN);
	if (part == PART_ELSE) {
		skip_word(p);
		part = parse_body(p, stmts, c);
	}
	return close_block(p, part, kw, e);
}

/* An if/unless/case block at p->pos; the statements inside are marked with its keyword. */
static bool parse_block(struct parser *p, struct vec *stmts, const struct rb_cond *in)
{
	size_t kw = p->pos, e = rbl_ident_end(p, kw);
	struct rb_cond c = in->word ? *in : (struct rb_cond){cond_word(p), rbl_loc_at(p, kw)};
	if (!rbl_enter(p, kw))
		return false;
	if (rbl_word_is(p, kw, e, "case"))
		return parse_case(p, stmts, &c, kw, e);
	return parse_if(p, stmts, &c, kw, e);
}

/*
 * Statements (and blocks) up to the end of the file, or up to a part of the
 * block around them ('elsif', 'else', 'when', 'end'), left at p->pos.
 */
static enum part parse_body(struct parser *p, struct vec *stmts, const struct rb_cond *in)
{
	while (!p->failed) {
		bool bol = p->pos == 0 || p->s[p->pos - 1] == '\n';
		if (bol && line_is(p, "=begin", false)) {
			skip_block_comment(p);
			continue;
		}
		if (bol && line_is(p, "__END__", true)) {
			p->pos = p->len; /* the end of every block around too */
			break;
		}
		rbl_skip_sp(p);
		int c = peek(p);
		enum part part = PART_NONE;
		if (c < 0)
			break;
		if (is_ident_start(c))
			part = part_at(p, p->pos, rbl_ident_end(p, p->pos));
		if (part != PART_NONE)
			return part;
		if (c == '\n')
			rbl_newline(p);
		else if (c == '#')
			rbl_skip_comment(p);
		else if (c == ';')
			p->pos++;
		else if (cond_word(p) != NULL ? !parse_block(p, stmts, in)
		                              : !parse_statement(p, stmts, in))
			break;
	}
	return PART_NONE;
}

static void parse_file(struct parser *p, struct vec *stmts)
{
	struct rb_cond none = {0};
	enum part part = parse_body(p, stmts, &none);
	if (!p->failed && part != PART_NONE) /* an 'end' or 'else' without its 'if' */
		rbl_fail_keyword(p, p->pos, rbl_ident_end(p, p->pos));
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
