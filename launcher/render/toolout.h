/*
 * toolout: what a validator (promtool, amtool) said about a rendered file, as it may be
 * printed. The tool quotes the file back (a URL it cannot parse, a fragment of it: Go's
 * "invalid URL escape \"%zz\""), so its output is redacted with the spans the file's secrets
 * landed in (template.h): each span's bytes and the value inside its quotes become
 * [REDACTED], and so does any quoted string or word of the output that the file holds only
 * inside spans. What the file shows outside them (a job name, a key) stays, for the operator.
 */
#ifndef GITLAB_CTL_TOOLOUT_H
#define GITLAB_CTL_TOOLOUT_H

#include <stddef.h>

#include "lib/buf.h"
#include "render/template.h"

/* out[0..n) with the secrets of data (spans ascending) redacted, appended to res. */
void toolout_redact(const char *out, size_t n, const char *data, size_t len,
                    const struct tpl_span *spans, size_t nspans, struct buf *res);

#endif
