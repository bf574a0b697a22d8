/*
 * svlog: svlogd's settings as gitlab.rb names them, logging['svlogd_*'] for
 * every service and <service>['svlogd_*'] over it. Kept apart from the
 * merge so that the key table, the defaults and the text form the templates
 * see (log-config's s/n/t/!/u/p lines) have one definition.
 */
#ifndef GITLAB_CTL_SVLOG_H
#define GITLAB_CTL_SVLOG_H

/* The settings, in svlog_keys order; the first three are numbers. */
enum svlog_key {
	SVLOG_SIZE,
	SVLOG_NUM,
	SVLOG_TIMEOUT,
	SVLOG_FILTER,
	SVLOG_UDP,
	SVLOG_PREFIX,
	SVLOG_N
};

#define SVLOG_IS_NUMBER(k) ((k) <= SVLOG_TIMEOUT)

/* "svlogd_size", ...: the gitlab.rb keys, which are also the template placeholders. */
extern const char *const svlog_keys[SVLOG_N];

/* NULL/-1 = unset (nil in gitlab.rb: svlogd's own default). */
struct svlog {
	long long size;    /* s, bytes */
	long long num;     /* n */
	long long timeout; /* t, seconds */
	char *filter;      /* ! processor, e.g. "gzip" */
	char *udp;         /* u */
	char *prefix;      /* p */
};

/* The enum svlog_key of a gitlab.rb key, or -1 when it is not one. */
int svlog_key(const char *key);

/* Omnibus' logging defaults: 200 MB files, 30 of them, rotated daily, gzipped. */
void svlog_defaults(struct svlog *l);

/* A deep copy of src into dst (dst's old strings are not freed). */
void svlog_copy(struct svlog *dst, const struct svlog *src);

void svlog_free(struct svlog *l);

/* The text of field k, "" when unset; malloc'ed. */
char *svlog_text(const struct svlog *l, int k);

/* Store text into field k (NULL: unset); a number field takes a validated decimal. */
void svlog_set(struct svlog *l, int k, const char *text);

#endif
