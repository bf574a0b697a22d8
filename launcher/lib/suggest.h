/*
 * suggest: "did you mean" for mistyped names (settings, services, commands),
 * by edit distance, so a typo is named next to its likely intent instead of
 * being ignored.
 */
#ifndef GITLAB_CTL_SUGGEST_H
#define GITLAB_CTL_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Optimal string alignment distance (insertions, deletions, substitutions,
 * transpositions of neighbours), counted up to limit: any larger distance
 * is returned as limit + 1.
 */
size_t suggest_distance(const char *a, const char *b, size_t limit);

/*
 * The candidate closest to word if close enough (1 edit for words under 5 bytes, 2 otherwise;
 * the word itself is no suggestion; first of equals), else NULL.
 */
const char *suggest_pick(const char *word, const char *const *cands, size_t n);

#endif
