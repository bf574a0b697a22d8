/* Placeholder expansion (see placeholder.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"
#include "config/placeholder.h"
#include "lib/buf.h"

#define JEMALLOC_MARK "@JEMALLOC@"

char *ph_expand(const char *tmpl, ph_lookup_fn lookup, void *ctx, int line)
{
	struct buf o;
	const char *p = tmpl;
	buf_init(&o);
	while (*p) {
		const char *open = strstr(p, "{{"), *jem = strstr(p, JEMALLOC_MARK);
		const char *next = open && (!jem || open < jem) ? open : jem;
		if (next == NULL) {
			buf_add(&o, p, strlen(p));
			break;
		}
		buf_add(&o, p, (size_t)(next - p));
		if (next == jem) {
			buf_add(&o, GITLAB_CTL_JEMALLOC, strlen(GITLAB_CTL_JEMALLOC));
			p = jem + strlen(JEMALLOC_MARK);
			continue;
		}
		const char *close = strstr(open + 2, "}}");
		if (close == NULL) {
			buf_add(&o, open, strlen(open));
			break;
		}
		const char *val = lookup(ctx, open + 2, (size_t)(close - open - 2), line);
		if (val == NULL) {
			buf_free(&o);
			return NULL;
		}
		buf_add(&o, val, strlen(val));
		p = close + 2;
	}
	return buf_take(&o);
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
