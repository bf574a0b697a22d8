/* Records of one-time setup steps (see steprec.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/pathjoin.h"
#include "lib/privdir.h"
#include "lib/readfile.h"
#include "render/steprec.h"

int steprec_open(const struct ctl *ctl, struct steprec *r, bool create)
{
	r->dirfd = privdir_open_var(ctl, "setup", r->dir, sizeof r->dir, create);
	return r->dirfd == -1 ? -1 : 0;
}

void steprec_close(struct steprec *r)
{
	if (r->dirfd != -1)
		close(r->dirfd);
	r->dirfd = -1;
}

/* "<svc>+<step>": '+' is in neither name, so two pairs never share a file. */
static int rec_name(const char *svc, const char *step, char *out, size_t len)
{
	if (svc[0] == '\0' || svc[0] == '.' || strchr(svc, '/') != NULL ||
	    strchr(step, '/') != NULL) {
		errno = EINVAL;
		return -1;
	}
	return path_fmt(out, len, "%s+%s", svc, step);
}

static int parse(char *text, struct step_entry *e)
{
	char *nl = strchr(text, '\n');
	if (nl == NULL)
		return -1;
	*nl = '\0';
	if (strncmp(text, "done ", 5) == 0 && text[5] == '/') {
		e->state = STEP_DONE;
		return strlcpy(e->path, text + 5, sizeof e->path) < sizeof e->path ? 0 : -1;
	}
	intmax_t pid;
	unsigned long long start;
	int off = 0;
	bool passed = strncmp(text, "passed ", 7) == 0;
	if (sscanf(text, passed ? "passed %jd %llu %n" : "running %jd %llu %n", &pid, &start,
	           &off) != 2 ||
	    off == 0 || pid < 0 || pid > INT32_MAX)
		return -1;
	e->state = passed ? STEP_PASSED : STEP_RUNNING;
	e->pid = (pid_t)pid;
	e->start = start;
	if (passed) /* the command's digest */
		return strlcpy(e->path, text + off, sizeof e->path) < sizeof e->path ? 0 : -1;
	if (strcmp(text + off, "-") == 0)
		return 0;
	return text[off] == '/' && strlcpy(e->path, text + off, sizeof e->path) < sizeof e->path
	           ? 0
	           : -1;
}

int steprec_get(const struct steprec *r, const char *svc, const char *step, struct step_entry *e)
{
	char name[NAME_MAX + 1], buf[PATH_MAX + 96];
	memset(e, 0, sizeof *e);
	if (rec_name(svc, step, name, sizeof name) == -1)
		return -1;
	if (r->dirfd == -1)
		return 0; /* a dry run before any record was made */
	if (readfile_small_at(r->dirfd, name, buf, sizeof buf) == -1)
		return errno == ENOENT ? 0 : -1;
	if (parse(buf, e) == -1) {
		memset(e, 0, sizeof *e);
		errno = EBADMSG;
		return -1;
	}
	return 0;
}

static int write_synced(int fd, const char *body)
{
	return fdio_write_all(fd, body, strlen(body)) == 0 && fsync(fd) == 0 ? 0 : -1;
}

int steprec_put(const struct steprec *r, const char *svc, const char *step,
                const struct step_entry *e)
{
	char name[NAME_MAX + 1], tmp[NAME_MAX + 1], body[PATH_MAX + 96];
	if (rec_name(svc, step, name, sizeof name) == -1)
		return -1;
	if (e->state == STEP_NONE) {
		if (unlinkat(r->dirfd, name, 0) == -1 && errno != ENOENT)
			return -1;
		return fsync(r->dirfd);
	}
	if (e->state == STEP_DONE)
		snprintf(body, sizeof body, "done %s\n", e->path);
	else
		snprintf(body, sizeof body, "%s %ld %llu %s\n",
		         e->state == STEP_PASSED ? "passed" : "running", (long)e->pid, e->start,
		         e->path[0] ? e->path : "-");
	if (path_fmt(tmp, sizeof tmp, ".%s.%ld", name, (long)getpid()) == -1)
		return -1;
	int fd = openat(r->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	int rc = write_synced(fd, body);
	int e1 = errno;
	if (close(fd) == -1 && rc == 0) {
		rc = -1;
		e1 = errno;
	}
	if (rc == 0 && renameat(r->dirfd, tmp, r->dirfd, name) == -1) {
		rc = -1;
		e1 = errno;
	}
	if (rc == -1) {
		unlinkat(r->dirfd, tmp, 0);
		errno = e1;
		return -1;
	}
	return fsync(r->dirfd);
}
