/* Reading and writing all of a buffer (see fdio.h). */
#include <errno.h>
#include <unistd.h>

#include "lib/fdio.h"

int fdio_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1)
			return -1;
		if (w == 0) { /* no progress and no error: give up rather than spin */
			errno = EIO;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

ssize_t fdio_read(int fd, void *p, size_t n)
{
	ssize_t r;
	while ((r = read(fd, p, n)) == -1 && errno == EINTR)
		;
	return r;
}

ssize_t fdio_read_all(int fd, void *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = fdio_read(fd, (char *)p + got, n - got);
		if (r == -1)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}
