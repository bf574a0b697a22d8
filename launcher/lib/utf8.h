/*
 * utf8: the one test of "is this valid UTF-8 text" that every escaper of
 * untrusted bytes shares (safetext for terminals, json for documents), so the
 * two cannot disagree on what passes as it is.
 */
#ifndef GITLAB_CTL_UTF8_H
#define GITLAB_CTL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Length (2..4) of the valid UTF-8 sequence of a non-ASCII character at
 * p[0..n): no overlong form, no surrogate, nothing above U+10FFFF and no C1
 * control (U+0080..U+009F, which a terminal obeys as it does raw 0x80..0x9f).
 * 0 if there is none; then *cut says whether the bytes so far begin one that
 * n ended too early (more bytes may complete it).
 */
size_t utf8_seq(const unsigned char *p, size_t n, bool *cut);

#endif
