/*
 * svrun: run a command as a service would run, for setup steps and
 * check_command: through `gitlab-ctl exec --envdir` (the same user switch,
 * env, umask, chdir and fd hygiene as the service itself; no shell), with
 * stdout and stderr captured, killed at a deadline.
 */
#ifndef GITLAB_CTL_SVRUN_H
#define GITLAB_CTL_SVRUN_H

#include "config/attrs.h"
#include "lib/buf.h"
#include "lib/ctl.h"

/*
 * argv (already expanded) as service s. Output (at most 64 KiB) is appended
 * to out. Returns the exit status, 128 + signal, or -1 with errno (ETIMEDOUT:
 * killed at deadline, a mono_ms() time).
 */
int svrun(const struct ctl *ctl, const struct svc *s, char *const *argv, long deadline,
          struct buf *out);

#endif
