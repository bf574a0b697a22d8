/*
 * keptout: what a program printed, kept across runs under a key, for output that depends only
 * on the program's own file (postgres --describe-config: its parameters' contexts), so that a
 * run whose key matches spawns nothing. Kept in <vardir>/cache/NAME (privdir.h), a regular
 * file of the effective user, exactly 0600, opened without following a link, else ignored.
 */
#ifndef GITLAB_CTL_KEPTOUT_H
#define GITLAB_CTL_KEPTOUT_H

#include <stddef.h>

#include "lib/buf.h"

#define KEPTOUT_MAX (1024 * 1024)

/*
 * The key of argv's output: its words and its program file's identity (device, inode, size,
 * mtime and ctime, which no one sets back), so a replaced or rebuilt program is run again.
 * 0, or -1 (the program cannot be stat'ed: nothing is kept).
 */
int keptout_key(char *const *argv, char *out, size_t len);

/* The output kept as name under key, appended to out: 1, or 0 when there is none for key. */
int keptout_get(const char *vardir, const char *name, const char *key, struct buf *out);

/* Keep data as name under key (temp file, fsync, rename). Failures only cost the keeping. */
void keptout_put(const char *vardir, const char *name, const char *key, const char *data,
                 size_t len);

#endif
