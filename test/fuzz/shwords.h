/*
 * For the fuzz harnesses: a tiny POSIX sh word splitter for the command lines
 * templates/run renders, so that a harness can check that a shell would pass
 * each value as exactly one, unchanged argument.
 *
 * It accepts only what is safe without evaluation: single-quoted text, a
 * backslash-escaped character, and unquoted characters that no shell treats
 * specially. Anything else ($, `, ", globs, redirections, ...) outside quotes
 * is "unsafe": the rendered line could mean something else than intended.
 */
#ifndef GITLAB_CTL_FUZZ_SHWORDS_H
#define GITLAB_CTL_FUZZ_SHWORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct shwords {
	char *buf;        /* the words, each NUL-terminated, one after the other */
	size_t n;         /* number of words */
	size_t used;      /* bytes of buf in use */
	const char *rest; /* the text after the command's terminating newline (or its end) */
};

static bool sh_plain(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("-_/.,:+@%", c) != NULL;
}

/*
 * Split one simple command starting at s, up to an unquoted newline or the
 * end. Returns 0, or -1 if the text holds anything unsafe or unterminated.
 * Free w->buf after use (also on -1).
 */
static int sh_split(const char *s, struct shwords *w)
{
	size_t len = strlen(s);
	w->buf = malloc(2 * len + 2);
	w->n = 0;
	w->used = 0;
	w->rest = s + len;
	if (w->buf == NULL)
		abort();
	bool inword = false;
	const char *p = s;
	for (;;) {
		char c = *p;
		if (c == '\0' || c == '\n' || c == ' ' || c == '\t') {
			if (inword) {
				w->buf[w->used++] = '\0';
				w->n++;
				inword = false;
			}
			if (c == '\0')
				return 0;
			p++;
			if (c == '\n') {
				w->rest = p;
				return 0;
			}
			continue;
		}
		inword = true;
		if (c == '\'') {
			const char *q = strchr(p + 1, '\'');
			if (q == NULL)
				return -1;
			memcpy(w->buf + w->used, p + 1, (size_t)(q - p - 1));
			w->used += (size_t)(q - p - 1);
			p = q + 1;
		} else if (c == '\\') {
			if (p[1] == '\0' || p[1] == '\n')
				return -1;
			w->buf[w->used++] = p[1];
			p += 2;
		} else if (sh_plain(c)) {
			w->buf[w->used++] = c;
			p++;
		} else {
			return -1;
		}
	}
}

/* The i-th word (i < w->n). */
static const char *sh_word(const struct shwords *w, size_t i)
{
	const char *p = w->buf;
	while (i-- > 0)
		p += strlen(p) + 1;
	return p;
}

/*
 * The run script rendered from templates/run: the fixed header, then one
 * exec line whose words must be exactly want[0..nwant), then nothing.
 * Returns false when it is not.
 */
static bool sh_run_ok(const char *text, const char *const *want, size_t nwant)
{
	static const char head[] = "#!/bin/sh\n";
	static const char exec2[] = "\nexec 2>&1\n";
	if (strncmp(text, head, sizeof head - 1) != 0)
		return false;
	const char *e = strstr(text, exec2);
	if (e == NULL)
		return false;
	struct shwords w;
	bool ok = sh_split(e + sizeof exec2 - 1, &w) == 0 && w.n == nwant + 1 &&
	          strcmp(sh_word(&w, 0), "exec") == 0 && *w.rest == '\0';
	for (size_t i = 0; ok && i < nwant; i++)
		ok = strcmp(sh_word(&w, i + 1), want[i]) == 0;
	free(w.buf);
	return ok;
}

#endif
