/*
 * ready: is THIS service ready? The catalog's check (sv/gitlab-exporter.conf
 * documents the forms), run in C, no curl:
 *   http:/PATH   GET on the listen address and port, a 2xx or 3xx answer
 *   tcp          connect to the listen address and port
 *   unix:PATH    connect to a unix socket
 *   check_send / check_expect   after connecting: send, then read until the
 *                reply contains the expected text (Redis: PING / +PONG)
 *   check_command  argv run as the service user (`gitlab-ctl exec`), exit 0
 * Before talking to a TCP port or a unix socket, the listening socket must
 * belong to the supervised process or its process group (the socket inode of
 * /proc/net/{tcp,tcp6,unix} among /proc/PID/fd): an answer from another
 * process holding the port is not this service being ready, and the error
 * names that process.
 */
#ifndef GITLAB_CTL_READY_H
#define GITLAB_CTL_READY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/attrs.h"
#include "lib/ctl.h"

/*
 * One attempt, bounded by deadline (mono_ms()). pid is the supervised pid
 * (runsv's status). Returns 1 ready; 0 not (yet), with the reason in why.
 */
int ready_check(const struct ctl *ctl, const struct attrs *a, const struct svc *s, pid_t pid,
                long deadline, char *why, size_t len);

/*
 * Who holds a listening TCP socket on port: 1 with *pid (and its command
 * line in cmd, NUL-separated arguments joined by spaces), 0 if nobody
 * visible does. Exposed for tests.
 */
int ready_port_holder(int port, pid_t *pid, char *cmd, size_t len);

/*
 * Is a TCP port taken by a process other than the supervised svpid and its
 * process group (svpid 0: by anyone)? 1 with the holder's pid (0 when it is
 * not visible) and its command line, control and non-ASCII bytes shown as
 * '?'; 0 when nobody listens or the service itself does.
 */
int ready_port_taken(int port, pid_t svpid, pid_t *pid, char *cmd, size_t len);

#endif
