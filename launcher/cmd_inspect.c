/* STUB: replaced by the module's owner. */
#include <err.h>

#include "commands.h"

int cmd_inspect(const struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	warnx("%s: not implemented yet", argv[0]);
	return 1;
}
