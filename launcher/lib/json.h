/*
 * json: the one JSON string escaper. What it quotes may come from an account
 * (a process environment, a service's output), and a JSON document is read on
 * terminals too: ", \ and every control character are escaped as \u00XX or
 * \", \\ (C0, DEL, C1 raw or UTF-8 encoded), a byte that is not valid UTF-8
 * as \u00XX of its value (so the document is valid UTF-8); valid UTF-8 text
 * passes as it is.
 */
#ifndef GITLAB_CTL_JSON_H
#define GITLAB_CTL_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "lib/buf.h"

/* Append s[0..n) to b as a JSON string, quotes included. */
void json_str_add(struct buf *b, const char *s, size_t n);

/* Write the string s as a JSON string to fp; null when s is NULL. */
void json_str_put(FILE *fp, const char *s);

/* The same for s[0..n), which may hold NUL bytes. */
void json_strn_put(FILE *fp, const char *s, size_t n);

#endif
