/* bcrypt: hashes of a run, and the record that keeps them across runs. */
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
}

static void write_record(const char *text, mode_t mode, uid_t uid)
{
	(void)unlink(record);
	int fd = open(record, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd != -1);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(fchown(fd, uid, 0), 0);
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

/* Without a record: the same password, the same hash (its salt derives from it). */
static void test_stable(void **state)
{
	(void)state;
	char a[128], b[128], c[128];
	run(NULL, false, "s3cret", a);
	run(NULL, false, "s3cret", b);
	run(NULL, false, "other", c);
	assert_string_equal(a, b);
	assert_memory_not_equal(a, c, 29); /* another password, another salt */
}

/*
 * Kept: an unchanged password's hash comes from the record (a forged checksum in it is
 * what comes back, which no bcrypt would make), a changed one is hashed; a record that is not
 * root's regular 0600 file in root's 0700 directory is not used.
 */
static void test_kept(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip(); /* kept only as root */
	char real[128], got[128], other[128], text[512], forged[128];
	run(NULL, false, "s3cret", real);
	run(NULL, false, "changed", other);

	run(var, false, "s3cret", got); /* a dry run writes nothing */
	struct stat st;
	assert_int_equal(lstat(record, &st), -1);
	run(var, true, "s3cret", got);
	assert_string_equal(got, real);
	assert_int_equal(lstat(record, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	read_record(text, sizeof text);
	assert_int_equal(strlen(text), 61);
	assert_memory_equal(text, real, 60);
	assert_int_equal(text[60], '\n');

	/* the record is what a run uses: a forged checksum for the same salt comes back */
	strlcpy(forged, real, sizeof forged);
	memset(forged + 29, 'A', 31);
	snprintf(text, sizeof text, "garbage\n%s\n", forged);
	write_record(text, 0600, 0);
	run(var, true, "s3cret", got);
	assert_string_equal(got, forged);
	run(var, false, "s3cret", got); /* check-config reads it too */
	assert_string_equal(got, forged);
	/* a changed password is hashed, and kept beside the other */
	run(var, true, "changed", got);
	assert_string_equal(got, other);
	read_record(text, sizeof text);
	assert_non_null(strstr(text, other));
	assert_non_null(strstr(text, forged));
	run(var, true, "changed", got);
	assert_string_equal(got, other);
	run(var, true, "s3cret", got);
	assert_string_equal(got, forged);

	/* not root's own 0600 regular file, or through a link: not used */
	snprintf(text, sizeof text, "%s\n", forged);
	static const mode_t loose[] = {0644, 0640, 0604, 0700, 0400};
	for (size_t i = 0; i < sizeof loose / sizeof loose[0]; i++) {
		write_record(text, loose[i], 0);
		run(var, true, "s3cret", got);
		assert_string_equal(got, real);
	}
	write_record(text, 0600, 1);
	run(var, true, "s3cret", got);
	assert_string_equal(got, real);
	write_record(text, 0600, 0);
	assert_int_equal(rename(record, aside), 0);
	assert_int_equal(symlink(aside, record), 0);
	run(var, true, "s3cret", got);
	assert_string_equal(got, real);
	assert_int_equal(lstat(record, &st), 0); /* replaced by a file of its own */
	assert_true(S_ISREG(st.st_mode));
	/* the directory others could write in: refused */
	write_record(text, 0600, 0);
	char dir[128];
	snprintf(dir, sizeof dir, "%s/secrets", var);
	assert_int_equal(chmod(dir, 0733), 0);
	run(var, false, "s3cret", got);
	assert_string_equal(got, real);
	assert_int_equal(chmod(dir, 0700), 0);
	run(var, false, "s3cret", got);
	assert_string_equal(got, forged);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stable),
	    cmocka_unit_test_setup_teardown(test_kept, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
