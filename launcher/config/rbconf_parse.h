/*
 * rbconf_parse: the contract between the files of rbconf's parser (not for
 * other modules: rbconf.h is the public one). rbconf.c parses statements and
 * owns the API, rbconf_expr.c values and arithmetic, rbconf_str.c strings and
 * symbols, rbconf_num.c numbers. Each function parses at p->pos; NULL with
 * p->failed set is an error, NULL without it "not a literal: rewind".
 */
#ifndef GITLAB_CTL_RBCONF_PARSE_H
#define GITLAB_CTL_RBCONF_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "config/rbconf_value.h"
#include "config/rblex.h"

/* A zeroed value of kind located at pos, in the arena (or the parser's spare one). */
struct rb_value *rbp_new_value(struct parser *p, enum rb_kind kind, size_t pos);
/* Any Ruby up to the end of the value in ctx, kept as one RB_OPAQUE with its text. */
struct rb_value *rbp_scan_opaque(struct parser *p, int ctx);
/* A value inside ctx: 0 for a statement, else the closer of the container opened at open. */
struct rb_value *rbp_parse_value(struct parser *p, int ctx, size_t open);

/* A string or symbol value of the n decoded bytes at buf (NUL-terminated), starting at start. */
struct rb_value *rbp_make_str(struct parser *p, enum rb_kind kind, size_t start, char *buf,
                              size_t n);
/* 'single': only \\ and \' are escapes. pos is at the quote; start is the value's start. */
struct rb_value *rbp_parse_sq(struct parser *p, enum rb_kind kind, size_t start);
/* "double": NULL without failing when it needs Ruby (interpolation). */
struct rb_value *rbp_parse_dq(struct parser *p, enum rb_kind kind, size_t start);
/* :sym, :"sym", :'sym'. NULL without failing for other Ruby (::X, :+, :@x). */
struct rb_value *rbp_parse_symbol(struct parser *p);

/*
 * %w(a b) / %i(a b), delimited by (), [], {} or <>: an array of strings (symbols), as
 * GitLab's gitlab.rb template writes trust_auth_cidr_addresses. NULL without failing when
 * p->pos is at no such literal (or one with nested delimiters, left to the opaque scan).
 */
struct rb_value *rbp_parse_words(struct parser *p);

/* An integer or float at p->pos, negated when neg (a '-' at start). */
struct rb_value *rbp_parse_number(struct parser *p, bool neg, size_t start);

#endif
