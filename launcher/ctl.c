/* Paths derived from the global options (SPEC section 4). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_config.h"
#include "ctl.h"

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

int ctl_init(struct ctl *ctl, const char *root, const char *config)
{
	memset(ctl, 0, sizeof *ctl);
	if (root != NULL && root[0] != '\0') {
		char abs[PATH_MAX];
		if (realpath(root, abs) == NULL)
			return -1;
		if (strcmp(abs, "/") != 0 && copy(ctl->root, sizeof ctl->root, abs) == -1)
			return -1;
	}
	if (config != NULL) {
		if (copy(ctl->config, sizeof ctl->config, config) == -1)
			return -1;
	} else if (ctl_path(ctl, ctl->config, sizeof ctl->config, GITLAB_CTL_CONFIG_FILE,
	                    (char *)NULL) == -1) {
		return -1;
	}
	const char *datadir = getenv("GITLAB_CTL_DATADIR");
	if (copy(ctl->datadir, sizeof ctl->datadir,
	         datadir && *datadir ? datadir : GITLAB_CTL_PKGDATADIR) == -1)
		return -1;
	return find_self(ctl->self, sizeof ctl->self);
}

int ctl_path(const struct ctl *ctl, char *out, size_t outlen, const char *abs, ...)
{
	if (copy(out, outlen, ctl->root) == -1)
		return -1;
	va_list ap;
	va_start(ap, abs);
	for (const char *part = abs; part != NULL; part = va_arg(ap, const char *)) {
		size_t len = strlen(out);
		if ((len == 0 || out[len - 1] != '/') && part[0] != '/' &&
		    strlcat(out, "/", outlen) >= outlen)
			goto toolong;
		if (strlcat(out, part, outlen) >= outlen)
			goto toolong;
	}
	va_end(ap);
	return 0;
toolong:
	va_end(ap);
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
