/* The wrapper's log, bounded (see svdirlog.h). */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/pathjoin.h"
#include "lib/clock.h"
#include "runit/svdirlog.h"

#define LOG_NAME "runsvdir.log"

void svdirlog_init(struct svdirlog *l, const char *var)
{
	memset(l, 0, sizeof *l);
	l->window = mono_ms();
	struct stat fs, ps;
	if (path_join(l->path, sizeof l->path, var, LOG_NAME) == -1)
		return;
	/* Only the file svdir_ensure opened for us is ours to cap: never a terminal, the
	 * journal, or whatever file a caller redirected us to. */
	l->ours = fstat(STDERR_FILENO, &fs) == 0 && S_ISREG(fs.st_mode) &&
	          lstat(l->path, &ps) == 0 && S_ISREG(ps.st_mode) && ps.st_dev == fs.st_dev &&
	          ps.st_ino == fs.st_ino;
	svdirlog_tick(l);
}

/* The first `len` bytes of stderr into <path>.1, through a temp renamed into place. */
static int keep_old(const struct svdirlog *l, off_t len)
{
	char tmp[PATH_MAX + 16], old[PATH_MAX + 4];
	if (path_fmt(tmp, sizeof tmp, "%s.1.XXXXXX", l->path) == -1 ||
	    path_fmt(old, sizeof old, "%s.1", l->path) == -1)
		return -1;
	/* stderr is write-only: the same file, opened again for reading (and checked to be it) */
	struct stat a, b;
	int in = open(l->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in == -1)
		return -1;
	if (fstat(in, &a) == -1 || fstat(STDERR_FILENO, &b) == -1 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino) {
		close(in);
		errno = ESTALE;
		return -1;
	}
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd == -1) {
		close(in);
		return -1;
	}
	char buf[65536];
	int rc = 0;
	for (off_t at = 0; at < len && rc == 0;) {
		size_t want = len - at < (off_t)sizeof buf ? (size_t)(len - at) : sizeof buf;
		ssize_t n = pread(in, buf, want, at);
		if (n <= 0 || write(fd, buf, (size_t)n) != n)
			rc = -1;
		at += n > 0 ? n : 0;
	}
	close(in);
	if (close(fd) == -1 || rc == -1 || rename(tmp, old) == -1) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

/* Past the cap: the content so far to runsvdir.log.1, and the log starts empty. */
static void cap(const struct svdirlog *l)
{
	struct stat st;
	if (!l->ours || fstat(STDERR_FILENO, &st) == -1 || st.st_size < SVDIRLOG_MAX)
		return;
	if (keep_old(l, st.st_size) == -1 || ftruncate(STDERR_FILENO, 0) == -1) {
		/* cannot keep it: emptied all the same, a full disk is worse than a lost log */
		int e = errno;
		if (ftruncate(STDERR_FILENO, 0) == 0)
			warnx("runsvdir: log reached %ld bytes and was emptied (cannot keep it in "
			      "%s.1: %s)",
			      (long)st.st_size, l->path, strerror(e));
		return;
	}
	warnx("runsvdir: log reached %ld bytes; what it held is in %s.1", (long)st.st_size,
	      l->path);
}

void svdirlog_orphan(struct svdirlog *l, bool kill, const char *fmt, ...)
{
	if (l->listed >= SVDIRLOG_BURST) {
		if (kill)
			l->killed++;
		else
			l->stopped++;
		return;
	}
	l->listed++;
	va_list ap;
	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
	cap(l);
}

void svdirlog_tick(struct svdirlog *l)
{
	long now = mono_ms();
	if (now - l->window >= SVDIRLOG_WINDOW_MS) {
		if (l->stopped + l->killed > 0)
			warnx("runsvdir: also stopped %u and killed %u more processes left in the "
			      "service tree in the last %ld s (listed: the first %d)",
			      l->stopped, l->killed, (now - l->window) / 1000, SVDIRLOG_BURST);
		l->window = now;
		l->listed = l->stopped = l->killed = 0;
	}
	cap(l);
}
