/*
 * For the fuzz harnesses: read a shipped template (at most 64 KiB, which all
 * of them are far below) into a NUL-terminated buffer, once at start-up.
 */
#ifndef GITLAB_CTL_FUZZ_SLURP_H
#define GITLAB_CTL_FUZZ_SLURP_H

#include <stdio.h>
#include <stdlib.h>

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "r");
	if (fp == NULL)
		return NULL;
	char *s = malloc(1 << 16);
	*len = s ? fread(s, 1, (1 << 16) - 1, fp) : 0;
	fclose(fp);
	if (s != NULL)
		s[*len] = '\0';
	return s;
}

#endif
