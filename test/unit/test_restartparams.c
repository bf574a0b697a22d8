/* restartparams: changed postmaster-context lines, named; others, comments and order are not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "engine/restartparams.h"

static const char listing[] = "shared_buffers\tpostmaster\tResource Usage\tINTEGER\n"
                              "wal_level\tpostmaster\tWrite-Ahead Log\tENUM\n"
                              "work_mem\tuser\tResource Usage\tINTEGER\n"
                              "max_connections\tpostmaster\tConnections\tINTEGER";

static void expect(const char *old, const char *new, const char *want)
{
	struct buf b;
	buf_init(&b);
	restartparams_changed(listing, old, strlen(old), new, strlen(new), &b);
	buf_addc(&b, '\0');
	assert_string_equal(b.p, want);
	buf_free(&b);
}

static void test_changed(void **state)
{
	(void)state;
	const char *old = "# comment\nshared_buffers = '128MB'\nwork_mem = '16MB'\n"
	                  "max_connections = 400\n";
	expect(old, old, "");
	/* a reloadable one is not named */
	expect(old,
	       "# comment\nshared_buffers = '128MB'\nwork_mem = '32MB'\nmax_connections = 400\n",
	       "");
	/* changed, added and removed lines; blanks around '=' do not count */
	expect(old, "shared_buffers='256MB'\nwal_level = 'replica'\nwork_mem = '16MB'\n",
	       "shared_buffers, wal_level, max_connections");
	expect(old, "  shared_buffers   =   '128MB'  \nwork_mem = '16MB'\nmax_connections = 400",
	       "");
	/* the last line of a name wins, as PostgreSQL reads the file */
	expect(old,
	       "shared_buffers = '1GB'\nshared_buffers = '128MB'\nwork_mem = '16MB'\n"
	       "max_connections = 400\n",
	       "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_changed)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
