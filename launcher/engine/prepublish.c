/* The validation before publish that reconfigure and check-config share (see prepublish.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/prepublish.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/suggest.h"
#include "proc/validate.h"
#include "render/toolout.h"

#define TOOL_WAIT_MS 30000
#define MAX_BLAMED   8

struct pp {
	const struct ctl *ctl;
	const struct attrs *a;
	const struct plans *ps;
	bool only_changes;
	long wait_ms;
	struct diags *d;
};

/*
 * Tool messages whose fix gitlab.rb can name, and the setting that asked for what the tool
 * misses (amtool needs SMTP once admin_email adds an email receiver).
 */
static const struct known {
	const char *says, *setting, *fix;
} known[] = {
    {"no global SMTP smarthost set", "admin_email",
     "set gitlab_rails['smtp_enable'] = true and gitlab_rails['smtp_address'] (and "
     "['smtp_port']), or alertmanager['global'] = { 'smtp_smarthost' => 'HOST:PORT' }"},
    {"no global SMTP from set", "admin_email",
     "set gitlab_rails['gitlab_email_from'] (with gitlab_rails['smtp_enable'] = true), or "
     "alertmanager['global']['smtp_from']"},
    {"global scrape timeout greater than scrape interval", "scrape_timeout",
     "set prometheus['scrape_timeout'] no higher than prometheus['scrape_interval'], or leave "
     "it unset"},
};

/* Whether the tree changes the content of the file at path. */
static bool content_changes(const struct tree *t, const char *path)
{
	for (size_t k = 0; k < t->nc; k++) {
		const struct tchange *c = &t->c[k];
		if (c->kind != TC_DELETE && strcmp(t->v[c->node].path, path) == 0)
			return c->kind == TC_CREATE || (c->what & (TC_CONTENT | TC_REPLACE));
	}
	return false;
}

static long deadline(const struct pp *x)
{
	return mono_ms() + (x->wait_ms > 0 ? x->wait_ms : TOOL_WAIT_MS);
}

/* The validator's argv: "{{file}}" is the bytes on its stdin, the rest placeholders. */
static char **validator_argv(const struct pp *x, const struct svc *s, const struct cat_template *ct)
{
	size_t bad;
	char **v =
	    attrs_expand_argv(x->a, s, ct->validate, ct->nvalidate, "file", "/dev/stdin", &bad);
	if (v == NULL)
		diag_file(x->d, DIAG_ERR, s->def->file, ct->line,
		          "validate: unknown placeholder in \"%s\"", ct->validate[bad]);
	return v;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/*
 * A line that says what the tool looked at, not what it refuses: promtool's "Checking FILE",
 * postgres' note on the postgresql.auto.conf the validator's directory does not hold.
 */
static bool noise(const char *p, size_t m)
{
	static const char *const says[] = {"Checking ",
	                                   "LOG:  skipping missing configuration file"};
	for (size_t i = 0; i < sizeof says / sizeof says[0]; i++)
		if (m >= strlen(says[i]) && strncmp(p, says[i], strlen(says[i])) == 0)
			return true;
	return false;
}

/* A server's level word before its message ("LOG:  ", "FATAL:  "): not part of the words. */
static const char *after_level(const char *p, size_t *m)
{
	static const char *const levels[] = {"LOG:  ", "FATAL:  ", "ERROR:  "};
	for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
		size_t k = strlen(levels[i]);
		if (*m > k && strncmp(p, levels[i], k) == 0) {
			*m -= k;
			return p + k;
		}
	}
	return p;
}

/* The tool's complaint: its first FAILED line (or first line that is not noise()). */
static char *complaint(const char *out)
{
	const char *best = NULL;
	size_t blen = 0;
	for (const char *l = out; *l != '\0';) {
		size_t n = strcspn(l, "\n");
		const char *p = l + strspn(l, " \t");
		size_t m = n - (size_t)(p - l);
		const char *f = memmem(p, m, "FAILED: ", 8);
		if (f != NULL) {
			best = f + 8;
			blen = m - (size_t)(best - p);
			break;
		}
		if (best == NULL && m > 0 && !noise(p, m))
			best = p, blen = m;
		l += n + (l[n] == '\n');
	}
	if (best == NULL)
		return xstrdup("(it said nothing)");
	best = after_level(best, &blen);
	static const char yaml_prefix[] = "parsing YAML file /dev/stdin: ";
	if (blen > sizeof yaml_prefix - 1 &&
	    strncmp(best, yaml_prefix, sizeof yaml_prefix - 1) == 0)
		best += sizeof yaml_prefix - 1, blen -= sizeof yaml_prefix - 1;
	while (blen > 0 && (best[blen - 1] == ' ' || best[blen - 1] == ':'))
		blen--;
	return xstrndup(best, blen);
}

static void blame_add(int *v, size_t *n, int line)
{
	if (line <= 0 || *n >= MAX_BLAMED)
		return;
	for (size_t i = 0; i < *n; i++)
		if (v[i] == line)
			return;
	v[(*n)++] = line;
}

/* Line number (1-based) of offset off in p. */
static int line_of(const char *p, size_t off)
{
	int line = 1;
	for (size_t i = 0; i < off; i++)
		line += p[i] == '\n';
	return line;
}

/*
 * The gitlab.rb lines behind the tool's words: each "line N" of the file, and each line of
 * the file holding a string the tool quotes back (a bad duration, a job name).
 */
static size_t blame_lines(const struct plan_extra *e, const char *out, int *v)
{
	size_t n = 0;
	for (const char *s = out; (s = strstr(s, "line ")) != NULL; s += 5) {
		const char *errstr = NULL;
		char num[12];
		size_t k = strspn(s + 5, "0123456789");
		if (k == 0 || k >= sizeof num)
			continue;
		memcpy(num, s + 5, k);
		num[k] = '\0';
		int line = (int)strtonum(num, 1, INT_MAX, &errstr);
		if (errstr == NULL)
			blame_add(v, &n, yaml_srcmap_find(&e->srcmap, line));
	}
	const char *body = e->body.p ? e->body.p : "";
	for (const char *q = strchr(out, '"'); q != NULL; q = strchr(q, '"')) {
		const char *end = strchr(q + 1, '"');
		if (end == NULL)
			break;
		size_t len =
		    (size_t)(end - q) + 1; /* with its quotes, as the file writes a string */
		const char *at = len > 2 ? memmem(body, e->body.len, q, len) : NULL;
		if (at != NULL)
			blame_add(v, &n,
			          yaml_srcmap_find(&e->srcmap, line_of(body, (size_t)(at - body))));
		q = end + 1;
	}
	return n;
}

/* "file:line" of a setting gitlab.rb set (origin), split; false when it set none. */
static bool origin_of(const struct svc *s, const char *setting, char *file, size_t len, int *line)
{
	const char *o = kv_get(&s->origin, setting);
	const char *c = o ? strrchr(o, ':') : NULL;
	const char *errstr = NULL;
	if (c == NULL || (size_t)(c - o) >= len)
		return false;
	*line = (int)strtonum(c + 1, 1, INT_MAX, &errstr);
	if (errstr != NULL)
		return false;
	memcpy(file, o, (size_t)(c - o));
	file[c - o] = '\0';
	return true;
}

/* The setting of s whose value a line of file is part of: the last one set at or above it. */
static const char *setting_at(const struct svc *s, const char *file, int line)
{
	const char *best = NULL;
	int at = 0;
	char f[PATH_MAX];
	for (size_t i = 0; i < s->origin.n; i++) {
		int l;
		if (strncmp(s->origin.v[i].name, "env:", 4) != 0 &&
		    origin_of(s, s->origin.v[i].name, f, sizeof f, &l) && strcmp(f, file) == 0 &&
		    l <= line && l > at)
			best = s->origin.v[i].name, at = l;
	}
	return best;
}

/* The gitlab.rb settings of s, "name (line N), ...", for a refusal no line was found for. */
static void settings_list(const struct svc *s, struct buf *b)
{
	for (size_t i = 0; i < s->origin.n; i++) {
		const char *at = strrchr(s->origin.v[i].value, ':');
		buf_addf(b, "%s%s['%s'] (line %s)", i ? ", " : "", s->def->config_name,
		         s->origin.v[i].name, at ? at + 1 : "?");
	}
}

/*
 * Each line of the tool's output that quotes back the name of a setting gitlab.rb set
 * (postgres: invalid value for parameter "work_mem"): an error at that setting's line, with
 * that line's words. Returns how many.
 */
static size_t named_settings(const struct pp *x, const struct svc *s, const struct plan_extra *e,
                             const char *tool, const char *red)
{
	size_t n = 0;
	for (const char *l = red; *l != '\0' && n < MAX_BLAMED;) {
		size_t len = strcspn(l, "\n");
		const char *q = memchr(l, '"', len), *end;
		for (; q != NULL; q = memchr(end + 1, '"', (size_t)(l + len - end - 1))) {
			end = memchr(q + 1, '"', (size_t)(l + len - q - 1));
			if (end == NULL)
				break;
			char name[128], file[PATH_MAX];
			int line;
			size_t k = (size_t)(end - q - 1);
			if (k == 0 || k >= sizeof name)
				continue;
			memcpy(name, q + 1, k);
			name[k] = '\0';
			if (cat_setting_find(s->def, name) == NULL ||
			    !origin_of(s, name, file, sizeof file, &line))
				continue;
			size_t m = len;
			const char *words = after_level(l, &m);
			diag_file(x->d, DIAG_ERR, file, line,
			          "%s['%s']: %s refuses the %s written from this line: %.*s",
			          s->def->config_name, name, tool, e->dest, (int)m, words);
			n++;
			break;
		}
		l += len + (l[len] == '\n');
	}
	return n;
}

/* A file the tool refused: errors where gitlab.rb wrote it, then what the tool said. */
static void refused(const struct pp *x, const struct plan *p, const struct plan_extra *e,
                    const char *tool, const char *raw, const char *red)
{
	const struct svc *s = p->svc;
	char *what = complaint(red);
	const struct known *k = NULL;
	for (size_t i = 0; i < sizeof known / sizeof known[0] && k == NULL; i++)
		if (strstr(raw, known[i].says) != NULL)
			k = &known[i];
	const char *fix = k ? k->fix : "correct the value written here";
	char file[PATH_MAX];
	int line;
	if (k != NULL && origin_of(s, k->setting, file, sizeof file, &line)) {
		diag_file(x->d, DIAG_ERR, file, line,
		          "%s['%s']: %s refuses the %s rendered with it: %s; %s",
		          s->def->config_name, k->setting, tool, base_name(e->dest), what, k->fix);
		free(what);
		return;
	}
	if (named_settings(x, s, e, tool, red) > 0) {
		free(what);
		return;
	}
	int lines[MAX_BLAMED];
	size_t n = blame_lines(e, raw, lines);
	for (size_t i = 0; i < n; i++) {
		const char *set = setting_at(s, x->ctl->config, lines[i]);
		diag_file(x->d, DIAG_ERR, x->ctl->config, lines[i],
		          "%s%s%s%s: %s refuses the %s written from this line: %s; %s",
		          set ? s->def->config_name : s->def->name, set ? "['" : "", set ? set : "",
		          set ? "']" : "", tool, e->dest, what, fix);
	}
	if (n == 0) {
		struct buf set;
		buf_init(&set);
		settings_list(s, &set);
		if (set.len > 0)
			diag_file(x->d, DIAG_ERR, x->ctl->config, 0,
			          "%s: %s refuses the %s it renders: %s; %s (gitlab.rb sets %s)",
			          s->def->name, tool, e->dest, what,
			          k ? k->fix : "correct one of the settings", set.p);
		else /* nothing of gitlab.rb's: the catalog's template is at fault */
			diag_file(x->d, DIAG_ERR, s->def->file, e->def->line,
			          "%s: %s refuses the %s rendered from the catalog's defaults: %s",
			          s->def->name, tool, e->dest, what);
		buf_free(&set);
	}
	free(what);
}

/*
 * A validator in flight: a rendered file's (e) or, e NULL, the --help of the service's
 * command. Several run at once, each reported in order when it ends.
 */
struct ppjob {
	const struct plan *p;
	const struct plan_extra *e;
	char **argv; /* the file's validator; NULL for --help */
	struct validate_job vj;
	int err; /* errno when it could not start, else 0 */
};

static void job_start(const struct pp *x, struct ppjob *j, char *const *argv, const char *data,
                      size_t len)
{
	const struct svc *s = j->p->svc;
	j->err = validate_start(argv, data, len, s->user, s->group, deadline(x), &j->vj) == 0
	             ? 0
	             : (errno != 0 ? errno : EIO);
}

static int job_end(struct ppjob *j, struct buf *out)
{
	if (j->err != 0) {
		errno = j->err;
		return -1;
	}
	return validate_finish(&j->vj, out);
}

/* 0 started (j to be ended), -1 failed (said in d). */
static int validate_file_start(const struct pp *x, struct ppjob *j)
{
	j->argv = validator_argv(x, j->p->svc, j->e->def);
	if (j->argv == NULL)
		return -1;
	const char *body = j->e->body.p ? j->e->body.p : "";
	job_start(x, j, j->argv, body, j->e->body.len);
	return 0;
}

/* One rendered file's validator ended; 0 when it passed. */
static int validate_file_end(const struct pp *x, struct ppjob *j)
{
	const struct plan *p = j->p;
	const struct plan_extra *e = j->e;
	const struct svc *s = p->svc;
	char **argv = j->argv;
	const char *body = e->body.p ? e->body.p : "";
	struct buf out;
	buf_init(&out);
	int st = job_end(j, &out);
	if (st != 0) {
		struct buf red;
		buf_init(&red);
		toolout_redact(out.p ? out.p : "", out.len, body, e->body.len, e->sec.v, e->sec.n,
		               &red);
		buf_addc(&red, '\0');
		buf_addc(&out, '\0');
		if (st == -1)
			diag_add(x->d, DIAG_ERR, "%s: cannot validate %s with %s: %s", s->def->name,
			         e->dest, argv[0],
			         errno == ETIMEDOUT ? "it ran out of time" : strerror(errno));
		else if (st == 127)
			diag_add(x->d, DIAG_ERR,
			         "%s: cannot run %s to validate %s: install the Debian package %s",
			         s->def->name, argv[0], e->dest,
			         s->def->package ? s->def->package : "");
		else
			refused(x, p, e, base_name(argv[0]), out.p, red.p);
		if (red.len > 1)
			diag_text_safe(x->d, "  ", red.p, red.len - 1);
		buf_free(&red);
	}
	buf_free(&out);
	argv_free(argv);
	j->argv = NULL;
	return st == 0 ? 0 : -1;
}

/* ---- the command's options against the binary's own --help ------------------------------ */

struct optname {
	char *name;
	bool negatable; /* kingpin's boolean: --no-NAME too */
};

struct optnames {
	struct optname *v;
	size_t n, cap;
};

/*
 * The options --help lists: kingpin's "  -h, --name=VALUE", "      --[no-]name", Go's flag
 * package's "  -name type". Lines of description that start with a dash add a name or two
 * more; none is ever taken away.
 */
static void help_names(const char *out, struct optnames *o)
{
	for (const char *l = out; *l != '\0';) {
		size_t n = strcspn(l, "\n");
		const char *p = l + strspn(l, " \t");
		if (p[0] == '-' && p[1] != '-' && p[1] != '\0' && p[2] == ',' && p[3] == ' ')
			p += 4; /* "-h, --help" */
		if (p < l + n && p[0] == '-') {
			bool go = p[1] != '-';
			p += go ? 1 : 2;
			bool neg = strncmp(p, "[no-]", 5) == 0;
			p += neg ? 5 : 0;
			size_t k = strcspn(p, "= \t\n");
			if (k > 0 && p + k <= l + n) {
				if (o->n == o->cap) {
					o->cap = o->cap ? 2 * o->cap : 64;
					o->v = xreallocarray(o->v, o->cap, sizeof *o->v);
				}
				o->v[o->n++] =
				    (struct optname){xstrndup(p, k), neg || (!go && p[k] != '=')};
			}
		}
		l += n + (l[n] == '\n');
	}
}

static const struct optname *opt_find(const struct optnames *o, const char *name, size_t len)
{
	for (size_t i = 0; i < o->n; i++)
		if (strlen(o->v[i].name) == len && strncmp(o->v[i].name, name, len) == 0)
			return &o->v[i];
	return NULL;
}

static bool has_flags(const struct cat_service *def)
{
	for (size_t i = 0; i < def->nsettings; i++)
		if (def->settings[i].type == ST_FLAGS)
			return true;
	return false;
}

/* The flags setting of def (its gitlab.rb name), for the message. */
static const char *flags_setting(const struct cat_service *def)
{
	for (size_t i = 0; i < def->nsettings; i++)
		if (def->settings[i].type == ST_FLAGS)
			return def->settings[i].name;
	return "flags";
}

static void unknown_option(const struct pp *x, const struct svc *s, size_t i, const char *name,
                           size_t len, const struct optnames *o)
{
	const struct svc_pos *at = s->argv_pos ? &s->argv_pos[i] : NULL;
	struct src src = {.name = at && at->file ? at->file : s->def->file};
	struct loc l = {
	    .src = &src, .line = at ? at->line : s->def->command_line, .col = at ? at->col : 0};
	char *word = xstrndup(name, len);
	const char **cands = xcalloc(o->n + 1, sizeof *cands);
	for (size_t j = 0; j < o->n; j++)
		cands[j] = o->v[j].name;
	const char *near = suggest_pick(word, cands, o->n);
	const char *fs = flags_setting(s->def);
	bool ours = at && at->file && strcmp(at->file, s->def->file) == 0;
	/* kingpin's false is --no-KEY: the key gitlab.rb wrote is KEY */
	const char *key =
	    s->def->flags_style == FLAGS_KINGPIN && strncmp(word, "no-", 3) == 0 ? word + 3 : word;
	if (near != NULL)
		diag_at(x->d, DIAG_ERR, l, "%s['%s']: %s has no option --%s: did you mean '%s'?",
		        s->def->config_name, fs, s->argv[0], word, near);
	else if (ours)
		diag_at(x->d, DIAG_ERR, l,
		        "%s: the installed %s has no option --%s (its --help lists none such)",
		        s->def->name, s->argv[0], word);
	else
		diag_at(
		    x->d, DIAG_ERR, l,
		    "%s['%s']: the installed %s has no option --%s (its --help lists none such); "
		    "remove the key '%s' (set it to nil where it drops a default)",
		    s->def->config_name, fs, s->argv[0], word, key);
	free(cands);
	free(word);
}

/* Whether p's command options are to be checked against its --help. */
static bool options_wanted(const struct pp *x, const struct plan *p)
{
	const struct svc *s = p->svc;
	if (!has_flags(s->def) || s->argc < 2 || s->argv[0][0] != '/')
		return false;
	char run[PATH_MAX];
	return !x->only_changes ||
	       (snprintf(run, sizeof run, "%s/run", p->sv_dir) < (int)sizeof run &&
	        content_changes(&x->ps->t, run));
}

static void check_options_start(const struct pp *x, struct ppjob *j)
{
	char *argv[] = {j->p->svc->argv[0], "--help", NULL};
	j->argv = NULL;
	job_start(x, j, argv, "", 0);
}

/* Every option of s's command is one its binary's --help lists; 0, or -1 after a refusal. */
static int check_options_end(const struct pp *x, struct ppjob *j)
{
	const struct svc *s = j->p->svc;
	struct buf out;
	buf_init(&out);
	int st = job_end(j, &out);
	buf_addc(&out, '\0');
	struct optnames o = {0};
	if (st != -1 && st != 127) /* not there: pre-flight says so */
		help_names(out.p, &o);
	int rc = 0;
	for (size_t i = 1; o.n > 0 && i < s->argc;
	     i++) { /* a --help we cannot read judges nothing */
		const char *a = s->argv[i];
		if (a[0] != '-' || strcmp(a, "--") == 0)
			continue;
		const char *name = a + (a[1] == '-' ? 2 : 1);
		size_t len = strcspn(name, "=");
		const struct optname *f = opt_find(&o, name, len);
		if (f == NULL && len > 3 && strncmp(name, "no-", 3) == 0) {
			f = opt_find(&o, name + 3, len - 3);
			f = f && f->negatable ? f : NULL;
		}
		if (f == NULL) {
			unknown_option(x, s, i, name, len, &o);
			rc = -1;
		}
	}
	for (size_t i = 0; i < o.n; i++)
		free(o.v[i].name);
	free(o.v);
	buf_free(&out);
	return rc;
}

/*
 * Validators in flight at once: each is a Go or C program's start (tens of ms of CPU), a
 * first run has about ten, run one after another they were half a second before anything
 * started; a few at a time keep a small machine's memory and CPU for the services.
 */
#define INFLIGHT 4

static int job_end_any(const struct pp *x, struct ppjob *j)
{
	return j->e != NULL ? validate_file_end(x, j) : check_options_end(x, j);
}

int prepublish_check(const struct ctl *ctl, const struct attrs *a, const struct plans *ps,
                     bool only_changes, long wait_ms, struct diags *d)
{
	struct pp x = {ctl, a, ps, only_changes, wait_ms, d};
	struct ppjob run[INFLIGHT];
	size_t head = 0, n = 0; /* run[head .. head+n) in flight, ended in the order started */
	int rc = 0;
	for (size_t k = 0; k < ps->np; k++) {
		const struct plan *p = &ps->p[k];
		for (size_t i = 0; i <= p->nextra; i++) { /* its command first, then its files */
			const struct plan_extra *e = i > 0 ? &p->extra[i - 1] : NULL;
			bool want = e == NULL
			                ? options_wanted(&x, p)
			                : e->def->nvalidate > 0 &&
			                      (!only_changes || content_changes(&ps->t, e->dest));
			if (!want)
				continue;
			if (n == INFLIGHT) {
				if (job_end_any(&x, &run[head]) == -1)
					rc = -1;
				head = (head + 1) % INFLIGHT;
				n--;
			}
			struct ppjob *j = &run[(head + n) % INFLIGHT];
			*j = (struct ppjob){.p = p, .e = e};
			if (e == NULL)
				check_options_start(&x, j);
			else if (validate_file_start(&x, j) == -1) {
				rc = -1;
				continue;
			}
			n++;
		}
	}
	for (; n > 0; n--, head = (head + 1) % INFLIGHT)
		if (job_end_any(&x, &run[head]) == -1)
			rc = -1;
	return rc;
}
