/*
 * rmtree: remove a directory tree as root without ever following a link.
 * Service homes are writable by service accounts, which may plant symlinks
 * or swap a directory for one while we work: every step is relative to an
 * open directory fd (openat O_NOFOLLOW|O_DIRECTORY, unlinkat), so a link is
 * removed as a link and nothing outside the tree is touched. Like
 * `rm --one-file-system`, a directory on another file system (a mount point)
 * is left with its contents and reported.
 *
 * There is no depth limit and no recursion: it holds one directory fd (and
 * the parent of the tree), walking down by name and back up through "..",
 * checked against the dev/ino it recorded on the way down; a directory an
 * account moved meanwhile is left and reported, never searched for.
 */
#ifndef GITLAB_CTL_RMTREE_H
#define GITLAB_CTL_RMTREE_H

#include <stdio.h>

#include "lib/diag.h"

/*
 * Remove path (a directory, a file or a link) and everything below it.
 * A missing path is not an error. What cannot be removed is recorded in d
 * (an error; a mount point emptied and kept, a warning), or only counted when d
 * is NULL. Returns 0 when all of it is gone, -1 otherwise.
 */
int rmtree_diags(const char *path, struct diags *d);

/* The same, each problem printed on warn (NULL: stderr) as it happens. */
int rmtree(const char *path, FILE *warn);

#endif
