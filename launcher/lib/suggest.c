/* Edit distance for "did you mean". */
#include <string.h>

#include "lib/suggest.h"

#define MAX_WORD 64 /* longer names are not typos worth a suggestion */

size_t suggest_distance(const char *a, const char *b, size_t limit)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > MAX_WORD || lb > MAX_WORD)
		return strcmp(a, b) == 0 ? 0 : limit + 1;
	if ((la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	/* Three rows suffice: OSA looks back two rows for a transposition. */
	size_t rows[3][MAX_WORD + 1];
	size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		size_t best = cur[0];
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (prev[j - 1] + cost < d)
				d = prev[j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
			if (d < best)
				best = d;
		}
		if (best > limit)
			return limit + 1;
		size_t *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb] > limit ? limit + 1 : prev[lb];
}

static size_t limit_for(const char *word)
{
	return strlen(word) < 5 ? 1 : 2;
}

const char *suggest_pick(const char *word, const char *const *cands, size_t n)
{
	size_t lim = limit_for(word), best = lim + 1;
	const char *pick = NULL;
	for (size_t i = 0; i < n; i++) {
		if (cands[i] == NULL)
			continue;
		size_t d = suggest_distance(word, cands[i], lim);
		if (d > 0 && d < best) {
			best = d;
			pick = cands[i];
		}
	}
	return pick;
}
