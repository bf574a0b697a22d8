/*
 * secret: what gitlab-ctl never shows. A catalog setting marked
 * `secret = true;`, any setting, env value or argument built from one
 * through {{placeholders}}, and an env variable whose name says it is a
 * credential are redacted by show-config, --diff and --dry-run (the
 * renderer records which output bytes came from them: render/template.h);
 * a diagnostic never echoes a source line that holds a secret value.
 */
#ifndef GITLAB_CTL_SECRET_H
#define GITLAB_CTL_SECRET_H

#include <stdbool.h>

#include "lib/diag.h"

/*
 * How secret a computed value is: built from no secret; built from a secret
 * setting that is empty now (a file rendered from it may have held one
 * before: its old content is never shown); or holding a secret now.
 */
enum secrecy { SECRET_NONE, SECRET_MAY, SECRET_HOLDS };

/* Names whose values are redacted: contain PASSWORD, SECRET, TOKEN or KEY (any case). */
bool env_is_secret(const char *name);

/* Does text (len bytes) name a credential: PASSWORD, PASSWD, SECRET, TOKEN, KEY, AUTH (any case)?
 */
bool text_names_secret(const char *text, size_t len);

/*
 * Mark in hidden (index = line number, nhidden entries) the lines of a
 * gitlab.rb that may hold a secret, from the text alone (parse errors come
 * before any statement is known): a line that names a credential, and the
 * line after one that ends in `=` or `=>` (the value written below its key).
 */
void secret_guess_lines(const char *text, size_t len, unsigned char *hidden, size_t nhidden);

/*
 * The location l with its source text dropped (file name kept), for a
 * diagnostic about a secret value; nosrc is the caller's storage for it.
 */
struct loc secret_loc(struct loc l, struct src *nosrc);

#endif
