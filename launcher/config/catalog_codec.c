/*
 * The catalog structs as bytes: u32 counts and lengths (native order: the
 * cache never leaves the machine), ABSENT for a NULL string or array, so a
 * decoded catalog is the parsed one, NULLs included.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/catalog_cache.h"
#include "config/catalog_int.h"
#include "lib/alloc.h"

#define ABSENT UINT32_MAX

static void put_u32(struct buf *b, uint32_t v)
{
	buf_add(b, &v, sizeof v);
}

static void put_int(struct buf *b, int v)
{
	put_u32(b, (uint32_t)v);
}

static void put_str(struct buf *b, const char *s)
{
	if (s == NULL) {
		put_u32(b, ABSENT);
		return;
	}
	size_t n = strlen(s);
	put_u32(b, (uint32_t)n);
	buf_add(b, s, n);
}

static void put_strv(struct buf *b, char *const *v, size_t n)
{
	put_u32(b, v ? (uint32_t)n : ABSENT);
	for (size_t i = 0; v && i < n; i++)
		put_str(b, v[i]);
}

static void put_kvs(struct buf *b, const struct cat_kv *v, size_t n)
{
	put_u32(b, v ? (uint32_t)n : ABSENT);
	for (size_t i = 0; v && i < n; i++) {
		put_str(b, v[i].name);
		put_str(b, v[i].value);
		put_int(b, v[i].line);
		put_u32(b, (uint32_t)v[i].is_true | (uint32_t)v[i].keep_empty << 1);
	}
}

static void put_setting(struct buf *b, const struct cat_setting *s)
{
	put_str(b, s->name);
	put_u32(b, (uint32_t)s->type);
	put_str(b, s->def);
	put_kvs(b, s->defs, s->ndefs);
	put_u32(b, (uint32_t)s->secret | (uint32_t)s->host << 1 | (uint32_t)s->data << 2);
	put_strv(b, s->refuse, s->nrefuse);
	put_str(b, s->refuse_because);
	put_strv(b, s->values, s->nvalues);
	put_int(b, s->line);
}

static void put_template(struct buf *b, const struct cat_template *t)
{
	put_str(b, t->src);
	put_str(b, t->dest);
	put_u32(b, (uint32_t)t->mode);
	put_u32(b,
	        (uint32_t)t->service_owned | (uint32_t)t->group_owned << 1 | (uint32_t)t->hup << 2);
	put_strv(b, t->validate, t->nvalidate);
	put_strv(b, t->contexts, t->ncontexts);
	put_int(b, t->line);
}

static void put_step(struct buf *b, const struct cat_step *s)
{
	put_str(b, s->name);
	put_u32(b, (uint32_t)s->when);
	put_str(b, s->creates);
	put_strv(b, s->argv, s->argc);
	put_u32(b, (uint32_t)s->staged);
	put_strv(b, s->verify, s->nverify);
	put_int(b, s->timeout);
	put_int(b, s->line);
}

static void put_scrape(struct buf *b, const struct cat_scrape *j)
{
	put_str(b, j->job);
	put_str(b, j->path);
	put_int(b, j->order);
	put_str(b, j->needs);
	put_str(b, j->when);
	put_int(b, j->line);
}

/* An array of structs: its count (or ABSENT), then each element. */
#define PUT_ARRAY(b, v, n, put)                                                                    \
	do {                                                                                       \
		put_u32(b, (v) ? (uint32_t)(n) : ABSENT);                                          \
		for (size_t i_ = 0; (v) && i_ < (n); i_++)                                         \
			put(b, &(v)[i_]);                                                          \
	} while (0)

static void put_service(struct buf *b, const struct cat_service *s)
{
	put_str(b, s->file);
	put_str(b, s->name);
	put_str(b, s->config_name);
	put_str(b, s->description);
	put_str(b, s->package);
	put_strv(b, s->omnibus_keys, s->nomnibus_keys);
	put_u32(b, (uint32_t)s->enable_default | (uint32_t)s->jemalloc << 1 |
	               (uint32_t)s->share_group << 2);
	put_u32(b, (uint32_t)s->flags_style);
	PUT_ARRAY(b, s->settings, s->nsettings, put_setting);
	put_kvs(b, s->env, s->nenv);
	put_kvs(b, s->base_env, s->nbase_env);
	put_strv(b, s->command, s->ncommand);
	PUT_ARRAY(b, s->templates, s->ntemplates, put_template);
	put_str(b, s->check);
	put_str(b, s->check_send);
	put_str(b, s->check_expect);
	put_strv(b, s->check_command, s->ncheck_command);
	put_int(b, s->check_line);
	put_strv(b, s->after, s->nafter);
	put_int(b, s->after_line);
	PUT_ARRAY(b, s->setup, s->nsetup, put_step);
	put_u32(b, (uint32_t)s->home_mode);
	put_str(b, s->stop_signal);
	PUT_ARRAY(b, s->scrape, s->nscrape, put_scrape);
	put_str(b, s->scrape_collect);
	put_strv(b, s->roles, s->nroles);
	put_str(b, s->off_switch);
	put_int(b, s->line);
	put_int(b, s->command_line);
}

void catcodec_encode(struct buf *b, const struct catalog *c)
{
	put_u32(b, (uint32_t)c->n);
	for (size_t i = 0; i < c->n; i++)
		put_service(b, &c->v[i]);
	put_strv(b, c->omnibus, c->nomnibus);
	put_strv(b, c->omnibus_keys, c->nomnibus_keys);
}

/* A read cursor: bad once anything did not fit, and every later read then yields nothing. */
struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static uint32_t get_u32(struct rd *r)
{
	uint32_t v = 0;
	if (r->bad || (size_t)(r->end - r->p) < sizeof v) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, sizeof v);
	r->p += sizeof v;
	return v;
}

static int get_int(struct rd *r)
{
	return (int)get_u32(r);
}

/* A value below lim, else bad. */
static uint32_t get_enum(struct rd *r, uint32_t lim)
{
	uint32_t v = get_u32(r);
	if (v >= lim)
		r->bad = true;
	return r->bad ? 0 : v;
}

/* required: ABSENT is malformed. A string holds no NUL (it would end early). */
static char *get_str(struct rd *r, bool required)
{
	uint32_t n = get_u32(r);
	if (r->bad || (n == ABSENT && !required))
		return NULL;
	if (n == ABSENT || n > (size_t)(r->end - r->p) || memchr(r->p, '\0', n) != NULL) {
		r->bad = true;
		return NULL;
	}
	char *s = xstrndup((const char *)r->p, n);
	r->p += n;
	return s;
}

/*
 * An array's count; ABSENT gives -1 (a NULL array). Each element takes at
 * least min bytes, so a count the rest of the input cannot hold is malformed
 * before anything is allocated for it.
 */
static long get_count(struct rd *r, size_t min)
{
	uint32_t n = get_u32(r);
	if (r->bad || n == ABSENT)
		return -1;
	if (n > (size_t)(r->end - r->p) / min) {
		r->bad = true;
		return -1;
	}
	return (long)n;
}

/* Elements are filled one at a time, counted as they go, so a failure frees what was read. */
static char **get_strv(struct rd *r, size_t *n, bool required)
{
	long k = get_count(r, 4);
	*n = 0;
	if (k < 0) {
		r->bad |= required;
		return NULL;
	}
	char **v = xcalloc((size_t)k + 1, sizeof *v);
	for (long i = 0; i < k && !r->bad; i++)
		if ((v[*n] = get_str(r, true)) != NULL)
			(*n)++;
	return v;
}

static struct cat_kv *get_kvs(struct rd *r, size_t *n)
{
	size_t k;
	long want = get_count(r, 16);
	struct cat_kv *v = want < 0 ? NULL : xcalloc((size_t)want + 1, sizeof *v);
	for (k = 0; v && k < (size_t)want && !r->bad; k++) {
		v[k].name = get_str(r, true);
		v[k].value = get_str(r, true);
		v[k].line = get_int(r);
		uint32_t f = get_enum(r, 4);
		v[k].is_true = f & 1;
		v[k].keep_empty = f & 2;
	}
	*n = k;
	return v;
}

static void get_setting(struct rd *r, struct cat_setting *s)
{
	s->name = get_str(r, true);
	s->type = (enum stype)get_enum(r, ST_SCALAR + 1);
	s->def = get_str(r, false);
	s->defs = get_kvs(r, &s->ndefs);
	uint32_t f = get_enum(r, 8);
	s->secret = f & 1;
	s->host = f & 2;
	s->data = f & 4;
	s->refuse = get_strv(r, &s->nrefuse, false);
	s->refuse_because = get_str(r, false);
	s->values = get_strv(r, &s->nvalues, false);
	s->line = get_int(r);
}

static void get_template(struct rd *r, struct cat_template *t)
{
	t->src = get_str(r, false);
	t->dest = get_str(r, true);
	t->mode = (mode_t)get_enum(r, 07777 + 1);
	uint32_t f = get_enum(r, 8);
	t->service_owned = f & 1;
	t->group_owned = f & 2;
	t->hup = f & 4;
	t->validate = get_strv(r, &t->nvalidate, false);
	t->contexts = get_strv(r, &t->ncontexts, false);
	t->line = get_int(r);
}

static void get_step(struct rd *r, struct cat_step *s)
{
	s->name = get_str(r, true);
	s->when = (enum step_when)get_enum(r, STEP_AFTER_READY + 1);
	s->creates = get_str(r, false);
	s->argv = get_strv(r, &s->argc, true);
	s->staged = get_enum(r, 2) != 0;
	s->verify = get_strv(r, &s->nverify, false);
	s->timeout = get_int(r);
	s->line = get_int(r);
}

static void get_scrape(struct rd *r, struct cat_scrape *j)
{
	j->job = get_str(r, true);
	j->path = get_str(r, true);
	j->order = get_int(r);
	j->needs = get_str(r, false);
	j->when = get_str(r, false);
	j->line = get_int(r);
}

/* Count before each element is read: a failed element is still freed with the rest. */
#define GET_ARRAY(r, v, n, min, get)                                                               \
	do {                                                                                       \
		size_t want_;                                                                      \
		long k_ = get_count(r, min);                                                       \
		want_ = k_ < 0 ? 0 : (size_t)k_;                                                   \
		(v) = k_ < 0 ? NULL : xcalloc(want_ + 1, sizeof *(v));                             \
		for ((n) = 0; (n) < want_ && !(r)->bad; (n)++)                                     \
			get(r, &(v)[n]);                                                           \
	} while (0)

static void get_service(struct rd *r, struct cat_service *s)
{
	s->file = get_str(r, true);
	s->name = get_str(r, true);
	s->config_name = get_str(r, true);
	s->description = get_str(r, false);
	s->package = get_str(r, false);
	s->omnibus_keys = get_strv(r, &s->nomnibus_keys, false);
	uint32_t f = get_enum(r, 8);
	s->enable_default = f & 1;
	s->jemalloc = f & 2;
	s->share_group = f & 4;
	s->flags_style = (enum flags_style)get_enum(r, FLAGS_PLAIN + 1);
	GET_ARRAY(r, s->settings, s->nsettings, 24, get_setting);
	s->env = get_kvs(r, &s->nenv);
	s->base_env = get_kvs(r, &s->nbase_env);
	s->command = get_strv(r, &s->ncommand, true);
	GET_ARRAY(r, s->templates, s->ntemplates, 20, get_template);
	s->check = get_str(r, false);
	s->check_send = get_str(r, false);
	s->check_expect = get_str(r, false);
	s->check_command = get_strv(r, &s->ncheck_command, false);
	s->check_line = get_int(r);
	s->after = get_strv(r, &s->nafter, false);
	s->after_line = get_int(r);
	GET_ARRAY(r, s->setup, s->nsetup, 32, get_step);
	s->home_mode = (mode_t)get_enum(r, 07777 + 1);
	s->stop_signal = get_str(r, false);
	GET_ARRAY(r, s->scrape, s->nscrape, 20, get_scrape);
	s->scrape_collect = get_str(r, false);
	s->roles = get_strv(r, &s->nroles, false);
	s->off_switch = get_str(r, false);
	s->line = get_int(r);
	s->command_line = get_int(r);
}

int catcodec_decode(const void *p, size_t len, struct catalog *out)
{
	struct rd r = {p, (const unsigned char *)p + len, false};
	memset(out, 0, sizeof *out);
	long n = get_count(&r, 64);
	out->v = xcalloc(n < 0 ? 1 : (size_t)n + 1, sizeof *out->v);
	for (long i = 0; i < n && !r.bad; i++)
		get_service(&r, &out->v[out->n++]);
	out->omnibus = get_strv(&r, &out->nomnibus, false);
	out->omnibus_keys = get_strv(&r, &out->nomnibus_keys, false);
	if (n < 0 || r.bad || r.p != r.end) {
		catalog_free(out);
		return -1;
	}
	for (size_t i = 0; i < out->n; i++)
		out->v[i].src.name = out->v[i].file;
	return 0;
}
