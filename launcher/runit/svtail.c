/* Following svlogd's current files, tail -F style, with inotify wakeups and a slow poll. */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/safetext.h"
#include "runit/runit.h"
#include "runit/svtail.h"

#define POLL_MS 1000 /* fallback when inotify misses something (NFS, dir created later) */

struct tfile {
	const char *path;
	int fd; /* -1 while the file does not exist */
	dev_t dev;
	ino_t ino;
	int wd; /* inotify watch on the directory, -1 if none yet */
	bool said_missing;
};

struct tail {
	struct tfile *f;
	size_t n;
	int ifd;
	const struct tfile *last; /* whose bytes were written last, for headers */
	bool escape;              /* stdout is a terminal: the services' bytes are escaped */
};

static int put_stdout(const char *buf, size_t len)
{
	return fdio_write_all(STDOUT_FILENO, buf, len);
}

static int header(struct tail *t, const struct tfile *f)
{
	char line[PATH_MAX + 16];
	if (t->n < 2 || t->last == f)
		return 0;
	int n = snprintf(line, sizeof line, "%s==> %s <==\n", t->last ? "\n" : "", f->path);
	t->last = f;
	return put_stdout(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* A terminal gets the logs escaped (an account wrote them); a pipe or file, byte for byte. */
static int put(const struct tail *t, const char *p, size_t n)
{
	if (!t->escape)
		return put_stdout(p, n);
	struct buf b;
	buf_init(&b);
	safetext_add(&b, p, n, SAFETEXT_NL);
	int rc = put_stdout(b.p, b.len);
	buf_free(&b);
	return rc;
}

/* Copy everything new in f to stdout. */
static int drain(struct tail *t, struct tfile *f)
{
	char buf[16384];
	for (;;) {
		ssize_t n = fdio_read(f->fd, buf, sizeof buf);
		if (n <= 0)
			return 0;
		if (header(t, f) == -1 || put(t, buf, (size_t)n) == -1)
			return -1;
	}
}

/* Position fd so that the last `lines` lines remain to be read. */
static void seek_last_lines(int fd, long lines)
{
	char buf[8192];
	struct stat sb;
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode))
		return;
	if (lines == 0) {
		lseek(fd, 0, SEEK_END);
		return;
	}
	off_t pos = sb.st_size;
	long seen = 0;
	bool first = true;
	while (pos > 0) {
		size_t chunk = pos < (off_t)sizeof buf ? (size_t)pos : sizeof buf;
		pos -= (off_t)chunk;
		if (pread(fd, buf, chunk, pos) != (ssize_t)chunk)
			break;
		for (size_t i = chunk; i-- > 0;) {
			if (buf[i] != '\n')
				continue;
			/* A final newline ends the last line; it does not start one. */
			if (first && pos + (off_t)i == sb.st_size - 1)
				continue;
			if (++seen >= lines) {
				lseek(fd, pos + (off_t)i + 1, SEEK_SET);
				return;
			}
		}
		first = false;
	}
	lseek(fd, 0, SEEK_SET);
}

static void watch_dir(struct tail *t, struct tfile *f)
{
	char dir[PATH_MAX];
	if (t->ifd == -1 || f->wd != -1)
		return;
	strlcpy(dir, f->path, sizeof dir);
	f->wd = inotify_add_watch(t->ifd, dirname(dir),
	                          IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
	                              IN_ATTRIB | IN_CLOSE_WRITE);
}

/* (Re)open f when its path names another file than the one we hold. */
static int reopen(struct tail *t, struct tfile *f, long lines, bool initial)
{
	struct stat sb;
	watch_dir(t, f);
	if (stat(f->path, &sb) == -1) {
		if (!f->said_missing && f->fd == -1) { /* mid-rotation is not worth a word */
			warnx("%s: %s; waiting for it", f->path, strerror(errno));
			f->said_missing = true;
		}
		return 0;
	}
	if (f->fd != -1 && sb.st_dev == f->dev && sb.st_ino == f->ino) {
		/* Truncated in place: start over like tail does. */
		off_t cur = lseek(f->fd, 0, SEEK_CUR);
		if (cur != -1 && sb.st_size < cur)
			lseek(f->fd, 0, SEEK_SET);
		return 0;
	}
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd == -1)
		return 0; /* vanished between stat and open: next round */
	if (f->fd != -1) {
		drain(t, f); /* what svlogd wrote before rotating */
		close(f->fd);
	}
	f->fd = fd;
	f->dev = sb.st_dev;
	f->ino = sb.st_ino;
	if (initial)
		seek_last_lines(fd, lines);
	else
		warnx("%s: following new file", f->path);
	f->said_missing = false;
	return 0;
}

int svtail_files(char **paths, size_t n, long lines, long max_rounds)
{
	struct tail t = {.n = n, .escape = isatty(STDOUT_FILENO) == 1};
	t.f = xcalloc(n, sizeof *t.f);
	t.ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	for (size_t i = 0; i < n; i++) {
		t.f[i] = (struct tfile){.path = paths[i], .fd = -1, .wd = -1};
		reopen(&t, &t.f[i], lines, true);
		if (t.f[i].fd != -1 && drain(&t, &t.f[i]) == -1)
			goto out;
	}
	for (long round = 0; max_rounds <= 0 || round < max_rounds; round++) {
		struct pollfd p = {.fd = t.ifd, .events = POLLIN};
		if (t.ifd != -1 && poll(&p, 1, POLL_MS) > 0) {
			char ev[4096];
			while (read(t.ifd, ev, sizeof ev) > 0)
				; /* which file changed does not matter: checking all is cheap */
		} else if (t.ifd == -1) {
			sleep_ms(250);
		}
		for (size_t i = 0; i < n; i++) {
			struct tfile *f = &t.f[i];
			if (f->fd != -1 && drain(&t, f) == -1)
				goto out;
			reopen(&t, f, lines, false);
			if (f->fd != -1 && drain(&t, f) == -1)
				goto out;
		}
	}
out:
	for (size_t i = 0; i < n; i++)
		if (t.f[i].fd != -1)
			close(t.f[i].fd);
	if (t.ifd != -1)
		close(t.ifd);
	free(t.f);
	return 0;
}

/* ---- the last lines of a failed start ------------------------------------------------ */

#define LAST_MAX     (64 * 1024) /* bytes read from the end of current */
#define SETTLE_MS    100         /* svlogd writes the dying service's last words... */
#define SETTLE_LIMIT 1000        /* ...within this, or they are not shown */

/* <log_dir>/current, opened without following a link; -1 if not there. */
static int open_current(const char *log_dir)
{
	int dfd = open(log_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd == -1)
		return -1;
	int fd = openat(dfd, "current", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	struct stat st;
	if (fd != -1 && (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Wait (bounded) until the file stops growing: the last line may still be in svlogd's pipe. */
static off_t settled_size(int fd)
{
	struct stat st;
	off_t last = -1;
	long deadline = mono_ms() + SETTLE_LIMIT;
	for (;;) {
		if (fstat(fd, &st) == -1)
			return -1;
		if ((st.st_size == last && st.st_size > 0) || mono_ms() > deadline)
			return st.st_size;
		last = st.st_size;
		sleep_ms(SETTLE_MS);
	}
}

/* Service output is untrusted: control bytes are shown escaped. */
static void put_line(FILE *fp, const char *p, size_t n)
{
	fputs("    ", fp);
	safetext_put(fp, p, n, SAFETEXT_NL);
	fputc('\n', fp);
}

int svtail_last(const char *log_dir, long lines, FILE *fp)
{
	int fd = open_current(log_dir);
	if (fd == -1)
		return -1;
	off_t size = settled_size(fd);
	off_t from = size > LAST_MAX ? size - LAST_MAX : 0;
	char *buf = xmalloc(LAST_MAX);
	ssize_t n = size > 0 ? pread(fd, buf, (size_t)(size - from), from) : -1;
	close(fd);
	if (n <= 0) {
		free(buf);
		return -1;
	}
	size_t end = (size_t)n, start = end;
	if (buf[end - 1] == '\n')
		end--, start--;
	for (long k = 0; k < lines && start > 0; start--)
		if (buf[start - 1] == '\n' && ++k == lines)
			break;
	fprintf(fp, "  last lines of %s/current:\n", log_dir);
	for (size_t i = start; i < end;) {
		const char *nl = memchr(buf + i, '\n', end - i);
		size_t len = nl != NULL ? (size_t)(nl - (buf + i)) : end - i;
		put_line(fp, buf + i, len);
		i += len + 1;
	}
	free(buf);
	return 0;
}
