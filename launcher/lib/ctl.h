/*
 * ctl: the parsed command-line options and the paths derived from them.
 * This is the only state shared by every command; it is filled once by
 * main() and then read-only.
 */
#ifndef GITLAB_CTL_CTL_H
#define GITLAB_CTL_CTL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct ctl {
	bool verbose;           /* first: beside root's start, not a page of its own past self */
	bool read_only;         /* check-config, a dry run: no file written, not even a cache */
	char root[PATH_MAX];    /* --root / GITLAB_CTL_ROOT, "" for none; no trailing '/' */
	char config[PATH_MAX];  /* -c FILE, else root + GITLAB_CTL_CONFIG_FILE */
	char datadir[PATH_MAX]; /* catalog (sv/) and templates/: see ctl_init */
	char self[PATH_MAX];    /* absolute path of this gitlab-ctl binary, for run scripts */
};

/*
 * Fill defaults; root and config may be NULL. Returns 0, or -1 with errno.
 * The data dir is GITLAB_CTL_DATADIR, else the one installed next to the
 * binary (<bindir>/../share/gitlab-ctl, or a build tree's gitlab-ctl-data
 * link), else the compiled-in GITLAB_CTL_PKGDATADIR.
 */
int ctl_init(struct ctl *ctl, const char *root, const char *config);

/*
 * ctl_init for a command that reads only the root's runit tree (`status`): root, and config
 * when given; datadir and self are not looked for. ctl must be zeroed (calloc): the strings
 * it leaves alone then read "" and their pages are never touched, which `status` would
 * otherwise pay for as page faults. Returns 0, or -1 with errno.
 */
int ctl_init_root(struct ctl *ctl, const char *root, const char *config);

/* Whether <datadir>/sv exists; the hint says where it was looked for and how to fix it. */
bool ctl_catalog_found(const struct ctl *ctl);
void ctl_catalog_hint(const struct ctl *ctl, FILE *fp);

/*
 * Prefix an absolute compile-time path with the root:
 * ctl_path(ctl, buf, sizeof buf, "/opt/gitlab/sv") -> "<root>/opt/gitlab/sv".
 * Further components may follow (NULL-terminated), joined with '/'.
 * Returns 0, or -1 with errno = ENAMETOOLONG.
 */
int ctl_path(const struct ctl *ctl, char *out, size_t outlen, const char *abs, ...)
    __attribute__((sentinel));

/* " (run as root or use --root DIR)" after a permission error on the system paths, else "". */
const char *ctl_root_hint(const struct ctl *ctl, int err);

/* Well-known places, all root-prefixed. */
int ctl_sv_dir(const struct ctl *ctl, char *out, size_t outlen,
               const char *svc);                                      /* <install>/sv/<svc> */
int ctl_service_dir(const struct ctl *ctl, char *out, size_t outlen); /* <install>/service */
int ctl_var_dir(const struct ctl *ctl, char *out,
                size_t outlen); /* <install>/var: locks, pidfiles */

#endif
