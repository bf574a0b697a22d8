/* Paths derived from the global options and from where the binary is. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_config.h"
#include "lib/ctl.h"
#include "lib/pathjoin.h"

static int copy(char *out, size_t outlen, const char *s)
{
	if (strlcpy(out, s, outlen) >= outlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* The binary's own absolute path, so run scripts exec exactly this build. */
static int find_self(char *out, size_t outlen)
{
	ssize_t n = readlink("/proc/self/exe", out, outlen - 1);
	if (n == -1)
		return -1;
	if ((size_t)n >= outlen - 1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	out[n] = '\0';
	return 0;
}

static bool has_catalog(const char *dir)
{
	char sv[PATH_MAX];
	struct stat st;
	return path_join(sv, sizeof sv, dir, "sv") == 0 && stat(sv, &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

/*
 * Does dir (in a buffer of size len) hold sv/? "/sv" is appended in place and taken off
 * again: ctl_init runs under every command, `status` too, and a second PATH_MAX buffer would
 * put its stack a page deeper (a page fault).
 */
static bool has_catalog_in(char *dir, size_t len)
{
	size_t n = strlen(dir);
	struct stat st;
	if (path_join(dir, len, dir, "sv") == -1)
		return false;
	bool found = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
	dir[n] = '\0';
	return found;
}

/*
 * The first dirlen bytes of self (the binary's directory, canonical) joined with rel, each
 * leading "../" of rel dropping one component: no readlink per component as realpath would
 * do, since the directory holds no symlink and no "..". -1 (ENAMETOOLONG) when it does not fit.
 */
static int join_up(char *out, size_t outlen, const char *self, size_t dirlen, const char *rel)
{
	if (dirlen >= outlen)
		goto toolong;
	memcpy(out, self, dirlen);
	out[dirlen] = '\0';
	for (; strncmp(rel, "../", 3) == 0; rel += 3) {
		char *slash = strrchr(out, '/');
		if (slash != NULL)
			slash[slash == out] = '\0'; /* "/a" -> "/" */
	}
	size_t n = strlen(out);
	if ((n == 0 || out[n - 1] != '/') && strlcat(out, "/", outlen) >= outlen)
		goto toolong;
	if (strlcat(out, rel, outlen) >= outlen)
		goto toolong;
	return 0;
toolong:
	errno = ENAMETOOLONG;
	return -1;
}

/*
 * The build tree's data link at *link (a buffer of size len), replaced by what it resolves
 * to: its absolute target as CMake wrote it (one readlink, not realpath's one per component
 * of both paths), else realpath. Its own frame: only a build tree pays for the buffer.
 */
static __attribute__((noinline)) int resolve_link(char *link, size_t len)
{
	char real[PATH_MAX];
	ssize_t n = readlink(link, real, sizeof real);
	if (n > 0 && (size_t)n < sizeof real && real[0] == '/')
		real[n] = '\0';
	else if (realpath(link, real) == NULL)
		return -1;
	return copy(link, len, real);
}

/*
 * GITLAB_CTL_DATADIR, else the data dir next to the binary: where an install puts it relative
 * to <bindir> (any prefix), or the gitlab-ctl-data link CMake makes in a build tree (resolved);
 * else the compiled-in path, which then names the catalog in the error. Candidates are built
 * in ctl->datadir itself (see has_catalog_in).
 */
static int find_datadir(struct ctl *ctl)
{
	const char *env = getenv("GITLAB_CTL_DATADIR");
	if (env != NULL && *env != '\0')
		return copy(ctl->datadir, sizeof ctl->datadir, env);
	const char *slash = strrchr(ctl->self, '/');
	if (slash != NULL) {
		char *cand = ctl->datadir;
		size_t len = sizeof ctl->datadir, dirlen = (size_t)(slash - ctl->self);
		if (join_up(cand, len, ctl->self, dirlen, GITLAB_CTL_PKGDATADIR_REL) == 0 &&
		    has_catalog_in(cand, len))
			return 0;
		if (join_up(cand, len, ctl->self, dirlen, "gitlab-ctl-data") == 0 &&
		    has_catalog_in(cand, len) && resolve_link(cand, len) == 0)
			return 0;
	}
	return copy(ctl->datadir, sizeof ctl->datadir, GITLAB_CTL_PKGDATADIR);
}

bool ctl_catalog_found(const struct ctl *ctl)
{
	return has_catalog(ctl->datadir);
}

void ctl_catalog_hint(const struct ctl *ctl, FILE *fp)
{
	fprintf(fp,
	        "gitlab-ctl: no service catalog at %s/sv: install gitlab-ctl (cmake --install "
	        "BUILD --prefix DIR puts it in DIR/share/gitlab-ctl), or set GITLAB_CTL_DATADIR "
	        "to a directory holding sv/ and templates/\n",
	        ctl->datadir);
}

const char *ctl_root_hint(const struct ctl *ctl, int err)
{
	if ((err == EACCES || err == EPERM || err == EROFS) && ctl->root[0] == '\0' &&
	    geteuid() != 0)
		return " (run as root or use --root DIR)";
	return "";
}

static int set_root(struct ctl *ctl, const char *root)
{
	if (root == NULL || root[0] == '\0')
		return 0;
	/* realpath writes at most PATH_MAX bytes: straight into root, no copy */
	if (realpath(root, ctl->root) == NULL) {
		ctl->root[0] = '\0';
		return -1;
	}
	if (strcmp(ctl->root, "/") == 0)
		ctl->root[0] = '\0';
	return 0;
}

int ctl_init(struct ctl *ctl, const char *root, const char *config)
{
	/* each string is set below: zeroing all 16 KiB would touch four pages for nothing */
	ctl->root[0] = ctl->config[0] = ctl->datadir[0] = ctl->self[0] = '\0';
	ctl->verbose = ctl->read_only = false;
	if (set_root(ctl, root) == -1)
		return -1;
	if (config != NULL) {
		if (copy(ctl->config, sizeof ctl->config, config) == -1)
			return -1;
	} else if (ctl_path(ctl, ctl->config, sizeof ctl->config, GITLAB_CTL_CONFIG_FILE,
	                    (char *)NULL) == -1) {
		return -1;
	}
	if (find_self(ctl->self, sizeof ctl->self) == -1)
		return -1;
	return find_datadir(ctl);
}

int ctl_init_root(struct ctl *ctl, const char *root, const char *config)
{
	if (set_root(ctl, root) == -1)
		return -1;
	return config != NULL ? copy(ctl->config, sizeof ctl->config, config) : 0;
}

int ctl_path(const struct ctl *ctl, char *out, size_t outlen, const char *abs, ...)
{
	/* lengths carried along, not rescanned by strlcat: reconfigure builds thousands */
	size_t len = strlen(ctl->root);
	if (len >= outlen)
		goto toolong;
	memcpy(out, ctl->root, len + 1);
	va_list ap;
	va_start(ap, abs);
	for (const char *part = abs; part != NULL; part = va_arg(ap, const char *)) {
		size_t n = strlen(part);
		bool slash = (len == 0 || out[len - 1] != '/') && part[0] != '/';
		if (len + slash + n >= outlen) {
			va_end(ap);
			goto toolong;
		}
		if (slash)
			out[len++] = '/';
		memcpy(out + len, part, n + 1);
		len += n;
	}
	va_end(ap);
	return 0;
toolong:
	errno = ENAMETOOLONG;
	return -1;
}

int ctl_sv_dir(const struct ctl *ctl, char *out, size_t outlen, const char *svc)
{
	return ctl_path(ctl, out, outlen, GITLAB_CTL_INSTALL_DIR, "sv", svc, (char *)NULL);
}

int ctl_service_dir(const struct ctl *ctl, char *out, size_t outlen)
{
	return ctl_path(ctl, out, outlen, GITLAB_CTL_INSTALL_DIR, "service", (char *)NULL);
}

int ctl_var_dir(const struct ctl *ctl, char *out, size_t outlen)
{
	return ctl_path(ctl, out, outlen, GITLAB_CTL_INSTALL_DIR, "var", (char *)NULL);
}
