/*
 * reap: the one wait for a child process with a deadline. Every helper
 * gitlab-ctl runs with a time limit (check scripts, validators, setup steps,
 * check_command) ends the same way: at the deadline its process group and
 * the child are asked to stop (SIGTERM), and whatever still runs after a
 * grace is killed (SIGKILL), so nothing outlives the command that started it.
 */
#ifndef GITLAB_CTL_REAP_H
#define GITLAB_CTL_REAP_H

#include <sys/types.h>

/* What a caller gives a helper between SIGTERM and SIGKILL. */
#define REAP_GRACE_MS 1000

/*
 * Wait for child pid until deadline (a mono_ms() time; 0: for ever), resuming
 * after EINTR. At the deadline: SIGTERM to its process group -pid and to pid,
 * then, once it has exited or grace_ms more have passed (at once when grace_ms
 * is 0), SIGKILL to what is left of both; the child is reaped either way. Returns its exit status,
 * 128 + the signal that ended it, or -1 with errno: ETIMEDOUT when the deadline passed (it was then
 * stopped and reaped), else waitpid's error.
 */
int reap_until(pid_t pid, long deadline, long grace_ms);

#endif
