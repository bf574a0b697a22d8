/*
 * probe SERVICE: the readiness check of a supervised service, for its
 * generated sv/<svc>/check script (so `sv -w`, runit's start path and
 * sv_check keep working) and for anyone by hand. Loads the configuration,
 * takes the supervised pid from supervise/status and runs ready.c's check.
 * Exit 0 ready; 1 not (yet), with the reason on stderr; 2 usage.
 */
#include <err.h>
#include <stdio.h>
#include <string.h>

#include "lib/clock.h"
#include "cmd/commands.h"
#include "cmd/load.h"
#include "proc/ready.h"
#include "runit/runit.h"

#define PROBE_TIMEOUT_MS 2000 /* one attempt; callers poll */

int cmd_probe(const struct ctl *ctl, int argc, char **argv)
{
	struct loaded l;
	char dir[PATH_MAX], why[512];
	struct sv_status st;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: gitlab-ctl probe SERVICE\n");
		return 2;
	}
	/* warnings belong to reconfigure, not to every check */
	if (cmd_load(ctl, &l, CMD_REPORT_FAILED, argv[0], stderr) == -1) {
		cmd_unload(&l);
		return 1;
	}
	int rc = 1;
	const struct svc *s = attrs_svc(&l.a, argv[1]);
	if (s == NULL)
		warnx("probe: no service %s in the catalog", argv[1]);
	else if (ctl_sv_dir(ctl, dir, sizeof dir, s->def->name) == -1)
		warnx("probe: %s: path too long", argv[1]);
	else if (sv_read_status(dir, &st) == -1 || st.state != SV_RUN || st.pid == 0)
		fprintf(stderr, "%s: not running\n", s->def->name);
	else if (ready_check(ctl, &l.a, s, st.pid, mono_ms() + PROBE_TIMEOUT_MS, why, sizeof why) !=
	         1)
		fprintf(stderr, "%s: %s\n", s->def->name, why);
	else
		rc = 0;
	cmd_unload(&l);
	return rc;
}
