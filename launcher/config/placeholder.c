/* Placeholder expansion (see placeholder.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"
#include "config/placeholder.h"
#include "lib/buf.h"
#include "lib/quote.h"

#define JEMALLOC_MARK "@JEMALLOC@"

/* A boolean's opposite: {{not roles.redis_replica_role}} (anything but "true" is false). */
static void filter_not(struct buf *out, const char *v)
{
	buf_addf(out, "%s", strcmp(v, "true") == 0 ? "false" : "true");
}

static const struct {
	const char *word;
	void (*fn)(struct buf *out, const char *v);
} filters[] = {
    {"not", filter_not},
    {"conninfo", quote_conninfo},
    {"url_auth", quote_url_auth},
    {"resp", quote_resp},
};

/* The filters[] index of a "WORD " prefix of name (len bytes), or -1. */
static int filter_of(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
		size_t wl = strlen(filters[i].word);
		if (len > wl + 1 && memcmp(name, filters[i].word, wl) == 0 && name[wl] == ' ')
			return (int)i;
	}
	return -1;
}

size_t ph_filter_len(const char *name, size_t len)
{
	int f = filter_of(name, len);
	return f < 0 ? 0 : strlen(filters[f].word) + 1;
}

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
		const char *name = open + 2;
		size_t len = (size_t)(close - name), skip = ph_filter_len(name, len);
		const char *val = lookup(ctx, name + skip, len - skip, line);
		if (val == NULL) {
			buf_free(&o);
			return NULL;
		}
		if (skip > 0)
			filters[filter_of(name, len)].fn(&o, val);
		else
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
