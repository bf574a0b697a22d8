/* Writing all of a buffer (see fdio.h). */
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
