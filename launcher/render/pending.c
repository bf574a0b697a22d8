/* Durable pending restarts and log reloads of reconfigure (see pending.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "render/pending.h"
#include "render/tree.h"
#include "lib/privdir.h"
#include "lib/readfile.h"

static const struct {
	unsigned bit;
	const char *word;
} words[] = {
    {PENDING_RESTART, "restart"},
    {PENDING_LOG_RELOAD, "log-reload"},
    {PENDING_LOG_RESTART, "log-restart"},
    {PENDING_RUN, "run"},
    {PENDING_ENV, "env"},
    {PENDING_CONFIG, "config"},
    {PENDING_RELOAD, "reload"},
    {PENDING_START, "start"},
};

#define NWORDS (sizeof words / sizeof words[0])

int pending_open(const struct ctl *ctl, struct pending *pd, bool create)
{
	pd->dirfd = privdir_open_var(ctl, "pending", pd->dir, sizeof pd->dir, create);
	return pd->dirfd == -1 ? -1 : 0;
}

void pending_close(struct pending *pd)
{
	if (pd->dirfd != -1)
		close(pd->dirfd);
	pd->dirfd = -1;
}

static bool name_ok(const char *svc)
{
	return svc[0] != '\0' && svc[0] != '.' && strchr(svc, '/') == NULL &&
	       strlen(svc) < NAME_MAX - 16;
}

static unsigned parse(const char *text)
{
	unsigned what = 0;
	for (size_t i = 0; i < NWORDS; i++) {
		const char *p = text;
		size_t n = strlen(words[i].word);
		while ((p = strstr(p, words[i].word)) != NULL) {
			bool start = p == text || p[-1] == '\n';
			bool end = p[n] == '\n' || p[n] == '\0';
			if (start && end)
				what |= words[i].bit;
			p += n;
		}
	}
	return what;
}

int pending_get(const struct pending *pd, const char *svc, unsigned *what)
{
	*what = 0;
	if (!name_ok(svc)) {
		errno = EINVAL;
		return -1;
	}
	char buf[256];
	if (readfile_small_at(pd->dirfd, svc, buf, sizeof buf) == -1)
		return errno == ENOENT ? 0 : -1;
	*what = parse(buf);
	return 0;
}

/* Replace svc's record with what: temp file, fsync, rename, fsync of the directory. */
static int store(const struct pending *pd, const char *svc, unsigned what)
{
	if (what == 0) {
		if (unlinkat(pd->dirfd, svc, 0) == -1 && errno != ENOENT)
			return -1;
		return fsync(pd->dirfd);
	}
	char body[128] = "", tmp[NAME_MAX + 1];
	for (size_t i = 0; i < NWORDS; i++)
		if (what & words[i].bit) {
			strlcat(body, words[i].word, sizeof body);
			strlcat(body, "\n", sizeof body);
		}
	snprintf(tmp, sizeof tmp, ".%s.%ld", svc, (long)getpid());
	int fd =
	    openat(pd->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	size_t len = strlen(body);
	bool ok = write(fd, body, len) == (ssize_t)len && fsync(fd) == 0;
	int e = errno;
	if (close(fd) == -1 && ok) {
		ok = false;
		e = errno;
	}
	if (!ok || renameat(pd->dirfd, tmp, pd->dirfd, svc) == -1) {
		if (ok)
			e = errno;
		unlinkat(pd->dirfd, tmp, 0);
		errno = e;
		return -1;
	}
	return fsync(pd->dirfd);
}

int pending_add(const struct pending *pd, const char *svc, unsigned what)
{
	unsigned have;
	if (pending_get(pd, svc, &have) == -1)
		return -1;
	if ((have | what) == have)
		return 0;
	return store(pd, svc, have | what);
}

int pending_clear(const struct pending *pd, const char *svc, unsigned what)
{
	unsigned have;
	if (pending_get(pd, svc, &have) == -1)
		return -1;
	if ((have & what) == 0)
		return 0;
	return store(pd, svc, have & ~what);
}

int pending_prune(const struct pending *pd, const char *const *names, size_t n, bool *present)
{
	for (size_t i = 0; present != NULL && i < n; i++)
		present[i] = false;
	int fd = openat(pd->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	DIR *dir = fdopendir(fd);
	if (dir == NULL) {
		close(fd);
		return -1;
	}
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(dir)) != NULL) {
		bool keep = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
		for (size_t i = 0; i < n && !keep; i++)
			if (strcmp(names[i], de->d_name) == 0) {
				keep = true;
				if (present != NULL)
					present[i] = true;
			}
		/* A record nobody is enabled for, or a temp file of a killed run. */
		if (!keep && unlinkat(pd->dirfd, de->d_name, 0) == -1 && errno != ENOENT)
			rc = -1;
	}
	closedir(dir);
	return rc;
}

const char *pending_text(unsigned what, char *buf, size_t len)
{
	static const char *const say[] = {"restart", "log reload", "log restart"};
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof say / sizeof say[0]; i++)
		if (what & words[i].bit) {
			if (buf[0] != '\0')
				strlcat(buf, ", ", len);
			strlcat(buf, say[i], len);
		}
	if (what & PENDING_RELOAD)
		strlcat(buf, buf[0] ? ", reload" : "reload", len);
	if (what & PENDING_START)
		strlcat(buf, buf[0] ? ", start" : "start", len);
	return buf;
}
