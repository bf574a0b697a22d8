/* Monotonic milliseconds and full-length sleeps (see clock.h). */
#include <errno.h>
#include <poll.h>
#include <time.h>

#include "lib/clock.h"

long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

long ms_until(long deadline)
{
	long left = deadline - mono_ms();
	return left > 0 ? left : 0;
}

long long boot_epoch_ns(void)
{
	struct timespec rt, bt;
	if (clock_gettime(CLOCK_REALTIME, &rt) == -1 || clock_gettime(CLOCK_BOOTTIME, &bt) == -1)
		return -1;
	return (rt.tv_sec - bt.tv_sec) * 1000000000LL + (rt.tv_nsec - bt.tv_nsec);
}

int poll_fds_until(struct pollfd *p, nfds_t n, long deadline)
{
	for (;;) {
		int r = poll(p, n, deadline == 0 ? -1 : (int)ms_until(deadline));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == 0)
			errno = ETIMEDOUT;
		return r;
	}
}

int poll_until(int fd, short events, long deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	return poll_fds_until(&p, 1, deadline);
}

void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}
