/* svlogd's settings (see svlog.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config/svlog.h"
#include "lib/alloc.h"

const char *const svlog_keys[SVLOG_N] = {
    "svlogd_size", "svlogd_num", "svlogd_timeout", "svlogd_filter", "svlogd_udp", "svlogd_prefix",
};

int svlog_key(const char *key)
{
	for (int i = 0; i < SVLOG_N; i++)
		if (strcmp(svlog_keys[i], key) == 0)
			return i;
	return -1;
}

void svlog_defaults(struct svlog *l)
{
	l->size = 200LL * 1024 * 1024;
	l->num = 30;
	l->timeout = 24 * 60 * 60;
	l->filter = xstrdup("gzip");
	l->udp = NULL;
	l->prefix = NULL;
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void svlog_copy(struct svlog *dst, const struct svlog *src)
{
	dst->size = src->size;
	dst->num = src->num;
	dst->timeout = src->timeout;
	dst->filter = dup_or_null(src->filter);
	dst->udp = dup_or_null(src->udp);
	dst->prefix = dup_or_null(src->prefix);
}

void svlog_free(struct svlog *l)
{
	free(l->filter);
	free(l->udp);
	free(l->prefix);
	l->filter = l->udp = l->prefix = NULL;
}

char *svlog_text(const struct svlog *l, int k)
{
	long long n = k == SVLOG_SIZE ? l->size : k == SVLOG_NUM ? l->num : l->timeout;
	const char *s = k == SVLOG_FILTER ? l->filter : k == SVLOG_UDP ? l->udp : l->prefix;
	if (SVLOG_IS_NUMBER(k))
		return n < 0 ? xstrdup("") : xasprintf("%lld", n);
	return xstrdup(s ? s : "");
}

void svlog_set(struct svlog *l, int k, const char *text)
{
	if (SVLOG_IS_NUMBER(k)) {
		long long n = text ? strtonum(text, 0, LLONG_MAX, NULL) : -1;
		*(k == SVLOG_SIZE ? &l->size : k == SVLOG_NUM ? &l->num : &l->timeout) = n;
		return;
	}
	char **p = k == SVLOG_FILTER ? &l->filter : k == SVLOG_UDP ? &l->udp : &l->prefix;
	free(*p);
	*p = dup_or_null(text);
}
