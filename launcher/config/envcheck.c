/*
 * Validate env values that their consumers would silently ignore or misread:
 * Ruby ignores a bad RUBY_GC_* value unless run with -W (gc.c
 * get_envparam_size / get_envparam_double), jemalloc prints a one-line
 * complaint into the service log and goes on, and ld.so skips a missing
 * LD_PRELOAD file. Each rule here mirrors what the consumer accepts so that
 * gitlab-ctl rejects exactly the values that would not take effect.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_config.h"
#include "lib/clock.h"
#include "config/envcheck.h"
#include "lib/envdir.h"
#include "lib/spawn.h"
#include "lib/names.h"

/* ---- Ruby GC ------------------------------------------------------------ */

enum gc_kind { GC_SIZE, GC_DOUBLE };

/* Ruby's own bounds: lower is exclusive, upper inclusive (0 = none), zero maybe allowed. */
struct gc_rule {
	const char *name;
	enum gc_kind kind;
	double lower, upper;
	bool accept_zero;
};

/* Ruby 3.x gc.c ruby_gc_set_params(); HEAP_n_INIT_SLOTS (3.3+) are handled by pattern. */
static const struct gc_rule gc_rules[] = {
    {"RUBY_GC_HEAP_FREE_SLOTS", GC_SIZE, 0, 0, false},
    {"RUBY_GC_HEAP_INIT_SLOTS", GC_SIZE, 0, 0, false},
    {"RUBY_GC_HEAP_GROWTH_MAX_SLOTS", GC_SIZE, 0, 0, false},
    {"RUBY_GC_MALLOC_LIMIT", GC_SIZE, 0, 0, false},
    {"RUBY_GC_MALLOC_LIMIT_MAX", GC_SIZE, 0, 0, false},
    {"RUBY_GC_OLDMALLOC_LIMIT", GC_SIZE, 0, 0, false},
    {"RUBY_GC_OLDMALLOC_LIMIT_MAX", GC_SIZE, 0, 0, false},
    {"RUBY_GC_HEAP_GROWTH_FACTOR", GC_DOUBLE, 1.0, 0, false},
    {"RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", GC_DOUBLE, 0.0, 1.0, false},
    {"RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO", GC_DOUBLE, 0.0, 1.0, false},
    {"RUBY_GC_HEAP_FREE_SLOTS_GOAL_RATIO", GC_DOUBLE, 0.0, 1.0, true},
    {"RUBY_GC_HEAP_OLDOBJECT_LIMIT_FACTOR", GC_DOUBLE, 0.0, 0, true},
    {"RUBY_GC_HEAP_REMEMBERED_WB_UNPROTECTED_OBJECTS_LIMIT_RATIO", GC_DOUBLE, 0.0, 0, true},
    {"RUBY_GC_MALLOC_LIMIT_GROWTH_FACTOR", GC_DOUBLE, 1.0, 0, false},
    {"RUBY_GC_OLDMALLOC_LIMIT_GROWTH_FACTOR", GC_DOUBLE, 1.0, 0, false},
};

/* Ruby's defaults, needed for the cross checks when only one ratio is set. */
#define GC_MIN_RATIO_DEFAULT 0.20
#define GC_MAX_RATIO_DEFAULT 0.65

static const struct gc_rule size_pool_rule = {"RUBY_GC_HEAP_n_INIT_SLOTS", GC_SIZE, 0, 0, false};

static const struct gc_rule *gc_rule_find(const char *name)
{
	for (size_t i = 0; i < sizeof gc_rules / sizeof gc_rules[0]; i++)
		if (strcmp(gc_rules[i].name, name) == 0)
			return &gc_rules[i];
	/* RUBY_GC_HEAP_<pool>_INIT_SLOTS, one per size pool (5 on 64-bit) */
	if (strncmp(name, "RUBY_GC_HEAP_", 13) == 0 && name[13] >= '0' && name[13] <= '4' &&
	    strcmp(name + 14, "_INIT_SLOTS") == 0)
		return &size_pool_rule;
	return NULL;
}

/*
 * Ruby's get_envparam_size(): strtoll base 0 (so 0x.. and 0.. octal work), an
 * optional k/m/g (binary) suffix, trailing blanks, and the result must be > 0.
 */
static int gc_size(const char *name, const char *value, struct loc loc, struct diags *d)
{
	char *end;
	errno = 0;
	long long v = strtoll(value, &end, 0);
	long long unit = 1;
	if (errno == ERANGE) {
		diag_at(d, DIAG_ERR, loc, "%s=%s is out of range", name, value);
		return -1;
	}
	switch (*end) {
	case 'k':
	case 'K':
		unit = 1024;
		end++;
		break;
	case 'm':
	case 'M':
		unit = 1024 * 1024;
		end++;
		break;
	case 'g':
	case 'G':
		unit = 1024 * 1024 * 1024;
		end++;
		break;
	default:
		break;
	}
	while (*end && isspace((unsigned char)*end))
		end++;
	if (*end != '\0' || end == value) {
		diag_at(d, DIAG_ERR, loc,
		        "%s=%s is not an integer (digits with an optional k, m or g suffix); "
		        "Ruby would ignore it",
		        name, value);
		return -1;
	}
	if (v > (long long)(SIZE_MAX / 2) / unit || v < -(long long)(SIZE_MAX / 2) / unit) {
		diag_at(d, DIAG_ERR, loc, "%s=%s is out of range; Ruby would ignore it", name,
		        value);
		return -1;
	}
	if (v <= 0) {
		diag_at(d, DIAG_ERR, loc, "%s=%s must be greater than 0; Ruby would ignore it",
		        name, value);
		return -1;
	}
	return 0;
}

/* strtod() over the whole value, as Ruby's get_envparam_double() does (no trailing blanks). */
static int parse_double(const char *value, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(value, &end);
	if (*value == '\0' || *end != '\0' || errno == ERANGE || !isfinite(*out))
		return -1;
	return 0;
}

static void describe_range(const struct gc_rule *r, char *buf, size_t len)
{
	if (r->upper != 0)
		snprintf(buf, len, "greater than %g and at most %g%s", r->lower, r->upper,
		         r->accept_zero ? ", or 0" : "");
	else if (r->accept_zero && r->lower == 0)
		snprintf(buf, len, "0 or greater");
	else
		snprintf(buf, len, "greater than %g", r->lower);
}

static int gc_double(const struct gc_rule *r, const char *name, const char *value, struct loc loc,
                     struct diags *d)
{
	double v;
	if (parse_double(value, &v) == -1) {
		diag_at(d, DIAG_ERR, loc, "%s=%s is not a number; Ruby would ignore it", name,
		        value);
		return -1;
	}
	if (r->accept_zero && v == 0.0)
		return 0;
	if (v <= r->lower || (r->upper != 0 && v > r->upper)) {
		char range[96];
		describe_range(r, range, sizeof range);
		diag_at(d, DIAG_ERR, loc, "%s=%s must be %s; Ruby would ignore it", name, value,
		        range);
		return -1;
	}
	return 0;
}

static int check_gc(const char *name, const char *value, struct loc loc, struct diags *d)
{
	const struct gc_rule *r = gc_rule_find(name);
	if (r == NULL) {
		diag_at(d, DIAG_WARN, loc, "%s is not a Ruby GC setting this build knows", name);
		return 0;
	}
	if (value[0] == '\0') {
		diag_at(d, DIAG_WARN, loc, "%s is empty; Ruby uses its default", name);
		return 0;
	}
	return r->kind == GC_SIZE ? gc_size(name, value, loc, d)
	                          : gc_double(r, name, value, loc, d);
}

/* ---- jemalloc MALLOC_CONF ----------------------------------------------- */

enum je_kind {
	JE_BOOL,
	JE_ENUM,   /* one of `values`, separated by '|' */
	JE_ANY,    /* free-form (file prefixes, size-class specs) */
	JE_SIGNED, /* integer; below min or above max is an error in jemalloc */
	JE_UNSIGNED,
	JE_CLIPPED, /* unsigned; jemalloc clips it into [min, max] */
	JE_FXP,     /* fixed point "N[.N]" */
	JE_STATS,   /* letters of stats_print_opts */
};

struct je_opt {
	const char *key;
	enum je_kind kind;
	long long min, max; /* max 0: unbounded */
	const char *values;
};

/* jemalloc 5.3 src/jemalloc.c malloc_conf_init_helper(). */
static const struct je_opt je_opts[] = {
    {"abort", JE_BOOL, 0, 0, NULL},
    {"abort_conf", JE_BOOL, 0, 0, NULL},
    {"background_thread", JE_BOOL, 0, 0, NULL},
    {"bin_shards", JE_ANY, 0, 0, NULL},
    {"cache_oblivious", JE_BOOL, 0, 0, NULL},
    {"confirm_conf", JE_BOOL, 0, 0, NULL},
    {"dirty_decay_ms", JE_SIGNED, -1, 0, NULL},
    {"dss", JE_ENUM, 0, 0, "disabled|primary|secondary"},
    {"experimental_infallible_new", JE_BOOL, 0, 0, NULL},
    {"hpa", JE_BOOL, 0, 0, NULL},
    {"hpa_dirty_mult", JE_FXP, 0, 0, NULL},
    {"hpa_hugification_threshold", JE_CLIPPED, 0, 0, NULL},
    {"hpa_hugification_threshold_ratio", JE_FXP, 0, 1, NULL},
    {"hpa_hugify_delay_ms", JE_UNSIGNED, 0, 0, NULL},
    {"hpa_min_purge_interval_ms", JE_UNSIGNED, 0, 0, NULL},
    {"hpa_sec_batch_fill_extra", JE_CLIPPED, 0, 0, NULL},
    {"hpa_sec_bytes_after_flush", JE_CLIPPED, 0, 0, NULL},
    {"hpa_sec_max_alloc", JE_CLIPPED, 0, 0, NULL},
    {"hpa_sec_max_bytes", JE_CLIPPED, 0, 0, NULL},
    {"hpa_sec_nshards", JE_CLIPPED, 0, 0, NULL},
    {"hpa_slab_max_alloc", JE_CLIPPED, 0, 0, NULL},
    {"junk", JE_ENUM, 0, 0, "true|false|alloc|free"},
    {"lg_extent_max_active_fit", JE_UNSIGNED, 0, 64, NULL},
    {"lg_prof_interval", JE_SIGNED, -1, 63, NULL},
    {"lg_prof_sample", JE_CLIPPED, 0, 63, NULL},
    {"lg_san_uaf_align", JE_SIGNED, -1, 0, NULL},
    {"lg_tcache_flush_large_div", JE_CLIPPED, 1, 16, NULL},
    {"lg_tcache_flush_small_div", JE_CLIPPED, 1, 16, NULL},
    {"lg_tcache_max", JE_CLIPPED, 0, 0, NULL},
    {"lg_tcache_nslots_mul", JE_SIGNED, -16, 16, NULL},
    {"log", JE_ANY, 0, 0, NULL},
    {"max_background_threads", JE_CLIPPED, 1, 0, NULL},
    {"metadata_thp", JE_ENUM, 0, 0, "disabled|auto|always"},
    {"muzzy_decay_ms", JE_SIGNED, -1, 0, NULL},
    {"mutex_max_spin", JE_SIGNED, -1, 0, NULL},
    {"narenas", JE_UNSIGNED, 1, 0, "default"},
    {"narenas_ratio", JE_FXP, 0, 0, NULL},
    {"oversize_threshold", JE_UNSIGNED, 0, 0, NULL},
    {"percpu_arena", JE_ENUM, 0, 0, "disabled|percpu|phycpu"},
    {"prof", JE_BOOL, 0, 0, NULL},
    {"prof_accum", JE_BOOL, 0, 0, NULL},
    {"prof_active", JE_BOOL, 0, 0, NULL},
    {"prof_final", JE_BOOL, 0, 0, NULL},
    {"prof_gdump", JE_BOOL, 0, 0, NULL},
    {"prof_leak", JE_BOOL, 0, 0, NULL},
    {"prof_leak_error", JE_BOOL, 0, 0, NULL},
    {"prof_log", JE_BOOL, 0, 0, NULL},
    {"prof_prefix", JE_ANY, 0, 0, NULL},
    {"prof_recent_alloc_max", JE_SIGNED, -1, 0, NULL},
    {"prof_stats", JE_BOOL, 0, 0, NULL},
    {"prof_sys_thread_name", JE_BOOL, 0, 0, NULL},
    {"prof_thread_active_init", JE_BOOL, 0, 0, NULL},
    {"prof_time_resolution", JE_ENUM, 0, 0, "default|high"},
    {"prof_unbias", JE_BOOL, 0, 0, NULL},
    {"retain", JE_BOOL, 0, 0, NULL},
    {"san_guard_large", JE_UNSIGNED, 0, 0, NULL},
    {"san_guard_small", JE_UNSIGNED, 0, 0, NULL},
    {"slab_sizes", JE_ANY, 0, 0, NULL},
    {"stats_interval", JE_SIGNED, -1, 0, NULL},
    {"stats_interval_opts", JE_STATS, 0, 0, NULL},
    {"stats_print", JE_BOOL, 0, 0, NULL},
    {"stats_print_opts", JE_STATS, 0, 0, NULL},
    {"tcache", JE_BOOL, 0, 0, NULL},
    {"tcache_gc_delay_bytes", JE_UNSIGNED, 0, 0, NULL},
    {"tcache_gc_incr_bytes", JE_CLIPPED, 1024, 0, NULL},
    {"tcache_max", JE_CLIPPED, 0, 0, NULL},
    {"tcache_nslots_large", JE_CLIPPED, 1, 2048, NULL},
    {"tcache_nslots_small_max", JE_CLIPPED, 1, 2048, NULL},
    {"tcache_nslots_small_min", JE_CLIPPED, 1, 2048, NULL},
    {"thp", JE_ENUM, 0, 0, "default|always|never"},
    {"trust_madvise", JE_BOOL, 0, 0, NULL},
    {"utrace", JE_BOOL, 0, 0, NULL},
    {"xmalloc", JE_BOOL, 0, 0, NULL},
    {"zero", JE_BOOL, 0, 0, NULL},
    {"zero_realloc", JE_ENUM, 0, 0, "alloc|free|abort"},
};

static const struct je_opt *je_find(const char *k, size_t klen)
{
	for (size_t i = 0; i < sizeof je_opts / sizeof je_opts[0]; i++)
		if (strlen(je_opts[i].key) == klen && strncmp(je_opts[i].key, k, klen) == 0)
			return &je_opts[i];
	return NULL;
}

static bool in_list(const char *list, const char *v)
{
	size_t n = strlen(v);
	for (const char *p = list; p && *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && strncmp(p, v, n) == 0)
			return true;
		p = bar ? bar + 1 : NULL;
	}
	return false;
}

/* jemalloc's malloc_strtoumax accepts base prefixes and a sign; the whole value must parse. */
static int je_int(const char *v, long long *out)
{
	char *end;
	if (*v == '\0' || isspace((unsigned char)*v))
		return -1;
	errno = 0;
	*out = strtoll(v, &end, 0);
	return errno || *end != '\0' ? -1 : 0;
}

static bool je_fxp(const char *v)
{
	const char *p = v;
	while (isdigit((unsigned char)*p))
		p++;
	if (p == v)
		return false;
	if (*p == '.') {
		const char *q = ++p;
		while (isdigit((unsigned char)*p))
			p++;
		if (p == q)
			return false;
	}
	return *p == '\0';
}

static int je_value(const struct je_opt *o, const char *v, struct loc loc, struct diags *d)
{
	long long n;
	switch (o->kind) {
	case JE_BOOL:
		if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
			return 0;
		diag_at(d, DIAG_ERR, loc, "MALLOC_CONF: %s:%s must be true or false", o->key, v);
		return -1;
	case JE_ENUM:
		if (in_list(o->values, v))
			return 0;
		diag_at(d, DIAG_ERR, loc, "MALLOC_CONF: %s:%s must be one of %s", o->key, v,
		        o->values);
		return -1;
	case JE_ANY:
		return 0;
	case JE_FXP:
		if (strcmp(o->key, "hpa_dirty_mult") == 0 && strcmp(v, "-1") == 0)
			return 0;
		if (je_fxp(v) && (o->max == 0 || strtod(v, NULL) <= (double)o->max))
			return 0;
		diag_at(d, DIAG_ERR, loc, "MALLOC_CONF: %s:%s must be a decimal like 0.5%s", o->key,
		        v, o->max ? " (at most 1)" : "");
		return -1;
	case JE_STATS:
		for (const char *p = v; *p; p++)
			if (strchr("Jgmdablxeh", *p) == NULL) {
				diag_at(d, DIAG_ERR, loc,
				        "MALLOC_CONF: %s:%s: '%c' is not a stats option letter "
				        "(J g m d a b l x e h)",
				        o->key, v, *p);
				return -1;
			}
		return 0;
	case JE_SIGNED:
	case JE_UNSIGNED:
	case JE_CLIPPED:
		if (o->values && in_list(o->values, v))
			return 0;
		if (je_int(v, &n) == -1 || (o->kind != JE_SIGNED && (v[0] == '-' || n < 0))) {
			diag_at(d, DIAG_ERR, loc, "MALLOC_CONF: %s:%s must be %s integer", o->key,
			        v, o->kind == JE_SIGNED ? "an" : "a non-negative");
			return -1;
		}
		if (n < o->min || (o->max != 0 && n > o->max)) {
			char range[64];
			if (o->max != 0)
				snprintf(range, sizeof range, "between %lld and %lld", o->min,
				         o->max);
			else
				snprintf(range, sizeof range, "%lld or greater", o->min);
			if (o->kind == JE_CLIPPED) {
				diag_at(d, DIAG_WARN, loc,
				        "MALLOC_CONF: %s:%s is outside %s; jemalloc clips it",
				        o->key, v, range);
				return 0;
			}
			diag_at(d, DIAG_ERR, loc, "MALLOC_CONF: %s:%s must be %s", o->key, v,
			        range);
			return -1;
		}
		return 0;
	}
	return 0;
}

/*
 * Ask the jemalloc that services preload: /bin/true run with only
 * LD_PRELOAD=<it> and MALLOC_CONF=abort_conf:true,<value> (fixed argv, no
 * shell) aborts with "<jemalloc>: Invalid conf pair: k:v" on its stderr for
 * anything this build of jemalloc refuses. 1 accepted, 0 refused (its first
 * complaint in msg), -1 when it could not be asked. Cached per value: a
 * run checks every service's env.
 */
#define JE_CACHE 16
static int je_ask(const char *value, char *msg, size_t len)
{
	static struct {
		char *value;
		int rc;
		char msg[160];
	} cache[JE_CACHE];
	static size_t ncache;
	for (size_t i = 0; i < ncache; i++)
		if (strcmp(cache[i].value, value) == 0) {
			strlcpy(msg, cache[i].msg, len);
			return cache[i].rc;
		}
	if (access(GITLAB_CTL_JEMALLOC, R_OK) == -1 || access("/bin/true", X_OK) == -1)
		return -1;
	char *env[3] = {NULL, NULL, NULL};
	char *argv[] = {"true", NULL};
	int fd = memfd_create("jemalloc-conf", MFD_CLOEXEC), rc = -1;
	if (fd == -1 || asprintf(&env[0], "LD_PRELOAD=%s", GITLAB_CTL_JEMALLOC) == -1 ||
	    asprintf(&env[1], "MALLOC_CONF=abort_conf:true,%s", value) == -1)
		goto out;
	struct spawn sp = {.envp = env, .out = SPAWN_NULL, .err = fd, .deadline = mono_ms() + 5000};
	int st = spawn_wait("/bin/true", argv, &sp);
	char buf[1024];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	const char *je = strstr(buf, "<jemalloc>: ");
	if (st == 0 && strstr(buf, "ld.so") == NULL) {
		rc = 1; /* ld.so complaining means jemalloc was not loaded: not an answer */
		msg[0] = '\0';
	} else if (st != -1 && je != NULL) {
		rc = 0;
		je += strlen("<jemalloc>: ");
		snprintf(msg, len, "%.*s", (int)strcspn(je, "\n"), je);
	}
	if (rc != -1 && ncache < JE_CACHE && (cache[ncache].value = strdup(value)) != NULL) {
		cache[ncache].rc = rc;
		strlcpy(cache[ncache++].msg, msg, sizeof cache[0].msg);
	}
out:
	if (fd != -1)
		close(fd);
	free(env[0]);
	free(env[1]);
	return rc;
}

/*
 * The jemalloc that will be preloaded is the authority on its options; the
 * table above (jemalloc 5.3's) is used only when it cannot be run.
 */
static int check_malloc_conf_table(const char *value, struct loc loc, struct diags *d);

static int check_malloc_conf(const char *value, struct loc loc, struct diags *d)
{
	char msg[160];
	if (value[0] == '\0')
		return 0;
	int ok = je_ask(value, msg, sizeof msg);
	if (ok == 1)
		return 0;
	if (ok == 0) {
		const char *pair = "Invalid conf pair: ";
		if (strncmp(msg, pair, strlen(pair)) == 0)
			diag_at(d, DIAG_ERR, loc,
			        "MALLOC_CONF: unknown jemalloc option '%.*s' (%s says: %s)",
			        (int)strcspn(msg + strlen(pair), ":"), msg + strlen(pair),
			        GITLAB_CTL_JEMALLOC, msg);
		else
			diag_at(d, DIAG_ERR, loc, "MALLOC_CONF: %s refuses it: %s",
			        GITLAB_CTL_JEMALLOC, msg);
		return -1;
	}
	return check_malloc_conf_table(value, loc, d);
}

/* jemalloc's malloc_conf_next(): key chars [A-Za-z0-9_], ':', value up to ',' */
static int check_malloc_conf_table(const char *value, struct loc loc, struct diags *d)
{
	int rc = 0;
	const char *p = value;
	while (*p) {
		const char *k = p;
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		size_t klen = (size_t)(p - k);
		if (*p != ':' || klen == 0) {
			if (*p == '\0')
				diag_at(d, DIAG_ERR, loc,
				        "MALLOC_CONF=%s: '%.*s' has no value (write key:value)",
				        value, (int)klen, k);
			else
				diag_at(d, DIAG_ERR, loc,
				        "MALLOC_CONF=%s: malformed at offset %zu: expected "
				        "key:value[,...]",
				        value, (size_t)(p - value));
			return -1;
		}
		const char *v = ++p;
		while (*p && *p != ',')
			p++;
		char *val = strndup(v, (size_t)(p - v));
		if (val == NULL)
			abort();
		const struct je_opt *o = je_find(k, klen);
		if (o == NULL) {
			diag_at(d, DIAG_ERR, loc, "MALLOC_CONF: unknown jemalloc option '%.*s'",
			        (int)klen, k);
			rc = -1;
		} else if (je_value(o, val, loc, d) == -1) {
			rc = -1;
		}
		free(val);
		if (*p == ',') {
			p++;
			if (*p == '\0') {
				diag_at(d, DIAG_ERR, loc, "MALLOC_CONF=%s ends with a comma",
				        value);
				return -1;
			}
		}
	}
	return rc;
}

/* ---- LD_PRELOAD --------------------------------------------------------- */

/* ld.so splits on spaces and colons and skips what it cannot open. */
static int check_preload(const char *value, struct loc loc, struct diags *d)
{
	char *copy = strdup(value), *save = NULL;
	int rc = 0;
	if (copy == NULL)
		abort();
	for (char *e = strtok_r(copy, " :", &save); e; e = strtok_r(NULL, " :", &save)) {
		struct stat st;
		if (strchr(e, '$') != NULL || strchr(e, '/') == NULL)
			continue; /* $LIB tokens and bare names are resolved by ld.so's search */
		if (e[0] != '/') {
			diag_at(d, DIAG_WARN, loc,
			        "LD_PRELOAD: %s is relative to the service's working directory", e);
			continue;
		}
		if (stat(e, &st) == -1) {
			diag_at(d, DIAG_ERR, loc, "LD_PRELOAD: %s: %s", e, strerror(errno));
			rc = -1;
		} else if (!S_ISREG(st.st_mode)) {
			diag_at(d, DIAG_ERR, loc, "LD_PRELOAD: %s is not a file", e);
			rc = -1;
		}
	}
	free(copy);
	return rc;
}

int envcheck_var(const char *name, const char *value, struct loc loc, struct diags *d)
{
	if (!name_env_ok(name)) {
		diag_at(d, DIAG_ERR, loc,
		        "'%s' is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)",
		        name);
		return -1;
	}
	size_t len = strlen(name) + 1 + strlen(value) + 1;
	if (len > ENVCHECK_MAX_ARG_STRLEN) {
		diag_at(d, DIAG_ERR, loc,
		        "%s: the variable is %zu bytes as NAME=value; execve refuses more than %d "
		        "(MAX_ARG_STRLEN), so the service could never start",
		        name, len, ENVCHECK_MAX_ARG_STRLEN);
		return -1;
	}
	/*
	 * Newlines are fine: our envdir files hold the value byte for byte and
	 * exec reads them whole (unlike runit's envdir, which stops at one).
	 */
	if (strncmp(name, "RUBY_GC_", 8) == 0)
		return check_gc(name, value, loc, d);
	if (strcmp(name, "MALLOC_CONF") == 0)
		return check_malloc_conf(value, loc, d);
	if (strcmp(name, "LD_PRELOAD") == 0)
		return check_preload(value, loc, d);
	return 0;
}

/* A ratio as Ruby would end up using it: the valid value, else its default. */
static bool ratio(const struct kvlist *env, const char *name, double *v)
{
	const char *s = kv_get(env, name);
	const struct gc_rule *r = gc_rule_find(name);
	if (s == NULL || parse_double(s, v) == -1)
		return false;
	if (r->accept_zero && *v == 0.0)
		return true;
	return !(*v <= r->lower || (r->upper != 0 && *v > r->upper));
}

#define MIN_RATIO  "RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO"
#define MAX_RATIO  "RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO"
#define GOAL_RATIO "RUBY_GC_HEAP_FREE_SLOTS_GOAL_RATIO"

/*
 * The whole environment as execve sees it: at most ENVDIR_MAX_VARS variables
 * (what `gitlab-ctl exec` reads from an envdir), and strings plus pointers
 * within the kernel's ARG_MAX less a reserve for argv and the base env.
 */
static int check_execve_size(const struct kvlist *env, envcheck_locfn where, void *ctx,
                             struct diags *d)
{
	if (env->n + ENVCHECK_BASE_VARS > ENVDIR_MAX_VARS) {
		diag_at(d, DIAG_ERR, where(env->v[env->n - 1].name, ctx),
		        "%zu environment variables: with the base environment that is more than "
		        "the %d a service can be started with",
		        env->n, ENVDIR_MAX_VARS);
		return -1;
	}
	long arg_max = sysconf(_SC_ARG_MAX);
	if (arg_max <= 0)
		arg_max = ENVCHECK_MAX_ARG_STRLEN;
	size_t total = 0, big = 0;
	for (size_t i = 0; i < env->n; i++) {
		size_t len = strlen(env->v[i].name) + strlen(env->v[i].value) + 2;
		total += len + sizeof(char *);
		if (len > strlen(env->v[big].name) + strlen(env->v[big].value) + 2)
			big = i;
	}
	if (env->n > 0 && total + ENVCHECK_ARGV_RESERVE > (size_t)arg_max) {
		diag_at(d, DIAG_ERR, where(env->v[big].name, ctx),
		        "the environment is %zu bytes (largest: %s); execve accepts %ld bytes of "
		        "arguments and environment together (ARG_MAX)",
		        total, env->v[big].name, arg_max);
		return -1;
	}
	return 0;
}

int envcheck_env_at(const struct kvlist *env, envcheck_locfn where, void *ctx, struct diags *d)
{
	double min = GC_MIN_RATIO_DEFAULT, max = GC_MAX_RATIO_DEFAULT, goal;
	bool have_min = ratio(env, MIN_RATIO, &min);
	bool have_max = ratio(env, MAX_RATIO, &max);
	int rc = check_execve_size(env, where, ctx, d);

	/* Ruby reads MAX with MIN as its exclusive lower bound, GOAL within (MIN, MAX]. */
	if (have_max && max <= min) {
		diag_at(d, DIAG_ERR, where(MAX_RATIO, ctx),
		        "%s=%s must be greater than %s (%g); Ruby would ignore it", MAX_RATIO,
		        kv_get(env, MAX_RATIO), MIN_RATIO, min);
		max = GC_MAX_RATIO_DEFAULT;
		rc = -1;
	} else if (have_min && !have_max && min >= max) {
		diag_at(d, DIAG_ERR, where(MIN_RATIO, ctx),
		        "%s=%s must be less than %s, which defaults to %g: set both", MIN_RATIO,
		        kv_get(env, MIN_RATIO), MAX_RATIO, max);
		rc = -1;
	}
	if (ratio(env, GOAL_RATIO, &goal) && goal != 0.0 && (goal <= min || goal > max)) {
		diag_at(d, DIAG_ERR, where(GOAL_RATIO, ctx),
		        "%s=%s must be 0 or greater than %s (%g) and at most %s (%g); "
		        "Ruby would ignore it",
		        GOAL_RATIO, kv_get(env, GOAL_RATIO), MIN_RATIO, min, MAX_RATIO, max);
		rc = -1;
	}
	return rc;
}

int envcheck_argv(char *const *argv, struct loc loc, struct diags *d)
{
	size_t total = 0;
	for (size_t i = 0; argv[i] != NULL; i++) {
		size_t len = strlen(argv[i]) + 1;
		if (len > ENVCHECK_MAX_ARG_STRLEN) {
			diag_at(d, DIAG_ERR, loc,
			        "argument %zu of the command is %zu bytes; execve refuses one over "
			        "%d (MAX_ARG_STRLEN)",
			        i, len - 1, ENVCHECK_MAX_ARG_STRLEN - 1);
			return -1;
		}
		total += len + sizeof(char *);
	}
	if (total > ENVCHECK_ARGV_MAX) {
		diag_at(d, DIAG_ERR, loc,
		        "the command line is %zu bytes; at most %d fit beside the environment "
		        "(ARG_MAX)",
		        total, ENVCHECK_ARGV_MAX);
		return -1;
	}
	return 0;
}

static struct loc same_loc(const char *name, void *ctx)
{
	(void)name;
	return *(const struct loc *)ctx;
}

int envcheck_env(const struct kvlist *env, struct loc loc, struct diags *d)
{
	return envcheck_env_at(env, same_loc, &loc, d);
}
