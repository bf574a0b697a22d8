/*
 * The catalog cache: a hit only while no file that decided the parse changed,
 * and a cache that is damaged, foreign or a link is ignored and written again.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/catalog.h"
#include "config/catalog_cache.h"
#include "lib/buf.h"
#include "lib/rmtree.h"

static char tmpdir[64], svdir[128], cache[128];

#define CONF(name, cfg, extra)                                                                     \
	"name = \"" name "\";\nconfig_name = \"" cfg "\";\n"                                       \
	"settings = (\n"                                                                           \
	"  { name = \"enable\"; type = \"bool\"; default = true; },\n"                             \
	"  { name = \"home\"; type = \"path\"; default = \"{{data_dir}}/x\"; },\n"                 \
	"  { name = \"log_directory\"; type = \"path\"; default = \"{{log_dir}}/x\"; },\n"         \
	"  { name = \"env_directory\"; type = \"path\"; default = \"/e\"; }\n"                     \
	");\n"                                                                                     \
	"command = [ \"/bin/true\" ];\n" extra

static void write_at(const char *dir, const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/test_catcache.XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	snprintf(svdir, sizeof svdir, "%s/sv", tmpdir);
	snprintf(cache, sizeof cache, "%s/var/catalog.cache", tmpdir);
	char var[128];
	snprintf(var, sizeof var, "%s/var", tmpdir);
	if (mkdir(svdir, 0755) == -1 || mkdir(var, 0700) == -1)
		return -1;
	write_at(svdir, "x.conf", CONF("x", "x_svc", ""));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmtree(tmpdir, stderr);
}

/*
 * Load svdir through the cache; returns whether it was a hit. "now" is an hour
 * ahead: files written a moment ago are otherwise too fresh to cache.
 */
static bool load(struct catalog *c, const char *build, int want_rc)
{
	struct catalog_cache cc = {.path = cache, .build = build, .now = time(NULL) + 3600};
	struct diags d;
	diags_init(&d);
	assert_int_equal(catalog_load_cached(svdir, &cc, c, &d), want_rc);
	if (want_rc == 0)
		assert_int_equal(d.n, 0);
	diags_free(&d);
	return cc.hit;
}

static bool load_free(const char *build)
{
	struct catalog c;
	bool hit = load(&c, build, 0);
	catalog_free(&c);
	return hit;
}

static ino_t cache_ino(void)
{
	struct stat st;
	assert_int_equal(lstat(cache, &st), 0);
	return st.st_ino;
}

static void encode(const struct catalog *c, struct buf *b)
{
	buf_init(b);
	catcodec_encode(b, c);
}

/* The shipped catalog read back from its cache is the parsed one, byte for byte encoded. */
static void test_roundtrip_shipped(void **state)
{
	(void)state;
	struct catalog a, b;
	struct diags d;
	struct buf ea, eb;
	struct catalog_cache cc = {.path = cache, .build = "t", .now = time(NULL) + 3600};
	diags_init(&d);
	assert_int_equal(catalog_load_cached(SRCDIR "/sv", &cc, &a, &d), 0);
	assert_false(cc.hit);
	assert_int_equal(catalog_load_cached(SRCDIR "/sv", &cc, &b, &d), 0);
	assert_true(cc.hit);
	assert_int_equal(d.n, 0);
	assert_int_equal(a.n, b.n);
	assert_int_equal(a.nomnibus, b.nomnibus);
	assert_int_equal(a.nomnibus_keys, b.nomnibus_keys);
	assert_true(catalog_omnibus_key(&b, "user", "uid"));
	assert_true(catalog_omnibus_key(&b, "logging", "logrotate_frequency"));
	assert_false(catalog_omnibus_key(&b, "user", "username")); /* gitlab-ctl's own */
	assert_string_equal(b.dir, SRCDIR "/sv");
	assert_ptr_equal(b.v[0].src.name, b.v[0].file);
	encode(&a, &ea);
	encode(&b, &eb);
	assert_int_equal(ea.len, eb.len);
	assert_memory_equal(ea.p, eb.p, ea.len);
	/* catalog_order and catalog_find work on a cached catalog as on a parsed one */
	assert_non_null(catalog_find(&b, "gitlab_exporter"));
	buf_free(&ea);
	buf_free(&eb);
	catalog_free(&a);
	catalog_free(&b);
	diags_free(&d);
}

static void test_hit_then_miss_on_change(void **state)
{
	(void)state;
	struct catalog c;
	assert_false(load_free("t"));
	struct stat st;
	assert_int_equal(stat(cache, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	ino_t ino = cache_ino();
	assert_true(load_free("t"));
	assert_int_equal(cache_ino(), ino); /* a hit writes nothing */

	/* the same size, the old mtime put back: ctime still tells */
	char path[256];
	snprintf(path, sizeof path, "%s/x.conf", svdir);
	assert_int_equal(stat(path, &st), 0);
	write_at(svdir, "x.conf", CONF("y", "x_svc", ""));
	struct timespec ts[2] = {st.st_atim, st.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	assert_false(load(&c, "t", 0));
	assert_string_equal(c.v[0].name, "y");
	catalog_free(&c);
	assert_true(load_free("t"));

	/* another size */
	write_at(svdir, "x.conf", CONF("x", "x_svc", "description = \"more\";\n"));
	assert_false(load(&c, "t", 0));
	assert_string_equal(c.v[0].description, "more");
	catalog_free(&c);

	/* only the mtime */
	ts[1].tv_sec -= 100;
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	assert_true(load_free("t") == false);
	assert_true(load_free("t"));

	/* a temp file a killed writer left: swept by the next write */
	char stale[256];
	snprintf(stale, sizeof stale, "%s.Ab12Cd", cache);
	write_at(tmpdir, "var/catalog.cache.Ab12Cd", "half");
	write_at(tmpdir, "var/catalog.cache.keep", "not a temp");
	ts[1].tv_sec -= 100;
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	assert_false(load_free("t"));
	assert_int_equal(access(stale, F_OK), -1);
	snprintf(stale, sizeof stale, "%s.keep", cache);
	assert_int_equal(access(stale, F_OK), 0);

	/* another build */
	assert_false(load_free("t2"));
	assert_true(load_free("t2"));
}

static void test_files_added_removed(void **state)
{
	(void)state;
	struct catalog c;
	assert_false(load_free("t"));
	write_at(svdir, "z.conf", CONF("z", "z_svc", ""));
	assert_false(load(&c, "t", 0));
	assert_int_equal(c.n, 2);
	catalog_free(&c);
	assert_true(load_free("t"));
	char path[256];
	snprintf(path, sizeof path, "%s/z.conf", svdir);
	assert_int_equal(unlink(path), 0);
	assert_false(load(&c, "t", 0));
	assert_int_equal(c.n, 1);
	catalog_free(&c);
	/* omnibus-names.list decides strictness: its arrival is a change too */
	write_at(svdir, "omnibus-names.list", "gitlab_rails\nuser['uid'] # a key\n");
	assert_false(load(&c, "t", 0));
	assert_true(catalog_omnibus_name(&c, "gitlab_rails"));
	assert_false(catalog_omnibus_name(&c, "user['uid']"));
	assert_true(catalog_omnibus_key(&c, "user", "uid"));
	catalog_free(&c);
	assert_true(load(&c, "t", 0));
	assert_true(catalog_omnibus_key(&c, "user", "uid"));
	catalog_free(&c);
}

/* A line of omnibus-names.list that is neither a name nor NAME['KEY'] is an error at its line. */
static void test_omnibus_list_errors(void **state)
{
	(void)state;
	static const char *const bad[] = {"user[uid]", "user['uid'",   "['uid']",
	                                  "user['']",  "user['uid']x", "User"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char text[64];
		struct catalog c;
		struct catalog_cache cc = {.path = cache, .build = "t", .now = time(NULL) + 3600};
		struct diags d;
		snprintf(text, sizeof text, "gitlab_rails\n%s\n", bad[i]);
		write_at(svdir, "omnibus-names.list", text);
		diags_init(&d);
		assert_int_equal(catalog_load_cached(svdir, &cc, &c, &d), -1);
		assert_int_equal(d.n, 1);
		assert_int_equal(d.v[0].line, 2);
		char want[96];
		snprintf(want, sizeof want, "not a gitlab.rb name or NAME['KEY']: \"%s\"", bad[i]);
		assert_string_equal(d.v[0].msg, want);
		catalog_free(&c);
		diags_free(&d);
	}
}

/* Damage the cache file in place (same inode, owner and mode). */
static void damage(off_t at, bool truncate_there)
{
	int fd = open(cache, O_RDWR);
	assert_true(fd >= 0);
	if (truncate_there) {
		assert_int_equal(ftruncate(fd, at), 0);
	} else {
		unsigned char ch;
		assert_int_equal(pread(fd, &ch, 1, at), 1);
		ch ^= 0x40;
		assert_int_equal(pwrite(fd, &ch, 1, at), 1);
	}
	assert_int_equal(close(fd), 0);
}

static void test_corrupt_ignored_and_rewritten(void **state)
{
	(void)state;
	struct stat st;
	assert_false(load_free("t"));
	assert_int_equal(stat(cache, &st), 0);
	off_t at[] = {0, 5, 12, st.st_size / 2, st.st_size - 9, st.st_size - 1};
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
		damage(at[i], false);
		assert_false(load_free("t"));
		assert_true(load_free("t")); /* rewritten */
	}
	off_t cut[] = {0, 3, 20, st.st_size / 2, st.st_size - 1};
	for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
		damage(cut[i], true);
		assert_false(load_free("t"));
		assert_true(load_free("t"));
	}
}

static void test_foreign_or_link_ignored(void **state)
{
	(void)state;
	char other[256];
	assert_false(load_free("t"));
	if (geteuid() == 0) { /* another account's file, however right its bytes */
		assert_int_equal(chown(cache, 65534, 65534), 0);
		assert_false(load_free("t"));
		struct stat st;
		assert_int_equal(stat(cache, &st), 0);
		assert_int_equal(st.st_uid, 0); /* replaced by root's own */
		assert_true(load_free("t"));
	}
	assert_int_equal(chmod(cache, 0640), 0); /* readable by a group */
	assert_false(load_free("t"));
	assert_true(load_free("t"));

	/* a link to a valid cache: not followed, and replaced itself (its target untouched) */
	snprintf(other, sizeof other, "%s/elsewhere", tmpdir);
	assert_int_equal(rename(cache, other), 0);
	assert_int_equal(symlink(other, cache), 0);
	assert_false(load_free("t"));
	struct stat st;
	assert_int_equal(lstat(cache, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_true(load_free("t"));

	/* a second name (hard link) for it: someone else may hold the other */
	snprintf(other, sizeof other, "%s/var/second", tmpdir);
	assert_int_equal(link(cache, other), 0);
	assert_false(load_free("t"));
	assert_true(load_free("t"));
}

/* A catalog whose parse reports something is not cached: a hit could not repeat it. */
static void test_not_cached_with_diagnostics(void **state)
{
	(void)state;
	struct catalog c;
	write_at(svdir, "bad.conf", "name = \"bad\";\nnonsense = 1;\n");
	assert_false(load(&c, "t", -1));
	catalog_free(&c);
	struct stat st;
	assert_int_equal(stat(cache, &st), -1);
	assert_false(load(&c, "t", -1)); /* the diagnostics again, from a parse */
	catalog_free(&c);
}

/* A directory others may write is not one to keep a trusted file in; a fresh file is racy. */
static void test_unsafe_dir_or_fresh_files_not_written(void **state)
{
	(void)state;
	struct catalog c;
	struct diags d;
	char var[128];
	struct stat st;
	snprintf(var, sizeof var, "%s/var", tmpdir);
	assert_int_equal(chmod(var, 0777), 0);
	assert_false(load_free("t"));
	assert_int_equal(stat(cache, &st), -1);
	assert_int_equal(chmod(var, 0700), 0);
	struct catalog_cache cc = {.path = cache, .build = "t", .now = time(NULL)};
	diags_init(&d);
	assert_int_equal(catalog_load_cached(svdir, &cc, &c, &d), 0);
	catalog_free(&c);
	diags_free(&d);
	assert_int_equal(stat(cache, &st), -1);
}

/* Every prefix of a valid encoding, and every one-byte change, decodes cleanly or not at all. */
static void test_decode_rejects_damage(void **state)
{
	(void)state;
	struct catalog c, out;
	struct diags d;
	struct buf b;
	diags_init(&d);
	assert_int_equal(catalog_load(SRCDIR "/sv", &c, &d), 0);
	encode(&c, &b);
	assert_int_equal(catcodec_decode(b.p, b.len, &out), 0);
	catalog_free(&out);
	for (size_t n = 0; n < b.len; n += 1 + n / 64) {
		assert_int_equal(catcodec_decode(b.p, n, &out), -1);
		assert_int_equal(out.n, 0);
	}
	for (size_t i = 0; i < b.len; i += 7) {
		b.p[i] ^= (char)0xff;
		if (catcodec_decode(b.p, b.len, &out) == 0)
			catalog_free(&out);
		b.p[i] ^= (char)0xff;
	}
	buf_free(&b);
	catalog_free(&c);
	diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_roundtrip_shipped, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hit_then_miss_on_change, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_omnibus_list_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_files_added_removed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_corrupt_ignored_and_rewritten, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_foreign_or_link_ignored, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_cached_with_diagnostics, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unsafe_dir_or_fresh_files_not_written, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_decode_rejects_damage, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
