/*
 * exec: become a service. What a run script execs under
 * runsv, and a container's entrypoint with --from-config.
 *
 *   gitlab-ctl exec [--envdir DIR | --from-config [-c FILE]] [--user U] [--group G]
 *                   [--groups G1,G2...] [--chdir DIR] SERVICE [-- COMMAND ARGS...]
 *
 * Where the parts come from:
 *   --envdir DIR    env from DIR; user, group, home and command from the
 *                   options only (the run script; no config is parsed)
 *   --from-config   everything computed from gitlab.rb + catalog (containers)
 *   neither         env from the service's envdir as reconfigure wrote it,
 *                   the rest from gitlab.rb + catalog (by hand, as runsv would)
 * Options always win over the computed values.
 *
 * The new process gets exactly the computed environment (nothing inherited
 * from runsv or the shell), umask 077, the service user and group when we
 * are root (supplementary groups only those --groups names, as chpst -u
 * user:group:extra sets them), the service home as cwd, no fd above 2, the default
 * disposition for every signal and an empty signal mask. The --envdir path
 * parses no configuration at all, so it costs little more than the execve.
 *
 * An account never shares root's session or terminal: it leads a session of
 * its own without a controlling terminal; when one of stdin, stdout and stderr
 * is a terminal (exec typed by hand), it runs on a fresh pty that this process
 * relays (lib/ptyrelay.h). Without a terminal (runsv, a container's PID 1)
 * nothing is forked: the account's program replaces this process.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/attrs.h"
#include "config/catalog.h"
#include "cmd/commands.h"
#include "cmd/load.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/diag.h"
#include "lib/envdir.h"
#include "lib/fdio.h"
#include "lib/gcovflush.h"
#include "lib/ptyrelay.h"
#include "lib/pathjoin.h"
#include "render/svfiles.h"

/* Exit statuses of a failed exec, as POSIX shells use them. */
#define EXIT_NOTEXEC  126
#define EXIT_NOTFOUND 127

struct exec_opts {
	const char *envdir, *user, *group, *groups, *chdir;
	const char *config; /* -c FILE after the command name, as containers write it */
	bool from_config;
	const char *service;
	char **cmd; /* NULL: the service's command (--from-config) */
};

/* What the target process is made of; strings point into opts, attrs or env. */
struct target {
	struct envv env;
	const char *user, *group, *groups, *home;
	char **argv;
	bool own_pgrp; /* under runsv: lead a session and group, as Omnibus's `chpst -P` does */
	const char *config_name; /* --from-config with the catalog's command: where to change it */
};

static int usage_error(const char *msg)
{
	warnx("exec: %s", msg);
	fprintf(stderr,
	        "usage: gitlab-ctl exec [--envdir DIR | --from-config [-c FILE]] [--user USER] "
	        "[--group GROUP] [--groups G1,G2...] [--chdir DIR] SERVICE [-- COMMAND ARGS...]\n");
	return 2;
}

/* Index of the first "--", which ends exec's own arguments; argc if none. */
static int find_dashdash(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return argc;
}

/*
 * Options may come before or after SERVICE (containers write
 * `exec gitlab-exporter --from-config -c FILE`), so getopt permutes, but only
 * up to "--": everything after it is the command's, untouched.
 */
static int parse_opts(int argc, char **argv, struct exec_opts *o)
{
	static const struct option longopts[] = {
	    {"envdir", required_argument, NULL, 'e'},
	    {"user", required_argument, NULL, 'u'},
	    {"group", required_argument, NULL, 'g'},
	    {"groups", required_argument, NULL, 'G'}, /* chpst's -u user:group:extra... */
	    {"chdir", required_argument, NULL, 'C'},
	    {"from-config", no_argument, NULL, 'f'},
	    {"config", required_argument, NULL, 'c'},
	    {NULL, 0, NULL, 0},
	};
	int ch, end = find_dashdash(argc, argv);
	memset(o, 0, sizeof *o);
	while ((ch = command_getopt(end, argv, "e:u:g:G:C:fc:", longopts)) != -1) {
		switch (ch) {
		case 'e':
			o->envdir = optarg;
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'g':
			o->group = optarg;
			break;
		case 'G':
			o->groups = optarg;
			break;
		case 'C':
			o->chdir = optarg;
			break;
		case 'f':
			o->from_config = true;
			break;
		case 'c':
			o->config = optarg;
			break;
		default:
			return usage_error("bad option");
		}
	}
	if (optind >= end)
		return usage_error("no SERVICE given");
	if (optind + 1 < end)
		return usage_error("one SERVICE only; put the command after --");
	o->service = argv[optind];
	if (end < argc) {
		if (end + 1 >= argc)
			return usage_error("no COMMAND after --");
		o->cmd = &argv[end + 1];
	}
	if (o->envdir != NULL && o->from_config)
		return usage_error("--envdir and --from-config exclude each other");
	if (o->cmd == NULL && o->envdir != NULL)
		return usage_error("--envdir needs a COMMAND (-- COMMAND ARGS)");
	return 0;
}

static int env_from_dir(const char *dir, struct envv *env)
{
	char bad[256];
	if (envdir_read(dir, env, bad, sizeof bad) == 0)
		return 0;
	if (bad[0] == '\0')
		warn("exec: envdir %s", dir);
	else if (errno == EINVAL)
		warnx("exec: envdir %s: %s: not a valid variable (name, file type or NUL byte)",
		      dir, bad);
	else
		warn("exec: envdir %s: %s", dir, bad);
	return -1;
}

static void env_add_list(struct envv *env, const struct kvlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		envv_set(env, l->v[i].name, l->v[i].value);
}

/*
 * From gitlab.rb and the catalog, no runit tree; the env too with
 * --from-config, else from the service's envdir. The attrs stay loaded: the
 * target points into them until the execve.
 */
static int target_from_config(const struct ctl *ctl, const struct exec_opts *o, struct loaded *l,
                              struct target *t)
{
	/* a run script's every start: warnings once */
	if (cmd_load(ctl, l, CMD_REPORT_QUIET, "exec", stderr) == -1)
		return -1;
	const struct attrs *a = &l->a;
	const struct svc *s = attrs_svc(a, o->service);
	if (s == NULL) {
		warnx("exec: unknown service '%s'", o->service);
		return -1;
	}
	if (!o->from_config) {
		if (env_from_dir(s->env_dir, &t->env) == -1)
			return -1;
	} else {
		env_add_list(&t->env, &s->base_env);
		env_add_list(&t->env, &s->env);
		if (svfiles_write(ctl, a, s, stderr) == -1)
			return -1; /* a container's config files come from gitlab.rb alone */
	}
	envv_sort(&t->env);
	t->user = o->user ? o->user : s->user;
	t->group = o->group ? o->group : s->group;
	t->groups = o->groups ? o->groups : (s->groups && s->groups[0] ? s->groups : NULL);
	t->home = o->chdir ? o->chdir : s->home;
	t->argv = o->cmd ? o->cmd : s->argv;
	if (o->cmd == NULL && cat_setting_find(s->def, "command") != NULL)
		t->config_name = s->def->config_name;
	if (t->argv == NULL || t->argv[0] == NULL) {
		warnx("exec: service '%s' has no command", o->service);
		return -1;
	}
	return 0;
}

/*
 * The groups the target runs with: the primary group first, then those
 * --groups names. Nothing else: chpst -u user:group does the same, and every
 * group a service does not need is access it should not have. (initgroups()
 * would also walk every NSS group database; with systemd's module that was
 * half of exec's instructions.)
 */
#define EXEC_MAX_GROUPS 32

struct gidset {
	gid_t v[EXEC_MAX_GROUPS];
	size_t n;
};

static int lookup_group(const char *name, gid_t *gid)
{
	errno = 0;
	const struct group *gr = getgrnam(name);
	if (gr == NULL) {
		if (errno != 0)
			warn("exec: group %s", name);
		else
			warnx("exec: no such group: %s", name);
		return -1;
	}
	*gid = gr->gr_gid;
	return 0;
}

static bool gidset_has(const struct gidset *gs, gid_t gid)
{
	for (size_t i = 0; i < gs->n; i++)
		if (gs->v[i] == gid)
			return true;
	return false;
}

/* Appends the comma-separated group names of list; duplicates are dropped. */
static int gidset_add_list(struct gidset *gs, const char *list)
{
	char buf[1024], *save = NULL;
	if (strlcpy(buf, list, sizeof buf) >= sizeof buf) {
		warnx("exec: --groups: list too long");
		return -1;
	}
	if (buf[0] == '\0' || buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,")) {
		warnx("exec: --groups '%s': empty group name", list);
		return -1;
	}
	for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		gid_t gid;
		if (lookup_group(name, &gid) == -1)
			return -1;
		if (gidset_has(gs, gid))
			continue;
		if (gs->n == EXEC_MAX_GROUPS) {
			warnx("exec: --groups: more than %d groups", EXEC_MAX_GROUPS);
			return -1;
		}
		gs->v[gs->n++] = gid;
	}
	return 0;
}

/* The kernel's supplementary list is exactly gs, in any order. */
static bool groups_are(const struct gidset *gs)
{
	gid_t now[EXEC_MAX_GROUPS + 1];
	int n = getgroups(EXEC_MAX_GROUPS + 1, now);
	if (n < 0 || (size_t)n != gs->n)
		return false;
	for (int i = 0; i < n; i++)
		if (!gidset_has(gs, now[i]))
			return false;
	return true;
}

/* setgroups, setgid, setuid, in that order (doas, chpst), then prove it. */
static int become(const struct passwd *pw, const struct gidset *gs)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid, gid = gs->v[0];

	if (setgroups(gs->n, gs->v) == -1) {
		warn("exec: setgroups for %s", pw->pw_name);
		return -1;
	}
	if (setresgid(gid, gid, gid) == -1) {
		warn("exec: setgid %lu", (unsigned long)gid);
		return -1;
	}
	if (setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) == -1) {
		warn("exec: setuid %s", pw->pw_name);
		return -1;
	}
	if (getresuid(&ruid, &euid, &suid) == -1 || getresgid(&rgid, &egid, &sgid) == -1 ||
	    ruid != pw->pw_uid || euid != pw->pw_uid || suid != pw->pw_uid || rgid != gid ||
	    egid != gid || sgid != gid || !groups_are(gs)) {
		warnx("exec: user %s: ids did not change as asked", pw->pw_name);
		return -1;
	}
	if (pw->pw_uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
		warnx("exec: user %s: could regain root after dropping it", pw->pw_name);
		return -1;
	}
	return 0;
}

static int lookup_user(const char *user, const struct passwd **pw)
{
	errno = 0;
	*pw = getpwnam(user);
	if (*pw != NULL)
		return 0;
	if (errno != 0)
		warn("exec: user %s", user);
	else
		warnx("exec: no such user: %s", user);
	return -1;
}

/* Not root: only "stay who we are" is possible, anything else is an error. */
static int check_unprivileged(const struct passwd *pw, const char *user, const char *group,
                              const struct gidset *gs)
{
	if (pw != NULL && pw->pw_uid != geteuid()) {
		warnx("exec: cannot run as %s: only root can switch users", user);
		return -1;
	}
	if (gs->v[0] != getegid()) {
		/* No --group: the user's primary group was asked for. */
		if (group != NULL && group[0] != '\0')
			warnx("exec: cannot run as group %s: only root can switch groups", group);
		else
			warnx("exec: cannot run as %s's primary group %lu: only root can switch "
			      "groups",
			      user, (unsigned long)gs->v[0]);
		return -1;
	}
	gid_t now[EXEC_MAX_GROUPS + 1];
	int n = getgroups(EXEC_MAX_GROUPS + 1, now);
	if (n == -1 && gs->n > 1) {
		warn("exec: getgroups");
		return -1;
	}
	for (size_t i = 1; i < gs->n; i++) {
		bool have = false;
		for (int j = 0; j < n; j++)
			have = have || now[j] == gs->v[i];
		if (!have) {
			warnx("exec: cannot add group %lu: only root can set groups",
			      (unsigned long)gs->v[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * Run as the service user. As root: switch to user and group (default its
 * primary group), with only the --groups as supplementary groups.
 */
static int set_credentials(const char *user, const char *group, const char *groups)
{
	const struct passwd *pw = NULL;
	struct gidset gs = {.v = {getegid()}, .n = 1};

	if (user != NULL && user[0] != '\0') {
		if (lookup_user(user, &pw) == -1)
			return -1;
		gs.v[0] = pw->pw_gid;
	}
	if (group != NULL && group[0] != '\0' && lookup_group(group, &gs.v[0]) == -1)
		return -1;
	if (groups != NULL && gidset_add_list(&gs, groups) == -1)
		return -1;
	if (geteuid() != 0)
		return check_unprivileged(pw, user, group, &gs);
	if (pw != NULL)
		return become(pw, &gs);
	if ((group != NULL && group[0] != '\0') || groups != NULL) {
		if (setgroups(gs.n, gs.v) == -1 || setresgid(gs.v[0], gs.v[0], gs.v[0]) == -1) {
			warn("exec: setgid %lu", (unsigned long)gs.v[0]);
			return -1;
		}
	}
	return 0;
}

/*
 * A missing LD_PRELOAD object makes ld.so print an error into the service log
 * on every start; say it once, clearly, and start without it. Checked after
 * the user switch, so "readable" means readable by the service user. The
 * value is left byte for byte as configured unless something is dropped.
 */
static void filter_preload(struct envv *env)
{
	const char *val = envv_get(env, "LD_PRELOAD");
	if (val == NULL)
		return;
	char *copy = xstrdup(val);
	struct buf kept;
	buf_init(&kept);
	bool dropped = false;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ": \t", &save); tok; tok = strtok_r(NULL, ": \t", &save)) {
		/* Names without '/' are searched by ld.so in its own paths: leave them. */
		if (strchr(tok, '/') != NULL && access(tok, R_OK) == -1) {
			warnx("exec: LD_PRELOAD: %s: %s; dropped, the service starts without it",
			      tok, strerror(errno));
			dropped = true;
			continue;
		}
		buf_addf(&kept, "%s%s", kept.len ? ":" : "", tok);
	}
	if (dropped && kept.len == 0)
		envv_unset(env, "LD_PRELOAD");
	else if (dropped)
		envv_set(env, "LD_PRELOAD", kept.p);
	free(copy);
	buf_free(&kept);
}

/*
 * Find the command like a shell does, but in the PATH of the NEW
 * environment. Returns 0 with the path in out, or the exit status to use.
 */
static int resolve(const char *cmd, const struct envv *env, char *out, size_t outlen)
{
	if (strchr(cmd, '/') != NULL) {
		if (strlcpy(out, cmd, outlen) >= outlen) {
			warnx("exec: %s: path too long", cmd);
			return EXIT_NOTFOUND;
		}
		return 0;
	}
	const char *path = envv_get(env, "PATH");
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	bool denied = false;
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		int dlen = (int)(end - p);
		struct stat st;
		/* An empty element means the current directory, as in execvp. */
		if (path_fmt(out, outlen, "%.*s%s%s", dlen, p, dlen ? "/" : "", cmd) == 0 &&
		    stat(out, &st) == 0) {
			if (S_ISREG(st.st_mode) && access(out, X_OK) == 0)
				return 0;
			denied = true;
		}
		if (*end == '\0')
			break;
		p = end;
	}
	if (denied) {
		warnx("exec: %s: found in PATH but not executable", cmd);
		return EXIT_NOTEXEC;
	}
	warnx("exec: %s: not found in PATH=%s", cmd, path);
	return EXIT_NOTFOUND;
}

/*
 * The signals ignored now, from SigIgn in /proc/self/status (3 syscalls, not one per signal).
 * 0, or -1 when /proc cannot tell.
 */
static int ignored_signals(unsigned long long *mask)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	ssize_t n = fdio_read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *p = strstr(buf, "\nSigIgn:");
	char *end;
	if (p == NULL)
		return -1;
	errno = 0;
	*mask = strtoull(p + strlen("\nSigIgn:"), &end, 16);
	return errno != 0 || (*end != '\n' && *end != '\0') ? -1 : 0;
}

/*
 * Undo whatever runsv, a shell or a container runtime left: ignored signals survive execve
 * (handled ones are reset by it), so only those are set back to default.
 */
static void reset_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	unsigned long long ign = ~0ULL;
	if (ignored_signals(&ign) == -1)
		ign = ~0ULL; /* no /proc: every signal */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && (sig > 64 || (ign >> (sig - 1)) & 1))
			(void)sigaction(sig, &sa, NULL); /* EINVAL for libc-reserved ones */
	sigset_t none;
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Root about to become an account: the boundary root's terminal must not cross. */
static bool to_account(const struct target *t)
{
	if (geteuid() != 0 || t->user == NULL || t->user[0] == '\0')
		return false;
	const struct passwd *pw = getpwnam(t->user);
	return pw != NULL && pw->pw_uid != 0;
}

/*
 * Leave the caller's session and controlling terminal: a new session, or, for a
 * process that already leads its group (a shell's job, PID 1) and so cannot start
 * one, giving the terminal up (TIOCNOTTY). Then /dev/tty must not open: an
 * account holding root's terminal could push input into root's shell (TIOCSTI).
 */
static int leave_terminal(const char *account)
{
	if (setsid() == -1) {
		int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd != -1) {
			/* A session leader that lets go hangs up its foreground: maybe us. */
			(void)signal(SIGHUP, SIG_IGN); /* back to default in reset_signals */
			(void)ioctl(fd, TIOCNOTTY);
			close(fd);
		}
	}
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd == -1 && (errno == ENXIO || errno == ENOENT))
		return 0;
	if (fd != -1)
		close(fd);
	if (account == NULL)
		return 0;
	warnx("exec: cannot leave the controlling terminal; %s is not run while it could open it",
	      account);
	return -1;
}

/*
 * An account never gets root's terminal: at a terminal it runs on a fresh pty
 * that this process relays (the parent returns the child's status, the child
 * goes on); otherwise it keeps stdio, which is not a terminal, without a
 * controlling one. Returns -1 to go on, else the status to exit with.
 */
static int away_from_terminal(const struct target *t)
{
	bool account = to_account(t);
	if (account && ptyrelay_wanted()) {
		int status;
		pid_t pid = ptyrelay_fork(&status);
		if (pid == -1) {
			warn("exec: no pty to run %s on instead of this terminal; run it with "
			     "stdin, stdout and stderr away from the terminal (</dev/null >FILE "
			     "2>&1)",
			     t->user);
			return 1;
		}
		return pid > 0 ? status : -1; /* the child: its session and pty are set up */
	}
	if ((account || t->own_pgrp) && leave_terminal(account ? t->user : NULL) == -1)
		return 1;
	return -1;
}

static int run(struct target *t)
{
	char path[PATH_MAX];

	int away = away_from_terminal(t);
	if (away != -1)
		return away;
	if (set_credentials(t->user, t->group, t->groups) == -1)
		return 1;
	umask(077);
	if (t->home != NULL && t->home[0] != '\0' && chdir(t->home) == -1) {
		warn("exec: chdir %s", t->home);
		return 1;
	}
	filter_preload(&t->env);
	int rc = resolve(t->argv[0], &t->env, path, sizeof path);
	if (rc != 0)
		return rc;
	reset_signals();
	closefrom(3);
	char *empty[] = {NULL}; /* an empty envdir is an empty environment */
	gcov_before_exec();     /* execve discards this process's counters (coverage builds) */
	execve(path, t->argv, t->env.v ? t->env.v : empty);
	int saved = errno;
	warn("exec: %s", path);
	if (saved == ENOENT && t->config_name != NULL)
		fprintf(
		    stderr,
		    "gitlab-ctl exec: set %s['command'] to the program's path, or run gitlab-ctl "
		    "reconfigure first (it links the bundled one there)\n",
		    t->config_name);
	return saved == ENOENT ? EXIT_NOTFOUND : EXIT_NOTEXEC;
}

int cmd_exec(const struct ctl *ctl, int argc, char **argv)
{
	struct exec_opts o;
	struct target t;
	struct loaded l;
	bool loaded = false;
	int rc = parse_opts(argc, argv, &o);

	if (rc != 0)
		return rc;
	memset(&t, 0, sizeof t);
	envv_init(&t.env);
	if (o.envdir == NULL) {
		struct ctl local = *ctl;
		if (o.config != NULL &&
		    strlcpy(local.config, o.config, sizeof local.config) >= sizeof local.config) {
			warnx("exec: %s: path too long", o.config);
			return 2;
		}
		loaded = true;
		rc = target_from_config(&local, &o, &l, &t) == 0 ? 0 : 1;
	} else {
		t.user = o.user;
		t.group = o.group;
		t.groups = o.groups;
		t.home = o.chdir;
		t.argv = o.cmd;
		t.own_pgrp = true;
		rc = env_from_dir(o.envdir, &t.env) == 0 ? 0 : 1;
	}
	if (rc == 0)
		rc = run(&t); /* returns only on failure */
	envv_free(&t.env);
	if (loaded)
		cmd_unload(&l);
	return rc;
}
