/* PgBouncer's file formats (see pgbquote.h). */
#include <stdbool.h>
#include <string.h>

#include "lib/ascii.h"
#include "lib/pgbquote.h"

static int refuse(const char **why, const char *msg)
{
	*why = msg;
	return -1;
}

static bool has_control(const char *v)
{
	for (; *v; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f)
			return true;
	return false;
}

int quote_pgb_value(struct buf *out, const char *v, const char **why)
{
	if (*v == '\0')
		return refuse(why, "an empty value");
	for (const char *p = v; *p; p++)
		if (!ascii_alnum(*p) && strchr("._-:,*/@+", *p) == NULL)
			return refuse(
			    why, "pgbouncer.ini takes letters, digits and . _ - : , * / @ + here "
			         "(a value is the rest of its line)");
	buf_adds(out, v);
	return 0;
}

void quote_pgb_connval(struct buf *out, const char *v)
{
	buf_addc(out, '\'');
	for (; *v; v++) {
		if (*v == '\'')
			buf_addc(out, '\'');
		buf_addc(out, *v);
	}
	buf_addc(out, '\'');
}

/* A database or role name: what needs no quoting in either file, up to 63 bytes. */
static bool name_ok(const char *v)
{
	size_t n = strlen(v);
	if (n == 0 || n > 63 || v[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!ascii_alnum(v[i]) && v[i] != '_' && v[i] != '.' && v[i] != '-')
			return false;
	return true;
}

static const char *const conn_keys[] = {"port",
                                        "dbname",
                                        "user",
                                        "password",
                                        "auth_user",
                                        "pool_size",
                                        "min_pool_size",
                                        "reserve_pool",
                                        "connect_query",
                                        "pool_mode",
                                        "max_db_connections",
                                        "client_encoding",
                                        "datestyle",
                                        "timezone",
                                        "application_name"};

static bool conn_key_ok(const char *k)
{
	for (size_t i = 0; i < sizeof conn_keys / sizeof conn_keys[0]; i++)
		if (strcmp(k, conn_keys[i]) == 0)
			return true;
	return false;
}

static bool scalar_ok(const struct yval *e)
{
	return e != NULL && e->kind != YV_SEQ && e->kind != YV_MAP && e->kind != YV_NULL &&
	       !has_control(e->text);
}

int quote_pgb_databases(struct buf *out, const struct yval *v, const char **why)
{
	size_t start = out->len;
	if (v == NULL || v->kind == YV_NULL)
		return 0;
	if (v->kind != YV_MAP)
		return refuse(why, "not a hash of database name => { 'host' => ..., ... }");
	for (size_t i = 0; i < v->n; i++) {
		const struct yval *d = v->items[i], *host = d ? yval_get(d, "host") : NULL;
		const char *no = NULL;
		if (!name_ok(v->keys[i]))
			no = "a database name is letters, digits, '_', '.' and '-'";
		else if (d == NULL || d->kind != YV_MAP)
			no = "each database is a hash: { 'host' => ..., 'dbname' => ... }";
		else if (!scalar_ok(host) || host->text[0] == '\0')
			no = "each database needs a 'host' (one line of text)";
		for (size_t k = 0; no == NULL && d != NULL && k < d->n; k++)
			if (strcmp(d->keys[k], "host") != 0 && !conn_key_ok(d->keys[k]))
				no = "a key PgBouncer's [databases] does not take (port, dbname, "
				     "user, "
				     "password, auth_user, pool_size, pool_mode, ...)";
			else if (!scalar_ok(d->items[k]))
				no = "a value is one line of text or a number";
		if (no != NULL) {
			buf_truncate(out, start);
			return refuse(why, no);
		}
		if (i > 0)
			buf_addc(out, '\n');
		buf_adds(out, v->keys[i]);
		buf_adds(out, " = host=");
		quote_pgb_connval(out, host->text);
		for (size_t k = 0; k < d->n; k++) {
			if (strcmp(d->keys[k], "host") == 0)
				continue;
			buf_addc(out, ' ');
			buf_adds(out, d->keys[k]);
			buf_addc(out, '=');
			quote_pgb_connval(out, d->items[k]->text);
		}
	}
	return 0;
}

static void userlist_str(struct buf *out, const char *v)
{
	buf_addc(out, '"');
	for (; *v; v++) {
		if (*v == '"')
			buf_addc(out, '"');
		buf_addc(out, *v);
	}
	buf_addc(out, '"');
}

int quote_pgb_users(struct buf *out, const struct yval *v, const char **why)
{
	size_t start = out->len;
	if (v == NULL || v->kind == YV_NULL)
		return 0;
	if (v->kind != YV_MAP)
		return refuse(why, "not a hash of user name => { 'password' => hash }");
	for (size_t i = 0; i < v->n; i++) {
		const struct yval *u = v->items[i], *pw = u ? yval_get(u, "password") : NULL;
		const char *no = NULL;
		if (!name_ok(v->keys[i]))
			no = "a user name is letters, digits, '_', '.' and '-'";
		else if (u == NULL || u->kind != YV_MAP || !scalar_ok(pw) || pw->text[0] == '\0')
			no = "each user is { 'password' => 'md5...' or 'SCRAM-SHA-256$...' }";
		if (no != NULL) {
			buf_truncate(out, start);
			return refuse(why, no);
		}
		if (i > 0)
			buf_addc(out, '\n');
		userlist_str(out, v->keys[i]);
		buf_addc(out, ' ');
		/* Omnibus' users carry gitlab-ctl pg-password-md5's hash without the prefix */
		bool bare = strlen(pw->text) == 32 && strspn(pw->text, "0123456789abcdef") == 32;
		if (bare) {
			buf_adds(out, "\"md5");
			buf_adds(out, pw->text);
			buf_addc(out, '"');
		} else {
			userlist_str(out, pw->text);
		}
	}
	return 0;
}

int quote_pgb_names(struct buf *out, const struct yval *v, const char **why)
{
	if (v == NULL || v->kind == YV_NULL)
		return 0;
	if (v->kind != YV_SEQ)
		return refuse(why, "not an array of user names");
	size_t start = out->len;
	for (size_t i = 0; i < v->n; i++) {
		const struct yval *e = v->items[i];
		if (e == NULL || e->kind == YV_SEQ || e->kind == YV_MAP || !name_ok(e->text)) {
			buf_truncate(out, start);
			return refuse(why, "a user name is letters, digits, '_', '.' and '-'");
		}
		if (i > 0)
			buf_addc(out, ',');
		buf_adds(out, e->text);
	}
	return 0;
}
