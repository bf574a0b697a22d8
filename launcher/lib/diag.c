/* Collected diagnostics, printed compiler-style with the source line and a caret. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/diag.h"
#include "lib/grow.h"
#include "lib/json.h"
#include "lib/safetext.h"

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

static const char *diag_sev_name(enum diag_sev sev)
{
	return sev == DIAG_ERR ? "error" : sev == DIAG_NOTE ? "note" : "warning";
}

static struct diag *push(struct diags *d, enum diag_sev sev)
{
	grow(&d->v, &d->cap, d->n + 1, sizeof *d->v, 8);
	struct diag *g = &d->v[d->n++];
	memset(g, 0, sizeof *g);
	g->sev = sev;
	d->nnote += sev == DIAG_NOTE;
	if (sev == DIAG_ERR)
		d->nerr++;
	return g;
}

/*
 * The text of line `line` (1-based) of src around column *col, or NULL: at
 * most DIAG_WINDOW bytes either side, "..." marking a cut, and *col moved to
 * the column within what is returned. A 32 MiB one-line gitlab.rb is shown
 * as one screen line, not copied and printed whole.
 */
static char *line_of(const struct src *src, int line, int *col)
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
	size_t c = *col > 0 ? (size_t)*col - 1 : 0, from = 0, to = n;
	if (c > DIAG_WINDOW)
		from = c - DIAG_WINDOW;
	if (n - from > 2 * DIAG_WINDOW)
		to = from + 2 * DIAG_WINDOW;
	if (from == 0 && to == n)
		return xstrndup(p, n);
	char *w = xasprintf("%s%.*s%s", from ? "..." : "", (int)(to - from), p + from,
	                    to < n ? "..." : "");
	if (*col > 0)
		*col -= (int)from - (from ? 3 : 0);
	return w;
}

void diag_at(struct diags *d, enum diag_sev sev, struct loc loc, const char *fmt, ...)
{
	struct diag *g = push(d, sev);
	va_list ap;
	va_start(ap, fmt);
	g->msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (loc.src != NULL && loc.src->name != NULL)
		g->file = xstrdup(loc.src->name);
	g->line = loc.line;
	g->col = loc.col;
	g->caret = loc.col;
	if (loc.src != NULL && loc.line > 0 && (size_t)loc.line < loc.src->nhidden &&
	    loc.src->hidden[loc.line])
		g->hidden = true;
	else
		g->srcline = line_of(loc.src, loc.line, &g->caret);
}

void diag_file(struct diags *d, enum diag_sev sev, const char *file, int line, const char *fmt, ...)
{
	struct diag *g = push(d, sev);
	va_list ap;
	va_start(ap, fmt);
	g->msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (file != NULL)
		g->file = xstrdup(file);
	g->line = line;
}

void diag_add(struct diags *d, enum diag_sev sev, const char *fmt, ...)
{
	struct diag *g = push(d, sev);
	va_list ap;
	va_start(ap, fmt);
	g->msg = xvasprintf(fmt, ap);
	va_end(ap);
	g->plain = true;
}

void diag_text(struct diags *d, const char *p, size_t n)
{
	struct diag *g = push(d, DIAG_NOTE);
	g->msg = xmalloc(n + 1);
	memcpy(g->msg, p, n);
	g->msg[n] = '\0';
	g->len = n;
	g->text = true;
}

static void vout(struct diags *d, const char *fmt, va_list ap)
{
	if (d->live != NULL)
		vfprintf(d->live, fmt, ap);
}

void diag_text_safe(struct diags *d, const char *prefix, const char *p, size_t n)
{
	struct buf text;
	buf_init(&text);
	while (n > 0 && p[n - 1] == '\n')
		n--;
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(p + i, '\n', n - i);
		size_t len = nl != NULL ? (size_t)(nl - (p + i)) : n - i;
		buf_adds(&text, prefix);
		safetext_add(&text, p + i, len, SAFETEXT_NL);
		buf_addc(&text, '\n');
		i += len + 1;
	}
	if (text.len > 0)
		diag_text(d, text.p, text.len);
	buf_free(&text);
}

void diag_out(struct diags *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vout(d, fmt, ap);
	va_end(ap);
}

void diags_live_flush(struct diags *d)
{
	if (d->live != NULL)
		fflush(d->live);
}

void diag_progress(struct diags *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vout(d, fmt, ap);
	va_end(ap);
	diags_live_flush(d);
}

/* Forget the records, keep the streams the command set. */
static void forget(struct diags *d)
{
	FILE *live = d->live, *report = d->report;
	diags_free(d);
	d->live = live;
	d->report = report;
}

void diags_flush(struct diags *d, FILE *fp)
{
	diags_print(d, fp);
	forget(d);
}

void diags_report(struct diags *d)
{
	if (d->report != NULL)
		diags_flush(d, d->report);
}

void diags_move(struct diags *to, struct diags *from)
{
	if (from->n == 0)
		return;
	grow(&to->v, &to->cap, to->n + from->n, sizeof *to->v, 8);
	memcpy(to->v + to->n, from->v, from->n * sizeof *from->v);
	to->n += from->n;
	to->nerr += from->nerr;
	to->nnote += from->nnote;
	free(from->v);
	from->v = NULL;
	from->n = from->cap = from->nerr = from->nnote = 0;
}

/*
 * The line and a caret under col, built in memory and written at once
 * (stderr is unbuffered: a byte at a time would be a system call each).
 * Control bytes in a config line would garble the terminal: shown as '?'.
 */
static void print_srcline(FILE *fp, const char *line, int col)
{
	struct buf b;
	buf_init(&b);
	buf_adds(&b, "  ");
	for (const char *p = line; *p; p++)
		buf_addc(&b, *p == '\t' || (unsigned char)*p >= 0x20 ? *p : '?');
	buf_adds(&b, "\n  ");
	/* Keep tabs so the caret lines up under tab-indented source. */
	for (int i = 1; i < col && line[i - 1] != '\0'; i++)
		buf_addc(&b, line[i - 1] == '\t' ? '\t' : ' ');
	buf_adds(&b, "^\n");
	fwrite(b.p, 1, b.len, fp);
	buf_free(&b);
}

/* Position order within a file (files in order of first mention), file-level last. */
struct ord {
	const struct diag *g;
	size_t file, seq;
};

static int by_position(const void *a, const void *b)
{
	const struct ord *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	long lx = x->g->line > 0 ? x->g->line : LONG_MAX,
	     ly = y->g->line > 0 ? y->g->line : LONG_MAX;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	if (x->g->col != y->g->col)
		return x->g->col < y->g->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool same_file(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* d's records in position order (see diags_print), as a new array of pointers into d. */
static struct ord *in_order(const struct diags *d)
{
	struct ord *o = xcalloc(d->n + 1, sizeof *o);
	for (size_t i = 0; i < d->n; i++) {
		size_t f = i;
		for (size_t j = 0; j < i && f == i; j++)
			if (same_file(d->v[j].file, d->v[i].file))
				f = o[j].file;
		o[i] = (struct ord){&d->v[i], f, i};
	}
	qsort(o, d->n, sizeof *o, by_position);
	return o;
}

void diags_sort(struct diags *d)
{
	struct ord *o = in_order(d);
	struct diag *v = xcalloc(d->cap ? d->cap : 1, sizeof *v);
	for (size_t i = 0; i < d->n; i++)
		v[i] = *o[i].g;
	free(o);
	free(d->v);
	d->v = v;
}

static void print_some(const struct diags *d, FILE *fp, bool errors_only)
{
	if (d->n == 0) /* nothing allocated nor sorted: exec flushes before its execve */
		return;
	struct ord *o = in_order(d);
	for (size_t i = 0; i < d->n; i++) {
		const struct diag *g = o[i].g;
		if (errors_only && g->sev != DIAG_ERR)
			continue;
		const char *kind = diag_sev_name(g->sev);
		if (g->text)
			fwrite(g->msg, 1, g->len, fp);
		else if (g->plain)
			fprintf(fp, "%s: %s\n", program_invocation_short_name, g->msg);
		else if (g->file && g->line > 0 && g->col > 0)
			fprintf(fp, "%s:%d:%d: %s: %s\n", g->file, g->line, g->col, kind, g->msg);
		else if (g->file && g->line > 0)
			fprintf(fp, "%s:%d: %s: %s\n", g->file, g->line, kind, g->msg);
		else if (g->file)
			fprintf(fp, "%s: %s: %s\n", g->file, kind, g->msg);
		else
			fprintf(fp, "gitlab-ctl: %s: %s\n", kind, g->msg);
		if (g->srcline && g->caret > 0)
			print_srcline(fp, g->srcline, g->caret);
		else if (g->hidden)
			fputs("  (line not shown: it may hold a secret)\n", fp);
	}
	free(o);
}

void diags_print(const struct diags *d, FILE *fp)
{
	print_some(d, fp, false);
}

void diags_print_quiet(const struct diags *d, const char *verb, FILE *fp)
{
	print_some(d, fp, true);
	size_t nwarn = d->n - d->nerr - d->nnote;
	if (nwarn > 0)
		fprintf(fp, "gitlab-ctl %s: %zu config warning%s: run gitlab-ctl check-config\n",
		        verb, nwarn, nwarn == 1 ? "" : "s");
}

static const char *const hint_markers[] = {
    "did you mean",    "install the Debian package",
    "quote it",        "write a literal",
    "write the value", "add '",
    "use '",           "set ",
    "run gitlab-ctl",  "chmod ",
    "chown ",
};

/* Where a fix clause starts: the message's start or right after a separator, not mid-phrase. */
static bool clause_start(const char *msg, const char *p)
{
	return p == msg ||
	       (p - msg >= 2 && (strncmp(p - 2, "; ", 2) == 0 || strncmp(p - 2, ": ", 2) == 0 ||
	                         strncmp(p - 2, " (", 2) == 0));
}

const char *diag_hint(const char *msg, size_t *len)
{
	const char *best = NULL;
	for (size_t i = 0; msg != NULL && i < sizeof hint_markers / sizeof hint_markers[0]; i++)
		for (const char *p = strstr(msg, hint_markers[i]); p != NULL;
		     p = strstr(p + 1, hint_markers[i]))
			if (clause_start(msg, p)) {
				if (best == NULL || p < best)
					best = p;
				break;
			}
	if (best == NULL)
		return NULL;
	size_t n = strlen(best);
	if (best > msg && best[-1] == '(' && n > 0 && best[n - 1] == ')')
		n--;
	*len = n;
	return best;
}

void diags_print_json(const struct diags *d, FILE *fp)
{
	fputs("[", fp);
	for (size_t i = 0; d != NULL && i < d->n; i++) {
		const struct diag *g = &d->v[i];
		size_t hl = 0;
		const char *hint = diag_hint(g->msg, &hl);
		fputs(i ? ",\n  {\"file\": " : "\n  {\"file\": ", fp);
		if (g->file != NULL)
			json_str_put(fp, g->file);
		else
			fputs("null", fp);
		fprintf(fp,
		        ", \"line\": %d, \"col\": %d, \"severity\": \"%s\", \"message\": ", g->line,
		        g->col, diag_sev_name(g->sev));
		json_strn_put(fp, g->msg, g->text ? g->len : strlen(g->msg));
		fputs(", \"hint\": ", fp);
		if (hint != NULL)
			json_strn_put(fp, hint, hl);
		else
			fputs("null", fp);
		fputs("}", fp);
	}
	fputs("]", fp);
}
