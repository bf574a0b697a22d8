/*
 * clock: the monotonic clock in milliseconds, and sleeps that a signal does
 * not cut short. Every wait of gitlab-ctl is a poll against a deadline made
 * from these; none depends on the wall clock.
 */
#ifndef GITLAB_CTL_CLOCK_H
#define GITLAB_CTL_CLOCK_H

/* CLOCK_MONOTONIC in milliseconds. */
long mono_ms(void);

/* Sleep ms milliseconds, resuming after EINTR. */
void sleep_ms(long ms);

#endif
