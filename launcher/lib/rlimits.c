/* Resource limits from the system, not the caller (see rlimits.h). */
#include <stddef.h>
#include <sys/resource.h>

#include "lib/rlimits.h"

static const int limit_res[] = {
    RLIMIT_CPU,        RLIMIT_FSIZE,    RLIMIT_DATA,    RLIMIT_STACK,  RLIMIT_CORE,  RLIMIT_RSS,
    RLIMIT_NPROC,      RLIMIT_NOFILE,   RLIMIT_MEMLOCK, RLIMIT_AS,     RLIMIT_LOCKS, RLIMIT_NICE,
    RLIMIT_SIGPENDING, RLIMIT_MSGQUEUE, RLIMIT_RTPRIO,  RLIMIT_RTTIME,
};

int rlimits_reset(void)
{
	int rc = 0;
	for (size_t i = 0; i < sizeof limit_res / sizeof limit_res[0]; i++) {
		struct rlimit want, have;
		if (getrlimit(limit_res[i], &have) == -1)
			continue;
		if (prlimit(1, limit_res[i], NULL, &want) == -1) {
			/* Not root: pid 1's limits are not ours to read. At least open files. */
			if (limit_res[i] != RLIMIT_NOFILE)
				continue;
			want.rlim_cur = RLIMITS_NOFILE_MIN;
			want.rlim_max = have.rlim_max;
		}
		if (want.rlim_cur == have.rlim_cur && want.rlim_max == have.rlim_max)
			continue;
		if (setrlimit(limit_res[i], &want) == 0)
			continue;
		/* Without the privilege to raise a hard limit: as close as it allows. */
		if (want.rlim_cur > have.rlim_max)
			want.rlim_cur = have.rlim_max;
		want.rlim_max = have.rlim_max;
		if (setrlimit(limit_res[i], &want) == -1)
			rc = -1;
	}
	return rc;
}

/*
 * runsvdir and each runsv need a few descriptors per service: with fewer
 * than the system gives (a caller's `ulimit -n 10` whose hard limit cannot
 * be raised without CAP_SYS_RESOURCE), refuse to start rather than run a
 * runsvdir that cannot open its services, for good.
 */
int rlimits_nofile_low(struct diags *d)
{
	struct rlimit have, sys;
	if (getrlimit(RLIMIT_NOFILE, &have) == -1)
		return 0;
	rlim_t want = RLIMITS_NOFILE_MIN;
	if (prlimit(1, RLIMIT_NOFILE, NULL, &sys) == 0 && sys.rlim_cur < want)
		want = sys.rlim_cur;
	if (have.rlim_cur >= want)
		return 0;
	diag_add(
	    d, DIAG_ERR,
	    "runsvdir: the open-file limit is %llu (soft) / %llu (hard), the system's is %llu; "
	    "raising it needs CAP_SYS_RESOURCE: start it from a shell without a low `ulimit -n`",
	    (unsigned long long)have.rlim_cur, (unsigned long long)have.rlim_max,
	    (unsigned long long)want);
	return -1;
}
