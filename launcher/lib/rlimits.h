/*
 * rlimits: start runsvdir, the services and their checks from the system's
 * resource limits, never from those of whoever typed the command
 * (`(ulimit -n 10; gitlab-ctl reconfigure)` would otherwise leave a
 * runsvdir that cannot open its services, and services with 10 files).
 */
#ifndef GITLAB_CTL_RLIMITS_H
#define GITLAB_CTL_RLIMITS_H

#include "lib/diag.h"

#define RLIMITS_NOFILE_MIN 1024

/*
 * Reset every resource limit (NOFILE, NPROC, STACK, CORE, AS, MEMLOCK, ...)
 * to pid 1's, the system's defaults. A hard limit the caller lowered can
 * only be raised with CAP_SYS_RESOURCE: then the soft limit goes as high as
 * the hard one allows. Without the privilege to read pid 1's limits (not
 * root), only the soft NOFILE is raised to RLIMITS_NOFILE_MIN (or the hard
 * limit). Only system calls: safe in a child between fork and exec.
 * 0, or -1 when some limit could not be set.
 */
int rlimits_reset(void);

/*
 * Is the open-file limit below min(RLIMITS_NOFILE_MIN, pid 1's)? Then say
 * so in d and return -1; 0 when it is enough.
 */
int rlimits_nofile_low(struct diags *d);

#endif
