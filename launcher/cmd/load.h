/*
 * load: the one way a command loads the configuration (the catalog of
 * <ctl->datadir>/sv, then gitlab.rb) and the one place that decides which of
 * its diagnostics the user sees. The policies differ on purpose: check-config
 * and reconfigure show every warning; the commands that only read the
 * configuration sum the warnings up in one line (they run often: a run
 * script's exec at every start); the helpers scripts run (probe) or that act
 * on the installation show nothing unless the configuration fails to load.
 */
#ifndef GITLAB_CTL_LOAD_H
#define GITLAB_CTL_LOAD_H

#include <stdbool.h>
#include <stdio.h>

#include "config/attrs.h"
#include "config/catalog.h"
#include "lib/ctl.h"
#include "lib/diag.h"

enum cmd_report {
	CMD_REPORT_NONE,   /* print nothing: the command prints d itself, later */
	CMD_REPORT_FULL,   /* every record, warnings included (diags_print) */
	CMD_REPORT_QUIET,  /* errors in full, warnings as one line (diags_print_quiet) */
	CMD_REPORT_FAILED, /* every record when the load failed, nothing when it loaded */
};

struct loaded {
	struct catalog cat;
	struct attrs a;
	struct diags d; /* kept until cmd_unload: JSON output reports them too */
	bool ok;        /* cat and a loaded */
};

/*
 * Load into l and report its diagnostics on fp as how says (fp NULL: print nothing), verb
 * naming the command in the quiet summary. Returns 0, or -1 when either does not load or an
 * error was recorded (l->ok false, cat and a zeroed). Call cmd_unload either way.
 */
int cmd_load(const struct ctl *ctl, struct loaded *l, enum cmd_report how, const char *verb,
             FILE *fp);

/* The catalog alone (service-list, the service resolver): 0 or -1, reported as cmd_load. */
int cmd_load_catalog(const struct ctl *ctl, struct catalog *cat, enum cmd_report how,
                     const char *verb, FILE *fp);

void cmd_unload(struct loaded *l);

#endif
