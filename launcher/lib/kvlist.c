#include <stdlib.h>
#include <string.h>

#include "lib/kvlist.h"

int kv_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kv *)a)->name, ((const struct kv *)b)->name);
}

const char *kv_get(const struct kvlist *l, const char *name)
{
	if (l == NULL || l->n == 0)
		return NULL;
	struct kv key = {.name = (char *)name};
	const struct kv *kv = bsearch(&key, l->v, l->n, sizeof *l->v, kv_cmp);
	return kv ? kv->value : NULL;
}

void kvlist_free(struct kvlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].value);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
