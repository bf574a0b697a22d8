/* The lists of groups in a definition: templates, setup steps, scrape jobs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/catalog.h"
#include "config/catalog_int.h"
#include "lib/alloc.h"

static int load_template(struct ld *l, const config_setting_t *g, struct cat_template *t)
{
	t->line = (int)config_setting_source_line(g);
	t->mode = 0644;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
		ld_err(l, g, "each template must be a group { src = ...; dest = ...; }");
		return -1;
	}
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		const char *key = config_setting_name(m);
		const char *v = NULL;
		if (strcmp(key, "validate") == 0) {
			if (ld_argv(l, m, "validate", &t->validate, &t->nvalidate) == -1)
				return -1;
			continue;
		}
		if (strcmp(key, "contexts") == 0) {
			if (ld_argv(l, m, "contexts", &t->contexts, &t->ncontexts) == -1)
				return -1;
			continue;
		}
		if (strcmp(key, "src") != 0 && strcmp(key, "dest") != 0 &&
		    strcmp(key, "mode") != 0 && strcmp(key, "owner") != 0 &&
		    strcmp(key, "on_change") != 0) {
			ld_err(l, m,
			       "unknown key '%s' in a template (src, dest, mode, owner, validate, "
			       "on_change, contexts)",
			       key);
			return -1;
		}
		if ((v = ld_string(l, m, key)) == NULL)
			return -1;
		if (strcmp(key, "src") == 0) {
			if (v[0] == '\0' || v[0] == '/' || strstr(v, "..") != NULL) {
				ld_err(l, m, "template src must be a file name under templates/");
				return -1;
			}
			t->src = xstrdup(v);
		} else if (strcmp(key, "dest") == 0) {
			if (ld_placeholders(l, m, v) == -1)
				return -1;
			t->dest = xstrdup(v);
		} else if (strcmp(key, "mode") == 0) {
			char *end;
			errno = 0;
			unsigned long mode = strtoul(v, &end, 8);
			if (errno || *v == '\0' || *end != '\0' || mode > 07777) {
				ld_err(l, m, "template mode must be an octal string like \"0600\"");
				return -1;
			}
			t->mode = (mode_t)mode;
		} else if (strcmp(key, "on_change") == 0) {
			if (strcmp(v, "hup") != 0 && strcmp(v, "restart") != 0) {
				ld_err(l, m, "on_change must be \"hup\" or \"restart\"");
				return -1;
			}
			t->hup = strcmp(v, "hup") == 0;
		} else if (strcmp(v, "service") == 0 || strcmp(v, "root") == 0 ||
		           strcmp(v, "group") == 0) {
			t->service_owned = strcmp(v, "service") == 0;
			t->group_owned = strcmp(v, "group") == 0;
		} else {
			ld_err(l, m, "template owner must be \"service\", \"group\" or \"root\"");
			return -1;
		}
	}
	if (t->ncontexts > 0 && !t->hup) {
		ld_err(l, g, "contexts is for a template with on_change = \"hup\"");
		return -1;
	}
	if (t->dest == NULL) { /* without src: a directory */
		ld_err(l, g, "a template needs dest (and src, unless it is a directory)");
		return -1;
	}
	return 0;
}

int ld_templates(struct ld *l, const config_setting_t *st)
{
	if (config_setting_type(st) != CONFIG_TYPE_LIST) {
		ld_err(l, st, "templates must be a list ( { ... } )");
		return -1;
	}
	struct cat_service *s = l->s;
	int n = config_setting_length(st);
	s->templates = xcalloc((size_t)n + 1, sizeof *s->templates);
	for (int i = 0; i < n; i++)
		if (load_template(l, config_setting_get_elem(st, (unsigned)i),
		                  &s->templates[s->ntemplates++]) == -1)
			return -1;
	return 0;
}

static int load_step_timeout(struct ld *l, const config_setting_t *m, struct cat_step *st)
{
	if (config_setting_type(m) != CONFIG_TYPE_INT || config_setting_get_int(m) < 1 ||
	    config_setting_get_int(m) > STEP_TIMEOUT_MAX) {
		ld_err(l, m, "setup step 'timeout' must be a number of seconds, 1 to %d",
		       STEP_TIMEOUT_MAX);
		return -1;
	}
	st->timeout = config_setting_get_int(m);
	return 0;
}

static int load_step_when(struct ld *l, const config_setting_t *m, const char *v,
                          struct cat_step *st)
{
	if (strcmp(v, "before_start") == 0)
		st->when = STEP_BEFORE_START;
	else if (strcmp(v, "after_ready") == 0)
		st->when = STEP_AFTER_READY;
	else {
		ld_err(l, m, "setup step 'when' must be \"before_start\" or \"after_ready\"");
		return -1;
	}
	return 0;
}

static int load_step_key(struct ld *l, const config_setting_t *m, struct cat_step *st)
{
	const char *key = config_setting_name(m), *v;
	if (strcmp(key, "command") == 0)
		return ld_argv(l, m, "a setup command", &st->argv, &st->argc);
	if (strcmp(key, "verify") == 0)
		return ld_argv(l, m, "a setup verify command", &st->verify, &st->nverify);
	if (strcmp(key, "timeout") == 0)
		return load_step_timeout(l, m, st);
	if (strcmp(key, "staged") == 0)
		return ld_bool(l, m, "staged", &st->staged);
	if (strcmp(key, "name") != 0 && strcmp(key, "when") != 0 && strcmp(key, "creates") != 0) {
		ld_err(l, m,
		       "unknown key '%s' in a setup step (name, when, creates, staged, command, "
		       "verify, timeout)",
		       key);
		return -1;
	}
	if ((v = ld_string(l, m, key)) == NULL)
		return -1;
	if (strcmp(key, "name") == 0) {
		if (!ld_name_ok(v, true)) {
			ld_err(l, m, "setup step name '%s' must match [a-z0-9][a-z0-9._-]*", v);
			return -1;
		}
		st->name = xstrdup(v);
	} else if (strcmp(key, "when") == 0) {
		return load_step_when(l, m, v, st);
	} else {
		if (ld_placeholders(l, m, v) == -1)
			return -1;
		st->creates = xstrdup(v);
	}
	return 0;
}

/* What only a one-time step can have. */
static int check_step_once(struct ld *l, const config_setting_t *g, const struct cat_step *st)
{
	/* A one-time step is remembered only by what it creates: without it, it would rerun. */
	if (st->when == STEP_BEFORE_START && st->creates == NULL) {
		ld_err(l, g, "setup step '%s' (before_start) needs 'creates': the path it makes",
		       st->name);
		return -1;
	}
	if (st->when == STEP_AFTER_READY &&
	    (st->creates != NULL || st->staged || st->verify != NULL)) {
		ld_err(l, g,
		       "setup step '%s': 'creates', 'staged' and 'verify' are only for "
		       "before_start steps",
		       st->name);
		return -1;
	}
	bool names_stage = false;
	for (size_t i = 0; i < st->argc; i++)
		names_stage |= strstr(st->argv[i], "{{staging_dir}}") != NULL;
	if (st->staged != names_stage) {
		ld_err(l, g, "setup step '%s': %s", st->name,
		       st->staged ? "staged, but its command never names {{staging_dir}}"
		                  : "{{staging_dir}} is only for a staged step (staged = true)");
		return -1;
	}
	return 0;
}

static int load_step(struct ld *l, const config_setting_t *g, struct cat_step *st)
{
	bool have_when = false;
	st->line = (int)config_setting_source_line(g);
	st->timeout = STEP_TIMEOUT_DEFAULT;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
		ld_err(
		    l, g,
		    "each setup step must be a group { name = ...; when = ...; command = ...; }");
		return -1;
	}
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		have_when |= strcmp(config_setting_name(m), "when") == 0;
		if (load_step_key(l, m, st) == -1)
			return -1;
	}
	if (st->name == NULL || !have_when || st->argv == NULL) {
		ld_err(l, g, "a setup step needs name, when and command");
		return -1;
	}
	return check_step_once(l, g, st);
}

int ld_setup(struct ld *l, const config_setting_t *st)
{
	struct cat_service *s = l->s;
	if (config_setting_type(st) != CONFIG_TYPE_LIST) {
		ld_err(l, st, "setup must be a list ( { ... } )");
		return -1;
	}
	int n = config_setting_length(st);
	s->setup = xcalloc((size_t)n + 1, sizeof *s->setup);
	for (int i = 0; i < n; i++) {
		const config_setting_t *g = config_setting_get_elem(st, (unsigned)i);
		struct cat_step *step = &s->setup[s->nsetup++];
		if (load_step(l, g, step) == -1)
			return -1;
		for (size_t j = 0; j + 1 < s->nsetup; j++)
			if (strcmp(s->setup[j].name, step->name) == 0) {
				ld_err(l, g, "setup step '%s' is declared twice", step->name);
				return -1;
			}
	}
	return 0;
}

static int load_scrape_job(struct ld *l, const config_setting_t *g, struct cat_scrape *j)
{
	j->line = (int)config_setting_source_line(g);
	j->order = 100;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
		ld_err(l, g,
		       "each scrape job must be a group { job = ...; path = ...; order = ...; }");
		return -1;
	}
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		const char *key = config_setting_name(m), *v;
		if (strcmp(key, "order") == 0) {
			if (config_setting_type(m) != CONFIG_TYPE_INT) {
				ld_err(l, m, "a scrape job's order must be an integer");
				return -1;
			}
			j->order = config_setting_get_int(m);
		} else if (strcmp(key, "needs") == 0) {
			if ((v = ld_string(l, m, key)) == NULL)
				return -1;
			/* "a|b": any of them */
			char *names = xstrdup(v), *save = NULL;
			bool ok = names[0] != '\0' && names[strlen(names) - 1] != '|';
			for (char *t = strtok_r(names, "|", &save); ok && t != NULL;
			     t = strtok_r(NULL, "|", &save))
				ok = ld_name_ok(t, true);
			free(names);
			if (!ok || strstr(v, "||") != NULL || v[0] == '|') {
				ld_err(l, m, "needs: '%s' is not a service name (or names a|b)", v);
				return -1;
			}
			j->needs = xstrdup(v);
		} else if (strcmp(key, "when") == 0) {
			if ((v = ld_string(l, m, key)) == NULL)
				return -1;
			j->when = xstrdup(v);
		} else if (strcmp(key, "job") == 0 || strcmp(key, "path") == 0) {
			if ((v = ld_string(l, m, key)) == NULL)
				return -1;
			if (strcmp(key, "path") == 0 && v[0] != '/') {
				ld_err(l, m, "a scrape job's path must start with '/'");
				return -1;
			}
			*(strcmp(key, "job") == 0 ? &j->job : &j->path) = xstrdup(v);
		} else {
			ld_err(l, m,
			       "unknown key '%s' in a scrape job (job, path, order, needs, when)",
			       key);
			return -1;
		}
	}
	if (j->job == NULL) {
		ld_err(l, g, "a scrape job needs a job name");
		return -1;
	}
	if (j->path == NULL)
		j->path = xstrdup("/metrics");
	return 0;
}

int ld_scrape(struct ld *l, const config_setting_t *st)
{
	if (config_setting_type(st) != CONFIG_TYPE_LIST) {
		ld_err(l, st, "scrape must be a list ( { job = ...; } )");
		return -1;
	}
	struct cat_service *s = l->s;
	int n = config_setting_length(st);
	s->scrape = xcalloc((size_t)n + 1, sizeof *s->scrape);
	for (int i = 0; i < n; i++)
		if (load_scrape_job(l, config_setting_get_elem(st, (unsigned)i),
		                    &s->scrape[s->nscrape++]) == -1)
			return -1;
	return 0;
}
