/*
 * secret: what gitlab-ctl never shows. A catalog setting marked
 * `secret = true;` and an env variable whose name says it is a credential
 * are redacted by show-config and kept out of --diff (render/tree.h
 * TN_SECRET); a diagnostic about a secret setting names its file, line and
 * column but never echoes the source line that holds the value.
 */
#ifndef GITLAB_CTL_SECRET_H
#define GITLAB_CTL_SECRET_H

#include <stdbool.h>

#include "lib/diag.h"

/* Names whose values are redacted: contain PASSWORD, SECRET, TOKEN or KEY (any case). */
bool env_is_secret(const char *name);

/*
 * The location l with its source text dropped (file name kept), for a
 * diagnostic about a secret value; nosrc is the caller's storage for it.
 */
struct loc secret_loc(struct loc l, struct src *nosrc);

#endif
