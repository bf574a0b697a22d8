/*
 * spawn: run a helper program with a fixed argv, never through a shell, and
 * wait for it. Used for check scripts, useradd/groupadd and diff(1).
 */
#ifndef GITLAB_CTL_SPAWN_H
#define GITLAB_CTL_SPAWN_H

#include <stdbool.h>

#define SPAWN_NULL    (-1) /* connect the stream to /dev/null */
#define SPAWN_INHERIT (-2) /* keep ours */

struct spawn {
	const char *dir;   /* chdir there first; NULL to stay */
	char *const *envp; /* NULL: a minimal environment holding only a standard PATH */
	int out, err;     /* a descriptor, SPAWN_NULL or SPAWN_INHERIT; stdin is always /dev/null */
	bool search;      /* look the program up in envp's PATH (lib/pathsearch) */
	bool sane_limits; /* the system's resource limits, not ours (rlimits.h) */
	long deadline;    /* mono_ms() time at which the program (its process group) is
	                     stopped as reap.h says and spawn_wait fails with ETIMEDOUT; 0: wait
	                     for ever */
};

/*
 * Returns the program's exit status, 128 + signal number when it was killed,
 * 127 when it could not be executed, or -1 with errno when fork or wait failed
 * (ETIMEDOUT: the deadline passed and the program was stopped, reap.h).
 */
int spawn_wait(const char *path, char *const argv[], const struct spawn *sp);

#endif
