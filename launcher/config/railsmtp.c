/* Alertmanager's global SMTP settings from gitlab_rails['smtp_*'] (see railsmtp.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config/railsmtp.h"

static const char *const keys[] = {"smtp_enable",      "smtp_address",  "smtp_port",
                                   "smtp_user_name",   "smtp_password", "smtp_authentication",
                                   "gitlab_email_from"};

bool railsmtp_reads(const struct rb_stmt *st)
{
	if (st->call || st->nkeys != 1 || strcmp(st->name, "gitlab_rails") != 0)
		return false;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (strcmp(st->keys[0], keys[i]) == 0)
			return true;
	return false;
}

/* The last literal gitlab_rails[key] = VALUE, or NULL. */
static const struct rb_value *rails(const struct rb_file *f, const char *key)
{
	const struct rb_value *v = NULL;
	for (size_t i = 0; f != NULL && i < f->n; i++) {
		const struct rb_stmt *st = &f->v[i];
		if (railsmtp_reads(st) && st->cond.word == NULL && strcmp(st->keys[0], key) == 0)
			v = st->value;
	}
	return v;
}

/* A string (or symbol, or for a port an integer) as text; NULL for nil or anything else. */
static const char *text(const struct rb_value *v, char *num, size_t len)
{
	if (v == NULL)
		return NULL;
	if ((v->kind == RB_STR || v->kind == RB_SYM) && v->u.s.len > 0 &&
	    strlen(v->u.s.ptr) == v->u.s.len)
		return v->u.s.ptr;
	if (v->kind == RB_INT && num != NULL) {
		snprintf(num, len, "%lld", v->u.i);
		return num;
	}
	return NULL;
}

static void put(struct yval *m, const char *key, const char *val, const struct rb_value *at)
{
	struct yval *s = yval_scalar(YV_STR, val);
	s->line = at->loc.line;
	s->col = at->loc.col;
	yval_put(m, key, s);
}

struct yval *railsmtp_global(const struct rb_file *f)
{
	const struct rb_value *en = rails(f, "smtp_enable");
	if (en == NULL || en->kind != RB_BOOL || !en->u.b)
		return NULL;
	struct yval *m = yval_map();
	m->line = en->loc.line;
	const struct rb_value *from = rails(f, "gitlab_email_from");
	if (text(from, NULL, 0) != NULL)
		put(m, "smtp_from", text(from, NULL, 0), from);
	const struct rb_value *addr = rails(f, "smtp_address"), *port = rails(f, "smtp_port");
	char num[24], hostport[1024];
	const char *p = text(port, num, sizeof num);
	if (text(addr, NULL, 0) != NULL &&
	    snprintf(hostport, sizeof hostport, "%s:%s", text(addr, NULL, 0), p ? p : "25") <
	        (int)sizeof hostport)
		put(m, "smtp_smarthost", hostport, addr);
	const char *auth = text(rails(f, "smtp_authentication"), NULL, 0);
	if (auth != NULL && (strcmp(auth, "login") == 0 || strcmp(auth, "plain") == 0)) {
		const struct rb_value *u = rails(f, "smtp_user_name"),
		                      *pw = rails(f, "smtp_password");
		if (text(u, NULL, 0) != NULL)
			put(m, "smtp_auth_username", text(u, NULL, 0), u);
		if (text(pw, NULL, 0) != NULL)
			put(m, "smtp_auth_password", text(pw, NULL, 0), pw);
	}
	return m;
}
