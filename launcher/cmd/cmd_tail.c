/*
 * tail: follow the logs of services, which needs the configuration (each
 * service's log_directory) as well as the runit tree (which are enabled);
 * runit/svtail.c does the following itself and knows neither.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build_config.h"
#include "cmd/commands.h"
#include "cmd/load.h"
#include "config/attrs.h"
#include "config/catalog.h"
#include "lib/alloc.h"
#include "lib/pathjoin.h"
#include "runit/runit.h"
#include "runit/svsel.h"
#include "runit/svtail.h"

/* The configured log_directory when gitlab.rb and the catalog load, else the default. */
static int log_dir(const struct ctl *ctl, const struct attrs *a, const char *svc, char *out,
                   size_t len)
{
	const struct svc *s = a ? attrs_svc(a, svc) : NULL;
	if (s != NULL && s->log_dir != NULL) {
		return path_join(out, len, s->log_dir, "current");
	}
	return ctl_path(ctl, out, len, GITLAB_CTL_LOG_DIR, svc, "current", (char *)NULL);
}

/* Logs are worth following without a configuration: its problems only with -v. */
static bool load_attrs(const struct ctl *ctl, struct loaded *l)
{
	bool ok = cmd_load(ctl, l, CMD_REPORT_FAILED, "tail", ctl->verbose ? stderr : NULL) == 0;
	if (!ok && ctl->verbose)
		warnx("using the default log directories");
	return ok;
}

/*
 * A file that cannot be read now will not become readable by waiting: say so at once. A
 * missing file in an existing directory is a log not written yet: worth waiting for.
 */
static bool readable(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd != -1) {
		close(fd);
		return true;
	}
	char dir[PATH_MAX];
	struct stat st;
	int e = errno;
	strlcpy(dir, path, sizeof dir);
	if (e == ENOENT && stat(dirname(dir), &st) == 0)
		return true;
	if (e == ENOENT) { /* nothing will create the directory but a reconfigure */
		warnx("cannot read %s: no log directory %s yet: run gitlab-ctl reconfigure", path,
		      dir);
		return false;
	}
	errno = e;
	warn("cannot read %s%s", path,
	     errno == EACCES ? " (log directories are root's: run as root)" : "");
	return false;
}

/* Not enabled: a catalog service, or one that has logs, is worth following; others are typos. */
static bool known_or_logged(const struct ctl *ctl, const char *name, bool have_attrs,
                            const struct catalog *cat, const struct attrs *a,
                            const struct svsel *sel)
{
	char p[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	if (have_attrs && catalog_find(cat, name) != NULL)
		return true;
	if (log_dir(ctl, have_attrs ? a : NULL, name, p, sizeof p) == 0 &&
	    strlcpy(dir, p, sizeof dir) < sizeof dir && stat(dirname(dir), &st) == 0)
		return true;
	command_unknown_service("tail", name, have_attrs ? cat : NULL, sel, stderr);
	return false;
}

static int tail_run(const struct ctl *ctl, const char *name, long lines)
{
	struct svsel sel;
	struct loaded l;
	int rc = 1;
	char **paths = NULL;
	bool have_attrs = load_attrs(ctl, &l);

	if (svsel_load(ctl, name, &sel) == -1) {
		if (name == NULL && errno == ENOENT) {
			warnx("not set up yet: run gitlab-ctl reconfigure");
			goto out;
		}
		if (name == NULL || errno != ENOENT || !svsel_valid_name(name)) {
			warn("%s", name ? name : sel.dir);
			goto out;
		}
		struct svsel all;
		bool have_all = svsel_load(ctl, NULL, &all) == 0;
		bool follow =
		    known_or_logged(ctl, name, have_attrs, &l.cat, &l.a, have_all ? &all : NULL);
		if (have_all)
			svsel_free(&all);
		if (!follow)
			goto out;
		/* Not enabled: its logs may still be worth reading. */
		sel.names = xcalloc(1, sizeof *sel.names);
		sel.names[0] = xstrdup(name);
		sel.n = 1;
	}
	paths = xcalloc(sel.n, sizeof *paths);
	for (size_t i = 0; i < sel.n; i++) {
		char p[PATH_MAX];
		if (log_dir(ctl, have_attrs ? &l.a : NULL, sel.names[i], p, sizeof p) == -1) {
			warnx("%s: log path too long", sel.names[i]);
			goto out;
		}
		paths[i] = xstrdup(p);
		if (!readable(paths[i]))
			goto out;
	}
	if (sel.n == 0)
		warnx("no enabled services in %s", sel.dir);
	else
		rc = svtail_files(paths, sel.n, lines, 0);
out:
	if (paths != NULL)
		for (size_t i = 0; i < sel.n; i++)
			free(paths[i]);
	free(paths);
	cmd_unload(&l);
	svsel_free(&sel);
	return rc;
}

/*
 * SERVICE/FILE, as Omnibus' `tail gitlab-rails/production.log`: FILE in the service's log
 * directory, one plain name (no "..", no deeper path).
 */
static int tail_one_file(const struct ctl *ctl, const char *arg, long lines)
{
	char svc[NAME_MAX + 1], p[PATH_MAX];
	const char *file = strchr(arg, '/') + 1;
	struct loaded l;
	int rc = 1;
	snprintf(svc, sizeof svc, "%.*s", (int)(file - 1 - arg), arg);
	if (!svsel_valid_name(svc) || !svsel_valid_name(file)) {
		warnx("%s: write SERVICE/FILE, FILE a name in the service's log directory", arg);
		return 2;
	}
	bool have_attrs = load_attrs(ctl, &l);
	if (have_attrs && catalog_find(&l.cat, svc) == NULL) {
		command_unknown_service("tail", svc, &l.cat, NULL, stderr);
		goto out;
	}
	if (log_dir(ctl, have_attrs ? &l.a : NULL, svc, p, sizeof p) == -1) {
		warnx("%s: log path too long", svc);
		goto out;
	}
	*strrchr(p, '/') = '\0'; /* log_dir() names <dir>/current */
	char dir[PATH_MAX];
	if (strlcpy(dir, p, sizeof dir) >= sizeof dir || path_join(p, sizeof p, dir, file) == -1) {
		warnx("%s: log path too long", arg);
		goto out;
	}
	if (readable(p)) {
		char *paths[1] = {p};
		rc = svtail_files(paths, 1, lines, 0);
	}
out:
	cmd_unload(&l);
	return rc;
}

int cmd_tail(const struct ctl *ctl, int argc, char **argv)
{
	static const struct option opts[] = {{"lines", required_argument, NULL, 'n'},
	                                     {"follow", no_argument, NULL, 'f'},
	                                     {NULL, 0, NULL, 0}};
	long lines = 10;
	const char *errstr, *name;
	int ch;

	while ((ch = command_getopt(argc, argv, "+fn:", opts)) != -1) {
		if (ch == 'f')
			continue; /* Omnibus' muscle memory: tail always follows */
		if (ch != 'n')
			return 2;
		lines = (long)strtonum(optarg, 0, 1000000, &errstr);
		if (errstr != NULL) {
			warnx("-n %s: %s", optarg, errstr);
			return 2;
		}
	}
	if (command_one_arg(argc, argv, &name) == -1)
		return 2;
	if (name != NULL && strchr(name, '/') != NULL)
		return tail_one_file(ctl, name, lines);
	return tail_run(ctl, name, lines);
}

void cmd_tail_failed(const struct ctl *ctl, char **names, size_t n, FILE *fp)
{
	struct loaded l;
	bool have_attrs = load_attrs(ctl, &l);
	for (size_t i = 0; i < n; i++) {
		char sv[PATH_MAX], p[PATH_MAX];
		struct sv_status st;
		if (ctl_sv_dir(ctl, sv, sizeof sv, names[i]) == -1 ||
		    (sv_read_status(sv, &st) == 0 && st.state == SV_RUN &&
		     !sv_status_since(&st, &(struct timespec){time(NULL) - 1, 0})) ||
		    log_dir(ctl, have_attrs ? &l.a : NULL, names[i], p, sizeof p) == -1)
			continue;
		*strrchr(p, '/') = '\0'; /* log_dir() names <dir>/current */
		svtail_last(p, SVTAIL_FAILED_LINES, fp);
	}
	cmd_unload(&l);
}
