/*
 * tree_int: what the parts of the tree writer share (tree.c: nodes; tree_dirs.c: directory
 * fds; tree_diff.c: the diff; tree_apply.c: writing; tree_print.c: output). Not a contract for
 * anyone else: tree.h is.
 */
#ifndef GITLAB_CTL_TREE_INT_H
#define GITLAB_CTL_TREE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tree;
struct stat;

#define WHY_SYMLINK " (a symlink where a directory belongs: root does not follow it)"

/* Record the failure at path (t->errpath, errno err, t->errwhy why): -1. */
int tr_fail_at(struct tree *t, const char *path, int err);
int tr_fail_why(struct tree *t, const char *path, int err, const char *why);

/* Forget tree_diff's changes and a batch never finished (its temps unlinked). */
void tr_free_changes(struct tree *t);

/* Split an absolute path into its directory and last component. -1 (ENAMETOOLONG/EINVAL). */
int tr_split(const char *path, char *dir, size_t dirlen, const char **base);
/* Is path dir or below it ("" holds everything)? */
bool tr_below(const char *path, const char *dir);

/*
 * An fd of directory dir, reached from the anchor one component at a time, never through a
 * symlink; missing components are made (0755) when create. The fd is the tree's (kept, not
 * to be closed) and valid until the next tr_open_dir. -1 with errno and t->errpath.
 */
int tr_open_dir(struct tree *t, const char *dir, bool create);
/* The parent of path as tr_open_dir's fd, and its last component. */
int tr_open_parent(struct tree *t, const char *path, bool create, const char **base);
void tr_dirs_close(struct tree *t);
/* openat, once more after tr_shed() when out of descriptors. */
int tr_openat_shed(struct tree *t, int dfd, const char *name, int flags, mode_t mode);
/* Out of descriptors: close kept directories but busy, fsync the temps; true to retry. */
bool tr_shed(struct tree *t, int busy);
/* A directory whose entries changed: fsynced once when the batch ends. */
void tr_mark_dirty(struct tree *t, const char *dir, size_t len);
/* name in dfd opened for reading only if it still is the regular file st described. */
int tr_open_checked(int dfd, const char *name, const struct stat *st, int flags);

/* The node at path, or -1 (tree_diff's sorted index). */
long tr_find_node(const struct tree *t, const char *path);

/*
 * A failure at path (errno) below a directory the tree gives to service svc's account: that
 * service's failure only (tree_failed; tree_apply skips its changes), true. Anywhere else:
 * false, nothing recorded (the whole tree fails).
 */
bool tr_fail_service(struct tree *t, int svc, const char *path);

/* fsync and close the temps written so far (tree_apply.c). 0 or -1. */
int tr_sync_temps(struct tree *t);
/* Unlink the temps of a batch that will not be published. */
void tr_abort_batch(struct tree *t);

#endif
