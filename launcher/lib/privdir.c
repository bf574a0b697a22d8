/* Opening root's private directories under one policy (see privdir.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/pathjoin.h"
#include "lib/pathsafe.h"
#include "lib/privdir.h"

int privdir_open(const char *parent, const char *dir, bool create)
{
	if (create && pathsafe_mkdirs(parent, 0755) == -1)
		return -1;
	if (create && mkdir(dir, 0700) == -1 && errno != EEXIST)
		return -1;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return -1;
	struct stat st;
	if (fstat(fd, &st) == -1) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	bool ours = st.st_uid == geteuid();
	if (ours && (st.st_mode & 077) != 0 && create && fchmod(fd, 0700) == 0)
		return fd;
	if (ours && (st.st_mode & 022) == 0)
		return fd;
	close(fd);
	errno = EPERM;
	return -1;
}

int privdir_open_var(const struct ctl *ctl, const char *name, char *dir, size_t len, bool create)
{
	char var[PATH_MAX];
	if (ctl_var_dir(ctl, var, sizeof var) == -1 || path_join(dir, len, var, name) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return privdir_open(var, dir, create);
}
