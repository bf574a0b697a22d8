/* The sentinel.conf a Sentinel starts from (see sentinelconf.h). */
#include <stdbool.h>
#include <string.h>

#include "lib/ascii.h"
#include "lib/quote.h"
#include "lib/sentinelconf.h"

#define MAXTOK 6
#define TOKLEN 256

/* A line's first tokens, as Redis' sdssplitargs reads them (quotes, \-escapes), each cut short. */
struct toks {
	char v[MAXTOK][TOKLEN];
	int n;
};

/* One double-quoted token from *p (after its quote) into t. False when it does not close. */
static bool quoted(const char **p, const char *end, char *t, size_t *k)
{
	const char *s = *p;
	while (s < end && *s != '"') {
		char c = *s++;
		if (c == '\\' && s < end) {
			c = *s++;
			if (c == 'x' && end - s >= 2 && ascii_hexval(s[0]) >= 0 &&
			    ascii_hexval(s[1]) >= 0) {
				c = (char)(ascii_hexval(s[0]) * 16 + ascii_hexval(s[1]));
				s += 2;
			} else if (c == 'n') {
				c = '\n';
			} else if (c == 'r') {
				c = '\r';
			} else if (c == 't') {
				c = '\t';
			}
		}
		if (*k + 1 < TOKLEN)
			t[(*k)++] = c;
	}
	if (s >= end)
		return false;
	*p = s + 1;
	return true;
}

static void split(const char *s, const char *end, struct toks *t)
{
	t->n = 0;
	while (t->n < MAXTOK) {
		while (s < end && ascii_blank(*s))
			s++;
		if (s >= end)
			return;
		char *o = t->v[t->n];
		size_t k = 0;
		if (*s == '"') {
			s++;
			if (!quoted(&s, end, o, &k))
				return;
		} else {
			for (; s < end && !ascii_blank(*s); s++)
				if (k + 1 < TOKLEN)
					o[k++] = *s;
		}
		o[k] = '\0';
		t->n++;
	}
}

static bool is(const struct toks *t, int i, const char *w)
{
	return t->n > i && strcmp(t->v[i], w) == 0;
}

/* An address Sentinel wrote: IPv4, IPv6 or a host name; anything else is not taken. */
static bool addr_ok(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (!(ascii_alnum(*s) || *s == '.' || *s == ':' || *s == '-' || *s == '_'))
			return false;
	return true;
}

/* The live state lines kept for master `name`; myid only when the rendered file has none. */
static bool state_line(const struct toks *t, const char *name, bool want_myid)
{
	if (!is(t, 0, "sentinel"))
		return false;
	if (is(t, 1, "myid"))
		return want_myid;
	if (is(t, 1, "current-epoch"))
		return true;
	static const char *const per_master[] = {"config-epoch", "leader-epoch", "known-replica",
	                                         "known-slave", "known-sentinel"};
	for (size_t i = 0; i < sizeof per_master / sizeof per_master[0]; i++)
		if (is(t, 1, per_master[i]))
			return is(t, 2, name);
	return false;
}

typedef void (*line_fn)(const char *s, const char *end, const struct toks *t, void *arg);

static void each_line(const char *p, size_t len, line_fn fn, void *arg)
{
	const char *end = p + len;
	struct toks t;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		split(p, le, &t);
		fn(p, le, &t, arg);
		p = nl ? nl + 1 : end;
	}
}

struct scan {
	char name[TOKLEN]; /* the rendered monitor's master name, "" for none */
	bool has_myid;
	char ip[TOKLEN], port[TOKLEN]; /* the live monitor's address for name, "" for none */
	struct buf *out;
};

static void scan_rendered(const char *s, const char *end, const struct toks *t, void *arg)
{
	(void)s, (void)end;
	struct scan *x = arg;
	if (is(t, 0, "sentinel") && is(t, 1, "monitor") && t->n > 2 && x->name[0] == '\0')
		memcpy(x->name, t->v[2], sizeof x->name);
	if (is(t, 0, "sentinel") && is(t, 1, "myid"))
		x->has_myid = true;
}

static void scan_live(const char *s, const char *end, const struct toks *t, void *arg)
{
	(void)s, (void)end;
	struct scan *x = arg;
	if (is(t, 0, "sentinel") && is(t, 1, "monitor") && is(t, 2, x->name) && t->n > 4 &&
	    addr_ok(t->v[3]) && ascii_digits(t->v[4], strlen(t->v[4]), 5)) {
		memcpy(x->ip, t->v[3], sizeof x->ip);
		memcpy(x->port, t->v[4], sizeof x->port);
	}
}

/* A token as Sentinel writes it: bare when it needs no quotes (names, numbers). */
static void word(struct buf *out, const char *s)
{
	if (addr_ok(s))
		buf_adds(out, s);
	else
		quote_redis_arg(out, s);
}

static void emit_rendered(const char *s, const char *end, const struct toks *t, void *arg)
{
	struct scan *x = arg;
	if (x->ip[0] != '\0' && is(t, 0, "sentinel") && is(t, 1, "monitor") && is(t, 2, x->name) &&
	    t->n > 5) {
		buf_adds(x->out, "sentinel monitor ");
		word(x->out, x->name);
		buf_addf(x->out, " %s %s ", x->ip, x->port);
		word(x->out, t->v[5]);
		buf_addc(x->out, '\n');
		return;
	}
	buf_add(x->out, s, (size_t)(end - s));
	buf_addc(x->out, '\n');
}

static void emit_state(const char *s, const char *end, const struct toks *t, void *arg)
{
	struct scan *x = arg;
	if (!state_line(t, x->name, !x->has_myid))
		return;
	buf_add(x->out, s, (size_t)(end - s));
	buf_addc(x->out, '\n');
}

void sentinelconf_merge(const char *rendered, size_t rlen, const char *live, size_t llen,
                        struct buf *out)
{
	struct scan x = {.out = out};
	each_line(rendered, rlen, scan_rendered, &x);
	if (live != NULL && x.name[0] != '\0')
		each_line(live, llen, scan_live, &x);
	each_line(rendered, rlen, emit_rendered, &x);
	if (live == NULL || x.name[0] == '\0')
		return;
	buf_adds(out, "# Sentinel's own state, kept from the file it rewrote\n");
	each_line(live, llen, emit_state, &x);
}
