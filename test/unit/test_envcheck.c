/* envcheck: every env validation rule, with valid and invalid values. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "build_config.h"
#include "config/envcheck.h"
#include "lib/names.h"

static struct src test_src = {"gitlab.rb", NULL, 0, NULL, 0};
static const struct loc L = {&test_src, 7, 3};

/* Every variable blamed at L. */
static struct loc at_L(const char *name, void *ctx)
{
	(void)name;
	(void)ctx;
	return L;
}
/* The checks' shared answers, as one run of attrs has them. */
static struct envcheck ec;

/* Check one variable; returns the number of errors and, via warns, warnings. */
static size_t check(const char *name, const char *value, size_t *warns)
{
	struct diags d;
	diags_init(&d);
	int rc = envcheck_var(&ec, name, value, L, &d);
	size_t nerr = d.nerr;
	if (warns)
		*warns = d.n - d.nerr;
	for (size_t i = 0; i < d.n; i++) {
		/* every diagnostic is tied to the value's location */
		assert_string_equal(d.v[i].file, "gitlab.rb");
		assert_int_equal(d.v[i].line, 7);
		assert_int_equal(d.v[i].col, 3);
	}
	assert_int_equal(rc, nerr ? -1 : 0);
	diags_free(&d);
	return nerr;
}

#define OK(n, v)  assert_int_equal(check(n, v, NULL), 0)
#define BAD(n, v) assert_int_not_equal(check(n, v, NULL), 0)
#define WARN_ONLY(n, v)                                                                            \
	do {                                                                                       \
		size_t w_;                                                                         \
		assert_int_equal(check(n, v, &w_), 0);                                             \
		assert_int_equal(w_, 1);                                                           \
	} while (0)

static void test_names(void **state)
{
	(void)state;
	assert_true(name_env_ok("PATH"));
	assert_true(name_env_ok("_X1"));
	assert_true(name_env_ok("lower_case"));
	assert_false(name_env_ok("1ABC"));
	assert_false(name_env_ok("A-B"));
	assert_false(name_env_ok("A B"));
	assert_false(name_env_ok("A=B"));
	assert_false(name_env_ok(""));
	assert_false(name_env_ok("É"));
	OK("FOO", "anything at all");
	BAD("FOO-BAR", "x");
	BAD("9LIVES", "x");
	OK("FOO", "two\nlines: the envdir keeps them byte for byte");
}

static void test_gc_sizes(void **state)
{
	(void)state;
	OK("RUBY_GC_HEAP_INIT_SLOTS", "80000");
	OK("RUBY_GC_HEAP_INIT_SLOTS", "600k");
	OK("RUBY_GC_MALLOC_LIMIT", "64M");
	OK("RUBY_GC_MALLOC_LIMIT_MAX", "1g");
	OK("RUBY_GC_OLDMALLOC_LIMIT", "0x1000"); /* strtoll base 0, as Ruby */
	OK("RUBY_GC_OLDMALLOC_LIMIT_MAX", "128m ");
	OK("RUBY_GC_HEAP_FREE_SLOTS", "4096");
	OK("RUBY_GC_HEAP_GROWTH_MAX_SLOTS", "300000");
	OK("RUBY_GC_HEAP_0_INIT_SLOTS", "10000"); /* Ruby 3.3+ per size pool */
	OK("RUBY_GC_HEAP_4_INIT_SLOTS", "10k");
	BAD("RUBY_GC_HEAP_INIT_SLOTS", "80_000");
	BAD("RUBY_GC_HEAP_INIT_SLOTS", "1.5");
	BAD("RUBY_GC_HEAP_INIT_SLOTS", "abc");
	BAD("RUBY_GC_HEAP_INIT_SLOTS", "10kb");
	BAD("RUBY_GC_HEAP_INIT_SLOTS", "0");
	BAD("RUBY_GC_HEAP_INIT_SLOTS", "-5");
	BAD("RUBY_GC_HEAP_INIT_SLOTS", "k");
	BAD("RUBY_GC_MALLOC_LIMIT", "99999999999999999999");
	BAD("RUBY_GC_MALLOC_LIMIT", "9999999999999g");
	WARN_ONLY("RUBY_GC_HEAP_INIT_SLOTS", "");
	WARN_ONLY("RUBY_GC_HEAP_5_INIT_SLOTS", "1");
	WARN_ONLY("RUBY_GC_NO_SUCH_THING", "1");
}

static void test_gc_doubles(void **state)
{
	(void)state;
	OK("RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", "0.055");
	OK("RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", "1");
	BAD("RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", "0");
	BAD("RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", "1.5");
	BAD("RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", "-0.1");
	BAD("RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", "0.5 "); /* strtod must consume all */
	BAD("RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", "half");
	BAD("RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", "nan");
	OK("RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO", "0.111");
	BAD("RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO", "2");
	OK("RUBY_GC_HEAP_FREE_SLOTS_GOAL_RATIO", "0"); /* 0 means: use the growth factor */
	OK("RUBY_GC_HEAP_FREE_SLOTS_GOAL_RATIO", "0.4");
	BAD("RUBY_GC_HEAP_FREE_SLOTS_GOAL_RATIO", "1.01");
	OK("RUBY_GC_HEAP_GROWTH_FACTOR", "1.1");
	BAD("RUBY_GC_HEAP_GROWTH_FACTOR", "1");
	BAD("RUBY_GC_HEAP_GROWTH_FACTOR", "0.9");
	OK("RUBY_GC_HEAP_OLDOBJECT_LIMIT_FACTOR", "0");
	OK("RUBY_GC_HEAP_OLDOBJECT_LIMIT_FACTOR", "2.0");
	BAD("RUBY_GC_HEAP_OLDOBJECT_LIMIT_FACTOR", "-1");
	OK("RUBY_GC_MALLOC_LIMIT_GROWTH_FACTOR", "1.4");
	BAD("RUBY_GC_MALLOC_LIMIT_GROWTH_FACTOR", "1.0");
	OK("RUBY_GC_OLDMALLOC_LIMIT_GROWTH_FACTOR", "1.2");
	BAD("RUBY_GC_OLDMALLOC_LIMIT_GROWTH_FACTOR", "x");
	OK("RUBY_GC_HEAP_REMEMBERED_WB_UNPROTECTED_OBJECTS_LIMIT_RATIO", "0.01");
	BAD("RUBY_GC_HEAP_REMEMBERED_WB_UNPROTECTED_OBJECTS_LIMIT_RATIO", "-0.01");
}

/* Go's own parsers: GOGC and GOMAXPROCS are ignored when unreadable, GOMEMLIMIT aborts. */
static void test_go_runtime(void **state)
{
	(void)state;
	OK("GOGC", "50");
	OK("GOGC", "0");
	OK("GOGC", "off");
	OK("GOGC", "-1"); /* negative is off, as Go reads it */
	BAD("GOGC", "50%");
	BAD("GOGC", "+50");
	BAD("GOGC", " 50");
	BAD("GOGC", "fifty");
	BAD("GOGC", "OFF");
	BAD("GOGC", "4294967296"); /* beyond int32 */
	WARN_ONLY("GOGC", "");
	OK("GOMEMLIMIT", "33554432");
	OK("GOMEMLIMIT", "32MiB");
	OK("GOMEMLIMIT", "100B");
	OK("GOMEMLIMIT", "1KiB");
	OK("GOMEMLIMIT", "2GiB");
	OK("GOMEMLIMIT", "8388607TiB"); /* the largest that fits an int64 */
	OK("GOMEMLIMIT", "off");
	OK("GOMEMLIMIT", "");
	BAD("GOMEMLIMIT", "8388608TiB");
	BAD("GOMEMLIMIT", "32MB"); /* Go knows only the binary prefixes */
	BAD("GOMEMLIMIT", "32M");
	BAD("GOMEMLIMIT", "32mib");
	BAD("GOMEMLIMIT", "MiB");
	BAD("GOMEMLIMIT", "B");
	BAD("GOMEMLIMIT", "1.5GiB");
	BAD("GOMEMLIMIT", "-1");
	BAD("GOMEMLIMIT", "32 MiB");
	BAD("GOMEMLIMIT", "5PiB");
	BAD("GOMEMLIMIT", "99999999999999999999");
	OK("GOMAXPROCS", "1");
	OK("GOMAXPROCS", "2");
	BAD("GOMAXPROCS", "0");
	BAD("GOMAXPROCS", "-2");
	BAD("GOMAXPROCS", "two");
	BAD("GOMAXPROCS", "1.5");
	WARN_ONLY("GOMAXPROCS", "");
	OK("GOFLAGS", "whatever"); /* no rule: not a runtime setting */
}

/* Cross rules run over a whole env; each problem is reported where its variable came from. */
static struct loc where(const char *name, void *ctx)
{
	(void)ctx;
	struct loc l = {&test_src, 0, 1};
	if (strcmp(name, "RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO") == 0)
		l.line = 1;
	else if (strcmp(name, "RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO") == 0)
		l.line = 2;
	else
		l.line = 3;
	return l;
}

static int cross(const char *min, const char *max, const char *goal, int *line)
{
	struct kv v[3];
	struct kvlist env = {v, 0};
	/* sorted by name, as attrs keeps it: GOAL < MAX < MIN */
	if (goal)
		v[env.n++] = (struct kv){"RUBY_GC_HEAP_FREE_SLOTS_GOAL_RATIO", (char *)goal};
	if (max)
		v[env.n++] = (struct kv){"RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO", (char *)max};
	if (min)
		v[env.n++] = (struct kv){"RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", (char *)min};
	struct diags d;
	diags_init(&d);
	int rc = envcheck_env_at(&env, where, NULL, &d);
	*line = d.n ? d.v[0].line : 0;
	assert_int_equal(rc, d.nerr ? -1 : 0);
	size_t n = d.nerr;
	diags_free(&d);
	return (int)n;
}

static void test_gc_cross(void **state)
{
	(void)state;
	int line;
	assert_int_equal(cross("0.055", "0.111", NULL, &line), 0);
	assert_int_equal(cross("0.2", "0.2", NULL, &line), 1); /* MAX must be > MIN */
	assert_int_equal(line, 2);
	assert_int_equal(cross("0.3", "0.1", NULL, &line), 1);
	assert_int_equal(line, 2);
	assert_int_equal(cross(NULL, "0.1", NULL, &line), 1); /* below Ruby's default MIN 0.20 */
	assert_int_equal(cross("0.7", NULL, NULL, &line), 1); /* above Ruby's default MAX 0.65 */
	assert_int_equal(line, 1);
	assert_int_equal(cross("0.1", "0.5", "0.3", &line), 0);
	assert_int_equal(cross("0.1", "0.5", "0", &line), 0);
	assert_int_equal(cross("0.1", "0.5", "0.6", &line), 1);
	assert_int_equal(line, 3);
	assert_int_equal(cross("0.1", "0.5", "0.1", &line), 1);
	/* the single-location form */
	struct kv v[] = {{"RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO", "0.01"}};
	struct kvlist env = {v, 1};
	struct diags d;
	diags_init(&d);
	assert_int_equal(envcheck_env_at(&env, at_L, NULL, &d), -1);
	assert_int_equal(d.v[0].line, 7);
	diags_free(&d);
}

static void test_malloc_conf(void **state)
{
	(void)state;
	OK("MALLOC_CONF", "");
	OK("MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0");
	OK("MALLOC_CONF", "dirty_decay_ms:-1");
	OK("MALLOC_CONF", "narenas:2,background_thread:true,tcache:false");
	OK("MALLOC_CONF", "narenas:default");
	OK("MALLOC_CONF", "percpu_arena:percpu,thp:never,metadata_thp:auto,dss:primary");
	OK("MALLOC_CONF", "junk:alloc,zero:false,retain:true,abort_conf:true");
	OK("MALLOC_CONF", "stats_print:true,stats_print_opts:Jgm");
	OK("MALLOC_CONF", "oversize_threshold:0x800000,lg_extent_max_active_fit:6");
	OK("MALLOC_CONF", "prof:true,prof_prefix:/tmp/jeprof,lg_prof_sample:19");
	OK("MALLOC_CONF", "tcache_max:4096,lg_tcache_max:12,max_background_threads:4");
	BAD("MALLOC_CONF", "dirty_decay_ms:-2");
	BAD("MALLOC_CONF", "dirty_decay_ms:abc");
	BAD("MALLOC_CONF", "dirty_decay_ms:10ms");
	BAD("MALLOC_CONF", "muzzy_decay_ms:");
	BAD("MALLOC_CONF", "bogus:1");
	BAD("MALLOC_CONF", "background_thread:yes");
	BAD("MALLOC_CONF", "narenas:0");
	OK("MALLOC_CONF",
	   "narenas:-1"); /* the installed jemalloc takes it (the 5.3 table did not) */
	BAD("MALLOC_CONF", "thp:sometimes");
	OK("MALLOC_CONF", "stats_print_opts:Z"); /* jemalloc ignores unknown letters */
	BAD("MALLOC_CONF", "lg_extent_max_active_fit:65");
	BAD("MALLOC_CONF", "dirty_decay_ms:0,"); /* ends with comma */
	BAD("MALLOC_CONF", "dirty_decay_ms");    /* key without value */
	BAD("MALLOC_CONF", "dirty_decay_ms=0");  /* wrong separator */
	BAD("MALLOC_CONF", ":0");                /* empty key */
	BAD("MALLOC_CONF", "dirty_decay_ms:0,,tcache:true");
	OK("MALLOC_CONF", "tcache_nslots_large:5000"); /* jemalloc clips it silently */

	/* the installed jemalloc's own words, at the value's location */
	struct diags d;
	diags_init(&d);
	assert_int_equal(envcheck_var(&ec, "MALLOC_CONF", "tcache:false,bogus:1", L, &d), -1);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.v[0].msg, "Invalid conf pair: bogus:1"));
	assert_non_null(strstr(d.v[0].msg, GITLAB_CTL_JEMALLOC));
	assert_int_equal(d.v[0].line, 7);
	diags_free(&d);
}

/* A warning (not an error, not silence) naming why, when the jemalloc cannot be asked. */
static void expect_unchecked(const char *je, const char *why)
{
	struct envcheck other;
	envcheck_init(&other, je);
	struct diags d;
	diags_init(&d);
	assert_int_equal(envcheck_var(&other, "MALLOC_CONF", "bogus:1", L, &d), 0);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.nerr, 0);
	assert_non_null(strstr(d.v[0].msg, "MALLOC_CONF is not checked"));
	assert_non_null(strstr(d.v[0].msg, why));
	diags_free(&d);
	envcheck_free(&other);
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	assert_non_null(in);
	assert_non_null(out);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

static void test_malloc_conf_unasked(void **state)
{
	(void)state;
	expect_unchecked("/nonexistent/libjemalloc.so.2",
	                 "cannot read /nonexistent/libjemalloc.so.2: No such file");
	expect_unchecked("/etc/passwd", "ld.so cannot preload it");

	/* one answer per value and jemalloc: asked again, the value is not run again (the copy
	 * is gone by then, so a second run would warn) */
	char dir[] = "/tmp/gitlab-ctl-je.XXXXXX", copy[64];
	assert_non_null(mkdtemp(dir));
	snprintf(copy, sizeof copy, "%s/libjemalloc.so.2", dir);
	copy_file(GITLAB_CTL_JEMALLOC, copy);
	envcheck_free(&ec);
	envcheck_init(&ec, copy);
	OK("MALLOC_CONF", "narenas:3");
	BAD("MALLOC_CONF", "narenas:zero");
	assert_int_equal(unlink(copy), 0);
	assert_int_equal(rmdir(dir), 0);
	size_t warns = 9;
	assert_int_equal(check("MALLOC_CONF", "narenas:3", &warns), 0);
	assert_int_equal(warns, 0);
	BAD("MALLOC_CONF", "narenas:zero");
	assert_int_equal(check("MALLOC_CONF", "narenas:4", &warns), 0); /* a new value: asked */
	assert_int_equal(warns, 1);
	/* the answers are the run's (its caller's context), not the process's: a new run asks */
	struct envcheck next;
	envcheck_init(&next, copy);
	struct diags d;
	diags_init(&d);
	assert_int_equal(envcheck_var(&next, "MALLOC_CONF", "narenas:3", L, &d), 0);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.v[0].msg, "MALLOC_CONF is not checked"));
	diags_free(&d);
	envcheck_free(&next);
	envcheck_free(&ec);
	envcheck_init(&ec, NULL);
}

/* Page faults of the children reaped so far: every run of /bin/true under jemalloc adds some. */
static long child_faults(void)
{
	struct rusage ru;
	assert_int_equal(getrusage(RUSAGE_CHILDREN, &ru), 0);
	return ru.ru_minflt + ru.ru_majflt;
}

struct run_result {
	size_t nerr, nwarn;
	bool ran; /* jemalloc was run to judge the value */
};

/* One run of attrs' kind: value checked against je with the cache in var (written at free
 * with write). */
static struct run_result cached_run_w(const char *je, const char *var, const char *value,
                                      bool write)
{
	struct envcheck run;
	envcheck_init(&run, je);
	envcheck_cache(&run, var, write);
	struct diags d;
	diags_init(&d);
	long before = child_faults();
	(void)envcheck_var(&run, "MALLOC_CONF", value, L, &d);
	struct run_result r = {d.nerr, d.n - d.nerr, child_faults() > before};
	diags_free(&d);
	envcheck_free(&run);
	return r;
}

static struct run_result cached_run(const char *je, const char *var, const char *value)
{
	return cached_run_w(je, var, value, true);
}

#define RAN(je, v)    assert_true(cached_run(je, var, v).ran)
#define CACHED(je, v) assert_false(cached_run(je, var, v).ran)

/* The cache across runs: used when nothing changed, asked again on any change, and ignored
 * unless it is root's own regular 0600 file in a directory only root writes. */
static void test_malloc_conf_cache(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip(); /* the cache is root's only */
	char dir[] = "/tmp/gitlab-ctl-jecache.XXXXXX", var[64], je[64], other[64], file[96],
	     aside[96];
	assert_non_null(mkdtemp(dir));
	snprintf(var, sizeof var, "%s/var", dir);
	snprintf(je, sizeof je, "%s/libjemalloc.so.2", dir);
	snprintf(other, sizeof other, "%s/libjemalloc-other.so.2", dir);
	snprintf(file, sizeof file, "%s/envcheck-jemalloc", var);
	snprintf(aside, sizeof aside, "%s/aside", dir);
	assert_int_equal(mkdir(var, 0755), 0);
	copy_file(GITLAB_CTL_JEMALLOC, je);
	copy_file(GITLAB_CTL_JEMALLOC, other);

	RAN(je, "narenas:3");
	struct stat st;
	assert_int_equal(lstat(file, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	struct run_result r = cached_run(je, var, "narenas:3");
	assert_false(r.ran);
	assert_int_equal(r.nerr + r.nwarn, 0);
	RAN(je, "narenas:4"); /* a changed MALLOC_CONF */
	CACHED(je, "narenas:3");
	CACHED(je, "narenas:4");
	/* a refusal is not remembered: asked again, refused again */
	for (int i = 0; i < 2; i++) {
		r = cached_run(je, var, "narenas:zero");
		assert_true(r.ran);
		assert_int_equal(r.nerr, 1);
	}
	RAN(other, "narenas:3"); /* another jemalloc path */
	RAN(je, "narenas:3");
	CACHED(je, "narenas:3");

	/* the library rewritten in place (same inode and size) with its mtime put back: asked
	 * again, and now ld.so cannot load it */
	int fd = open(je, O_WRONLY | O_CLOEXEC);
	assert_true(fd != -1);
	assert_int_equal(fstat(fd, &st), 0);
	char zeros[64] = {0};
	assert_int_equal(pwrite(fd, zeros, sizeof zeros, 0), (ssize_t)sizeof zeros);
	const struct timespec times[2] = {st.st_atim, st.st_mtim};
	assert_int_equal(futimens(fd, times), 0);
	assert_int_equal(close(fd), 0);
	r = cached_run(je, var, "narenas:3");
	assert_true(r.ran);
	assert_int_equal(r.nwarn, 1);
	copy_file(GITLAB_CTL_JEMALLOC, je);
	RAN(je, "narenas:3");
	CACHED(je, "narenas:3");

	/* a cache file not root's own 0600 regular file is ignored (and replaced by a good one) */
	assert_int_equal(chown(file, 1, 1), 0);
	RAN(je, "narenas:3");
	CACHED(je, "narenas:3");
	static const mode_t loose[] = {0644, 0640, 0604, 0700};
	for (size_t i = 0; i < sizeof loose / sizeof loose[0]; i++) {
		assert_int_equal(chmod(file, loose[i]), 0);
		RAN(je, "narenas:3");
		CACHED(je, "narenas:3");
	}
	assert_int_equal(rename(file, aside), 0); /* a link to a good one is not followed */
	assert_int_equal(symlink(aside, file), 0);
	RAN(je, "narenas:3");
	assert_int_equal(lstat(file, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	CACHED(je, "narenas:3");
	assert_int_equal(chmod(var, 0775), 0); /* a directory others may write */
	RAN(je, "narenas:3");
	assert_int_equal(chmod(var, 0755), 0);
	CACHED(je, "narenas:3");

	/* read-only (check-config, a dry run): a kept answer is used, a new one asked and never
	 * written: the file's bytes, mtime and inode, and the directory's, stay as they were */
	struct stat f0, d0, f1, d1;
	assert_int_equal(lstat(file, &f0), 0);
	assert_int_equal(lstat(var, &d0), 0);
	assert_false(cached_run_w(je, var, "narenas:3", false).ran);
	r = cached_run_w(je, var, "narenas:5", false);
	assert_true(r.ran);
	assert_int_equal(r.nerr + r.nwarn, 0);
	assert_true(cached_run_w(je, var, "narenas:5", false).ran); /* not kept */
	assert_int_equal(lstat(file, &f1), 0);
	assert_int_equal(lstat(var, &d1), 0);
	assert_true(f1.st_ino == f0.st_ino && f1.st_size == f0.st_size);
	assert_true(f1.st_mtim.tv_sec == f0.st_mtim.tv_sec &&
	            f1.st_mtim.tv_nsec == f0.st_mtim.tv_nsec);
	assert_true(d1.st_mtim.tv_sec == d0.st_mtim.tv_sec &&
	            d1.st_mtim.tv_nsec == d0.st_mtim.tv_nsec);
	assert_int_equal(unlink(file), 0);
	assert_true(cached_run_w(je, var, "narenas:3", false).ran);
	assert_int_equal(lstat(file, &f1), -1); /* nor created */
	assert_int_equal(errno, ENOENT);
	RAN(je, "narenas:3"); /* the writing run still keeps it */
	CACHED(je, "narenas:3");

	assert_int_equal(unlink(file), 0);
	assert_int_equal(unlink(aside), 0);
	assert_int_equal(rmdir(var), 0);
	assert_int_equal(unlink(je), 0);
	assert_int_equal(unlink(other), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_ld_preload(void **state)
{
	(void)state;
	OK("LD_PRELOAD", GITLAB_CTL_JEMALLOC);
	OK("LD_PRELOAD", GITLAB_CTL_JEMALLOC ":" GITLAB_CTL_JEMALLOC);
	OK("LD_PRELOAD", " " GITLAB_CTL_JEMALLOC " ");
	OK("LD_PRELOAD", "libjemalloc.so.2");           /* bare names go through ld.so's search */
	OK("LD_PRELOAD", "/usr/$LIB/libjemalloc.so.2"); /* ld.so expands $LIB */
	OK("LD_PRELOAD", "");
	BAD("LD_PRELOAD", "/nonexistent/libjemalloc.so.2");
	BAD("LD_PRELOAD", GITLAB_CTL_JEMALLOC ":/nonexistent/x.so");
	BAD("LD_PRELOAD", "/tmp"); /* a directory */
	WARN_ONLY("LD_PRELOAD", "lib/x.so");

	/* the error names the missing file */
	struct diags d;
	diags_init(&d);
	envcheck_var(&ec, "LD_PRELOAD", "/nonexistent/libfoo.so", L, &d);
	assert_int_equal(d.nerr, 1);
	assert_non_null(strstr(d.v[0].msg, "/nonexistent/libfoo.so"));
	diags_free(&d);
}

/* The kernel's execve limits: MAX_ARG_STRLEN per NAME=value, the count, the total. */
static void test_execve_limits(void **state)
{
	(void)state;
	size_t room = ENVCHECK_MAX_ARG_STRLEN - strlen("BIG=") - 1;
	char *v = malloc(room + 2);
	assert_non_null(v);
	memset(v, 'x', room + 1);
	v[room] = '\0';
	OK("BIG", v); /* exactly 131072 bytes with "BIG=" and the NUL */
	v[room] = 'x';
	v[room + 1] = '\0';
	BAD("BIG", v);
	free(v);

	/* too many variables, each small */
	struct kvlist env = {0};
	size_t n = 1100;
	env.v = calloc(n, sizeof *env.v);
	assert_non_null(env.v);
	char names[1100][8];
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof names[i], "V%04zu", i);
		env.v[i].name = names[i];
		env.v[i].value = "x";
	}
	struct diags d;
	diags_init(&d);
	env.n = n;
	assert_int_equal(envcheck_env_at(&env, at_L, NULL, &d), -1);
	assert_non_null(strstr(d.v[0].msg, "1100 environment variables"));
	diags_free(&d);
	diags_init(&d);
	env.n = 100;
	assert_int_equal(envcheck_env_at(&env, at_L, NULL, &d), 0);
	diags_free(&d);

	/* a total over ARG_MAX: values each under MAX_ARG_STRLEN */
	char *big = malloc(100001);
	assert_non_null(big);
	memset(big, 'y', 100000);
	big[100000] = '\0';
	size_t many = (size_t)sysconf(_SC_ARG_MAX) / 100000 + 2;
	assert_true(many < n);
	for (size_t i = 0; i < many; i++)
		env.v[i].value = big;
	env.n = many;
	diags_init(&d);
	assert_int_equal(envcheck_env_at(&env, at_L, NULL, &d), -1);
	assert_non_null(strstr(d.v[0].msg, "ARG_MAX"));
	diags_free(&d);
	free(big);
	free(env.v);
}

/* A huge one-line file: the diagnostic shows a window around the column, caret under it. */
/* argv: one argument over MAX_ARG_STRLEN, or all of them over their share of ARG_MAX. */
static void test_argv_limits(void **state)
{
	(void)state;
	char *big = malloc(ENVCHECK_MAX_ARG_STRLEN + 1);
	assert_non_null(big);
	memset(big, 'a', ENVCHECK_MAX_ARG_STRLEN);
	big[ENVCHECK_MAX_ARG_STRLEN - 1] = '\0'; /* 131071 bytes and the NUL: the largest */
	char *argv[] = {"/bin/x", big, NULL};
	struct diags d;
	diags_init(&d);
	assert_int_equal(envcheck_argv(argv, (struct loc[]){L, L}, &d),
	                 -1); /* fits alone, not beside the env */
	assert_non_null(strstr(d.v[0].msg, "ARG_MAX"));
	diags_free(&d);
	big[ENVCHECK_MAX_ARG_STRLEN - 1] = 'a';
	big[ENVCHECK_MAX_ARG_STRLEN] = '\0';
	diags_init(&d);
	assert_int_equal(envcheck_argv(argv, (struct loc[]){L, L}, &d), -1);
	assert_non_null(strstr(d.v[0].msg, "argument 1 of the command"));
	diags_free(&d);
	big[1000] = '\0';
	diags_init(&d);
	assert_int_equal(envcheck_argv(argv, (struct loc[]){L, L}, &d), 0);
	assert_int_equal(d.n, 0);
	diags_free(&d);
	free(big);
}

static void test_diag_window(void **state)
{
	(void)state;
	size_t len = 4 * 1024 * 1024;
	char *text = malloc(len + 1);
	assert_non_null(text);
	memset(text, 'a', len);
	text[len] = '\0';
	text[3000000] = 'Z';
	struct src src = {"huge.rb", text, len, NULL, 0};
	struct loc at = {&src, 1, 3000001};
	struct diags d;
	diags_init(&d);
	diag_at(&d, DIAG_ERR, at, "bad");
	assert_true(strlen(d.v[0].srcline) <= 2 * DIAG_WINDOW + 6);
	char *out = NULL;
	size_t outlen = 0;
	FILE *fp = open_memstream(&out, &outlen);
	assert_non_null(fp);
	diags_print(&d, fp);
	fclose(fp);
	assert_non_null(strstr(out, "huge.rb:1:3000001: error: bad"));
	/* the caret sits under the Z */
	char *line = strchr(out, '\n') + 1, *caret = strchr(line, '\n') + 1;
	size_t col = (size_t)(strchr(caret, '^') - caret);
	assert_int_equal(line[col], 'Z');
	free(out);
	diags_free(&d);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_gc_sizes),
	    cmocka_unit_test(test_gc_doubles),
	    cmocka_unit_test(test_gc_cross),
	    cmocka_unit_test(test_go_runtime),
	    cmocka_unit_test(test_malloc_conf),
	    cmocka_unit_test(test_malloc_conf_unasked),
	    cmocka_unit_test(test_malloc_conf_cache),
	    cmocka_unit_test(test_ld_preload),
	    cmocka_unit_test(test_execve_limits),
	    cmocka_unit_test(test_diag_window),
	    cmocka_unit_test(test_argv_limits),
	};
	envcheck_init(&ec, NULL);
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	envcheck_free(&ec);
	return rc;
}
