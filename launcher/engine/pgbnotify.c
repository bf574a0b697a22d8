/* Re-point a PgBouncer database (see pgbnotify.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "engine/pgbnotify.h"
#include "lib/clock.h"
#include "lib/pgbquote.h"
#include "lib/readfile.h"
#include "proc/validate.h"

#define PGB_DEADLINE_MS 10000
#define PGB_FILE_MAX    (1024 * 1024)
#define PYTHON3         "/usr/bin/python3"

/*
 * stdin into argv[1], made 0600 beside it and renamed over it (never through a link): the
 * account's own file, written by the account. The path is an argument, never program text.
 */
static const char write_py[] =
    "import os, sys\n"
    "p = sys.argv[1]\n"
    "t = p + '.tmp'\n"
    "fd = os.open(t, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)\n"
    "with os.fdopen(fd, 'wb') as f:\n"
    "    f.write(sys.stdin.buffer.read())\n"
    "    f.flush()\n"
    "    os.fsync(f.fileno())\n"
    "os.replace(t, p)\n";

/* The end of a connection-string value at p: past its closing quote ('' is a quote). */
static const char *value_end(const char *p)
{
	if (*p != '\'')
		return p + strcspn(p, " \t\n");
	for (p++; *p != '\0' && *p != '\n'; p++)
		if (*p == '\'') {
			if (p[1] != '\'')
				return p + 1;
			p++;
		}
	return p;
}

int pgb_databases_with(const char *rendered, const char *db, const char *host, struct buf *out,
                       const char **why)
{
	size_t dl = strlen(db);
	bool found = false;
	for (const char *p = host; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			*why = "a host is one line of text"; /* a newline would start an entry */
			return -1;
		}
	if (host[0] == '\0') {
		*why = "an empty host";
		return -1;
	}
	for (const char *line = rendered; *line != '\0';) {
		const char *nl = strchr(line, '\n');
		size_t n = nl != NULL ? (size_t)(nl - line) + 1 : strlen(line);
		/* lib/pgbquote writes each database as "NAME = host=VALUE ..." */
		if (!found && strncmp(line, db, dl) == 0 &&
		    strncmp(line + dl, " = host=", 8) == 0) {
			const char *v = line + dl + 8, *e = value_end(v);
			buf_add(out, line, (size_t)(v - line));
			quote_pgb_connval(out, host);
			buf_add(out, e, n - (size_t)(e - line));
			found = true;
		} else {
			buf_add(out, line, n);
		}
		line += n;
	}
	if (!found)
		*why = "no such database in pgbouncer['databases']";
	return found ? 0 : -1;
}

/* psql -c SQL on the admin console as the account; its output in out. */
static int console(const struct pgb_target *t, const char *sql, struct buf *out)
{
	char *argv[] = {(char *)t->psql,
	                "-X",
	                "-A",
	                "-F",
	                "|",
	                "-h",
	                (char *)t->socket,
	                "-p",
	                (char *)t->port,
	                "-U",
	                (char *)t->admin,
	                "-d",
	                "pgbouncer",
	                "-c",
	                (char *)sql,
	                NULL};
	buf_truncate(out, 0);
	return validate_run(argv, "", 0, t->user, t->group, mono_ms() + PGB_DEADLINE_MS, out);
}

/* In SHOW DATABASES' output (a header line, '|' between columns), is db paused? */
static bool paused(const char *show, const char *db)
{
	int col = -1, k = 0;
	const char *nl = strchr(show, '\n');
	if (nl == NULL)
		return false;
	for (const char *p = show; p < nl; k++) {
		size_t n = strcspn(p, "|\n");
		if (n == 6 && strncmp(p, "paused", 6) == 0)
			col = k;
		p += n + (p[n] == '|');
		if (p[-1] != '|')
			break;
	}
	size_t dl = strlen(db);
	for (const char *line = nl + 1; col >= 0 && *line != '\0';) {
		const char *end = strchr(line, '\n');
		if (strncmp(line, db, dl) == 0 && line[dl] == '|') {
			const char *p = line;
			for (int i = 0; i < col && p != NULL; i++) {
				p = strchr(p, '|');
				p = p != NULL ? p + 1 : NULL;
			}
			return p != NULL && p[0] == '1' &&
			       (p[1] == '|' || p[1] == '\n' || p[1] == '\0');
		}
		if (end == NULL)
			break;
		line = end + 1;
	}
	return false;
}

int pgb_notify(const struct pgb_target *t, const char *db, const char *host, struct diags *d)
{
	struct buf in, want, out;
	buf_init(&in);
	buf_init(&want);
	buf_init(&out);
	const char *why = NULL;
	int rc = -1;
	if (db[0] == '\0' || strspn(db, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                                "0123456789_.-") != strlen(db)) {
		diag_add(d, DIAG_ERR, "a database name is letters, digits, '_', '.' and '-'");
		goto done;
	}
	if (readfile(t->rendered, &in, PGB_FILE_MAX) == -1) {
		diag_add(d, DIAG_ERR, "%s: %s", t->rendered, strerror(errno));
		goto done;
	}
	if (pgb_databases_with(buf_str(&in), db, host, &want, &why) == -1) {
		diag_add(d, DIAG_ERR, "%s: %s (%s)", db, why, t->rendered);
		goto done;
	}
	char *w[] = {PYTHON3, "-I", "-c", (char *)write_py, (char *)t->live, NULL};
	int st = validate_run(w, want.p != NULL ? want.p : "", want.len, t->user, t->group,
	                      mono_ms() + PGB_DEADLINE_MS, &out);
	if (st != 0) {
		diag_add(d, DIAG_ERR, "writing %s as %s: %s%.*s", t->live,
		         t->user ? t->user : "self", st < 0 ? strerror(errno) : "",
		         (int)(out.len < 400 ? out.len : 400), buf_str(&out));
		goto done;
	}
	/* RESUME only a paused database: PgBouncer refuses it otherwise (Omnibus #8166) */
	if (console(t, "SHOW DATABASES", &out) != 0) {
		diag_add(d, DIAG_ERR, "PgBouncer's admin console on %s: %s", t->socket,
		         buf_str(&out));
		goto done;
	}
	if (paused(buf_str(&out), db)) {
		char sql[128];
		snprintf(sql, sizeof sql, "RESUME %s", db); /* db: a name pgbquote took */
		if (console(t, sql, &out) != 0) {
			diag_add(d, DIAG_ERR, "RESUME %s: %s", db, buf_str(&out));
			goto done;
		}
	}
	if (console(t, "RELOAD", &out) != 0) {
		diag_add(d, DIAG_ERR, "RELOAD: %s", buf_str(&out));
		goto done;
	}
	rc = 0;
done:
	buf_free(&in);
	buf_free(&want);
	buf_free(&out);
	return rc;
}
