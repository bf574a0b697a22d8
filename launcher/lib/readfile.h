/*
 * readfile: the one whole-file reader. Files gitlab-ctl reads whole are
 * small (templates, /proc files, env values, runsv's status), so each read
 * has a bound and a longer file is an error (EFBIG), never silently cut.
 * Reads resume after EINTR and short reads. Opening by name never follows a
 * final symlink and accepts only a regular file: a fifo or device planted by
 * a service account cannot block or feed root.
 */
#ifndef GITLAB_CTL_READFILE_H
#define GITLAB_CTL_READFILE_H

#include <stddef.h>
#include <sys/types.h>

#include "lib/buf.h"

/* fdio_read_all (lib/fdio.h), under the name its older callers use. */
ssize_t read_full(int fd, void *p, size_t len);

/* Append the rest of fd to b. 0; -1 with errno (EFBIG: more than max bytes). */
int readfile_fd(int fd, struct buf *b, size_t max);

/* Append the regular file name (relative to dirfd) to b. As readfile_fd; ELOOP for a symlink. */
int readfile_at(int dirfd, const char *name, struct buf *b, size_t max);
/* The same for a path (relative to the working directory). */
int readfile(const char *path, struct buf *b, size_t max);

/*
 * For hot paths that must not allocate: the file into out (NUL-terminated),
 * at most len - 1 bytes. The length, or -1 with errno (EFBIG when larger).
 */
ssize_t readfile_small_at(int dirfd, const char *name, char *out, size_t len);

#endif
