/* Placeholder expansion (see placeholder.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"
#include "config/placeholder.h"
#include "lib/alloc.h"

#define JEMALLOC_MARK "@JEMALLOC@"

struct out {
	char *s;
	size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 64;
		while (cap < o->len + n + 1) {
			if (cap > SIZE_MAX / 2)
				die_nomem();
			cap *= 2;
		}
		o->s = xreallocarray(o->s, cap, 1);
		o->cap = cap;
	}
	memcpy(o->s + o->len, s, n);
	o->len += n;
	o->s[o->len] = '\0';
}

char *ph_expand(const char *tmpl, ph_lookup_fn lookup, void *ctx, int line)
{
	struct out o = {0};
	const char *p = tmpl;
	put(&o, "", 0);
	while (*p) {
		const char *open = strstr(p, "{{"), *jem = strstr(p, JEMALLOC_MARK);
		const char *next = open && (!jem || open < jem) ? open : jem;
		if (next == NULL) {
			put(&o, p, strlen(p));
			break;
		}
		put(&o, p, (size_t)(next - p));
		if (next == jem) {
			put(&o, GITLAB_CTL_JEMALLOC, strlen(GITLAB_CTL_JEMALLOC));
			p = jem + strlen(JEMALLOC_MARK);
			continue;
		}
		const char *close = strstr(open + 2, "}}");
		if (close == NULL) {
			put(&o, open, strlen(open));
			break;
		}
		const char *val = lookup(ctx, open + 2, (size_t)(close - open - 2), line);
		if (val == NULL) {
			free(o.s);
			return NULL;
		}
		put(&o, val, strlen(val));
		p = close + 2;
	}
	return o.s;
}

bool ph_key(const char *name, size_t len, char *key, size_t keylen)
{
	if (len >= keylen) {
		errno = EINVAL;
		return false;
	}
	memcpy(key, name, len);
	key[len] = '\0';
	return true;
}
