/*
 * testlib: the file and directory helpers the cmocka tests share, so that each test keeps
 * only what it checks. Include it after <cmocka.h>. Every helper asserts: a file that cannot
 * be written or read fails the test where it happened.
 */
#ifndef GITLAB_CTL_TESTLIB_H
#define GITLAB_CTL_TESTLIB_H

#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* dir/rel into out, which must hold it. */
static inline void tl_path(char *out, size_t n, const char *dir, const char *rel)
{
	int k = snprintf(out, n, "%s/%s", dir, rel);
	assert_true(k > 0 && (size_t)k < n);
}

/* path holds exactly len bytes of data (created or truncated) and has mode (umask aside). */
static inline void tl_write(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd != -1);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* path holds text (without its NUL) and has mode. */
static inline void tl_put(const char *path, const char *text, mode_t mode)
{
	tl_write(path, text, strlen(text), mode);
}

/* The whole of path, NUL-terminated, in memory the caller frees. */
static inline char *tl_slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	char *buf = NULL;
	size_t cap = 0, len = 0, n;
	do {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		n = fread(buf + len, 1, cap - len - 1, fp);
		len += n;
	} while (n > 0);
	assert_false(ferror(fp));
	fclose(fp);
	buf[len] = '\0';
	return buf;
}

/* A fresh directory /tmp/NAME.XXXXXX, its path in dir (n bytes); 0, or -1 for a setup. */
static inline int tl_tmpdir(char *dir, size_t n, const char *name)
{
	int k = snprintf(dir, n, "/tmp/%s.XXXXXX", name);
	if (k < 0 || (size_t)k >= n)
		return -1;
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static inline int tl_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* Remove a tree a test made, depth first, never following a link; 0 or -1. */
static inline int tl_rmtree(const char *dir)
{
	return nftw(dir, tl_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A TCP socket bound to 127.0.0.1 on a port the kernel picks (*port), listening if asked:
 * bound but not listening, it is refused, and no other process can take it meanwhile. */
static inline int tl_bound(int *port, bool listening)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd != -1);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	*port = ntohs(sa.sin_port);
	if (listening)
		assert_int_equal(listen(fd, 8), 0);
	return fd;
}

#endif
