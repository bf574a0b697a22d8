/*
 * fdio: the one write-everything loop. write(2) may write less than asked
 * (pipes, terminals, signals) or be interrupted before writing anything;
 * every caller that means "all of it or an error" uses this instead of its
 * own loop.
 */
#ifndef GITLAB_CTL_FDIO_H
#define GITLAB_CTL_FDIO_H

#include <stddef.h>

/* All n bytes of p to fd, resuming after EINTR and short writes: 0, or -1 with errno. */
int fdio_write_all(int fd, const void *p, size_t n);

#endif
