/*
 * kvlist: a name -> value map kept sorted by name, for the small tables the
 * effective configuration is made of (vars, env, origins). Lookups bsearch.
 */
#ifndef GITLAB_CTL_KVLIST_H
#define GITLAB_CTL_KVLIST_H

#include <stddef.h>

struct kv {
	char *name;
	char *value;
};

struct kvlist {
	struct kv *v; /* sorted by name, names unique */
	size_t n;
};

/* The value of name, or NULL; l may be NULL. */
const char *kv_get(const struct kvlist *l, const char *name);

/* qsort/bsearch comparator of struct kv by name. */
int kv_cmp(const void *a, const void *b);

/* Free every name and value and empty the list. */
void kvlist_free(struct kvlist *l);

#endif
