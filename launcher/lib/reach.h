/*
 * reach: can a service account get to a program? Walks the path the way the
 * kernel does for that uid and its groups (every directory searchable, links
 * followed, the file executable), so check-config can name the directory that
 * would make the service's execve fail, before reconfigure starts it.
 * Mode bits only: ACLs and LSMs are not consulted.
 */
#ifndef GITLAB_CTL_REACH_H
#define GITLAB_CTL_REACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct reach_who {
	const char *name; /* for messages */
	uid_t uid;        /* REACH_NOBODY: an account that does not exist yet (owns nothing) */
	gid_t gids[64];
	int ngids;
};

#define REACH_NOBODY ((uid_t)-1)

/* The account `user` with group `group` and its supplementary groups; an unknown user is new. */
void reach_who_account(struct reach_who *w, const char *user, const char *group);
/* The calling process' own credentials. */
void reach_who_self(struct reach_who *w, const char *name);

/*
 * Check that w can execute path (absolute). Returns 0; 1 with why set
 * ("/root is not searchable by git (mode 0700)", "...: No such file or
 * directory").
 */
int reach_exec(const struct reach_who *w, const char *path, char *why, size_t len);
/* The same for reading a regular file (a TLS key the service opens). */
int reach_read(const struct reach_who *w, const char *path, char *why, size_t len);

#endif
