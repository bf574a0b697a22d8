/* Changed parameters a reload does not take up (see restartparams.h). */
#include <string.h>

#include "engine/restartparams.h"
#include "lib/ascii.h"

/* A line's parameter name and value, blanks around both trimmed; false for none. */
static bool param_line(const char *l, size_t n, const char **name, size_t *nlen, const char **val,
                       size_t *vlen)
{
	size_t i = 0;
	while (i < n && ascii_blank(l[i]))
		i++;
	size_t s = i;
	while (i < n && (ascii_alnum(l[i]) || l[i] == '_' || l[i] == '.'))
		i++;
	if (i == s)
		return false; /* blank, a comment */
	*name = l + s, *nlen = i - s;
	while (i < n && (ascii_blank(l[i]) || l[i] == '='))
		i++;
	while (n > i && ascii_blank(l[n - 1]))
		n--;
	*val = l + i, *vlen = n - i;
	return true;
}

/* The value of parameter name in text, or NULL when no line sets it (the last one wins). */
static const char *value_of(const char *text, size_t len, const char *name, size_t nlen,
                            size_t *vlen)
{
	const char *found = NULL;
	for (const char *l = text, *end = text + len; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
		const char *k, *v;
		size_t kl, vl;
		if (param_line(l, n, &k, &kl, &v, &vl) && kl == nlen && memcmp(k, name, nlen) == 0)
			found = v, *vlen = vl;
		l += n + 1;
	}
	return found;
}

static bool differs(const char *a, size_t alen, const char *b, size_t blen, const char *name,
                    size_t nlen)
{
	size_t av = 0, bv = 0;
	const char *x = value_of(a, alen, name, nlen, &av), *y = value_of(b, blen, name, nlen, &bv);
	return (x == NULL) != (y == NULL) || (x != NULL && (av != bv || memcmp(x, y, av) != 0));
}

void restartparams_changed(const char *listing, const char *old, size_t oldlen, const char *new,
                           size_t newlen, struct buf *out)
{
	for (const char *l = listing; *l != '\0';) {
		size_t n = strcspn(l, "\n");
		size_t k = strcspn(l, "\t\n");
		static const char ctx[] = "\tpostmaster\t";
		if (k < n && strncmp(l + k, ctx, sizeof ctx - 1) == 0 &&
		    differs(old, oldlen, new, newlen, l, k))
			buf_addf(out, "%s%.*s", out->len ? ", " : "", (int)k, l);
		l += n + (l[n] == '\n');
	}
}
