/*
 * procinfo: what the kernel says about a running process, from /proc/PID
 * (smaps_rollup, maps, status, environ, exe). Used by `inspect` to prove what a
 * service really runs with, rather than what its configuration intends, and by
 * `upgrade` to find the services whose program changed under them.
 */
#ifndef GITLAB_CTL_PROCINFO_H
#define GITLAB_CTL_PROCINFO_H

#include <stddef.h>
#include <sys/types.h>

#include "lib/envdir.h"

struct pmem {
	long long rss_kb, pss_kb, uss_kb; /* USS = Private_Clean + Private_Dirty */
};

/* Memory totals from /proc/PID/smaps_rollup. 0, or -1 with errno. */
int proc_mem(pid_t pid, struct pmem *m);

/*
 * Memory totals of pid and every descendant (PSS adds up without counting shared pages
 * twice), with how many processes were read. Children that exit meanwhile are skipped.
 * 0, or -1 with errno when pid itself is unreadable.
 */
int proc_tree_mem(pid_t pid, struct pmem *m, int *nprocs);

/*
 * The first file mapped into pid whose basename starts with prefix (e.g.
 * "libjemalloc"), copied to out. 1 found, 0 not mapped, -1 with errno.
 */
int proc_maps_find(pid_t pid, const char *prefix, char *out, size_t len);

/* Real uid from the Uid: line of /proc/PID/status. 0, or -1 with errno. */
int proc_uid(pid_t pid, uid_t *uid);

/* The environment pid was exec'd with (/proc/PID/environ), added to e. 0, or -1 with errno. */
int proc_environ(pid_t pid, struct envv *e);

/*
 * Did pid's program change on disk after it started? Its executable replaced (dpkg renames
 * new files over old ones), or prog, its command (a script, a link to one; NULL: not
 * asked), changed after the start. 1 with the changed path in why, else 0.
 */
int proc_program_changed(pid_t pid, const char *prog, char *why, size_t len);

/* Parsers, separated from /proc for tests and fuzzing. */
int procinfo_parse_mem(const char *text, struct pmem *m);
int procinfo_parse_maps(const char *text, const char *prefix, char *out, size_t len);
void procinfo_parse_environ(const char *buf, size_t len, struct envv *e);

#endif
