/*
 * inspect: what a running service really runs with, against what the configuration wants:
 * pid and uptime from runit, memory from smaps_rollup (the process tree's PSS against the
 * service's memory_budget), the allocator actually mapped, the
 * run-as user, env drift between the envdir and /proc/PID/environ, whether its metrics answer
 * on the configured address (from its own process, not another holding the port), and the
 * Prometheus query that graphs its memory. The command prints the report.
 */
#ifndef GITLAB_CTL_INSPECT_H
#define GITLAB_CTL_INSPECT_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "config/attrs.h"
#include "lib/ctl.h"
#include "proc/procinfo.h"
#include "runit/svsel.h"

/* Names of variables (each its own string). */
struct inspect_names {
	const char **v;
	size_t n, cap;
};

struct inspect_report {
	const char *name;
	bool running;
	char state[256]; /* sv's status text when not running */
	pid_t pid;
	long uptime;
	bool mem_ok;
	struct pmem mem;
	bool tree_ok; /* the service's process tree: its pid and every descendant */
	struct pmem tree;
	int tree_procs;
	long long budget_kb; /* its memory_budget setting; 0: none */
	bool over_budget;    /* the tree's PSS above the budget */
	bool jemalloc, want_jemalloc;
	char alloc_path[PATH_MAX];
	char user[64];
	const char *want_user; /* NULL: no expectation */
	char env_dir[PATH_MAX];
	char env_err[PATH_MAX + 64]; /* envdir or environ unreadable */
	struct inspect_names changed, missing, unexpected;
	char graph_query[200]; /* "" when Prometheus is off or the service has no address */
	char graph_url[700];
	char url[300]; /* "" when the service has no address */
	int http_code; /* -1: no answer, the reason in http_err */
	char http_err[160];
	int problems; /* how many of the above do not hold */
};

/* Everything about service name (one of sel's) into r, which points into a and sel. */
void inspect_service(const struct ctl *ctl, const struct svsel *sel, const struct attrs *a,
                     const char *name, struct inspect_report *r);
void inspect_report_free(struct inspect_report *r);

#endif
