/*
 * LD_PRELOAD shim for t_exec_privdrop_faults.sh: GITLAB_CTL_FAULT names the credential call
 * that lies, so that each refusal of exec's privilege drop is reached:
 *   setresgid, setresuid  fail with EPERM
 *   getresuid             reports a saved uid of 0 after the drop
 *   getgroups             reports a supplementary group that was not asked for
 *   regain                setuid(0) "succeeds" after the drop
 * Without it (or with another value) every call is the real one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int fault(const char *what)
{
	const char *f = getenv("GITLAB_CTL_FAULT");
	return f != NULL && strcmp(f, what) == 0;
}

int setresgid(gid_t r, gid_t e, gid_t s)
{
	int (*real)(gid_t, gid_t, gid_t) =
	    (int (*)(gid_t, gid_t, gid_t))dlsym(RTLD_NEXT, "setresgid");
	if (fault("setresgid")) {
		errno = EPERM;
		return -1;
	}
	return real(r, e, s);
}

int setresuid(uid_t r, uid_t e, uid_t s)
{
	int (*real)(uid_t, uid_t, uid_t) =
	    (int (*)(uid_t, uid_t, uid_t))dlsym(RTLD_NEXT, "setresuid");
	if (fault("setresuid")) {
		errno = EPERM;
		return -1;
	}
	return real(r, e, s);
}

int getresuid(uid_t *r, uid_t *e, uid_t *s)
{
	int (*real)(uid_t *, uid_t *, uid_t *) =
	    (int (*)(uid_t *, uid_t *, uid_t *))dlsym(RTLD_NEXT, "getresuid");
	int rc = real(r, e, s);
	if (rc == 0 && fault("getresuid"))
		*s = 0;
	return rc;
}

int getgroups(int n, gid_t *list)
{
	int (*real)(int, gid_t *) = (int (*)(int, gid_t *))dlsym(RTLD_NEXT, "getgroups");
	int rc = real(n, list);
	if (rc > 0 && n > 0 && fault("getgroups"))
		list[0] = 4242;
	return rc;
}

int setuid(uid_t u)
{
	int (*real)(uid_t) = (int (*)(uid_t))dlsym(RTLD_NEXT, "setuid");
	if (u == 0 && fault("regain"))
		return 0;
	return real(u);
}
