/* Service user and group (see accounts.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build_config.h"
#include "config/catalog.h"
#include "render/accounts.h"
#include "lib/diag.h"
#include "lib/pathjoin.h"
#include "lib/spawn.h"
#include "lib/names.h"

int accounts_lookup(const char *user, const char *group, uid_t *uid, gid_t *gid)
{
	errno = 0;
	const struct passwd *pw = getpwnam(user);
	if (pw == NULL) {
		if (errno == 0)
			errno = ENOENT;
		return -1;
	}
	*uid = pw->pw_uid;
	errno = 0;
	const struct group *gr = getgrnam(group);
	if (gr == NULL) {
		if (errno == 0)
			errno = ENOENT;
		return -1;
	}
	*gid = gr->gr_gid;
	return 0;
}

/* The first executable of a short list: shadow-utils live in /usr/sbin or /sbin. */
static const char *find_tool(const char *const *paths)
{
	for (; *paths; paths++)
		if (access(*paths, X_OK) == 0)
			return *paths;
	return NULL;
}

/* fork + execve with a fixed argv and a minimal environment; returns the exit status. */
/* useradd and groupadd report their own errors on our stderr. */
static int run(const char *prog, char *const argv[])
{
	const struct spawn sp = {.out = SPAWN_INHERIT, .err = SPAWN_INHERIT};
	return spawn_wait(prog, argv, &sp);
}

static void look(const char *user, const char *group, bool *have_user, bool *have_group)
{
	errno = 0;
	*have_group = getgrnam(group) != NULL;
	errno = 0;
	*have_user = getpwnam(user) != NULL;
}

/*
 * Reconfigures of other roots on this machine (a cluster's nodes side by side) create the same
 * accounts: one at a time, each looking again under the lock, so that the second finds the
 * first's account rather than failing on useradd's "already exists" or its busy lock. The
 * lock is a file only root can make or open (in /run, root's 0755): a service account that
 * could open it (as it can /etc) would hold every reconfigure up. The fd, or -1 without a lock
 * when the file cannot be made or is not root's own 0600 file: ensure_account's retries
 * (engine/owners.c) then cover a collision, as before.
 */
static int accounts_lock(void)
{
	int fd =
	    open("/run/gitlab-ctl-accounts.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct stat sb;
	if (fd == -1)
		return -1;
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) || sb.st_uid != 0 ||
	    (sb.st_mode & 077) != 0 || flock(fd, LOCK_EX) == -1) {
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* Creates what the look before found missing (see accounts_ensure). */
static int create_missing(const char *user, const char *group, const char *home, bool have_group,
                          bool have_user, bool dry_run, int *created, struct diags *d)
{
	static const char *const groupadd[] = {"/usr/sbin/groupadd", "/sbin/groupadd", NULL};
	static const char *const useradd[] = {"/usr/sbin/useradd", "/sbin/useradd", NULL};
	if (!have_group) {
		diag_out(d, "create group %s\n", group);
		(*created)++;
		const char *prog = find_tool(groupadd);
		if (!dry_run) {
			char *argv[] = {"groupadd", "--system", (char *)group, NULL};
			int rc = prog ? run(prog, argv) : -1;
			if (rc != 0) {
				diag_add(d, DIAG_ERR, "groupadd %s failed (status %d)", group, rc);
				return -1;
			}
		}
	}
	if (!have_user) {
		diag_out(d, "create user %s\n", user);
		(*created)++;
		const char *prog = find_tool(useradd);
		const char *shell =
		    access("/usr/sbin/nologin", X_OK) == 0 ? "/usr/sbin/nologin" : "/bin/false";
		if (!dry_run) {
			char *argv[] = {"useradd",          "--system",   "--gid",
			                (char *)group,      "--home-dir", (char *)home,
			                "--no-create-home", "--shell",    (char *)shell,
			                (char *)user,       NULL};
			int rc = prog ? run(prog, argv) : -1;
			if (rc != 0) {
				diag_add(d, DIAG_ERR, "useradd %s failed (status %d)", user, rc);
				return -1;
			}
		}
	}
	return 0;
}

int accounts_ensure(const char *user, const char *group, const char *home, bool manage,
                    bool dry_run, int *created, struct diags *d)
{
	bool have_user, have_group;
	look(user, group, &have_user, &have_group);
	if (have_group && have_user)
		return 0;
	if (!manage) {
		diag_add(d, DIAG_ERR,
		         "%s '%s' does not exist and manage_accounts['enable'] is false",
		         have_user ? "group" : "user", have_user ? group : user);
		return -1;
	}
	if (geteuid() != 0) {
		diag_add(d, DIAG_ERR, "%s '%s' does not exist (only root creates accounts)",
		         have_user ? "group" : "user", have_user ? group : user);
		return -1;
	}
	if (!name_account_ok(user) || !name_account_ok(group)) {
		diag_add(d, DIAG_ERR, "refusing to create account with unusual name '%s' / '%s'",
		         user, group);
		return -1;
	}
	int lock = dry_run ? -1 : accounts_lock();
	if (lock != -1)
		look(user, group, &have_user, &have_group); /* again, under the lock */
	int rc = create_missing(user, group, home, have_group, have_user, dry_run, created, d);
	if (lock != -1)
		(void)close(lock); /* releases the flock */
	return rc;
}

int accounts_remove(const char *user, const char *group, const char *home, FILE *out, int *removed,
                    struct diags *d)
{
	static const char *const userdel[] = {"/usr/sbin/userdel", "/sbin/userdel", NULL};
	static const char *const groupdel[] = {"/usr/sbin/groupdel", "/sbin/groupdel", NULL};
	errno = 0;
	const struct passwd *pw = getpwnam(user);
	if (pw == NULL)
		return 0;
	if (pw->pw_uid == 0 || pw->pw_uid >= 1000 || strcmp(pw->pw_dir, home) != 0) {
		fprintf(out, "keep user %s: not created by reconfigure (uid %ld, home %s)\n", user,
		        (long)pw->pw_uid, pw->pw_dir);
		return 0;
	}
	gid_t gid = pw->pw_gid;
	const char *prog = find_tool(userdel);
	char *uargv[] = {"userdel", (char *)user, NULL};
	int rc = prog ? run(prog, uargv) : -1;
	if (rc != 0) {
		diag_add(d, DIAG_ERR, "userdel %s failed (status %d)", user, rc);
		return -1;
	}
	fprintf(out, "remove user %s\n", user);
	(*removed)++;
	errno = 0;
	const struct group *gr = getgrnam(group);
	if (gr == NULL || gr->gr_gid != gid)
		return 0;
	prog = find_tool(groupdel);
	char *gargv[] = {"groupdel", (char *)group, NULL};
	rc = prog ? run(prog, gargv) : -1;
	if (rc != 0) {
		diag_add(d, DIAG_ERR, "groupdel %s failed (status %d)", group, rc);
		return -1;
	}
	fprintf(out, "remove group %s\n", group);
	(*removed)++;
	return 0;
}

/*
 * Whose account it is: a service sharing another's ({{postgresql.username}},
 * the exporter of a data service) names that service, so the account gets
 * the same home whichever of the two comes first.
 */
static int account_owner(const struct svc *s, const char **name, size_t *nlen)
{
	const struct cat_setting *cs = cat_setting_find(s->def, "username");
	if (cs == NULL)
		return -1;
	*name = s->def->name;
	*nlen = strlen(*name);
	const char *d = cs->def;
	const char *dot = d ? strchr(d, '.') : NULL;
	if (d != NULL && strncmp(d, "{{", 2) == 0 && dot != NULL &&
	    strcmp(dot, ".username}}") == 0) {
		*name = d + 2;
		*nlen = (size_t)(dot - *name);
	}
	return 0;
}

int accounts_home(const struct svc *s, char *home, size_t len)
{
	const char *name = "";
	size_t nlen = 0;
	bool own = account_owner(s, &name, &nlen) == 0;
	const char *data = svc_var(s, "gitlab_data_dir");
	return path_fmt(home, len, "%s%s%.*s", data ? data : GITLAB_CTL_DATA_DIR, own ? "/" : "",
	                (int)nlen, name);
}
