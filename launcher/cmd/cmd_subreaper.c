/*
 * subreaper -- COMMAND ARGS...: become a child subreaper, then exec COMMAND
 * (the flag survives execve). Hidden: a catalog command for a service whose
 * program detaches its own children on purpose (Patroni starts postmaster
 * through a double fork, so postmaster outlives a Patroni restart). Without
 * it such a child is adopted by the runsvdir wrapper, which stops every
 * orphan it adopts; with it the service's own process adopts it, and the
 * service stays one tree under its runsv.
 */
#include <err.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cmd/commands.h"

int cmd_subreaper(const struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	if (argc < 3 || strcmp(argv[1], "--") != 0 || argv[2][0] != '/') {
		fprintf(stderr, "usage: gitlab-ctl subreaper -- /ABSOLUTE/COMMAND [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		err(1, "subreaper: cannot become a child subreaper");
	execv(argv[2], argv + 2);
	err(127, "subreaper: cannot exec %s", argv[2]);
}
