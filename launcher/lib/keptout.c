/* A program's output kept across runs under a key (see keptout.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/fnv.h"
#include "lib/keptout.h"
#include "lib/privdir.h"
#include "lib/readfile.h"

int keptout_key(char *const *argv, char *out, size_t len)
{
	struct stat st;
	if (argv == NULL || argv[0] == NULL || stat(argv[0], &st) == -1)
		return -1;
	uint64_t h = fnv_argv(argv);
	int n = snprintf(out, len, "%016llx %ju %ju %jd %jd.%09ld %jd.%09ld", (unsigned long long)h,
	                 (uintmax_t)st.st_dev, (uintmax_t)st.st_ino, (intmax_t)st.st_size,
	                 (intmax_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
	                 (intmax_t)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int cache_dir(const char *vardir, bool create)
{
	char dir[PATH_MAX];
	if (vardir == NULL || snprintf(dir, sizeof dir, "%s/cache", vardir) >= (int)sizeof dir)
		return -1;
	return privdir_open(vardir, dir, create);
}

int keptout_get(const char *vardir, const char *name, const char *key, struct buf *out)
{
	int dfd = cache_dir(vardir, false);
	if (dfd == -1)
		return 0;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	close(dfd);
	if (fd == -1)
		return 0;
	struct stat st;
	struct buf b;
	buf_init(&b);
	int r = 0;
	size_t klen = strlen(key);
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    (st.st_mode & 07777) == 0600 && readfile_fd(fd, &b, KEPTOUT_MAX + klen + 1) == 0 &&
	    b.len > klen && memcmp(b.p, key, klen) == 0 && b.p[klen] == '\n') {
		buf_add(out, b.p + klen + 1, b.len - klen - 1);
		r = 1;
	}
	buf_free(&b);
	close(fd);
	return r;
}

void keptout_put(const char *vardir, const char *name, const char *key, const char *data,
                 size_t len)
{
	char tmp[NAME_MAX + 1];
	if (len > KEPTOUT_MAX ||
	    snprintf(tmp, sizeof tmp, ".%s.%ld", name, (long)getpid()) >= (int)sizeof tmp)
		return;
	int dfd = cache_dir(vardir, true);
	if (dfd == -1)
		return;
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool ok = fd != -1 && fdio_write_all(fd, key, strlen(key)) == 0 &&
	          fdio_write_all(fd, "\n", 1) == 0 && fdio_write_all(fd, data, len) == 0 &&
	          fsync(fd) == 0;
	if (fd != -1 && close(fd) == -1)
		ok = false;
	if (!ok || renameat(dfd, tmp, dfd, name) == -1)
		(void)unlinkat(dfd, tmp, 0);
	close(dfd);
}
