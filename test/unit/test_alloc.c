/* alloc: the one out-of-memory policy: each x* returns usable memory or the process dies
 * with 111 and one line on stderr, never a NULL to the caller. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"

#include "lib/alloc.h"

#ifdef GITLAB_CTL_COVERAGE
/* die_nomem() ends with _exit, which drops the counters of the dying child: dump them
 * first (this definition takes the place of libc's inside this test program only). */
void __gcov_dump(void);
void _exit(int status)
{
	__gcov_dump();
	syscall(SYS_exit_group, status);
	for (;;)
		;
}
#endif

static void test_ok(void **state)
{
	(void)state;
	char *p = xmalloc(0); /* a unique pointer, freeable */
	assert_non_null(p);
	free(p);
	int *v = xcalloc(4, sizeof *v);
	assert_int_equal(v[0] | v[1] | v[2] | v[3], 0);
	v = xreallocarray(v, 1000, sizeof *v);
	v[999] = 7;
	assert_int_equal(v[999], 7);
	free(v);
	free(xcalloc(0, 0));
	free(xreallocarray(NULL, 0, 0));
	char *s = xstrdup("gitlab");
	assert_string_equal(s, "gitlab");
	free(s);
	s = xstrndup("gitlab-ctl", 6);
	assert_string_equal(s, "gitlab");
	free(s);
	s = xasprintf("%s:%d", "port", 9168);
	assert_string_equal(s, "port:9168");
	free(s);
}

static void big_malloc(void)
{
	(void)!xmalloc(SIZE_MAX / 2);
}
static void big_calloc(void)
{
	(void)!xcalloc(SIZE_MAX / 2, 4); /* overflows */
}
static void big_realloc(void)
{
	(void)!xreallocarray(NULL, SIZE_MAX / 2, 4); /* overflows */
}
/* A string larger than what is left under the cap. */
static char *huge(void)
{
	size_t n = 48L << 20;
	char *s = malloc(n + 1);
	if (s == NULL)
		_exit(2);
	memset(s, 'x', n);
	s[n] = '\0';
	return s;
}
static void big_strdup(void)
{
	(void)!xstrdup(huge());
}
static void big_strndup(void)
{
	char *s = huge();
	(void)!xstrndup(s, strlen(s));
}
static void big_asprintf(void)
{
	(void)!xasprintf("%s", huge());
}

/* The step of capped(): a function that must not return. */
struct step {
	void (*fn)(void);
};

/* Runs the step with the address space capped near its current size. */
static int capped(void *arg)
{
	struct rlimit rl;
	FILE *fp = fopen("/proc/self/status", "r");
	char line[256];
	long kb = 0;
	while (fp && fgets(line, sizeof line, fp))
		if (sscanf(line, "VmSize: %ld kB", &kb) == 1)
			break;
	if (fp)
		fclose(fp);
	rl.rlim_cur = rl.rlim_max = (rlim_t)kb * 1024 + (64L << 20);
	setrlimit(RLIMIT_AS, &rl);
	((const struct step *)arg)->fn();
	return 0; /* only if fn returned: the test fails on status 0 */
}

static void test_dies_111(void **state)
{
	(void)state;
	void (*fns[])(void) = {big_malloc, big_calloc,  big_realloc,
	                       big_strdup, big_strndup, big_asprintf};
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
		char err[256];
		assert_int_equal(in_child(capped, &(struct step){fns[i]}, err, sizeof err),
		                 ALLOC_EXIT);
		assert_string_equal(err, "gitlab-ctl: fatal: out of memory\n");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ok),
	    cmocka_unit_test(test_dies_111),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
