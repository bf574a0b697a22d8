/*
 * rbconf: the gitlab.rb language, with no knowledge of services.
 *
 * A file is a list of statements:
 *   name['a']['b'] = VALUE     assignment (subscripts are string or symbol keys)
 *   name = VALUE               assignment without subscripts
 *   name VALUE                 bare call, e.g. external_url 'https://x'
 * VALUE is a literal (string, symbol, integer with arithmetic, float, true,
 * false, nil, array, hash) or, when it is any other Ruby, an RB_OPAQUE value
 * whose exact source extent is kept: callers decide whether opaque is fine.
 *
 * A statement may carry `if COND`/`unless COND` modifiers or sit (nested) in
 * `if`/`elsif`/`else`, `unless`/`else` or `case`/`when`/`else` blocks closed
 * by `end`. Conditions are never evaluated: their Ruby is skipped, and each
 * statement inside one is returned with the outermost keyword around it
 * (rb_stmt.cond), so that callers refuse a setting that cannot be ignored.
 *
 * Everything a parse returns lives in the rb_file's arena and is freed by
 * rb_free(); values are read-only for callers.
 *
 * Details (as Ruby reads them): subscripts follow the name with no space
 * (`roles ['a']` is a call with an array); a value may start on the next line
 * after `=` only if that line is indented; a statement goes on after a
 * trailing operator or comma, inside brackets, through heredoc bodies and
 * onto a next line starting with `.method`. Integers: `_`, 0x 0o 0b 0d and
 * leading-0 octal; `+ - * /` on integers only (`/` floors, as Ruby's).
 * Hash keys: 'k' =>, "k" =>, :k =>, k:, "k": (the last two are symbols).
 * A hash with a non-literal key is opaque as a whole. An opaque value's text
 * runs from its first to its last token, plus the bodies of heredocs it
 * starts when it ends its statement. `while`/`until`/`for`/`begin`/`def`/
 * `require`, `while`/`rescue` modifiers, `if` inside a value, blocks and an
 * unbalanced `end` are errors; so is an integer outside long long.
 * =begin/=end comments and __END__ are honoured.
 */
#ifndef GITLAB_CTL_RBCONF_H
#define GITLAB_CTL_RBCONF_H

#include <stdbool.h>
#include <stddef.h>

#include "config/rbconf_value.h"
#include "lib/diag.h"

/* The condition a statement is inside: a block's keyword, or a modifier's. */
struct rb_cond {
	const char *word; /* "if", "unless" or "case"; NULL: not inside one */
	struct loc loc;   /* of that keyword */
};

struct rb_stmt {
	char *name;           /* top-level identifier */
	char **keys;          /* subscripts in order, as strings (symbols without ':') */
	struct loc *key_locs; /* location of each subscript */
	size_t nkeys;
	bool call;              /* `name VALUE` form */
	struct rb_value *value; /* never NULL */
	struct loc loc;         /* of the name */
	struct rb_cond cond;    /* the outermost condition around it */
};

struct rb_arena; /* private */

struct rb_file {
	struct src src; /* owns a copy of the text (NUL-terminated) */
	struct rb_stmt *v;
	size_t n;
	struct rb_arena *arena;
};

/*
 * Parse a buffer (need not be NUL-terminated). Returns 0, or -1 with at least
 * one DIAG_ERR recorded in d with its line and column. On -1 the file holds
 * nothing usable but must still be passed to rb_free().
 */
int rb_parse(const char *name, const char *text, size_t len, struct rb_file *out, struct diags *d);

/* Read and parse a file; I/O errors are recorded in d as well. */
int rb_load(const char *path, struct rb_file *out, struct diags *d);

void rb_free(struct rb_file *f);

/* How to fix an opaque value where a setting needs a literal. */
#define RB_LITERAL_HINT "write a literal value (a string, number, true/false, array or hash)"

const char *rb_kind_name(enum rb_kind k); /* "string", "integer", "Ruby expression", ... */

/* True when v or anything inside it is RB_OPAQUE; *where receives the first one. */
bool rb_has_opaque(const struct rb_value *v, const struct rb_value **where);

#endif
