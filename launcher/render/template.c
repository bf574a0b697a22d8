/* The template language of templates/ (see template.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "render/template.h"
#include "lib/names.h"
#include "lib/readfile.h"

#define TPL_MAX_DEPTH 16
#define TPL_MAX_FILE  (1024 * 1024)

/* Inside single quotes nothing is special but the quote itself: close, escape, reopen. */
void tpl_sh_quote(struct buf *b, const char *s)
{
	buf_addc(b, '\'');
	for (size_t run; *s; s += run) {
		run = strcspn(s, "'"); /* whole runs: a call per byte costs more than the quoting */
		buf_add(b, s, run);
		if (s[run] == '\'') {
			buf_adds(b, "'\\''");
			run++;
		}
	}
	buf_addc(b, '\'');
}

/* Length of a valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	if (s[0] >= 0xc2 && s[0] <= 0xdf && (s[1] & 0xc0) == 0x80)
		return 2;
	if (s[0] >= 0xe0 && s[0] <= 0xef && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80) {
		if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))
			return 0; /* overlong or surrogate */
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80 &&
	    (s[3] & 0xc0) == 0x80) {
		if ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

/*
 * YAML 1.1/1.2 double-quoted scalar: escape the quote, backslash, every
 * control character and the Unicode line breaks (NEL, LS, PS) that a YAML
 * parser would otherwise fold. A byte that is not valid UTF-8 becomes U+FFFD,
 * as a YAML stream must be valid Unicode.
 */
void tpl_yaml_quote(struct buf *b, const char *str)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = (const unsigned char *)str;

	buf_addc(b, '"');
	while (*s) {
		unsigned char c = *s;
		if (c == '"' || c == '\\') {
			buf_addc(b, '\\');
			buf_addc(b, (char)c);
		} else if (c == '\n') {
			buf_adds(b, "\\n");
		} else if (c == '\t') {
			buf_adds(b, "\\t");
		} else if (c == '\r') {
			buf_adds(b, "\\r");
		} else if (c < 0x20 || c == 0x7f) {
			char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
			buf_add(b, esc, sizeof esc);
		} else if (c < 0x80) {
			buf_addc(b, (char)c);
		} else {
			size_t n = utf8_len(s);
			if (n == 0) {
				buf_adds(b, "\\uFFFD");
				s++;
				continue;
			}
			if (n == 2 && s[0] == 0xc2 && s[1] == 0x85)
				buf_adds(b, "\\N");
			else if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 && s[2] == 0xa8)
				buf_adds(b, "\\L");
			else if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 && s[2] == 0xa9)
				buf_adds(b, "\\P");
			else if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
				buf_adds(b, "\\uFFFD"); /* C1 control other than NEL */
			else
				buf_add(b, (const char *)s, n);
			s += n;
			continue;
		}
		s++;
	}
	buf_addc(b, '"');
}

enum tag_kind {
	TAG_RAW,
	TAG_SH,
	TAG_SHLIST,
	TAG_YAML,
	TAG_INT,
	TAG_IF,
	TAG_UNLESS,
	TAG_END,
	TAG_COMMENT
};

struct render {
	const char *name;
	const struct tpl_vars *vars;
	struct buf *out;
	struct diags *d;
	int line;
	int nerr;
	bool active[TPL_MAX_DEPTH + 1]; /* active[0]: top level */
	int open_line[TPL_MAX_DEPTH + 1];
	int depth;
};

static void rerr(struct render *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void rerr(struct render *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_file(r->d, DIAG_ERR, r->name, r->line, "%s", msg);
	r->nerr++;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool valid_name(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

/* Split a tag's inside into kind and variable name (copied into nm). 0, or -1 if malformed. */
static int parse_tag(const char *s, size_t n, enum tag_kind *kind, char *nm, size_t nmlen)
{
	static const struct {
		const char *word;
		enum tag_kind kind;
	} words[] = {
	    {"sh*", TAG_SHLIST}, {"sh", TAG_SH},  {"yaml", TAG_YAML},
	    {"int", TAG_INT},    {"#if", TAG_IF}, {"#unless", TAG_UNLESS},
	};
	while (n > 0 && is_space(*s))
		s++, n--;
	while (n > 0 && is_space(s[n - 1]))
		n--;
	if (n > 0 && s[0] == '!') {
		*kind = TAG_COMMENT;
		return 0;
	}
	if (n == 3 && memcmp(s, "/if", 3) == 0) {
		*kind = TAG_END;
		nm[0] = '\0';
		return 0;
	}
	*kind = TAG_RAW;
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		size_t wl = strlen(words[i].word);
		if (n > wl && memcmp(s, words[i].word, wl) == 0 && is_space(s[wl])) {
			*kind = words[i].kind;
			s += wl;
			n -= wl;
			while (n > 0 && is_space(*s))
				s++, n--;
			break;
		}
	}
	if (!valid_name(s, n) || n >= nmlen)
		return -1;
	memcpy(nm, s, n);
	nm[n] = '\0';
	return 0;
}

static bool is_int(const char *v)
{
	const char *p = v;
	if (*p == '-')
		p++;
	if (*p == '\0' || strlen(p) > 18)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* Emit one substitution (the value is looked up even in inactive blocks, to catch typos). */
static void substitute(struct render *r, enum tag_kind kind, const char *nm)
{
	bool on = r->active[r->depth];

	if (kind == TAG_SHLIST) {
		char *const *list = r->vars->get_list ? r->vars->get_list(r->vars->arg, nm) : NULL;
		if (list == NULL) {
			rerr(r, "unknown list placeholder '%s'", nm);
			return;
		}
		for (size_t i = 0; on && list[i]; i++) {
			if (i > 0)
				buf_addc(r->out, ' ');
			tpl_sh_quote(r->out, list[i]);
		}
		return;
	}
	const char *v = r->vars->get(r->vars->arg, nm);
	if (v == NULL) {
		rerr(r, "unknown placeholder '%s'", nm);
		return;
	}
	switch (kind) {
	case TAG_IF:
	case TAG_UNLESS:
		if (r->depth >= TPL_MAX_DEPTH) {
			rerr(r, "blocks nested too deeply at '%s'", nm);
			return;
		}
		r->depth++;
		r->active[r->depth] = on && ((v[0] != '\0') == (kind == TAG_IF));
		r->open_line[r->depth] = r->line;
		return;
	case TAG_SH:
		if (on)
			tpl_sh_quote(r->out, v);
		return;
	case TAG_YAML:
		if (on)
			tpl_yaml_quote(r->out, v);
		return;
	case TAG_INT:
		/* Values are checked where they are used: {{#if x}}{{int x}}{{/if}} allows nil. */
		if (on && !is_int(v))
			rerr(r, "value of '%s' is not an integer", nm);
		else if (on)
			buf_adds(r->out, v);
		return;
	default:
		if (on && text_has_control(v))
			rerr(r, "value of '%s' holds a newline or control character", nm);
		else if (on)
			buf_adds(r->out, v);
		return;
	}
}

static void count_lines(struct render *r, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\n')
			r->line++;
}

static void emit(struct render *r, const char *s, size_t n)
{
	if (r->active[r->depth])
		buf_add(r->out, s, n);
	count_lines(r, s, n);
}

int tpl_render(const char *name, const char *text, size_t len, const struct tpl_vars *vars,
               struct buf *out, struct diags *d)
{
	struct render r = {.name = name, .vars = vars, .out = out, .d = d, .line = 1};
	const char *end = text + len, *lit = text;
	r.active[0] = true;

	for (;;) {
		const char *open = memmem(lit, (size_t)(end - lit), "{{", 2);
		if (open == NULL) {
			emit(&r, lit, (size_t)(end - lit));
			break;
		}
		const char *close = memmem(open + 2, (size_t)(end - open - 2), "}}", 2);
		if (close == NULL) {
			emit(&r, lit, (size_t)(open - lit));
			rerr(&r, "unterminated '%s'", "{{");
			break;
		}
		enum tag_kind kind;
		char nm[128];
		if (parse_tag(open + 2, (size_t)(close - open - 2), &kind, nm, sizeof nm) == -1) {
			emit(&r, lit, (size_t)(open - lit));
			char tag[64];
			size_t tl = (size_t)(close - open + 2);
			tl = tl < sizeof tag - 1 ? tl : sizeof tag - 1;
			memcpy(tag, open, tl);
			tag[tl] = '\0';
			rerr(&r, "malformed tag '%s'", tag);
			count_lines(&r, open, (size_t)(close - open));
			lit = close + 2;
			continue;
		}
		const char *after = close + 2;
		bool block =
		    kind == TAG_IF || kind == TAG_UNLESS || kind == TAG_END || kind == TAG_COMMENT;
		const char *ls = open, *le = after;
		while (ls > text && is_space(ls[-1]))
			ls--;
		while (le < end && is_space(*le))
			le++;
		/* A block tag alone on its line takes the line with it. */
		bool alone = block && (ls == text || ls[-1] == '\n') && (le == end || *le == '\n');
		if (alone) {
			emit(&r, lit, (size_t)(ls - lit));
			after = le < end ? le + 1 : le;
		} else {
			emit(&r, lit, (size_t)(open - lit));
		}
		if (kind == TAG_END) {
			if (r.depth == 0)
				rerr(&r, "'%s' without an open block", "{{/if}}");
			else
				r.depth--;
		} else if (kind != TAG_COMMENT) {
			substitute(&r, kind, nm);
		}
		count_lines(&r, open, (size_t)(after - open));
		lit = after;
	}
	if (r.depth > 0) {
		r.line = r.open_line[r.depth];
		rerr(&r, "block opened here is not closed with '%s'", "{{/if}}");
	}
	return r.nerr ? -1 : 0;
}

int tpl_render_file(const char *path, const struct tpl_vars *vars, struct buf *out, struct diags *d)
{
	struct buf text;
	buf_init(&text);
	int rc = -1;
	if (readfile(path, &text, TPL_MAX_FILE) == -1)
		diag_file(d, DIAG_ERR, path, 0, "cannot read template: %s",
		          errno == EFBIG ? "larger than 1 MiB" : strerror(errno));
	else
		rc = tpl_render(path, buf_str(&text), text.len, vars, out, d);
	buf_free(&text);
	return rc;
}
