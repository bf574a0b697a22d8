/* STUB: replaced by the module's owner. */
#include <err.h>

#include "commands.h"

int cmd_control(const struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	warnx("%s: not implemented yet", argv[0]);
	return 1;
}

int cmd_status(const struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	warnx("%s: not implemented yet", argv[0]);
	return 1;
}

int cmd_service_list(const struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	warnx("%s: not implemented yet", argv[0]);
	return 1;
}

int cmd_tail(const struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	warnx("%s: not implemented yet", argv[0]);
	return 1;
}
