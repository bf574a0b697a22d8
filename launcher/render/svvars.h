/*
 * svvars: what a template of one service sees (`{{name}}`), for reconfigure's
 * run scripts and config files and for `exec --from-config`, which renders
 * the same config files: one definition, so both write the same bytes.
 *   gitlab_ctl root service user group groups home env_directory log_directory
 *   listen_host listen_port stop_signal datadir config, every setting of the
 *   service (attrs_var), and {{svc.name}} another service's setting (a bool
 *   reads "" for false, for {{#if postgresql.enable}}); the list `argv`, and
 *   argv.ELEM, "1" when the command has element ELEM ({{#if argv.--no-x}}); a
 *   yaml setting's data for the data filters ({{redis_save save}}).
 */
#ifndef GITLAB_CTL_SVVARS_H
#define GITLAB_CTL_SVVARS_H

#include "config/attrs.h"
#include "lib/ctl.h"
#include "render/template.h"
#include "render/yaml.h"

struct svvars {
	const struct ctl *ctl;
	const struct attrs *a;
	const struct svc *svc;
	char port[16];
	struct yaml_srcmap *map; /* set while a file whose gitlab.rb lines are wanted renders */
};

/* Fill v for service s and return the template variables reading from it (v must outlive them). */
struct tpl_vars svvars_init(struct svvars *v, const struct ctl *ctl, const struct attrs *a,
                            const struct svc *s);

#endif
