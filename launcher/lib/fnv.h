/*
 * fnv: the one FNV-1a (64-bit) digest of words, for records that only tell a changed command
 * or setting from an unchanged one (never for secrecy or integrity against an attacker).
 */
#ifndef GITLAB_CTL_FNV_H
#define GITLAB_CTL_FNV_H

#include <stdint.h>

#define FNV_OFFSET 1469598103934665603ULL

/* h with s mixed in, its NUL included as a separator (so "ab","c" differs from "a","bc"). */
static inline uint64_t fnv_str(uint64_t h, const char *s)
{
	for (const char *p = s;; p++) {
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		if (*p == '\0')
			return h;
	}
}

/* The words of a NULL-terminated argv, from FNV_OFFSET. */
static inline uint64_t fnv_argv(char *const *argv)
{
	uint64_t h = FNV_OFFSET;
	for (char *const *a = argv; *a != NULL; a++)
		h = fnv_str(h, *a);
	return h;
}

#endif
