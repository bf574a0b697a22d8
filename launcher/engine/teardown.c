/* Stopping everything of a root (see teardown.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "build_config.h"
#include "engine/teardown.h"
#include "lib/clock.h"
#include "lib/pathjoin.h"
#include "lib/proctree.h"
#include "runit/runit.h"
#include "runit/sdunit.h"
#include "runit/svdir.h"

#define STOP_TIMEOUT_MS 150000 /* the wrapper kills what is left after 120 s */

/* Has pid ended: gone, or a zombie (a detached wrapper is reaped by init, maybe late)? */
static bool ended(pid_t pid)
{
	struct pstat ps;
	return proc_stat(pid, &ps) == -1 || ps.state == 'Z' || ps.state == 'X';
}

/*
 * TERM to the wrapper (found by its lock, never by name), then wait for the lock to go and
 * for the process itself to end: it unlocks just before it exits. The wrapper's grace is
 * the SVWAIT it was started with: at ours, a second TERM makes it kill what is left now.
 */
static int stop_wrapper(const struct ctl *ctl, struct diags *d)
{
	pid_t pid = 0;
	int r = svdir_running(ctl, &pid);
	for (int i = 0; r == 1 && pid <= 0 && i < 100; i++) { /* the pid follows the lock */
		sleep_ms(10);
		r = svdir_running(ctl, &pid);
	}
	if (r == -1) {
		diag_add(d, DIAG_ERR, "cannot check runsvdir: %s", strerror(errno));
		return -1;
	}
	if (r == 0) {
		diag_progress(d, "runsvdir is not running\n");
		return 0;
	}
	diag_progress(d, "stop runsvdir (pid %ld) and every service it supervises\n", (long)pid);
	if (pid <= 0 || (kill(pid, SIGTERM) == -1 && errno != ESRCH)) {
		diag_add(d, DIAG_ERR, "cannot signal runsvdir wrapper (pid %ld): %s", (long)pid,
		         strerror(errno));
		return -1;
	}
	long t0 = mono_ms(), wait_s;
	const char *errstr;
	if (sv_wait_seconds(&wait_s, &errstr) == -1)
		wait_s = SV_WAIT_DEFAULT;
	bool hurried = false;
	pid_t wrapper = pid;
	while ((r = svdir_running(ctl, &pid)) == 1 || !ended(wrapper)) {
		if (r == -1)
			break;
		if (!hurried && mono_ms() - t0 >= wait_s * 1000L) {
			diag_progress(d,
			              "services still running after SVWAIT (%ld s): killing them\n",
			              wait_s);
			(void)kill(wrapper, SIGTERM);
			hurried = true;
		}
		if (mono_ms() - t0 > STOP_TIMEOUT_MS) {
			diag_add(d, DIAG_ERR, "runsvdir wrapper (pid %ld) still runs after %d s",
			         (long)wrapper, STOP_TIMEOUT_MS / 1000);
			return -1;
		}
		sleep_ms(20);
	}
	diag_progress(d, "runsvdir stopped after %ld ms\n", mono_ms() - t0);
	return r == -1 ? -1 : 0;
}

/* A runsv that outlived its runsvdir (killed wrapper): tell it to stop and exit. */
static int stop_runsv(const char *dir, const char *name, struct diags *d)
{
	if (sv_live(dir) != SV_LIVE_OK)
		return 0;
	diag_progress(d, "stop %s: its runsv outlived runsvdir\n", name);
	if (sv_control_str(dir, "dx") == -1) {
		diag_add(d, DIAG_ERR, "%s: cannot control runsv: %s", name, strerror(errno));
		return -1;
	}
	long wait_s;
	const char *errstr;
	if (sv_wait_seconds(&wait_s, &errstr) == -1)
		wait_s = SV_WAIT_DEFAULT;
	long deadline = mono_ms() + wait_s * 1000L;
	while (sv_live(dir) == SV_LIVE_OK) {
		if (mono_ms() > deadline) {
			diag_add(d, DIAG_ERR, "%s: runsv did not exit within SVWAIT", name);
			return -1;
		}
		sleep_ms(20);
	}
	return 0;
}

static int stop_orphans(const struct ctl *ctl, struct diags *d)
{
	char sv[PATH_MAX];
	if (ctl_path(ctl, sv, sizeof sv, GITLAB_CTL_INSTALL_DIR, "sv", (char *)NULL) == -1) {
		diag_add(d, DIAG_ERR, "%s: path too long", ctl->root);
		return -1;
	}
	DIR *svd = opendir(sv);
	if (svd == NULL) {
		if (errno == ENOENT)
			return 0;
		diag_add(d, DIAG_ERR, "%s: %s", sv, strerror(errno));
		return -1;
	}
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(svd)) != NULL) {
		char dir[PATH_MAX], log[PATH_MAX];
		if (de->d_name[0] == '.' || path_join(dir, sizeof dir, sv, de->d_name) == -1 ||
		    path_join(log, sizeof log, dir, "log") == -1)
			continue;
		if (stop_runsv(dir, de->d_name, d) == -1 || stop_runsv(log, de->d_name, d) == -1)
			rc = -1;
	}
	closedir(svd);
	return rc;
}

int teardown_stop_all(const struct ctl *ctl, struct diags *d)
{
	int unit = sdunit_stop(ctl, d);
	if (unit == -1)
		return -1;
	if (unit == 1)
		diag_progress(d, "stopped and disabled %s\n", SDUNIT_NAME);
	if (stop_wrapper(ctl, d) == -1 || stop_orphans(ctl, d) == -1)
		return -1;
	return 0;
}
