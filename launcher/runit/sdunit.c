/* The runsvdir through systemd's gitlab-runsvdir.service (see sdunit.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/fdio.h"
#include "lib/pathjoin.h"
#include "lib/clock.h"
#include "runit/sdunit.h"
#include "lib/readfile.h"
#include "lib/spawn.h"

#define START_TIMEOUT_MS 10000
#define UNIT_MAX         65536

bool sdunit_decide(const struct sdunit_facts *f)
{
	if (f->root_given || !f->booted)
		return false;
	if (f->env != NULL && strcmp(f->env, "0") == 0)
		return false;
	return f->unit_found && f->runs_self;
}

int sdunit_exec_path(const char *text, char *out, size_t len)
{
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		line += strspn(line, " \t");
		if (strncmp(line, "ExecStart=", 10) == 0) {
			const char *p = line + 10;
			p += strspn(p, "-@:+!"); /* systemd's special executable prefixes */
			size_t n = strcspn(p, " \t\n");
			if (n == 0 || n >= len)
				return -1;
			memcpy(out, p, n);
			out[n] = '\0';
			return 0;
		}
		line = end ? end + 1 : NULL;
	}
	return -1;
}

/* The unit file systemd would load: /etc overrides /run overrides the package's. */
static int read_unit(char *buf, size_t len)
{
	static const char *const dirs[] = {"/etc/systemd/system", "/run/systemd/system",
	                                   "/usr/lib/systemd/system", "/lib/systemd/system", NULL};
	for (const char *const *d = dirs; *d; d++) {
		char path[PATH_MAX];
		int fd = path_join(path, sizeof path, *d, SDUNIT_NAME) == -1
		             ? -1
		             : open(path, O_RDONLY | O_CLOEXEC);
		if (fd == -1)
			continue;
		/* Not readfile: systemd follows links in its unit directories, so we do too. */
		ssize_t n = fdio_read_all(fd, buf, len - 1);
		close(fd);
		if (n < 0)
			return -1;
		buf[n] = '\0';
		return 0;
	}
	return -1;
}

void sdunit_probe(const struct ctl *ctl, struct sdunit_facts *f)
{
	struct stat st;
	memset(f, 0, sizeof *f);
	f->root_given = ctl->root[0] != '\0';
	f->booted = stat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
	f->env = getenv("GITLAB_CTL_SYSTEMD");
	if (f->root_given || !f->booted)
		return; /* nothing else matters: spare the reads */
	char *text = xmalloc(UNIT_MAX), prog[PATH_MAX], real[PATH_MAX];
	f->unit_found = read_unit(text, UNIT_MAX) == 0;
	f->runs_self = f->unit_found && sdunit_exec_path(text, prog, sizeof prog) == 0 &&
	               realpath(prog, real) != NULL && strcmp(real, ctl->self) == 0;
	free(text);
}

static int systemctl(const char *verb, const char *opt, struct diags *d)
{
	static const char *const paths[] = {"/usr/bin/systemctl", "/bin/systemctl", NULL};
	const char *prog = NULL;
	for (const char *const *p = paths; *p && prog == NULL; p++)
		if (access(*p, X_OK) == 0)
			prog = *p;
	if (prog == NULL) {
		diag_add(d, DIAG_ERR,
		         "systemd runs this machine but systemctl is not in /usr/bin or /bin");
		return -1;
	}
	char *argv[] = {"systemctl", (char *)verb, "--quiet", (char *)opt, SDUNIT_NAME, NULL};
	if (opt == NULL) {
		argv[3] = SDUNIT_NAME;
		argv[4] = NULL;
	}
	const struct spawn sp = {.out = SPAWN_INHERIT, .err = SPAWN_INHERIT};
	int rc = spawn_wait(prog, argv, &sp);
	if (rc != 0) {
		diag_add(d, DIAG_ERR,
		         "systemctl %s%s%s %s failed (status %d); see journalctl -u %s", verb,
		         opt ? " " : "", opt ? opt : "", SDUNIT_NAME, rc, SDUNIT_NAME);
		return -1;
	}
	return 0;
}

int sdunit_start(const struct ctl *ctl, int (*running)(const struct ctl *, pid_t *),
                 struct diags *d)
{
	struct sdunit_facts f;
	sdunit_probe(ctl, &f);
	if (!sdunit_decide(&f))
		return 0;
	/* Enabled as Omnibus' reconfigure does, so the tree comes back after a reboot. */
	if (systemctl("enable", NULL, d) == -1 || systemctl("start", NULL, d) == -1)
		return -1;
	long t0 = mono_ms();
	for (long step = 1;; step = step < 50 ? step * 2 : 50) {
		pid_t pid;
		if (running(ctl, &pid) == 1)
			return 1;
		if (mono_ms() - t0 > START_TIMEOUT_MS) {
			diag_add(d, DIAG_ERR,
			         "%s started but its runsvdir did not take its lock within %d ms; "
			         "see journalctl -u %s",
			         SDUNIT_NAME, START_TIMEOUT_MS, SDUNIT_NAME);
			return -1;
		}
		sleep_ms(step);
	}
}

int sdunit_stop(const struct ctl *ctl, struct diags *d)
{
	struct sdunit_facts f;
	sdunit_probe(ctl, &f);
	if (!sdunit_decide(&f))
		return 0;
	/* disable --now also stops it; waits until the wrapper has stopped every service. */
	return systemctl("disable", "--now", d) == -1 ? -1 : 1;
}
