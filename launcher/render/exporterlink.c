/* The bundled exporter's managed link (see exporterlink.h). */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_config.h"
#include "lib/pathjoin.h"
#include "render/exporterlink.h"

int exporter_link_paths(const struct ctl *ctl, struct exporter_link *x)
{
	if (ctl_path(ctl, x->path, sizeof x->path, GITLAB_CTL_INSTALL_DIR,
	             "embedded/bin/gitlab-exporter", (char *)NULL) == -1)
		return -1;
	return path_join(x->bundled, sizeof x->bundled, ctl->datadir, "exporter/gitlab-exporter");
}

bool exporter_link_managed(const struct exporter_link *x)
{
	struct stat st;
	return lstat(x->path, &st) == -1 || S_ISLNK(st.st_mode);
}

const char *exporter_link_target(const struct exporter_link *x, const char *cmd)
{
	return strcmp(cmd, x->path) == 0 && exporter_link_managed(x) ? x->bundled : cmd;
}

int exporter_link_remove(const struct exporter_link *x)
{
	char target[PATH_MAX];
	ssize_t len = readlink(x->path, target, sizeof target - 1);
	if (len <= 0)
		return 0;
	target[len] = '\0';
	return strcmp(target, x->bundled) == 0 && unlink(x->path) == 0 ? 1 : 0;
}
