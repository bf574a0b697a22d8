/* nss: what a static build looks accounts and host names up in (nss.h). */
#include "lib/nss.h"

#include <nss.h>

#include "build_config.h"

int nss_builtin_only(void)
{
#if GITLAB_CTL_STATIC_LIBC
	/* initgroups (getgrouplist, initgroups) is a database of its own. */
	static const char *const db[][2] = {
	    {"passwd", "files"},
	    {"group", "files"},
	    {"initgroups", "files"},
	    {"hosts", "files dns"},
	};
	for (size_t i = 0; i < sizeof db / sizeof db[0]; i++)
		if (__nss_configure_lookup(db[i][0], db[i][1]) != 0)
			return -1;
#endif
	return 0;
}
