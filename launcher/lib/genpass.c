/* The kept generated passwords (see genpass.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/ascii.h"
#include "lib/fdio.h"
#include "lib/genpass.h"
#include "lib/privdir.h"

#define GENPASS_LEN 32

static int fresh(char *out)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	size_t n = 0;
	while (n < GENPASS_LEN) {
		unsigned char b[64];
		if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
			return -1;
		for (size_t i = 0; i < sizeof b && n < GENPASS_LEN; i++)
			if ((b[i] & 63) < 62) /* no modulo bias */
				out[n++] = set[b[i] & 63];
	}
	out[n] = '\0';
	return 0;
}

/* 1 read into out, 0 not there, -1 refused or unreadable. */
static int read_kept(int dfd, const char *name, char *out)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd == -1)
		return errno == ENOENT ? 0 : -1;
	struct stat st;
	char buf[GENPASS_LEN + 2];
	ssize_t got = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    (st.st_mode & 077) == 0)
		got = fdio_read(fd, buf, sizeof buf);
	close(fd);
	if (got < GENPASS_LEN)
		return -1;
	for (ssize_t i = 0; i < GENPASS_LEN; i++)
		if (!ascii_alnum((unsigned char)buf[i]))
			return -1;
	memcpy(out, buf, GENPASS_LEN);
	out[GENPASS_LEN] = '\0';
	return 1;
}

int genpass_get(const char *vardir, const char *name, bool keep, char *out, size_t len)
{
	char pw[GENPASS_LEN + 1];
	if (len <= GENPASS_LEN) {
		errno = ENAMETOOLONG;
		return -1;
	}
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof dir, "%s/secrets", vardir) >= (int)sizeof dir) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int dfd = privdir_open(vardir, dir, keep && geteuid() == 0);
	if (dfd == -1) {
		if (geteuid() == 0 && errno != EROFS && (keep || errno != ENOENT))
			return -1;
		if (fresh(pw) == -1) /* not root: nothing of root's to keep it in */
			return -1;
		memcpy(out, pw, sizeof pw);
		return 0;
	}
	int r = read_kept(dfd, name, pw);
	if (r == 0 && !keep && fresh(pw) == 0) {
		r = 1; /* this run's own */
	} else if (r == 0 && fresh(pw) == 0) {
		int fd =
		    openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd != -1) {
			char line[GENPASS_LEN + 1];
			memcpy(line, pw, GENPASS_LEN);
			line[GENPASS_LEN] = '\n';
			if (fdio_write_all(fd, line, sizeof line) == -1 || fsync(fd) == -1) {
				close(fd);
				unlinkat(dfd, name, 0);
				r = -1;
			} else {
				close(fd);
				r = 1;
			}
		} else if (errno == EEXIST) {
			r = read_kept(dfd, name, pw); /* another run made it first */
		} else if (errno == EROFS) {
			r = 1; /* this run's own */
		} else {
			r = -1;
		}
	}
	int e = errno;
	close(dfd);
	if (r != 1) {
		errno = r == 0 ? EIO : (e ? e : EPERM);
		return -1;
	}
	memcpy(out, pw, sizeof pw);
	return 0;
}
