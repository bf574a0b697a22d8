/*
 * safetext: what an account printed, made safe to show on root's terminal.
 * Every control byte (C0, DEL, C1 whether raw or UTF-8 encoded, invalid UTF-8)
 * is written as the text \xHH, so no escape sequence (OSC title or clipboard,
 * cursor moves, CR overwriting a line) reaches the terminal; valid UTF-8 text
 * passes as it is. The one filter for service output, step output, check
 * answers and the exec relay.
 */
#ifndef GITLAB_CTL_SAFETEXT_H
#define GITLAB_CTL_SAFETEXT_H

#include <stddef.h>
#include <stdio.h>

#include "lib/buf.h"

#define SAFETEXT_NL   0x1 /* keep \n and \t (else escaped: one line of text) */
#define SAFETEXT_TTY  0x2 /* also keep \r and \b: line editing in the exec relay */
#define SAFETEXT_MORE 0x4 /* more bytes follow: an unfinished UTF-8 sequence is left */

/*
 * Append p[0..n) to dst, escaped. Returns the number of bytes consumed: n, or
 * with SAFETEXT_MORE less by an unfinished UTF-8 sequence at the end (at most
 * 3 bytes), to be passed again with what follows.
 */
size_t safetext_add(struct buf *dst, const char *p, size_t n, unsigned flags);

/* The same, written to fp. */
void safetext_put(FILE *fp, const char *p, size_t n, unsigned flags);

#endif
