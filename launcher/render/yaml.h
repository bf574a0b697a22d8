/*
 * yaml: a plain data tree (lib/yval.h) written as block YAML. Strings are
 * always double-quoted through tpl_yaml_quote, keys only when they could read
 * as anything but a string, so no value can change the file's structure.
 */
#ifndef GITLAB_CTL_YAML_H
#define GITLAB_CTL_YAML_H

#include <stddef.h>

#include "lib/buf.h"
#include "lib/yval.h"
#include "render/template.h"

/* Which gitlab.rb line wrote which line of a rendered file, for a validator's "line N". */
struct yaml_src {
	int out; /* line of the rendered file */
	int src; /* line of gitlab.rb */
};

struct yaml_srcmap {
	struct yaml_src *v;
	size_t n, cap;
};

/*
 * Append v as the value of a mapping key (or list item) whose line is
 * indented by `indent` spaces and which is already written up to its ':'.
 * A scalar or empty collection stays on that line; a collection continues
 * on the next lines, indented deeper. Ends without a newline. With map, each
 * output line a value starts on is recorded with its gitlab.rb line (0 for
 * what gitlab-ctl built), counting lines from the start of b: b must hold
 * the file from its first byte. With secrets, the output bytes of every value
 * under a key that names a credential (secret.h: password, basic_auth,
 * authorization, bearer_token, api_key, ...; credentials) and of every
 * string that is a URL with userinfo are
 * recorded there (offsets in b), so --diff redacts them as show-config does.
 */
void yaml_emit_value(struct buf *b, const struct yval *v, int indent, struct yaml_srcmap *map,
                     struct tpl_spans *secrets);

/*
 * Append the elements of v (a non-array is one element) as list items, the
 * first on the current line (already indented by `indent`), the others on
 * lines of their own. Ends without a newline.
 */
void yaml_emit_items(struct buf *b, const struct yval *v, int indent, struct yaml_srcmap *map,
                     struct tpl_spans *secrets);

/* The gitlab.rb line that wrote line `line` of the file, or 0 (map may be NULL). */
int yaml_srcmap_find(const struct yaml_srcmap *map, int line);

#endif
