/*
 * dirtrust: the trust walk of README's Trust section (lib/pathsafe.h), OpenSSH's StrictModes
 * check: from / down to the path, every existing component is owned by root (or, when not
 * running as root, the invoking user) and not writable by group or others, unless it is
 * sticky and the next component is itself trusted. Components down to and including the
 * operator's --root are followed; below it a symlink is refused. Components that do not exist
 * yet end the walk: root creates them (not in a sticky directory others can write).
 *
 * The walk is made from directory fds, for the many paths of one run: every
 * component is opened (O_PATH; O_NOFOLLOW below the root) relative to the one above it and
 * judged by fstat of what was opened. The directories found trusted are kept open (a few,
 * most recently used first) with their device and inode, and a later path continues from the
 * deepest kept one it passes through, after one lstat (stat up to the root) of that
 * directory's path shows the same device, inode, mode and owner: a directory replaced since
 * (by a symlink or another directory) or chmodded is walked again from above, never passed
 * by its name. That lstat follows a link an ancestor was swapped for; only the writer of a
 * directory found trusted (root) could swap one, and the tree writer's O_NOFOLLOW walk
 * (render/tree.h) refuses such a link anyway.
 */
#ifndef GITLAB_CTL_DIRTRUST_H
#define GITLAB_CTL_DIRTRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define DIRTRUST_FDS 16

struct dirtrust {
	const char *root; /* the operator's --root ("" for none): followed down to it */
	struct dirtrust_dir {
		int fd; /* -1: free */
		char *path;
		size_t len;
		dev_t dev;
		ino_t ino;
		mode_t mode; /* and owner: a chmod or chown since is examined again */
		uid_t uid;
		bool loose; /* sticky and writable by others: what lies in it must be trusted */
		unsigned long used;
	} v[DIRTRUST_FDS];
	unsigned long clock;
	size_t max; /* fds kept: a share of RLIMIT_NOFILE, at least 2 (the walk's own two) */
	uid_t euid;
};

void dirtrust_init(struct dirtrust *c, const char *root);
void dirtrust_free(struct dirtrust *c);

/*
 * The walk of an absolute, normalised path: 0 when path is safe, else -1 with the offending
 * path in bad and the reason in why (a static string).
 */
int dirtrust_check(struct dirtrust *c, const char *path, char *bad, size_t badlen,
                   const char **why);

/* dirtrust_check of one path, from a cache of its own: for a command that checks one. */
int dirtrust_path(const char *root, const char *path, char *bad, size_t badlen, const char **why);

#endif
