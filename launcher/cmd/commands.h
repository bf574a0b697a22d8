/*
 * commands: one entry point per gitlab-ctl command. main() parses global
 * options into struct ctl and dispatches here. Each returns the process exit
 * status and reports its own errors.
 */
#ifndef GITLAB_CTL_COMMANDS_H
#define GITLAB_CTL_COMMANDS_H

#include <stdbool.h>
#include <stdio.h>

#include "lib/ctl.h"

typedef int (*cmd_fn)(const struct ctl *ctl, int argc, char **argv);

/* What main() does differently for a command before calling it (struct command's flags). */
enum command_flag {
	/* It reads only the root's runit tree: main sets up the root alone (ctl_init_root), not
	 * the binary's and the catalog's paths, which `status` would pay for on every call. */
	CMD_ROOT_ONLY = 1u << 0,
	/* -c/--config after the command name is the command's own option (exec: the gitlab.rb it
	 * computes the env from), left in argv rather than taken as the global one. */
	CMD_OWN_CONFIG = 1u << 1,
};

/* One entry of the table; designated initializers, so an entry names only what it sets. */
struct command {
	const char *name;
	cmd_fn fn;
	const char *usage;   /* arguments, e.g. "[SERVICE]" */
	const char *summary; /* one line; NULL: internal (run by generated scripts), not in help */
	const char
	    *details;   /* `help CMD`: options, exit codes, an example; NULL: the usage says it */
	unsigned flags; /* enum command_flag bits; 0 for most */
};

/* The command table, NULL-terminated; defined in commands.c. */
extern const struct command commands[];
const struct command *command_find(const char *name);
/* "unknown command 'statsu'; did you mean 'status'?" */
void command_unknown(const char *name, FILE *fp);
/*
 * "gitlab-ctl VERB: unknown service 'x' (known: a, b); did you mean 'a'?": the known services
 * are the catalog's (cat may be NULL) and the enabled ones (sel may be NULL).
 */
struct catalog;
struct svsel;
void command_unknown_service(const char *verb, const char *name, const struct catalog *cat,
                             const struct svsel *sel, FILE *fp);
/*
 * The one resolver of a SERVICE argument (NULL: every enabled service) for the verbs that act
 * on enabled services: fills sel and returns 0, or reports why not on fp, prefixed
 * "gitlab-ctl VERB: ", and returns 1: "not set up yet: run gitlab-ctl reconfigure" (no
 * service directory), "postgresql is not enabled: set postgresql['enable'] = true and run
 * gitlab-ctl reconfigure" (a catalog service), or an unknown service with did-you-mean.
 */
int command_select(const struct ctl *ctl, const char *verb, const char *name, struct svsel *sel,
                   FILE *fp);
/*
 * After a verb found services without their runsv: "gitlab-ctl VERB: runsvdir is not
 * running: ..." on fp when no runsvdir supervises the root.
 */
void command_hint_runsvdir(const struct ctl *ctl, const char *verb, FILE *fp);
/*
 * getopt_long for a command's own options (argv[0] is the command): its complaints read
 * "gitlab-ctl CMD: unknown option '--x'" rather than getopt's "CMD: unrecognized option".
 */
struct option;
int command_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);
/* The same for main's global options, before the command: "gitlab-ctl: unknown option ...". */
int command_getopt_global(int argc, char **argv, const char *shortopts,
                          const struct option *longopts);
/*
 * rootlock_take for a command: the wait announced on stderr as it begins, problems printed
 * there when it ends. 0 with the lock on *fdp, or -1: reported.
 */
int command_lock(const struct ctl *ctl, bool create, int *fdp);
/* One optional SERVICE argument after the command's own options (getopt's optind); -1: reported. */
int command_one_arg(int argc, char **argv, const char **name);

/* cmd_config.c */
int cmd_check_config(const struct ctl *ctl, int argc, char **argv);
int cmd_show_config(const struct ctl *ctl, int argc, char **argv);
/* cmd_reconfigure.c */
int cmd_reconfigure(const struct ctl *ctl, int argc, char **argv);
/*
 * reconfigure's run after its options (t0: mono_ms() at the command's start), for a command
 * that includes one (upgrade): its output and exit status (2 for a bad SVWAIT).
 */
int command_reconfigure(const struct ctl *ctl, bool dry_run, bool show_diff, long t0);
int cmd_runsvdir(const struct ctl *ctl, int argc, char **argv);
/* cmd_control.c: argv[0] is the command name (start, stop, hup, ...) */
int cmd_control(const struct ctl *ctl, int argc, char **argv);
/*
 * The control engine's op on the selected services (ordered for the op), waited for wait_s:
 * sv's result lines on stdout, a failed start's log tail on stderr. Nonzero if any failed.
 */
struct control_op;
int command_control(const struct ctl *ctl, const struct control_op *op, struct svsel *sel,
                    long wait_s);
int cmd_status(const struct ctl *ctl, int argc, char **argv);
int cmd_service_list(const struct ctl *ctl, int argc, char **argv);
/* cmd_tail.c */
int cmd_tail(const struct ctl *ctl, int argc, char **argv);
/* The last lines of each of names that is not running steadily (down, or restarted within 1 s). */
void cmd_tail_failed(const struct ctl *ctl, char **names, size_t n, FILE *fp);
/* cmd_inspect.c */
int cmd_inspect(const struct ctl *ctl, int argc, char **argv);
/* cmd_patroni.c: Omnibus' patroni verbs; patroni_check_exit maps a REST status (-1: none) to
 * the exit code: 0 for 200, 1 another, 3 none */
int cmd_patroni(const struct ctl *ctl, int argc, char **argv);
int patroni_check_exit(int status);
/* cmd_patroni.c: the primary as host:port, from patronictl list */
int cmd_get_postgresql_primary(const struct ctl *ctl, int argc, char **argv);
/* cmd_patroni.c: the leader of patronictl list on yml (as user/group when root) as host:port
 * in hp; 0, or -1 when there is none or patronictl failed. */
int patroni_leader(const char *yml, const char *user, const char *group, char *hp, size_t len);
/* cmd_pgbouncer.c: pgb-notify (Omnibus') and pgb-watch (the watcher service's command) */
int cmd_pgb_notify(const struct ctl *ctl, int argc, char **argv);
int cmd_pgb_watch(const struct ctl *ctl, int argc, char **argv);
/* cmd_probe.c: what a service's check script runs */
int cmd_probe(const struct ctl *ctl, int argc, char **argv);
/* cmd_redismaster.c */
int cmd_get_redis_master(const struct ctl *ctl, int argc, char **argv);

/* cmd_sentinelconf.c */
int cmd_sentinel_config(const struct ctl *ctl, int argc, char **argv);

/* cmd_subreaper.c */
int cmd_subreaper(const struct ctl *ctl, int argc, char **argv);
/* cmd_exec.c */
int cmd_exec(const struct ctl *ctl, int argc, char **argv);
/* cmd_lifecycle.c */
int cmd_uninstall(const struct ctl *ctl, int argc, char **argv);
int cmd_cleanse(const struct ctl *ctl, int argc, char **argv);
int cmd_remove_accounts(const struct ctl *ctl, int argc, char **argv);
int cmd_diff_config(const struct ctl *ctl, int argc, char **argv);
int cmd_upgrade(const struct ctl *ctl, int argc, char **argv);
/* cmd_pgpass.c */
int cmd_pg_password_md5(const struct ctl *ctl, int argc, char **argv);
/* cmd_backup.c */
int cmd_backup_etc(const struct ctl *ctl, int argc, char **argv);

#endif
