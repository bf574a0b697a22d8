/* Whole small files, read safely (see readfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/readfile.h"

ssize_t read_full(int fd, void *p, size_t len)
{
	return fdio_read_all(fd, p, len);
}

int readfile_fd(int fd, struct buf *b, size_t max)
{
	size_t start = b->len;
	for (;;) {
		size_t have = b->len - start;
		/* One byte past max tells a file of exactly max bytes from a longer one. */
		size_t want = have < max ? max - have + 1 : 1;
		if (want > 65536)
			want = 65536;
		ssize_t n = read_full(fd, buf_room(b, want), want);
		if (n == -1)
			return -1;
		buf_commit(b, (size_t)n);
		if (b->len - start > max) {
			errno = EFBIG;
			return -1;
		}
		if ((size_t)n < want)
			return 0;
	}
}

/* close() keeping the errno of what failed before it. */
static void close_keep_errno(int fd)
{
	int e = errno;
	close(fd);
	errno = e;
}

/*
 * O_NONBLOCK: opening a fifo must not wait for a writer. It changes nothing
 * for the regular file that is then required.
 */
static int open_regular(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd == -1)
		return -1;
	struct stat st;
	if (fstat(fd, &st) == -1) {
		close_keep_errno(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	return fd;
}

int readfile_at(int dirfd, const char *name, struct buf *b, size_t max)
{
	int fd = open_regular(dirfd, name);
	if (fd == -1)
		return -1;
	int r = readfile_fd(fd, b, max);
	close_keep_errno(fd);
	return r;
}

int readfile(const char *path, struct buf *b, size_t max)
{
	return readfile_at(AT_FDCWD, path, b, max);
}

ssize_t readfile_small_at(int dirfd, const char *name, char *out, size_t len)
{
	int fd = open_regular(dirfd, name);
	if (fd == -1)
		return -1;
	ssize_t n = read_full(fd, out, len);
	close_keep_errno(fd);
	if (n == (ssize_t)len) {
		errno = EFBIG;
		return -1;
	}
	if (n >= 0)
		out[n] = '\0';
	return n;
}
