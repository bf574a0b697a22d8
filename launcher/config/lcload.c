/* lcload: libconfig's functions, from its shared object loaded when first needed (lcload.h). */
#define LCLOAD_OWN_NAMES
#include "config/lcload.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "build_config.h"

#if GITLAB_CTL_LIBCONFIG_DLOPEN
/*
 * RTLD_NODELETE: the object stays mapped after dlclose, so the pointers stay good and no handle
 * is kept; the next file's dlopen finds it loaded. RTLD_NOW: a libconfig lacking one of
 * them fails here, not in the middle of a parse.
 */
static int fill(struct lcload *f, const char *soname, char *err, size_t errlen)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (h == NULL) {
		snprintf(err, errlen, "%s", dlerror());
		return -1;
	}
	static const struct {
		const char *name;
		size_t off;
	} sym[] = {
	    {"config_init", offsetof(struct lcload, init)},
	    {"config_destroy", offsetof(struct lcload, destroy)},
	    {"config_read_file", offsetof(struct lcload, read_file)},
	    {"config_read_string", offsetof(struct lcload, read_string)},
	    {"config_setting_length", offsetof(struct lcload, length)},
	    {"config_setting_get_elem", offsetof(struct lcload, get_elem)},
	    {"config_setting_get_int", offsetof(struct lcload, get_int)},
	    {"config_setting_get_int64", offsetof(struct lcload, get_int64)},
	    {"config_setting_get_float", offsetof(struct lcload, get_float)},
	    {"config_setting_get_bool", offsetof(struct lcload, get_bool)},
	    {"config_setting_get_string", offsetof(struct lcload, get_string)},
	};
	int rc = 0;
	for (size_t i = 0; i < sizeof sym / sizeof sym[0] && rc == 0; i++) {
		void *p = dlsym(h, sym[i].name);
		if (p == NULL) {
			snprintf(err, errlen, "%s: no %s", soname, sym[i].name);
			rc = -1;
		}
		/* POSIX lets a data pointer hold a function's address (dlsym's own contract). */
		memcpy((char *)f + sym[i].off, &p, sizeof p);
	}
	(void)dlclose(h); /* drops our reference; RTLD_NODELETE keeps the object mapped */
	return rc;
}
#else
static int fill(struct lcload *f, const char *soname, char *err, size_t errlen)
{
	(void)soname, (void)err, (void)errlen;
	*f = (struct lcload){
	    .init = config_init,
	    .destroy = config_destroy,
	    .read_file = config_read_file,
	    .read_string = config_read_string,
	    .length = config_setting_length,
	    .get_elem = config_setting_get_elem,
	    .get_int = config_setting_get_int,
	    .get_int64 = config_setting_get_int64,
	    .get_float = config_setting_get_float,
	    .get_bool = config_setting_get_bool,
	    .get_string = config_setting_get_string,
	};
	return 0;
}
#endif

int lcload_init(struct lcconfig *cfg, const char *soname, char *err, size_t errlen)
{
	if (fill(&cfg->fns, soname, err, errlen) == -1)
		return -1;
	cfg->fns.init(&cfg->c);
	return 0;
}
