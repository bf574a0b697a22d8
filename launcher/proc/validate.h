/*
 * validate: run a catalog `validate` command (promtool check config,
 * amtool check-config) on rendered bytes before reconfigure publishes them.
 *
 * The bytes reach it on stdin (a sealed memfd; "{{file}}" in the command is
 * /dev/stdin), so nothing is written anywhere and no path an account can
 * touch is involved. As root it runs as the given account (else nobody),
 * in its own session, from "/", with only PATH, HOME and LANG, no fd of ours
 * beyond 0-2, killed (with its process group) at the deadline. What it
 * prints comes back with control bytes made visible, for root's terminal.
 */
#ifndef GITLAB_CTL_VALIDATE_H
#define GITLAB_CTL_VALIDATE_H

#include <stddef.h>
#include <sys/types.h>

#include "lib/buf.h"

#define VALIDATE_OUT_MAX (64 * 1024) /* a --help of 18 KB (node-exporter) read whole */

/*
 * argv[0] must be an absolute path. user/group: the account to run as when
 * root (NULL or unknown: nobody/nogroup). Returns the exit status, 128 +
 * signal, or -1 with errno (ETIMEDOUT: killed at deadline, a mono_ms() time).
 */
int validate_run(char *const *argv, const char *data, size_t len, const char *user,
                 const char *group, long deadline, struct buf *out);

/*
 * The same in two halves, so that several run at once (reconfigure's validators): started,
 * then its output read and its status returned as validate_run does. Each started job must
 * be finished.
 */
struct validate_job {
	pid_t pid;
	int out;
	long deadline;
};
int validate_start(char *const *argv, const char *data, size_t len, const char *user,
                   const char *group, long deadline, struct validate_job *j);
int validate_finish(struct validate_job *j, struct buf *out);

#endif
