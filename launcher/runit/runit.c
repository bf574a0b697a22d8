/*
 * runit: runsv's on-disk protocol (runsv.c's update_status and ctrl, sv.c's
 * svstatus_get/svstatus_print), spoken directly with plain system calls: this
 * is the hot path of `gitlab-ctl status`, so no stdio and no allocation.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/pathjoin.h"
#include "lib/spawn.h"
#include "runit/runit.h"

/* TAI64 labels are 2^62 + TAI seconds; runit adds 10 s to the Unix time. */
#define TAI_UNIX_OFFSET ((1ULL << 62) + 10ULL)

int sv_status_decode(const unsigned char buf[SV_STATUS_LEN], struct sv_status *st)
{
	uint64_t tai;
	uint32_t nsec, pid;

	/* Bytes 0..7 TAI64 and 8..11 nanoseconds, big-endian (tai_pack/taia_pack). */
	memcpy(&tai, buf, sizeof tai);
	memcpy(&nsec, buf + 8, sizeof nsec);
	memcpy(&pid, buf + 12, sizeof pid);
	tai = be64toh(tai);
	nsec = be32toh(nsec);
	if (buf[19] > SV_FINISH || nsec >= 1000000000U)
		return -1;
	if (buf[17] != 'u' && buf[17] != 'd' && buf[17] != 0)
		return -1;
	st->tai = tai;
	st->nsec = nsec;
	/* The pid is little-endian: runsv stores it byte by byte from the low end. */
	st->pid = (pid_t)le32toh(pid);
	st->paused = buf[16] != 0;
	st->want = (char)buf[17];
	st->got_term = buf[18] != 0;
	st->state = (enum sv_state)buf[19];
	return 0;
}

long sv_status_age(const struct sv_status *st, time_t now)
{
	uint64_t tnow = (uint64_t)now + TAI_UNIX_OFFSET;
	return tnow < st->tai ? 0 : (long)(tnow - st->tai);
}

bool sv_status_since(const struct sv_status *st, const struct timespec *t)
{
	uint64_t tai = (uint64_t)t->tv_sec + TAI_UNIX_OFFSET;
	if (st->tai != tai)
		return st->tai > tai;
	return st->nsec >= (uint32_t)t->tv_nsec;
}

bool sv_up_settled(const struct sv_status *st, const struct timespec *now)
{
	const struct timespec t = {now->tv_sec - 1, now->tv_nsec};
	return st->state == SV_RUN && st->pid != 0 && !sv_status_since(st, &t);
}

/* dir/file relative to dirfd: stat'ed into sb when sb is given, else opened with flags. */
static int at_in(int dirfd, const char *dir, const char *file, int flags, struct stat *sb)
{
	char path[PATH_MAX];
	if (path_join(path, sizeof path, dir, file) == -1)
		return -1;
	return sb != NULL ? fstatat(dirfd, path, sb, 0) : openat(dirfd, path, flags);
}

int sv_live_at(int dirfd, const char *dir)
{
	/* A fifo opened for writing without a reader fails with ENXIO instead of blocking. */
	int fd = at_in(dirfd, dir, "supervise/ok", O_WRONLY | O_NONBLOCK | O_CLOEXEC, NULL);
	if (fd == -1) {
		if (errno == ENXIO)
			return SV_LIVE_NOT_RUNNING;
		if (errno == ENOENT)
			return SV_LIVE_NO_SUPERVISE;
		return -1;
	}
	close(fd);
	return SV_LIVE_OK;
}

int sv_status_get(int dirfd, const char *dir, const char *label, struct sv_status *st, char *msg,
                  size_t len)
{
	int live = sv_live_at(dirfd, dir);
	if (live == SV_LIVE_NOT_RUNNING) {
		snprintf(msg, len, "fail: %s: runsv not running", label);
		return 0;
	}
	struct stat sb;
	if (live != SV_LIVE_OK && fstatat(dirfd, dir, &sb, 0) == -1) {
		/* e.g. a symlink left behind after its sv directory was removed */
		snprintf(msg, len, "fail: %s: unable to change to service directory: %s", label,
		         sv_strerror(errno));
		return 0;
	}
	if (live != SV_LIVE_OK) {
		int e = live == SV_LIVE_NO_SUPERVISE ? ENOENT : errno;
		snprintf(msg, len, "warning: %s: unable to open supervise/ok: %s", label,
		         sv_strerror(e));
		return -1;
	}
	if (sv_read_status_at(dirfd, dir, st) == -1) {
		int e = errno;
		snprintf(msg, len, "warning: %s: unable to %s supervise/status: %s", label,
		         e == EBADMSG ? "read" : "open", sv_strerror(e));
		return -1;
	}
	return 1;
}

int sv_live(const char *dir)
{
	return sv_live_at(AT_FDCWD, dir);
}

int sv_read_status_at(int dirfd, const char *dir, struct sv_status *st)
{
	unsigned char buf[SV_STATUS_LEN + 1];

	int fd = at_in(dirfd, dir, "supervise/status", O_RDONLY | O_CLOEXEC, NULL);
	if (fd == -1)
		return -1;
	/*
	 * One read, not fdio_read_all: runsv renames the whole file into
	 * place, so a short read already means "not runsv's", and waiting for EOF
	 * would cost status a second read per service.
	 */
	ssize_t n = fdio_read(fd, buf, sizeof buf);
	int saved = errno;
	close(fd);
	if (n == -1) {
		errno = saved;
		return -1;
	}
	/* runsv renames a complete 20-byte file into place; anything else is not runsv's. */
	if (n != SV_STATUS_LEN || sv_status_decode(buf, st) == -1) {
		errno = EBADMSG;
		return -1;
	}
	return 0;
}

int sv_read_status(const char *dir, struct sv_status *st)
{
	return sv_read_status_at(AT_FDCWD, dir, st);
}

int sv_control_str(const char *dir, const char *cmds)
{
	char path[PATH_MAX];
	size_t len = strlen(cmds);

	if (path_join(path, sizeof path, dir, "supervise/control") == -1)
		return -1;
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd == -1)
		return -1;
	/* Fewer than PIPE_BUF bytes to a fifo go in whole or not at all (EAGAIN when full). */
	int rc = fdio_write_all(fd, cmds, len);
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int sv_control(const char *dir, char cmd)
{
	const char s[2] = {cmd, '\0'};
	return sv_control_str(dir, s);
}

bool sv_normally_down_at(int dirfd, const char *dir)
{
	struct stat sb;
	return at_in(dirfd, dir, "down", 0, &sb) == 0;
}

bool sv_normally_down(const char *dir)
{
	return sv_normally_down_at(AT_FDCWD, dir);
}

/*
 * Bounded appends for sv_status_format, with snprintf's contract: copy what
 * fits (keeping room for the NUL), return the length the whole text needs.
 */
static inline size_t put_mem(char *buf, size_t len, size_t off, const char *s, size_t n)
{
	/* the common case first: with n a constant the copy compiles to a few moves */
	if (off + n < len)
		memcpy(buf + off, s, n);
	else if (off + 1 < len)
		memcpy(buf + off, s, len - 1 - off);
	return off + n;
}

static inline size_t put_str(char *buf, size_t len, size_t off, const char *s)
{
	return put_mem(buf, len, off, s, strlen(s));
}

/* Decimal without printf: the formatting was most of status's instructions. */
static size_t put_ulong(char *buf, size_t len, size_t off, unsigned long v)
{
	char digits[24];
	size_t i = sizeof digits;
	do {
		digits[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	return put_mem(buf, len, off, digits + i, sizeof digits - i);
}

static inline size_t put_flag(char *buf, size_t len, size_t off, bool on, const char *s)
{
	return on ? put_str(buf, len, off, s) : off;
}

int sv_status_format(char *buf, size_t len, const char *name, const struct sv_status *st,
                     bool normally_up, time_t now)
{
	static const char *const states[] = {"down: ", "run: ", "finish: "};
	bool haspid = st->pid != 0;
	size_t n = put_str(buf, len, 0, states[st->state]);

	n = put_str(buf, len, n, name);
	n = put_mem(buf, len, n, ": ", 2);
	/* sv prints the pid (unsigned, as runsv stored it) for run and finish. */
	if (st->state != SV_DOWN) {
		n = put_mem(buf, len, n, "(pid ", 5);
		n = put_ulong(buf, len, n, (uint32_t)st->pid);
		n = put_mem(buf, len, n, ") ", 2);
	}
	n = put_ulong(buf, len, n, (unsigned long)sv_status_age(st, now));
	n = put_mem(buf, len, n, "s", 1);
	/* ... and the flags only where they matter. */
	n = put_flag(buf, len, n, haspid && !normally_up, ", normally down");
	n = put_flag(buf, len, n, !haspid && normally_up, ", normally up");
	n = put_flag(buf, len, n, haspid && st->paused, ", paused");
	n = put_flag(buf, len, n, !haspid && st->want == 'u', ", want up");
	n = put_flag(buf, len, n, haspid && st->want == 'd', ", want down");
	n = put_flag(buf, len, n, haspid && st->got_term, ", got TERM");
	if (len > 0)
		buf[n < len ? n : len - 1] = '\0';
	return n > INT_MAX ? INT_MAX : (int)n;
}

const char *sv_strerror(int errnum)
{
	/* The wording of runit's error_str(), so that our lines match sv's. */
	switch (errnum) {
	case ENOENT:
		return "file does not exist";
	case EACCES:
		return "access denied";
	case EPERM:
		return "permission denied";
	case ENOTDIR:
		return "not a directory";
	case EISDIR:
		return "is a directory";
	case ELOOP:
		return "symbolic link loop";
	case ENAMETOOLONG:
		return "file name too long";
	case ENXIO:
		return "device not configured";
	case EIO:
		return "input/output error";
	case EINTR:
		return "interrupted system call";
	case ENOMEM:
		return "out of memory";
	case EAGAIN:
		return "temporary failure";
	case EINVAL:
		return "invalid argument";
	case EBUSY:
		return "device busy";
	case EMFILE:
		return "process cannot open more files";
	case ENFILE:
		return "system cannot open more files";
	case EROFS:
		return "read-only file system";
	case ENOSPC:
		return "out of disk space";
	case EBADMSG:
		return "bad format";
	default:
		return strerror(errnum);
	}
}

bool sv_has_check(const char *dir)
{
	char path[PATH_MAX];
	return path_join(path, sizeof path, dir, "check") == 0 && access(path, X_OK) == 0;
}

int sv_check_until(const char *dir, int errfd, long deadline)
{
	char path[PATH_MAX];
	if (path_join(path, sizeof path, dir, "check") == -1)
		return -1;
	if (access(path, X_OK) == -1)
		return errno == ENOENT || errno == EACCES ? 1 : -1;
	if (deadline != 0 && mono_ms() >= deadline)
		return 0;
	char *const argv[] = {"./check", NULL};
	const struct spawn sp = {
	    .dir = dir, .out = SPAWN_NULL, .err = errfd, .sane_limits = true, .deadline = deadline};
	int rc = spawn_wait("./check", argv, &sp);
	return rc == -1 ? -1 : rc == 0;
}

int sv_wait_seconds(long *seconds, const char **errstr)
{
	const char *s = getenv("SVWAIT");
	*seconds = SV_WAIT_DEFAULT;
	*errstr = NULL;
	if (s == NULL || *s == '\0')
		return 0;
	long long v = strtonum(s, 0, SV_WAIT_MAX, errstr);
	if (*errstr != NULL)
		return -1;
	*seconds = (long)v;
	return 0;
}
