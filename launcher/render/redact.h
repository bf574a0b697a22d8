/*
 * redact: what --diff and --dry-run may show of a file that holds, or may
 * have held, a secret.
 *
 * The new content's secret bytes are known exactly (template.h records the
 * output bytes each secret value's quoting produced): each span becomes
 * [REDACTED]. The old content on disk has no spans: it was rendered from
 * values that may be gone (a rotated or removed secret). So an old line is
 * shown only as far as it is already public: a line the new content holds
 * outside any span is shown as is; a line with the shape of a new line that
 * holds a secret (the same text before its first span and after its last)
 * shows that text with [REDACTED] between; any other line shows as
 * [REDACTED]. Nothing of the old side is printed that the new side does not
 * print itself.
 */
#ifndef GITLAB_CTL_REDACT_H
#define GITLAB_CTL_REDACT_H

#include <stddef.h>

#include "lib/buf.h"
#include "render/template.h"

#define REDACTED "[REDACTED]"

/* data with each span (ascending, not overlapping) replaced by REDACTED, appended to out. */
void redact_new(const char *data, size_t len, const struct tpl_span *spans, size_t n,
                struct buf *out);

/* old, line by line, as the rule above allows, appended to out (data/spans: the new content). */
void redact_old(const char *old, size_t oldlen, const char *data, size_t len,
                const struct tpl_span *spans, size_t n, struct buf *out);

#endif
