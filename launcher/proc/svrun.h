/*
 * svrun: run a command as a service would run, for setup steps and
 * check_command: through `gitlab-ctl exec --envdir` (the same user switch,
 * env, umask, chdir and fd hygiene as the service itself; no shell), with
 * stdout and stderr captured, killed at a deadline. The account never holds
 * root's terminal: the child has its own session and only pipes and /dev/null.
 */
#ifndef GITLAB_CTL_SVRUN_H
#define GITLAB_CTL_SVRUN_H

#include "config/attrs.h"
#include "lib/buf.h"
#include "lib/ctl.h"

/*
 * argv (already expanded) as service s, in a session of its own without a
 * controlling terminal, stdin /dev/null. Its stdout (at most 64 KiB) is appended
 * to out, its stderr to err (NULL: to out as well); raw bytes, the caller
 * escapes them (lib/safetext.h) before showing them. Returns the exit status,
 * 128 + signal, or -1 with errno (ETIMEDOUT: killed at deadline, a mono_ms() time).
 */
int svrun(const struct ctl *ctl, const struct svc *s, char *const *argv, long deadline,
          struct buf *out, struct buf *err);

/*
 * Called with the child's pid before it may exec: the child waits until this
 * returns, so whatever started() records about it (steprec.h) is on disk
 * before the command does anything. A nonzero return kills the child
 * unstarted; svrun_gated then returns -1 with the callback's errno.
 */
typedef int (*svrun_started_fn)(void *ctx, pid_t pid);

/* svrun, gated by started(ctx, pid). */
int svrun_gated(const struct ctl *ctl, const struct svc *s, char *const *argv, long deadline,
                struct buf *out, struct buf *err, svrun_started_fn started, void *ctx);

#endif
