/*
 * fdio: the one read and write loops. read(2) and write(2) may move less than
 * asked (pipes, terminals, signals) or be interrupted before moving anything;
 * every caller that means "all of it or an error", or just "one read that a
 * signal does not cut short", uses these instead of its own EINTR loop.
 */
#ifndef GITLAB_CTL_FDIO_H
#define GITLAB_CTL_FDIO_H

#include <stddef.h>
#include <sys/types.h>

/* All n bytes of p to fd, resuming after EINTR and short writes: 0, or -1 with errno. */
int fdio_write_all(int fd, const void *p, size_t n);

/* One read(2) of at most n bytes, resumed after EINTR: bytes read, 0 at EOF, or -1. */
ssize_t fdio_read(int fd, void *p, size_t n);

/*
 * Up to n bytes, resuming after EINTR and short reads until n or EOF: bytes read
 * (fewer than n only at EOF), or -1 with errno.
 */
ssize_t fdio_read_all(int fd, void *p, size_t n);

#endif
