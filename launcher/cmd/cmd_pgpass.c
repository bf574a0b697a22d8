/*
 * pg-password-md5 USER: the hash Omnibus' command prints for gitlab.rb's
 * postgresql['sql_user_password'] and pgbouncer's users: the hex MD5 of the
 * password followed by the user name (PostgreSQL's md5 scheme, without its
 * "md5" prefix), as Omnibus' GitlabCtl::PostgreSQL::PasswordHash does. On a
 * terminal it asks twice without echo and refuses a mismatch; otherwise it
 * reads one line from stdin (a trailing "\n", "\r\n" or "\r" removed), no
 * prompt, as Omnibus' get_password. Without USER it says why and exits 1.
 */
#include <readpassphrase.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "lib/alloc.h"
#include "lib/md5.h"

#define PW_MAX 1024

/* One password into buf (NUL-terminated); 0, or -1 after saying why. */
static int read_password(char *buf, size_t len)
{
	if (isatty(STDIN_FILENO)) {
		char again[PW_MAX];
		if (readpassphrase("Enter password: ", buf, len, RPP_REQUIRE_TTY) == NULL ||
		    readpassphrase("Confirm password: ", again, sizeof again, RPP_REQUIRE_TTY) ==
		        NULL) {
			fprintf(stderr, "gitlab-ctl pg-password-md5: cannot read the password\n");
			return -1;
		}
		int same = strcmp(buf, again) == 0;
		explicit_bzero(again, sizeof again);
		if (!same) {
			fprintf(stderr, "gitlab-ctl pg-password-md5: the passwords do not match\n");
			return -1;
		}
		return 0;
	}
	if (fgets(buf, (int)len, stdin) == NULL) {
		fprintf(stderr, "gitlab-ctl pg-password-md5: no password on stdin\n");
		return -1;
	}
	size_t n = strlen(buf);
	if (n == len - 1 && buf[n - 1] != '\n' && !feof(stdin)) {
		fprintf(stderr,
		        "gitlab-ctl pg-password-md5: the password is longer than %d bytes\n",
		        PW_MAX - 2);
		return -1;
	}
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '\r')
		buf[--n] = '\0';
	return 0;
}

int cmd_pg_password_md5(const struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	if (argc < 2 || argv[1][0] == '\0') {
		fprintf(stderr,
		        "gitlab-ctl pg-password-md5: name the user: PostgreSQL's md5 hash is "
		        "salted with the user name\nusage: gitlab-ctl pg-password-md5 USER\n");
		return 1;
	}
	if (argc > 2) {
		fprintf(stderr, "usage: gitlab-ctl pg-password-md5 USER\n");
		return 2;
	}
	char pw[PW_MAX];
	if (read_password(pw, sizeof pw) == -1) {
		explicit_bzero(pw, sizeof pw);
		return 1;
	}
	size_t plen = strlen(pw), ulen = strlen(argv[1]);
	char *msg = xmalloc(plen + ulen + 1);
	memcpy(msg, pw, plen);
	memcpy(msg + plen, argv[1], ulen + 1);
	explicit_bzero(pw, sizeof pw);
	char hex[33];
	md5_hex(msg, plen + ulen, hex);
	explicit_bzero(msg, plen + ulen);
	free(msg);
	printf("%s\n", hex);
	return fflush(stdout) == 0 ? 0 : 1;
}
