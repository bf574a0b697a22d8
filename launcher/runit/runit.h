/*
 * runit: runsv's on-disk protocol, spoken directly (no sv, no ps).
 *
 * A service directory D (e.g. <install>/service/gitlab-exporter, or its log
 * subdirectory D/log) is supervised when runsv holds D/supervise/ok open for
 * reading; the 20-byte D/supervise/status records its state; control bytes
 * written to the D/supervise/control fifo command it.
 */
#ifndef GITLAB_CTL_RUNIT_H
#define GITLAB_CTL_RUNIT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define SV_STATUS_LEN 20

enum sv_state { SV_DOWN = 0, SV_RUN = 1, SV_FINISH = 2 };

struct sv_status {
	uint64_t tai; /* TAI64 label: seconds + 2^62 (+10 leap s, as runit writes it) */
	uint32_t nsec;
	pid_t pid; /* 0 when down */
	bool paused;
	char want; /* 'u', 'd' or 0 */
	bool got_term;
	enum sv_state state;
};

/* Decode runsv's 20-byte status record. Returns 0, or -1 if malformed. */
int sv_status_decode(const unsigned char buf[SV_STATUS_LEN], struct sv_status *st);

/* Seconds since the status was last changed, from its TAI64N stamp. */
long sv_status_age(const struct sv_status *st, time_t now);

enum sv_live {
	SV_LIVE_OK,          /* runsv is running */
	SV_LIVE_NOT_RUNNING, /* supervise/ok exists, nobody reads it (ENXIO) */
	SV_LIVE_NO_SUPERVISE /* no supervise/ok yet: runsv never started here */
};

/* Liveness of runsv for dir. Returns an sv_live value, or -1 with errno on other errors. */
int sv_live(const char *dir);

/* Read dir/supervise/status. Returns 0, or -1 with errno. */
int sv_read_status(const char *dir, struct sv_status *st);

/* Write one control byte (u d o p c h a i q 1 2 t k x) to dir/supervise/control. 0 or -1. */
int sv_control(const char *dir, char cmd);

/* Does dir hold a "down" file (service normally down)? */
bool sv_normally_down(const char *dir);

/*
 * The same for a directory relative to dirfd (AT_FDCWD: as above): `status`
 * resolves each service against an open service directory, as sv does with
 * chdir, instead of walking the whole path for every file.
 */
int sv_live_at(int dirfd, const char *dir);
int sv_read_status_at(int dirfd, const char *dir, struct sv_status *st);
bool sv_normally_down_at(int dirfd, const char *dir);

/*
 * sv's svstatus_get for dir below dirfd: 1 with st filled; otherwise the line sv prints
 * ("fail: LABEL: runsv not running", "warning: LABEL: unable to ...", no newline) is
 * written to msg and the result is 0 (runsv not running: sv's "fail") or -1 (a warning).
 * label is "NAME" or "NAME/log". The caller prints: `status` into its own buffer.
 */
int sv_status_get(int dirfd, const char *dir, const char *label, struct sv_status *st, char *msg,
                  size_t len);

/* Write several control bytes at once (sv's restart sends "tcu"). 0, or -1 with errno. */
int sv_control_str(const char *dir, const char *cmds);

/* Has the state changed at or after t (CLOCK_REALTIME), at full TAI64N precision? */
bool sv_status_since(const struct sv_status *st, const struct timespec *t);

/*
 * Has it run the same pid for at least a second before now (CLOCK_REALTIME)?
 * runsv stamps the status when the process starts, and starts a run script
 * at most once a second: a service without a check that stayed up past that
 * is up, one that exits at once never is.
 */
bool sv_up_settled(const struct sv_status *st, const struct timespec *now);

/* Does dir have an executable check script (what sv -w runs)? */
bool sv_has_check(const char *dir);

/*
 * Room for one status text of a name of at most NAME_MAX ("finish: NAME: (pid P) Ns" and
 * every flag), or for sv_status_get's message about "NAME/log": what buffers are sized by.
 */
#define SV_STATUS_LINE_MAX (NAME_MAX + 128)

/*
 * Format sv's status text for one directory, without newline:
 * "run: NAME: (pid 123) 45s, normally down, want down" or "down: NAME: 5s, normally up".
 * normally_up: no "down" file. Returns the length snprintf would have written.
 */
int sv_status_format(char *buf, size_t len, const char *name, const struct sv_status *st,
                     bool normally_up, time_t now);

/* runit's own wording for errno values ("file does not exist"), strerror() for the rest. */
const char *sv_strerror(int errnum);

/*
 * Run dir/check the way sv does for -w: in dir, no shell, stdin and stdout
 * on /dev/null, stderr on errfd (a descriptor, or SPAWN_NULL / SPAWN_INHERIT
 * of spawn.h). Returns 1 when the service is ready (the script exits 0, or
 * there is no executable check), 0 when not yet, -1 with errno when it could
 * not be run. With a deadline (mono_ms(), 0 for none) a check still running
 * then is killed (with its process group) and -1/ETIMEDOUT returned; a
 * deadline already past runs nothing and returns 0.
 */
int sv_check_until(const char *dir, int errfd, long deadline);

#define SV_WAIT_DEFAULT 30
#define SV_WAIT_MAX     86400

/*
 * SVWAIT from the environment, as sv reads it: seconds, 0..SV_WAIT_MAX;
 * unset or empty is SV_WAIT_DEFAULT. Returns 0, or -1 with *errstr saying
 * why the value is not a number of seconds. Every waiting command uses it.
 */
int sv_wait_seconds(long *seconds, const char **errstr);

#endif
