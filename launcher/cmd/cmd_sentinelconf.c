/*
 * sentinel-config RENDERED LIVE -- COMMAND ARGS...: write LIVE, Sentinel's own file, from
 * root's RENDERED copy merged with what Sentinel wrote into LIVE (lib/sentinelconf.h), then
 * exec COMMAND. Hidden: the catalog command of the sentinel service, so it runs as the
 * service account (after gitlab-ctl exec dropped root) and root never opens a file in the
 * account's directory. LIVE is opened without following links, written beside itself and
 * renamed over (Sentinel exits at start on a file its account cannot write).
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "lib/buf.h"
#include "lib/fdio.h"
#include "lib/readfile.h"
#include "lib/sentinelconf.h"

#define CONF_MAX (1024 * 1024)

/* LIVE's bytes into b: 1 read, 0 none there yet, -1 with errno. */
static int read_live(const char *path, struct buf *b)
{
	if (readfile(path, b, CONF_MAX) == 0)
		return 1;
	return errno == ENOENT ? 0 : -1;
}

/* LIVE := bytes, through LIVE.tmp (0600, never an existing file) and rename. */
static int write_live(const char *path, const struct buf *b)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (unlink(tmp) == -1 && errno != ENOENT)
		return -1;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	if (fdio_write_all(fd, b->p, b->len) == -1 || fsync(fd) == -1) {
		int e = errno;
		(void)close(fd);
		(void)unlink(tmp);
		errno = e;
		return -1;
	}
	if (close(fd) == -1 || rename(tmp, path) == -1) {
		int e = errno;
		(void)unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

int cmd_sentinel_config(const struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	if (argc < 5 || strcmp(argv[3], "--") != 0 || argv[1][0] != '/' || argv[2][0] != '/' ||
	    argv[4][0] != '/') {
		fprintf(
		    stderr,
		    "usage: gitlab-ctl sentinel-config /RENDERED /LIVE -- /COMMAND [ARGS...]\n");
		return 2;
	}
	/* Sentinel's file is its account's: root writing it would hand root's file to the account.
	 */
	if (geteuid() == 0)
		errx(1, "sentinel-config: runs as Sentinel's account, not root");
	struct buf rendered, live, merged;
	buf_init(&rendered);
	buf_init(&live);
	buf_init(&merged);
	if (readfile(argv[1], &rendered, CONF_MAX) == -1)
		err(1, "sentinel-config: %s", argv[1]);
	int have = read_live(argv[2], &live);
	if (have == -1)
		err(1, "sentinel-config: %s", argv[2]);
	sentinelconf_merge(rendered.p ? rendered.p : "", rendered.len, have ? buf_str(&live) : NULL,
	                   live.len, &merged);
	bool same = have && live.len == merged.len && memcmp(live.p, merged.p, live.len) == 0;
	if (!same && write_live(argv[2], &merged) == -1)
		err(1, "sentinel-config: cannot write %s", argv[2]);
	buf_free(&rendered);
	buf_free(&live);
	buf_free(&merged);
	execv(argv[4], argv + 4);
	err(127, "sentinel-config: cannot exec %s", argv[4]);
}
