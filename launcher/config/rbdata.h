/*
 * rbdata: a gitlab.rb literal taken whole as plain data (lib/yval.h), for
 * settings that go into a YAML file as the user wrote them
 * (prometheus['scrape_configs'], alertmanager['receivers']).
 */
#ifndef GITLAB_CTL_RBDATA_H
#define GITLAB_CTL_RBDATA_H

#include "config/rbconf.h"
#include "lib/diag.h"
#include "lib/yval.h"

/*
 * The data of v (path names it in messages, e.g. prometheus['scrape_configs']).
 * Hash keys must be strings or symbols; no NUL byte, no infinite or NaN
 * float, no Ruby gitlab-ctl cannot evaluate. NULL after errors located in d.
 */
struct yval *rbdata_from(const char *path, const struct rb_value *v, struct diags *d);

/* Set keys[0..n-1] inside *root (made a hash where needed) to v, which it takes over. */
void rbdata_set_path(struct yval **root, char *const *keys, size_t n, struct yval *v);

#endif
