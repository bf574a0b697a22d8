/*
 * lcload: libconfig's functions, from its shared object loaded when first needed.
 *
 * Only the commands that load the catalog call a libconfig function (`status` never does); linked
 * as a NEEDED library, ld.so would still map it and bind its symbols at every start, `status`
 * included (a third of what a dynamic `status` cost beyond sv's). So a dynamic build dlopens it
 * when catalog_load_file first needs it; a build that links libconfig's archive
 * (GITLAB_CTL_LINK=deps-static, static) takes the linked functions. The catalog's code calls
 * libconfig's names as ever: for the functions (not libconfig's macros) the names below go through
 * the table beside the config_t (struct lcconfig), which each setting reaches through its config.
 * No global table.
 */
#ifndef GITLAB_CTL_LCLOAD_H
#define GITLAB_CTL_LCLOAD_H

#include <libconfig.h>
#include <stddef.h>

struct lcload {
	void (*init)(config_t *);
	void (*destroy)(config_t *);
	int (*read_file)(config_t *, const char *);
	int (*read_string)(config_t *, const char *);
	int (*length)(const config_setting_t *);
	config_setting_t *(*get_elem)(const config_setting_t *, unsigned int);
	int (*get_int)(const config_setting_t *);
	long long (*get_int64)(const config_setting_t *);
	double (*get_float)(const config_setting_t *);
	int (*get_bool)(const config_setting_t *);
	const char *(*get_string)(const config_setting_t *);
};

/* A config_t with its functions: libconfig 1.5's config_t has no hook to carry them. */
struct lcconfig {
	config_t c; /* first: a setting's config is its lcconfig */
	struct lcload fns;
};

/*
 * Fill cfg's table (in a dynamic build by dlopen of soname, unused otherwise), then
 * config_init it. 0, or -1 with dlerror's words in err and cfg not to be used.
 */
int lcload_init(struct lcconfig *cfg, const char *soname, char *err, size_t errlen);

/* Only for a config_t inside a struct lcconfig, which every config_t here is. */
static inline const struct lcload *lcload_of(const config_t *c)
{
	return &((const struct lcconfig *)c)->fns;
}
static inline void lcload_destroy(config_t *cfg)
{
	lcload_of(cfg)->destroy(cfg);
}
static inline int lcload_read_file(config_t *cfg, const char *path)
{
	return lcload_of(cfg)->read_file(cfg, path);
}
static inline int lcload_read_string(config_t *cfg, const char *s)
{
	return lcload_of(cfg)->read_string(cfg, s);
}
static inline int lcload_length(const config_setting_t *s)
{
	return lcload_of(s->config)->length(s);
}
static inline config_setting_t *lcload_get_elem(const config_setting_t *s, unsigned int i)
{
	return lcload_of(s->config)->get_elem(s, i);
}
static inline int lcload_get_int(const config_setting_t *s)
{
	return lcload_of(s->config)->get_int(s);
}
static inline long long lcload_get_int64(const config_setting_t *s)
{
	return lcload_of(s->config)->get_int64(s);
}
static inline double lcload_get_float(const config_setting_t *s)
{
	return lcload_of(s->config)->get_float(s);
}
static inline int lcload_get_bool(const config_setting_t *s)
{
	return lcload_of(s->config)->get_bool(s);
}
static inline const char *lcload_get_string(const config_setting_t *s)
{
	return lcload_of(s->config)->get_string(s);
}

/* lcload.c, which fills the table with the linked functions in a static build, defines
 * LCLOAD_OWN_NAMES: libconfig's names stay libconfig's there. */
#ifndef LCLOAD_OWN_NAMES
#define config_destroy            lcload_destroy
#define config_read_file          lcload_read_file
#define config_read_string        lcload_read_string
#define config_setting_length     lcload_length
#define config_setting_get_elem   lcload_get_elem
#define config_setting_get_int    lcload_get_int
#define config_setting_get_int64  lcload_get_int64
#define config_setting_get_float  lcload_get_float
#define config_setting_get_bool   lcload_get_bool
#define config_setting_get_string lcload_get_string
#endif

#endif
