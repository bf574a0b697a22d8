/* The reconfigure lock of a root (see rootlock.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/diag.h"
#include "lib/pathjoin.h"
#include "lib/pathsafe.h"
#include "lib/rootlock.h"

/* The holder writes its pid right after locking: give it a moment to. */
static void holder_pid(int fd, char *pid, size_t len)
{
	for (int i = 0; i < 20; i++) {
		ssize_t n = pread(fd, pid, len - 1, 0);
		if (n > 0) {
			pid[n] = '\0';
			pid[strcspn(pid, "\n")] = '\0';
			return;
		}
		sleep_ms(5);
	}
	strlcpy(pid, "?", len);
}

/* Wait for a lock someone holds. 0, or -1 after a message. */
static int wait_lock(int fd, const char *path, struct diags *d)
{
	char pid[32];
	holder_pid(fd, pid, sizeof pid);
	diag_progress(d, "waiting for another reconfigure (pid %s)...\n", pid);
	long deadline = mono_ms() + ROOTLOCK_WAIT_S * 1000L;
	while (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK || mono_ms() > deadline) {
			diag_add(d, DIAG_ERR,
			         "another reconfigure (pid %s) still holds %s after %d s", pid,
			         path, ROOTLOCK_WAIT_S);
			return -1;
		}
		sleep_ms(20);
	}
	return 0;
}

static int lock_fd(int fd, const char *path, struct diags *d)
{
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		return wait_lock(fd, path, d);
	diag_add(d, DIAG_ERR, "cannot lock %s: %s", path, strerror(errno));
	return -1;
}

/* Open (or create) the lock file: 1 with *fdp, 0 when absent and !create, -1 after a message. */
static int open_lock(const struct ctl *ctl, bool create, char *path, size_t len, int *fdp,
                     struct diags *d)
{
	char var[PATH_MAX];
	if (ctl_var_dir(ctl, var, sizeof var) == -1 ||
	    path_join(path, len, var, "reconfigure.lock") == -1) {
		diag_add(d, DIAG_ERR, "path too long: %s", ctl->root);
		return -1;
	}
	if (create && pathsafe_mkdirs(var, 0755) == -1) {
		diag_add(d, DIAG_ERR, "cannot create %s: %s%s", var, strerror(errno),
		         ctl_root_hint(ctl, errno));
		return -1;
	}
	*fdp = open(path, O_RDWR | (create ? O_CREAT : 0) | O_CLOEXEC, 0644);
	if (*fdp != -1)
		return 1;
	if (!create && errno == ENOENT)
		return 0;
	diag_add(d, DIAG_ERR, "cannot open %s: %s", path, strerror(errno));
	return -1;
}

int rootlock_take(const struct ctl *ctl, bool create, int *fdp, struct diags *d)
{
	char path[PATH_MAX];
	int fd;
	*fdp = -1;
	int rc = open_lock(ctl, create, path, sizeof path, &fd, d);
	if (rc <= 0)
		return rc;
	if (lock_fd(fd, path, d) == -1) {
		close(fd);
		return -1;
	}
	if (create && (ftruncate(fd, 0) == -1 || dprintf(fd, "%ld\n", (long)getpid()) < 0))
		/* only the waiters' message loses the pid */
		diag_add(d, DIAG_WARN, "cannot write %s: %s", path, strerror(errno));
	*fdp = fd;
	return 0;
}

void rootlock_release(int fd)
{
	if (fd != -1)
		close(fd);
}
