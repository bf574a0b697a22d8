/*
 * clock: the monotonic clock in milliseconds, and sleeps that a signal does
 * not cut short. Every wait of gitlab-ctl is a poll against a deadline made
 * from these; none depends on the wall clock.
 */
#ifndef GITLAB_CTL_CLOCK_H
#define GITLAB_CTL_CLOCK_H

#include <poll.h>

/* CLOCK_MONOTONIC in milliseconds. */
long mono_ms(void);

/* Milliseconds from now until deadline (a mono_ms() time), 0 once it has passed. */
long ms_until(long deadline);

/*
 * When the machine booted, in ns since the epoch: today's offset between
 * CLOCK_REALTIME and CLOCK_BOOTTIME (/proc/stat's btime is whole seconds).
 * -1 if a clock cannot be read.
 */
long long boot_epoch_ns(void);

/*
 * poll(2) one fd for events until deadline, resuming after EINTR.
 * 1 ready, 0 timed out (errno ETIMEDOUT), -1 error.
 */
int poll_until(int fd, short events, long deadline);

/* The same for n fds (deadline 0: no time limit). poll's count of ready fds, 0, or -1. */
int poll_fds_until(struct pollfd *p, nfds_t n, long deadline);

/* Sleep ms milliseconds, resuming after EINTR. */
void sleep_ms(long ms);

#endif
