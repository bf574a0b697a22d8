/* The template language of templates/ (see template.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/ascii.h"
#include "render/template.h"
#include "lib/alloc.h"
#include "lib/bcrypt.h"
#include "lib/grow.h"
#include "lib/names.h"
#include "lib/pgbquote.h"
#include "lib/quote.h"
#include "lib/readfile.h"

#define TPL_MAX_DEPTH 16
#define TPL_MAX_FILE  (1024 * 1024)

void tpl_sh_quote(struct buf *b, const char *s)
{
	quote_sh(b, s);
}

void tpl_yaml_quote(struct buf *b, const char *s)
{
	quote_yaml(b, s);
}

enum tag_kind {
	TAG_RAW,
	TAG_SH,
	TAG_SHLIST,
	TAG_YAML,
	TAG_YAMLV,
	TAG_YAMLITEMS,
	TAG_INT,
	TAG_FILTER,
	TAG_DATA,
	TAG_IF,
	TAG_UNLESS,
	TAG_END,
	TAG_COMMENT
};

static int filter_yaml(struct buf *out, const char *v, const char **why)
{
	(void)why;
	quote_yaml(out, v);
	return 0;
}

/* A bcrypt hash of the value as a YAML string (web.config.file's basic_auth_users). */
static int refuse_empty(const char **why)
{
	*why = "an empty password";
	return -1;
}

static int filter_bcrypt(struct buf *out, const char *v, const char **why)
{
	char h[128];
	if (*v == '\0')
		return refuse_empty(why);
	if (bcrypt_hash(v, h, sizeof h, why) == -1)
		return -1;
	quote_yaml(out, h);
	return 0;
}

static int filter_redis(struct buf *out, const char *v, const char **why)
{
	(void)why;
	quote_redis_arg(out, v);
	return 0;
}

static int filter_conninfo(struct buf *out, const char *v, const char **why)
{
	(void)why;
	quote_conninfo(out, v);
	return 0;
}

/* The per-format filters: {{WORD name}} appends the value through quote.h's function. */
static const struct {
	const char *word;
	quote_fn fn;
	const char *format; /* for messages: where the value was going */
} filters[] = {
    {"pg_string", quote_pg_string, "postgresql.conf"},
    {"pg_part", quote_pg_part, "postgresql.conf"},
    {"pg_number", quote_pg_number, "postgresql.conf"},
    {"pg_hosts", quote_pg_hosts, "postgresql.conf"},
    {"pg_token", quote_pg_token, "pg_hba.conf/pg_ident.conf"},
    {"pg_md5", quote_pg_md5, "a role's md5 password"},
    {"pgb_value", quote_pgb_value, "pgbouncer.ini"},
    {"conninfo", filter_conninfo, "a libpq connection string"},
    {"redis", filter_redis, "redis.conf"},
    {"redis_memory", quote_redis_memory, "redis.conf"},
    {"redis_acl_pass", quote_redis_acl_pass, "redis.conf"},
    {"redis_bind", quote_redis_bind, "redis.conf"},
    {"redis_bind_loopback", quote_redis_bind_loopback, "redis.conf"},
    {"sentinel_bind_loopback", quote_sentinel_bind_loopback, "sentinel.conf"},
    {"redis_name", quote_redis_name, "redis.conf"},
    {"redis_myid", quote_redis_myid, "sentinel.conf"},
    {"redis_bool", quote_redis_bool, "redis.conf"},
    {"redis_obl", quote_redis_obl, "redis.conf"},
    {"mode_private", quote_mode_private, "a file mode"},
    {"yaml_str", filter_yaml, "YAML"},
    {"bcrypt", filter_bcrypt, "a web.config.file"},
    {"listen_loopback", quote_listen_loopback, "a web.config.file"},
    {"listen_loopback_tls", quote_listen_loopback_tls, "a TLS-only listener"},
    {"loopback", quote_host_loopback, "an unauthenticated listener"},
    {"url_host", quote_url_host, "a URL"},
};

/* The data filters: {{WORD name}} writes a data setting (array, hash) as whole lines. */
static const struct {
	const char *word;
	quote_data_fn fn;
	const char *format;
} data_filters[] = {
    {"redis_save", quote_redis_save, "redis.conf"},
    {"redis_renames", quote_redis_renames, "redis.conf"},
    {"pg_hba_md5", quote_pg_hba_md5, "pg_hba.conf"},
    {"pgb_databases", quote_pgb_databases, "pgbouncer's databases.ini"},
    {"pgb_users", quote_pgb_users, "pgbouncer's userlist.txt"},
    {"pgb_names", quote_pgb_names, "pgbouncer.ini"},
    {"patroni_hba_md5", quote_patroni_hba_md5, "patroni.yml's pg_hba"},
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

static bool valid_name(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!(ascii_alnum(c) || c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

/* s[0, n) starts with word and a blank: step past both (and the blanks after). */
static bool take_word(const char **s, size_t *n, const char *word)
{
	size_t wl = strlen(word);
	if (*n <= wl || memcmp(*s, word, wl) != 0 || !ascii_blank((*s)[wl]))
		return false;
	*s += wl, *n -= wl;
	while (*n > 0 && ascii_blank(**s))
		(*s)++, (*n)--;
	return true;
}

/* Split a tag's inside into kind and variable name (copied into nm). 0, or -1 if malformed. */
static int parse_tag(const char *s, size_t n, enum tag_kind *kind, int *filter, char *nm,
                     size_t nmlen)
{
	static const struct {
		const char *word;
		enum tag_kind kind;
	} words[] = {
	    {"sh*", TAG_SHLIST},  {"sh", TAG_SH},
	    {"yamlv", TAG_YAMLV}, {"yamlitems", TAG_YAMLITEMS},
	    {"yaml", TAG_YAML},   {"int", TAG_INT},
	    {"#if", TAG_IF},      {"#unless", TAG_UNLESS},
	};
	while (n > 0 && ascii_blank(*s))
		s++, n--;
	while (n > 0 && ascii_blank(s[n - 1]))
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
	for (size_t i = 0; i < sizeof filters / sizeof filters[0] && *kind == TAG_RAW; i++)
		if (take_word(&s, &n, filters[i].word))
			*kind = TAG_FILTER, *filter = (int)i;
	for (size_t i = 0; i < sizeof data_filters / sizeof data_filters[0] && *kind == TAG_RAW;
	     i++)
		if (take_word(&s, &n, data_filters[i].word))
			*kind = TAG_DATA, *filter = (int)i;
	for (size_t i = 0; i < sizeof words / sizeof words[0] && *kind == TAG_RAW; i++)
		if (take_word(&s, &n, words[i].word))
			*kind = words[i].kind;
	if (n >= nmlen)
		return -1;
	/* a block's condition may be several names, name|name: kept when any is not empty */
	for (size_t i = 0, from = 0; i <= n; i++)
		if (i == n || (s[i] == '|' && (*kind == TAG_IF || *kind == TAG_UNLESS))) {
			if (!valid_name(s + from, i - from))
				return -1;
			from = i + 1;
		}
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

/*
 * A value its format cannot hold: at the gitlab.rb position that set it when
 * the variables know it, else at the template line. The value itself is never
 * echoed (it may be a secret).
 */
static void refuse(struct render *r, const char *format, const char *nm, const char *why)
{
	struct tpl_origin o;
	if (r->vars->origin != NULL && r->vars->origin(r->vars->arg, nm, &o)) {
		struct src src = {.name = o.file};
		diag_at(r->d, DIAG_ERR, (struct loc){&src, o.line, o.col}, "%s: %s (for %s)",
		        o.label, why, format);
		r->nerr++;
		return;
	}
	rerr(r, "value of '%s': %s (for %s)", nm, why, format);
}

static void filter_value(struct render *r, int filter, const char *nm, const char *v)
{
	const char *why = NULL;
	size_t len = r->out->len;
	if (filters[filter].fn(r->out, v, &why) == -1) {
		buf_truncate(r->out, len);
		refuse(r, filters[filter].format, nm, why);
	}
}

/* A data filter's lines; the value is looked up even when off, to catch typos. */
static void data_value(struct render *r, int filter, const char *nm, bool on)
{
	const struct yval *v = NULL;
	if (r->vars->get_data == NULL || r->vars->get_data(r->vars->arg, nm, &v) == -1) {
		rerr(r, "unknown data placeholder '%s'", nm);
		return;
	}
	const char *why = NULL;
	size_t len = r->out->len;
	if (on && data_filters[filter].fn(r->out, v, &why) == -1) {
		buf_truncate(r->out, len);
		refuse(r, data_filters[filter].format, nm, why);
	}
}

/* The spaces that start the output's last line: a data value nests under that line. */
static int line_indent(const struct buf *b)
{
	size_t s = b->len;
	while (s > 0 && b->p[s - 1] != '\n')
		s--;
	int n = 0;
	while (s + (size_t)n < b->len && b->p[s + (size_t)n] == ' ')
		n++;
	return n;
}

static void put_data(struct render *r, const char *nm, bool items, bool on)
{
	struct buf scratch;
	buf_init(&scratch);
	struct buf *to = on ? r->out : &scratch; /* looked up even when off, to catch typos */
	if (on && !items && to->len > 0 && to->p[to->len - 1] == ' ')
		buf_truncate(to, to->len - 1); /* the emitter writes its own separator */
	if (r->vars->put_data == NULL ||
	    r->vars->put_data(r->vars->arg, nm, items, to, line_indent(to),
	                      on ? r->vars->spans : NULL) == -1)
		rerr(r, "unknown data placeholder '%s'", nm);
	buf_free(&scratch);
}

void tpl_spans_free(struct tpl_spans *s)
{
	free(s->v);
	memset(s, 0, sizeof *s);
}

/* Record out[from, now) as secret when value `nm` (element elem) is one. */
static void note_secret(struct render *r, const char *nm, size_t elem, size_t from)
{
	struct tpl_spans *sp = r->vars->spans;
	if (sp == NULL || r->vars->secret == NULL)
		return;
	int sec = r->vars->secret(r->vars->arg, nm, elem);
	if (sec == 0)
		return;
	sp->may = true;
	if (sec != TPL_SECRET_HOLDS || r->out->len <= from)
		return;
	while (sp->n > 0 && sp->v[sp->n - 1].off >= from)
		sp->n--; /* spans inside this value (yaml.h): one for all of it */
	grow(&sp->v, &sp->cap, sp->n + 1, sizeof *sp->v, 8);
	sp->v[sp->n++] = (struct tpl_span){from, r->out->len - from};
}

static void substitute_list(struct render *r, const char *nm, bool on)
{
	char *const *list = r->vars->get_list ? r->vars->get_list(r->vars->arg, nm) : NULL;
	if (list == NULL) {
		rerr(r, "unknown list placeholder '%s'", nm);
		return;
	}
	for (size_t i = 0; on && list[i]; i++) {
		if (i > 0)
			buf_addc(r->out, ' ');
		size_t from = r->out->len;
		tpl_sh_quote(r->out, list[i]);
		note_secret(r, nm, i, from);
	}
}

/* Emit one scalar substitution, or open a block. */
static void emit(struct render *r, enum tag_kind kind, int filter, const char *nm, const char *v,
                 bool on)
{
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
	case TAG_FILTER:
		if (on)
			filter_value(r, filter, nm, v);
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

/*
 * Emit one substitution (the value is looked up even in inactive blocks, to
 * catch typos, and so that a file whose template names a secret is known as
 * one however its blocks fall). Whatever a filter's quoting made of a secret
 * value, its output bytes are recorded as a span.
 */
/* {{#if a|b}}: opens the block as if on "x" when any name's value is not empty; every name
 * must be known (a typo is an error, as for one name). */
static void any_of(struct render *r, enum tag_kind kind, const char *nm, bool on)
{
	bool set = false;
	for (const char *p = nm; p != NULL;) {
		const char *bar = strchr(p, '|');
		size_t len = bar != NULL ? (size_t)(bar - p) : strlen(p);
		char one[128];
		memcpy(one, p, len); /* parse_tag kept nm under 128 bytes */
		one[len] = '\0';
		const char *v = r->vars->get(r->vars->arg, one);
		if (v == NULL) {
			rerr(r, "unknown placeholder '%s'", one);
			return;
		}
		set = set || v[0] != '\0';
		p = bar != NULL ? bar + 1 : NULL;
	}
	emit(r, kind, 0, nm, set ? "x" : "", on);
}

static void substitute(struct render *r, enum tag_kind kind, int filter, const char *nm)
{
	bool on = r->active[r->depth];
	size_t from = r->out->len;

	if (kind == TAG_SHLIST) {
		substitute_list(r, nm, on);
		if (r->vars->spans != NULL && r->vars->secret != NULL &&
		    r->vars->secret(r->vars->arg, nm, (size_t)-1) != 0)
			r->vars->spans->may = true;
		return;
	}
	if (kind == TAG_DATA) {
		data_value(r, filter, nm, on);
		note_secret(r, nm, 0, from);
		return;
	}
	if (kind == TAG_YAMLV || kind == TAG_YAMLITEMS) {
		put_data(r, nm, kind == TAG_YAMLITEMS, on);
		note_secret(r, nm, 0, from);
		return;
	}
	if ((kind == TAG_IF || kind == TAG_UNLESS) && strchr(nm, '|') != NULL) {
		any_of(r, kind, nm, on);
		return;
	}
	const char *v = r->vars->get(r->vars->arg, nm);
	if (v == NULL) {
		rerr(r, "unknown placeholder '%s'", nm);
		return;
	}
	emit(r, kind, filter, nm, v, on);
	note_secret(r, nm, 0, from);
}

/*
 * A template parsed once and rendered per service: text runs, tags and the
 * malformed spots, each with the line it starts on. Rendering replays them
 * through the same state machine, so messages and output are those of a
 * single pass over the text.
 */
enum seg_kind { SEG_TEXT, SEG_TAG, SEG_MALFORMED, SEG_UNTERMINATED };

struct seg {
	enum seg_kind kind;
	enum tag_kind tag;
	int filter; /* TAG_FILTER: index in filters[]; TAG_DATA: in data_filters[] */
	int line;
	const char *text; /* SEG_TEXT: into the template's text */
	size_t len;
	char *nm; /* SEG_TAG: the name; SEG_MALFORMED: the tag as written (cut) */
};

struct tpl {
	struct seg *v;
	size_t n, cap;
};

static struct seg *seg_new(struct tpl *t, enum seg_kind kind, int line)
{
	grow(&t->v, &t->cap, t->n + 1, sizeof *t->v, 16);
	struct seg *g = &t->v[t->n++];
	memset(g, 0, sizeof *g);
	g->kind = kind;
	g->line = line;
	return g;
}

static int count_lines(int line, const char *s, size_t n)
{
	for (const char *e = s + n; (s = memchr(s, '\n', (size_t)(e - s))) != NULL; s++)
		line++;
	return line;
}

static int add_text(struct tpl *t, int line, const char *s, size_t n)
{
	if (n > 0) {
		struct seg *g = seg_new(t, SEG_TEXT, line);
		g->text = s;
		g->len = n;
	}
	return count_lines(line, s, n);
}

static void tpl_free(struct tpl *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].nm);
	free(t->v);
	memset(t, 0, sizeof *t);
}

/* Where a tag lies, and whether it is a block tag alone on its line (the line goes too). */
static const char *tag_span(const char *text, const char *end, const char *open, const char *close,
                            enum tag_kind kind, const char **from)
{
	const char *after = close + 2;
	bool block = kind == TAG_IF || kind == TAG_UNLESS || kind == TAG_END || kind == TAG_COMMENT;
	const char *ls = open, *le = after;
	while (ls > text && ascii_blank(ls[-1]))
		ls--;
	while (le < end && ascii_blank(*le))
		le++;
	*from = open;
	if (block && (ls == text || ls[-1] == '\n') && (le == end || *le == '\n')) {
		*from = ls;
		return le < end ? le + 1 : le;
	}
	return after;
}

/* Parse text into t. Never fails: malformed spots become segments that report at render. */
static void tpl_compile(struct tpl *t, const char *text, size_t len)
{
	const char *end = text + len, *lit = text;
	int line = 1;
	memset(t, 0, sizeof *t);
	for (;;) {
		const char *open = memmem(lit, (size_t)(end - lit), "{{", 2);
		if (open == NULL) {
			add_text(t, line, lit, (size_t)(end - lit));
			return;
		}
		const char *close = memmem(open + 2, (size_t)(end - open - 2), "}}", 2);
		if (close == NULL) {
			line = add_text(t, line, lit, (size_t)(open - lit));
			seg_new(t, SEG_UNTERMINATED, line);
			return;
		}
		enum tag_kind kind;
		int filter = 0;
		char nm[128];
		if (parse_tag(open + 2, (size_t)(close - open - 2), &kind, &filter, nm,
		              sizeof nm) == -1) {
			line = add_text(t, line, lit, (size_t)(open - lit));
			size_t tl = (size_t)(close - open + 2);
			seg_new(t, SEG_MALFORMED, line)->nm = xstrndup(open, tl < 63 ? tl : 63);
			line = count_lines(line, open, (size_t)(close - open));
			lit = close + 2;
			continue;
		}
		const char *from, *after = tag_span(text, end, open, close, kind, &from);
		line = add_text(t, line, lit, (size_t)(from - lit));
		if (kind != TAG_COMMENT) {
			struct seg *g = seg_new(t, SEG_TAG, line);
			g->tag = kind;
			g->filter = filter;
			g->nm = kind == TAG_END ? NULL : xstrdup(nm);
		}
		line = count_lines(line, open, (size_t)(after - open));
		lit = after;
	}
}

static int tpl_run(const struct tpl *t, const char *name, const struct tpl_vars *vars,
                   struct buf *out, struct diags *d)
{
	struct render r = {.name = name, .vars = vars, .out = out, .d = d, .line = 1};
	r.active[0] = true;
	for (size_t i = 0; i < t->n; i++) {
		const struct seg *g = &t->v[i];
		r.line = g->line;
		if (g->kind == SEG_TEXT) {
			if (r.active[r.depth])
				buf_add(out, g->text, g->len);
		} else if (g->kind == SEG_UNTERMINATED) {
			rerr(&r, "unterminated '%s'", "{{");
		} else if (g->kind == SEG_MALFORMED) {
			rerr(&r, "malformed tag '%s'", g->nm);
		} else if (g->tag != TAG_END) {
			substitute(&r, g->tag, g->filter, g->nm);
		} else if (r.depth == 0) {
			rerr(&r, "'%s' without an open block", "{{/if}}");
		} else {
			r.depth--;
		}
	}
	if (r.depth > 0) {
		r.line = r.open_line[r.depth];
		rerr(&r, "block opened here is not closed with '%s'", "{{/if}}");
	}
	return r.nerr ? -1 : 0;
}

int tpl_render(const char *name, const char *text, size_t len, const struct tpl_vars *vars,
               struct buf *out, struct diags *d)
{
	struct tpl t;
	tpl_compile(&t, text, len);
	int rc = tpl_run(&t, name, vars, out, d);
	tpl_free(&t);
	return rc;
}

static void read_error(struct diags *d, const char *path, int errnum)
{
	diag_file(d, DIAG_ERR, path, 0, "cannot read template: %s",
	          errnum == EFBIG ? "larger than 1 MiB" : strerror(errnum));
}

int tpl_render_file(const char *path, const struct tpl_vars *vars, struct buf *out, struct diags *d)
{
	struct buf text;
	buf_init(&text);
	int rc = -1;
	if (readfile(path, &text, TPL_MAX_FILE) == -1)
		read_error(d, path, errno);
	else
		rc = tpl_render(path, buf_str(&text), text.len, vars, out, d);
	buf_free(&text);
	return rc;
}

/* One template of a cache: its text and parse, or why it cannot be read. */
struct tpl_entry {
	char *name;
	char *path; /* NULL: dir/name is too long */
	int errnum; /* of reading path, 0 when read */
	struct buf text;
	struct tpl t;
};

struct tpl_cache {
	char *dir;
	struct tpl_entry *v;
	size_t n, cap;
};

struct tpl_cache *tpl_cache_new(const char *dir)
{
	struct tpl_cache *c = xcalloc(1, sizeof *c);
	c->dir = xstrdup(dir);
	return c;
}

void tpl_cache_free(struct tpl_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].name);
		free(c->v[i].path);
		buf_free(&c->v[i].text);
		tpl_free(&c->v[i].t);
	}
	free(c->v);
	free(c->dir);
	free(c);
}

static struct tpl_entry *cache_load(struct tpl_cache *c, const char *name)
{
	grow(&c->v, &c->cap, c->n + 1, sizeof *c->v, 8);
	struct tpl_entry *e = &c->v[c->n++];
	memset(e, 0, sizeof *e);
	e->name = xstrdup(name);
	e->path = xasprintf("%s/%s", c->dir, name);
	if (strlen(e->path) >= PATH_MAX) {
		free(e->path);
		e->path = NULL;
		return e;
	}
	buf_init(&e->text);
	if (readfile(e->path, &e->text, TPL_MAX_FILE) == -1)
		e->errnum = errno;
	else
		tpl_compile(&e->t, buf_str(&e->text), e->text.len);
	return e;
}

int tpl_cache_render(struct tpl_cache *c, const char *name, const struct tpl_vars *vars,
                     struct buf *out, struct diags *d)
{
	struct tpl_entry *e = NULL;
	for (size_t i = 0; i < c->n && e == NULL; i++)
		if (strcmp(c->v[i].name, name) == 0)
			e = &c->v[i];
	if (e == NULL)
		e = cache_load(c, name);
	if (e->path == NULL) {
		diag_file(d, DIAG_ERR, name, 0, "template path too long");
		return -1;
	}
	if (e->errnum != 0) {
		read_error(d, e->path, e->errnum);
		return -1;
	}
	return tpl_run(&e->t, e->path, vars, out, d);
}
