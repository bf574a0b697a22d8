/*
 * yaml: a plain data tree (lib/yval.h) written as block YAML. Strings are
 * always double-quoted through tpl_yaml_quote, keys only when they could read
 * as anything but a string, so no value can change the file's structure.
 */
#ifndef GITLAB_CTL_YAML_H
#define GITLAB_CTL_YAML_H

#include "lib/buf.h"
#include "lib/yval.h"

/*
 * Append v as the value of a mapping key (or list item) whose line is
 * indented by `indent` spaces and which is already written up to its ':'.
 * A scalar or empty collection stays on that line; a collection continues
 * on the next lines, indented deeper. Ends without a newline.
 */
void yaml_emit_value(struct buf *b, const struct yval *v, int indent);

/*
 * Append the elements of v (a non-array is one element) as list items, the
 * first on the current line (already indented by `indent`), the others on
 * lines of their own. Ends without a newline.
 */
void yaml_emit_items(struct buf *b, const struct yval *v, int indent);

#endif
