/*
 * grow: the one doubling-array helper, so that every growing list checks the
 * size multiplication for overflow the same way. Out of memory dies with 111
 * (lib/alloc.h), so growing cannot fail.
 */
#ifndef GITLAB_CTL_GROW_H
#define GITLAB_CTL_GROW_H

#include <stddef.h>

/*
 * Make room for `need` elements of `size` bytes in the array whose pointer is
 * at arrayp (e.g. &list->v), whose capacity is *cap: doubles, starting at
 * `first`.
 */
void grow(void *arrayp, size_t *cap, size_t need, size_t size, size_t first);

#endif
