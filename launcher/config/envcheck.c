/*
 * Validate env values that their consumers would silently ignore or misread:
 * Ruby ignores a bad RUBY_GC_* value unless run with -W (gc.c
 * get_envparam_size / get_envparam_double), jemalloc prints a one-line
 * complaint into the service log and goes on, ld.so skips a missing
 * LD_PRELOAD file, and Go ignores a bad GOGC or GOMAXPROCS. Each rule here mirrors what the
 * consumer accepts so that gitlab-ctl rejects exactly the values that would not take effect.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/ascii.h"
#include "build_config.h"
#include "lib/alloc.h"
#include "lib/grow.h"
#include "lib/clock.h"
#include "config/envcheck.h"
#include "lib/envdir.h"
#include "lib/spawn.h"
#include "lib/names.h"
#include "lib/buf.h"
#include "lib/readfile.h"

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
	while (*end && ascii_space(*end))
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

/*
 * The jemalloc that will be preloaded is the only authority on its options (no copied
 * table to drift from it): /bin/true runs with only LD_PRELOAD=<it> and
 * MALLOC_CONF=abort_conf:true,<value> (fixed argv, no shell), and jemalloc aborts with
 * "<jemalloc>: Invalid conf pair: k:v" (or "Malformed conf string", ...) on its stderr for
 * anything it refuses.
 */
void envcheck_init(struct envcheck *ec, const char *jemalloc)
{
	memset(ec, 0, sizeof *ec);
	ec->jemalloc = jemalloc != NULL ? jemalloc : GITLAB_CTL_JEMALLOC;
	ec->cache_dir = -1;
}

enum je_answer { JE_ACCEPTED, JE_REFUSED, JE_UNKNOWN };

#define JE_CACHE     "envcheck-jemalloc"
#define JE_CACHE_MAX (64 * 1024)

/*
 * The jemalloc file's identity: a replaced or rebuilt library invalidates the cache. The
 * ctime too, which no one can set back: a library rewritten in place with its mtime restored
 * is asked again.
 */
static int je_key(const char *je_path, char *out, size_t len)
{
	struct stat st;
	if (stat(je_path, &st) == -1)
		return -1;
	int n = snprintf(out, len, "%ju %ju %jd %jd.%09ld %jd.%09ld", (uintmax_t)st.st_dev,
	                 (uintmax_t)st.st_ino, (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec,
	                 st.st_mtim.tv_nsec, (intmax_t)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static void je_remember(struct envcheck *ec, const char *value)
{
	grow(&ec->seen, &ec->cap, ec->nseen + 1, sizeof *ec->seen, 8);
	ec->seen[ec->nseen++] =
	    (struct envcheck_answer){.value = xstrdup(value), .answer = (int)JE_ACCEPTED};
}

void envcheck_cache(struct envcheck *ec, const char *var_dir, bool write)
{
	if (geteuid() != 0 || var_dir == NULL || var_dir[0] == '\0')
		return;
	int dfd = open(var_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (dfd == -1)
		return;
	if (fstat(dfd, &st) == -1 || st.st_uid != 0 || (st.st_mode & 022) != 0) {
		close(dfd);
		return;
	}
	char key[128];
	int fd = je_key(ec->jemalloc, key, sizeof key) == -1
	             ? -1
	             : openat(dfd, JE_CACHE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (write)
		ec->cache_dir = dfd; /* envcheck_free saves there */
	else
		close(dfd);
	if (fd == -1)
		return;
	struct buf b = {0};
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
	    (st.st_mode & 07777) == 0600 && readfile_fd(fd, &b, JE_CACHE_MAX) == 0 && b.len > 0) {
		char *text = xstrndup(b.p, b.len);
		char *save = NULL;
		char *line = strtok_r(text, "\n", &save);
		if (line != NULL && strcmp(line, key) == 0)
			while ((line = strtok_r(NULL, "\n", &save)) != NULL)
				je_remember(ec, line);
		free(text);
	}
	buf_free(&b);
	close(fd);
}

/* Rewrites the cache through a temporary file and rename: a reader sees old or new, whole. */
static void je_cache_save(struct envcheck *ec)
{
	char key[128];
	if (ec->cache_dir == -1 || !ec->cache_dirty || je_key(ec->jemalloc, key, sizeof key) == -1)
		return;
	const char *tmp = JE_CACHE ".tmp";
	(void)unlinkat(ec->cache_dir, tmp, 0);
	int fd =
	    openat(ec->cache_dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		return;
	FILE *fp = fdopen(fd, "w");
	if (fp == NULL) {
		close(fd);
		(void)unlinkat(ec->cache_dir, tmp, 0);
		return;
	}
	fprintf(fp, "%s\n", key);
	for (size_t i = 0; i < ec->nseen; i++)
		if (ec->seen[i].answer == (int)JE_ACCEPTED &&
		    strchr(ec->seen[i].value, '\n') == NULL)
			fprintf(fp, "%s\n", ec->seen[i].value);
	bool ok = fflush(fp) == 0 && fsync(fileno(fp)) == 0;
	ok = fclose(fp) == 0 && ok;
	if (!ok || renameat(ec->cache_dir, tmp, ec->cache_dir, JE_CACHE) == -1)
		(void)unlinkat(ec->cache_dir, tmp, 0);
}

void envcheck_free(struct envcheck *ec)
{
	je_cache_save(ec);
	if (ec->cache_dir != -1)
		close(ec->cache_dir);
	ec->cache_dir = -1;
	for (size_t i = 0; i < ec->nseen; i++)
		free(ec->seen[i].value);
	free(ec->seen);
	ec->seen = NULL;
	ec->nseen = ec->cap = 0;
}

/* One run: its answer, with jemalloc's first complaint, or why there was none, in msg. */
static enum je_answer je_run(const char *je_path, const char *value, char *msg, size_t len)
{
	if (access(je_path, R_OK) == -1) {
		snprintf(msg, len, "cannot read %s: %s", je_path, strerror(errno));
		return JE_UNKNOWN;
	}
	char *env[] = {xasprintf("LD_PRELOAD=%s", je_path),
	               xasprintf("MALLOC_CONF=abort_conf:true,%s", value), NULL};
	char *argv[] = {"true", NULL};
	enum je_answer a = JE_UNKNOWN;
	int fd = memfd_create("jemalloc-conf", MFD_CLOEXEC);
	struct spawn sp = {.envp = env, .out = SPAWN_NULL, .err = fd, .deadline = mono_ms() + 5000};
	int st = fd == -1 ? -1 : spawn_wait("/bin/true", argv, &sp);
	char buf[1024];
	ssize_t n = st == -1 ? -1 : pread(fd, buf, sizeof buf - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	const char *je = strstr(buf, "<jemalloc>: ");
	if (st == -1) {
		snprintf(msg, len, "cannot run /bin/true with it: %s", strerror(errno));
	} else if (strstr(buf, "ld.so") != NULL) { /* jemalloc was not loaded */
		snprintf(msg, len, "ld.so cannot preload it: %.*s", (int)strcspn(buf, "\n"), buf);
	} else if (st == 0) {
		a = JE_ACCEPTED;
		msg[0] = '\0';
	} else if (je != NULL) {
		a = JE_REFUSED;
		je += strlen("<jemalloc>: ");
		snprintf(msg, len, "%.*s", (int)strcspn(je, "\n"), je);
	} else {
		snprintf(msg, len, "/bin/true with it exited %d without a word from jemalloc", st);
	}
	if (fd != -1)
		close(fd);
	free(env[0]);
	free(env[1]);
	return a;
}

/* Asked once per value in a run: a run checks every service's env. */
static enum je_answer je_ask(struct envcheck *ec, const char *value, char *msg, size_t len)
{
	for (size_t i = 0; i < ec->nseen; i++)
		if (strcmp(ec->seen[i].value, value) == 0) {
			strlcpy(msg, ec->seen[i].msg, len);
			return ec->seen[i].answer;
		}
	enum je_answer a = je_run(ec->jemalloc, value, msg, len);
	ec->cache_dirty = ec->cache_dirty || a == JE_ACCEPTED;
	grow(&ec->seen, &ec->cap, ec->nseen + 1, sizeof *ec->seen, 8);
	ec->seen[ec->nseen] = (struct envcheck_answer){.value = xstrdup(value), .answer = (int)a};
	strlcpy(ec->seen[ec->nseen++].msg, msg, sizeof ec->seen[0].msg);
	return a;
}

static int check_malloc_conf(struct envcheck *ec, const char *value, struct loc loc,
                             struct diags *d)
{
	char msg[sizeof ec->seen[0].msg];
	if (value[0] == '\0')
		return 0;
	switch (je_ask(ec, value, msg, sizeof msg)) {
	case JE_ACCEPTED:
		return 0;
	case JE_UNKNOWN:
		diag_at(
		    d, DIAG_WARN, loc,
		    "MALLOC_CONF is not checked: %s (jemalloc judges it when the service starts "
		    "and logs what it refuses)",
		    msg);
		return 0;
	case JE_REFUSED:
		break;
	}
	const char *pair = "Invalid conf pair: ";
	if (strncmp(msg, pair, strlen(pair)) == 0)
		diag_at(
		    d, DIAG_ERR, loc, "MALLOC_CONF: unknown jemalloc option '%.*s' (%s says: %s)",
		    (int)strcspn(msg + strlen(pair), ":"), msg + strlen(pair), ec->jemalloc, msg);
	else
		diag_at(d, DIAG_ERR, loc, "MALLOC_CONF: %s refuses it: %s", ec->jemalloc, msg);
	return -1;
}

/* ---- Go runtime --------------------------------------------------------- */

/*
 * The Go runtime's atoi (runtime/string.go) over s[0, n): an optional '-', decimal digits
 * only, within [lo, hi]. No '+', no blanks, no suffix.
 */
static bool go_atoi(const char *s, size_t n, long long lo, long long hi)
{
	size_t i = n > 0 && s[0] == '-';
	if (i == n)
		return false;
	long long v = 0;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX - (s[i] - '0')) / 10)
			return false;
		v = v * 10 + (s[i] - '0');
	}
	if (s[0] == '-')
		v = -v;
	return v >= lo && v <= hi;
}

/*
 * Go's parseByteCount (runtime/string.go, what GOMEMLIMIT is read with): digits with no
 * suffix, "B", or "KiB", "MiB", "GiB", "TiB"; the bytes fit an int64. A value it refuses
 * makes the runtime throw at start, so the service would never run.
 */
static bool go_byte_count(const char *s)
{
	static const char units[] = "KMGT";
	size_t n = strlen(s), shift = 0;
	if (n >= 3 && strcmp(s + n - 2, "iB") == 0) {
		const char *u = memchr(units, s[n - 3], sizeof units - 1);
		if (u == NULL)
			return false;
		shift = 10 * (size_t)(u - units + 1);
		n -= 3;
	} else if (n >= 1 && s[n - 1] == 'B') {
		n -= 1;
	}
	return go_atoi(s, n, 0, INT64_MAX >> shift);
}

/*
 * GOGC, GOMEMLIMIT, GOMAXPROCS as the Go runtime reads them (mgcpacer.go readGOGC and
 * readGOMEMLIMIT, proc.go schedinit): a GOGC or GOMAXPROCS it cannot parse is ignored
 * without a word, a GOMEMLIMIT it cannot parse stops the program at start.
 */
static int check_go(const char *name, const char *value, struct loc loc, struct diags *d)
{
	if (strcmp(name, "GOMEMLIMIT") == 0) {
		if (value[0] == '\0' || strcmp(value, "off") == 0 || go_byte_count(value))
			return 0;
		diag_at(d, DIAG_ERR, loc,
		        "GOMEMLIMIT=%s is not a size Go reads (bytes, or an integer with B, KiB, "
		        "MiB, GiB or TiB; or off); the service would stop at start",
		        value);
		return -1;
	}
	if (value[0] == '\0') {
		diag_at(d, DIAG_WARN, loc, "%s is empty; Go uses its default", name);
		return 0;
	}
	if (strcmp(name, "GOGC") == 0) {
		if (strcmp(value, "off") == 0 ||
		    go_atoi(value, strlen(value), INT32_MIN, INT32_MAX))
			return 0;
		diag_at(d, DIAG_ERR, loc,
		        "GOGC=%s is not an integer (a percentage) or off; Go would ignore it",
		        value);
		return -1;
	}
	if (go_atoi(value, strlen(value), 1, INT32_MAX))
		return 0;
	diag_at(d, DIAG_ERR, loc, "GOMAXPROCS=%s is not a positive integer; Go would ignore it",
	        value);
	return -1;
}

/* ---- LD_PRELOAD --------------------------------------------------------- */

/* ld.so splits on spaces and colons and skips what it cannot open. */
static int check_preload(const char *value, struct loc loc, struct diags *d)
{
	char *copy = xstrdup(value), *save = NULL;
	int rc = 0;
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

int envcheck_var(struct envcheck *ec, const char *name, const char *value, struct loc loc,
                 struct diags *d)
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
		return check_malloc_conf(ec, value, loc, d);
	if (strcmp(name, "LD_PRELOAD") == 0)
		return check_preload(value, loc, d);
	if (strcmp(name, "GOGC") == 0 || strcmp(name, "GOMEMLIMIT") == 0 ||
	    strcmp(name, "GOMAXPROCS") == 0)
		return check_go(name, value, loc, d);
	return 0;
}

/* A ratio as Ruby would end up using it: the valid value, else its default. */
static bool ratio(const struct kvlist *env, const char *name, double *v)
{
	const char *s = kv_get(env, name);
	const struct gc_rule *r = gc_rule_find(name);
	if (r == NULL || s == NULL || parse_double(s, v) == -1)
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

/* A catalog default's position (a line, no column), not one gitlab.rb wrote. */
static bool is_default(struct loc l)
{
	return l.col == 0;
}

int envcheck_env_at(const struct kvlist *env, envcheck_locfn where, void *ctx, struct diags *d)
{
	double min = GC_MIN_RATIO_DEFAULT, max = GC_MAX_RATIO_DEFAULT, goal;
	bool have_min = ratio(env, MIN_RATIO, &min);
	bool have_max = ratio(env, MAX_RATIO, &max);
	int rc = check_execve_size(env, where, ctx, d);

	/* Ruby reads MAX with MIN as its exclusive lower bound, GOAL within (MIN, MAX]. */
	if (have_max && have_min && max <= min && is_default(where(MAX_RATIO, ctx)) &&
	    !is_default(where(MIN_RATIO, ctx))) {
		diag_at(d, DIAG_ERR, where(MIN_RATIO, ctx),
		        "%s=%s must be less than %s, which is %s here by default: set both",
		        MIN_RATIO, kv_get(env, MIN_RATIO), MAX_RATIO, kv_get(env, MAX_RATIO));
		max = GC_MAX_RATIO_DEFAULT;
		rc = -1;
	} else if (have_max && max <= min) {
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

int envcheck_argv(char *const *argv, const struct loc *locs, struct diags *d)
{
	size_t total = 0, longest = 0, longest_len = 0;
	for (size_t i = 0; argv[i] != NULL; i++) {
		size_t len = strlen(argv[i]) + 1;
		if (len > longest_len) {
			longest = i;
			longest_len = len;
		}
		if (len > ENVCHECK_MAX_ARG_STRLEN) {
			diag_at(d, DIAG_ERR, locs[i],
			        "argument %zu of the command is %zu bytes; execve refuses one over "
			        "%d (MAX_ARG_STRLEN)",
			        i, len - 1, ENVCHECK_MAX_ARG_STRLEN - 1);
			return -1;
		}
		total += len + sizeof(char *);
	}
	if (total > ENVCHECK_ARGV_MAX) {
		diag_at(d, DIAG_ERR, locs[longest],
		        "the command line is %zu bytes (argument %zu, the longest, is %zu); at "
		        "most %d fit beside the environment (ARG_MAX)",
		        total, longest, longest_len - 1, ENVCHECK_ARGV_MAX);
		return -1;
	}
	return 0;
}
