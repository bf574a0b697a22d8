/* Doubling arrays (see grow.h). */
#include <stdint.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/grow.h"

void grow(void *arrayp, size_t *cap, size_t need, size_t size, size_t first)
{
	if (need <= *cap)
		return;
	size_t ncap = *cap ? *cap : first;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	/* The array pointer is passed as void *: copy it out and back, no type punning. */
	void *old, *nv;
	memcpy(&old, arrayp, sizeof old);
	nv = xreallocarray(old, ncap, size); /* checks ncap * size for overflow */
	memcpy(arrayp, &nv, sizeof nv);
	*cap = ncap;
}
