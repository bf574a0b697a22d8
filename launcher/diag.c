/* Collected diagnostics, printed compiler-style with the source line and a caret. */
#include <err.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "grow.h"

void diags_init(struct diags *d)
{
	memset(d, 0, sizeof *d);
}

void diags_free(struct diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
		free(d->v[i].srcline);
	}
	free(d->v);
	diags_init(d);
}

/* Out of memory while reporting is not recoverable in any useful way. */
static char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (p == NULL)
		err(1, "out of memory");
	return p;
}

static struct diag *push(struct diags *d, enum diag_sev sev)
{
	if (grow(&d->v, &d->cap, d->n + 1, sizeof *d->v, 8) == -1)
		err(1, "out of memory");
	struct diag *g = &d->v[d->n++];
	memset(g, 0, sizeof *g);
	g->sev = sev;
	if (sev == DIAG_ERR)
		d->nerr++;
	return g;
}

static char *vformat(const char *fmt, va_list ap)
{
	char *msg;
	if (vasprintf(&msg, fmt, ap) == -1)
		err(1, "out of memory");
	return msg;
}

/* The text of line `line` (1-based) of src, or NULL. */
static char *line_of(const struct src *src, int line)
{
	if (src == NULL || src->text == NULL || line < 1)
		return NULL;
	const char *p = src->text, *end = src->text + src->len;
	for (int l = 1; l < line && p < end; l++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			return NULL;
		p = nl + 1;
	}
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
	if (n > 0 && p[n - 1] == '\r')
		n--;
	return xstrndup(p, n);
}

void diag_at(struct diags *d, enum diag_sev sev, struct loc loc, const char *fmt, ...)
{
	struct diag *g = push(d, sev);
	va_list ap;
	va_start(ap, fmt);
	g->msg = vformat(fmt, ap);
	va_end(ap);
	if (loc.src != NULL && loc.src->name != NULL)
		g->file = xstrndup(loc.src->name, strlen(loc.src->name));
	g->line = loc.line;
	g->col = loc.col;
	g->srcline = line_of(loc.src, loc.line);
}

void diag_file(struct diags *d, enum diag_sev sev, const char *file, int line, const char *fmt, ...)
{
	struct diag *g = push(d, sev);
	va_list ap;
	va_start(ap, fmt);
	g->msg = vformat(fmt, ap);
	va_end(ap);
	if (file != NULL)
		g->file = xstrndup(file, strlen(file));
	g->line = line;
}

/* Control bytes in a config line would garble the terminal; show them as '?'. */
static void print_srcline(FILE *fp, const char *line, int col)
{
	fputs("  ", fp);
	for (const char *p = line; *p; p++)
		fputc(*p == '\t' || (unsigned char)*p >= 0x20 ? *p : '?', fp);
	fputs("\n  ", fp);
	/* Keep tabs so the caret lines up under tab-indented source. */
	for (int i = 1; i < col && line[i - 1]; i++)
		fputc(line[i - 1] == '\t' ? '\t' : ' ', fp);
	fputs("^\n", fp);
}

void diags_print(const struct diags *d, FILE *fp)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct diag *g = &d->v[i];
		const char *kind = g->sev == DIAG_ERR ? "error" : "warning";
		if (g->file && g->line > 0 && g->col > 0)
			fprintf(fp, "%s:%d:%d: %s: %s\n", g->file, g->line, g->col, kind, g->msg);
		else if (g->file && g->line > 0)
			fprintf(fp, "%s:%d: %s: %s\n", g->file, g->line, kind, g->msg);
		else if (g->file)
			fprintf(fp, "%s: %s: %s\n", g->file, kind, g->msg);
		else
			fprintf(fp, "gitlab-ctl: %s: %s\n", kind, g->msg);
		if (g->srcline && g->col > 0)
			print_srcline(fp, g->srcline, g->col);
	}
}
