/* bcrypt: hashes of a run, and the record that keeps them across runs. */
#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/bcrypt.h"
#include "lib/rmtree.h"

static char top[64], var[96], record[160], aside[128];

static int setup(void **state)
{
	(void)state;
	strlcpy(top, "/tmp/test_bcrypt.XXXXXX", sizeof top);
	if (mkdtemp(top) == NULL)
		return -1;
	snprintf(var, sizeof var, "%s/var", top);
	snprintf(record, sizeof record, "%s/secrets/bcrypt", var);
	snprintf(aside, sizeof aside, "%s/aside", top);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	bcrypt_keep_close();
	return rmtree(top, NULL);
}

typedef char *(*crypt_fn)(const char *phrase, const char *setting, void *data, int size);

/* Does h check out for pw (libcrypt's own crypt_rn of pw with h as the setting)? */
static bool verifies(const char *pw, const char *h)
{
	static _Alignas(16) char data[32768];
	void *lib = dlopen("libcrypt.so.1", RTLD_NOW | RTLD_LOCAL);
	assert_non_null(lib);
	void *sym = dlsym(lib, "crypt_rn");
	assert_non_null(sym);
	crypt_fn fn;
	memcpy(&fn, &sym, sizeof fn);
	const char *r = fn(pw, h, data, sizeof data);
	return r != NULL && strcmp(r, h) == 0;
}

/* One run of reconfigure's kind: the keep opened (dir NULL: none), pw hashed, the keep saved. */
static void run(const char *dir, bool write, const char *pw, char out[128])
{
	const char *why = NULL;
	if (dir != NULL)
		bcrypt_keep_open(dir, write);
	assert_int_equal(bcrypt_hash(pw, out, 128, &why), 0);
	bcrypt_keep_close();
	assert_int_equal(strlen(out), 60);
	assert_memory_equal(out, "$2b$10$", 7);
	assert_true(verifies(pw, out));
}

static void write_record(const char *text, mode_t mode, uid_t uid)
{
	(void)unlink(record);
	int fd = open(record, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd != -1);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(fchown(fd, uid, (gid_t)-1), 0);
	assert_int_equal(close(fd), 0);
}

static void read_record(char *out, size_t len)
{
	FILE *fp = fopen(record, "r");
	assert_non_null(fp);
	size_t n = fread(out, 1, len - 1, fp);
	out[n] = '\0';
	fclose(fp);
}

/* Within a run one password is hashed once; runs without a record get another salt each. */
static void test_run(void **state)
{
	(void)state;
	char a[128], b[128], c[128];
	const char *why = NULL;
	assert_int_equal(bcrypt_hash("s3cret", a, sizeof a, &why), 0);
	assert_int_equal(bcrypt_hash("s3cret", b, sizeof b, &why), 0);
	assert_string_equal(a, b); /* Prometheus' and Alertmanager's shared password */
	bcrypt_keep_close();
	run(NULL, false, "s3cret", c);
	assert_memory_not_equal(a, c, 29); /* a random salt, not one the password derives */
	assert_true(verifies("s3cret", a));
	assert_false(verifies("other", a));
}

/*
 * Kept: an unchanged password's hash comes back from the record (another bcrypt would have
 * another random salt), a changed one is hashed; a record that is not the user's regular 0600
 * file in a directory only it writes, or under another key, is not used.
 */
static void test_kept(void **state)
{
	(void)state;
	char h1[128], h2[128], got[128], good[512], text[512];
	run(var, false, "s3cret", got); /* a dry run writes nothing */
	struct stat st;
	assert_int_equal(lstat(record, &st), -1);
	run(var, true, "s3cret", h1);
	assert_int_equal(lstat(record, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(st.st_mode & 07777, 0600);
	read_record(good, sizeof good);
	assert_memory_equal(good, "key ", 4);
	assert_int_equal(strcspn(good, "\n"), 4 + 16);
	assert_non_null(strstr(good, h1));
	assert_null(strstr(good, "s3cret"));

	run(var, true, "s3cret", got);
	assert_string_equal(got, h1);
	run(var, false, "s3cret", got); /* check-config reads it too */
	assert_string_equal(got, h1);
	run(var, true, "changed", h2); /* a changed password is hashed, kept beside the other */
	assert_string_not_equal(h2, h1);
	read_record(text, sizeof text);
	assert_non_null(strstr(text, h1));
	assert_non_null(strstr(text, h2));
	run(var, true, "s3cret", got);
	assert_string_equal(got, h1);
	run(var, true, "changed", got);
	assert_string_equal(got, h2);

	/* not the user's own 0600 regular file, through a link, under another key: not used */
	static const mode_t loose[] = {0644, 0640, 0604, 0700, 0400};
	for (size_t i = 0; i < sizeof loose / sizeof loose[0]; i++) {
		write_record(good, loose[i], geteuid());
		run(var, false, "s3cret", got);
		assert_string_not_equal(got, h1);
	}
	if (geteuid() == 0) {
		write_record(good, 0600, 1);
		run(var, false, "s3cret", got);
		assert_string_not_equal(got, h1);
	}
	write_record(good, 0600, geteuid());
	assert_int_equal(rename(record, aside), 0);
	assert_int_equal(symlink(aside, record), 0);
	run(var, false, "s3cret", got);
	assert_string_not_equal(got, h1);
	assert_int_equal(unlink(record), 0);
	strlcpy(text, good, sizeof text);
	text[4] = text[4] == 'A' ? 'B' : 'A';
	write_record(text, 0600, geteuid());
	run(var, false, "s3cret", got);
	assert_string_not_equal(got, h1);
	snprintf(text, sizeof text, "%s\n", h1); /* the hash alone (an older record) */
	write_record(text, 0600, geteuid());
	run(var, false, "s3cret", got);
	assert_string_not_equal(got, h1);
	char dir[128];
	snprintf(dir, sizeof dir, "%s/secrets", var);
	write_record(good, 0600, geteuid());
	assert_int_equal(chmod(dir, 0733), 0); /* a directory others could write in */
	run(var, false, "s3cret", got);
	assert_string_not_equal(got, h1);
	assert_int_equal(chmod(dir, 0700), 0);
	run(var, false, "s3cret", got);
	assert_string_equal(got, h1);
	/* a lost record: hashed anew (another salt), and kept again */
	assert_int_equal(unlink(record), 0);
	run(var, true, "s3cret", got);
	assert_string_not_equal(got, h1);
	strlcpy(h1, got, sizeof h1);
	run(var, true, "s3cret", got);
	assert_string_equal(got, h1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_run),
	    cmocka_unit_test_setup_teardown(test_kept, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
