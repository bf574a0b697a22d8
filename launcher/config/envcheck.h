/*
 * envcheck: validate env values that their consumers would silently ignore
 * or misread: env names, Ruby's RUBY_GC_* rules, MALLOC_CONF
 * (asked of the installed jemalloc itself), LD_PRELOAD files, Go's GOGC,
 * GOMEMLIMIT and GOMAXPROCS.
 */
#ifndef GITLAB_CTL_ENVCHECK_H
#define GITLAB_CTL_ENVCHECK_H

#include <stdbool.h>

#include "lib/kvlist.h"
#include "lib/diag.h"

/*
 * The kernel's execve limits: one "NAME=value" string at most MAX_ARG_STRLEN
 * (32 pages); all of argv and envp within sysconf(_SC_ARG_MAX), of which
 * ENVCHECK_ARGV_RESERVE is kept for the command line and ENVCHECK_BASE_VARS
 * variables for the base environment (PATH, HOME, LANG).
 */
#define ENVCHECK_MAX_ARG_STRLEN 131072
#define ENVCHECK_ARGV_RESERVE   (64 * 1024)
#define ENVCHECK_BASE_VARS      16

/*
 * What the checks of one run share, owned by the caller: the jemalloc that judges MALLOC_CONF
 * values, and its answers so far (a value is run past it once per run, not once per service).
 */
struct envcheck {
	const char *jemalloc;
	struct envcheck_answer {
		char *value;
		int answer;
		char msg[200];
	} * seen;
	size_t nseen, cap;
	int cache_dir; /* -1, or the root-owned dir holding jemalloc's past acceptances */
	bool cache_dirty;
};

/*
 * jemalloc NULL: the one services preload (GITLAB_CTL_JEMALLOC). When it cannot be run, a
 * MALLOC_CONF value is not checked and a warning says why.
 */
void envcheck_init(struct envcheck *ec, const char *jemalloc);
void envcheck_free(struct envcheck *ec);

/*
 * As root, remember accepted MALLOC_CONF values across runs in var_dir (mode 0600, opened
 * without following links, keyed by the jemalloc file's identity) so that a run with the same
 * values spawns nothing. With write, the new ones are saved in envcheck_free; without
 * (check-config, a dry run: they change nothing on disk), the cache is only read. Failures
 * only cost the cache.
 */
void envcheck_cache(struct envcheck *ec, const char *var_dir, bool write);

/* Check one variable (name, value rules, MAX_ARG_STRLEN); problems are recorded at loc. Returns 0,
 * or -1 if an error was recorded. */
int envcheck_var(struct envcheck *ec, const char *name, const char *value, struct loc loc,
                 struct diags *d);

/*
 * Cross-variable rules (e.g. FREE_SLOTS_MIN_RATIO < MAX_RATIO) and the
 * execve limits on the count and total size, over a computed env
 * (envcheck_env_at), each problem reported at the location where(name, ctx) gives
 * for the variable at fault (attrs knows which gitlab.rb line or catalog
 * default each value came from). A location without a column is a default's:
 * when two variables conflict and only one was written in gitlab.rb, that one
 * is blamed.
 */
typedef struct loc (*envcheck_locfn)(const char *name, void *ctx);

/*
 * A service's argv as execve sees it: each argument within MAX_ARG_STRLEN,
 * and all of them within the part of ARG_MAX the env check leaves for argv
 * (ENVCHECK_ARGV_RESERVE, less room for the base env). locs[i] is where
 * argv[i] was written (a gitlab.rb flag, the catalog's command); a line too
 * long as a whole is reported where its longest argument was written.
 */
#define ENVCHECK_ARGV_MAX (ENVCHECK_ARGV_RESERVE - 8 * 1024)
int envcheck_argv(char *const *argv, const struct loc *locs, struct diags *d);
int envcheck_env_at(const struct kvlist *env, envcheck_locfn where, void *ctx, struct diags *d);

#endif
