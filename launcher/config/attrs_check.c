/* Checks of a computed service: values the catalog refuses, TLS files a switch needs. */
#include <stdlib.h>
#include <string.h>

#include "config/assign.h"
#include "config/attrs.h"
#include "config/attrs_int.h"
#include "lib/buf.h"

/* "NAME['key'] = 'v' <how>" where gitlab.rb set it (or the catalog's default), a secret redacted.
 */
static void refuse_value(struct build *b, const struct assign_svc *w, size_t i, const char *v,
                         const char *how)
{
	const struct cat_setting *cs = &w->def->settings[i];
	struct src nosrc;
	struct loc l = w->val[i] != NULL ? w->vloc[i] : cat_loc(w->def, cs->line);
	if (cs->secret)
		l = secret_loc(l, &nosrc);
	diag_at(b->d, DIAG_ERR, l, "%s['%s'] = '%s' %s", w->def->config_name, cs->name,
	        cs->secret ? "[redacted]" : v, how);
}

static bool one_of(const char *v, char *const *set, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (strcmp(v, set[k]) == 0)
			return true;
	return false;
}

/*
 * A value outside a setting's `values` (gitlab_exporter['server_name']), or one the catalog
 * refuses for it (refuse = [...]): postgresql['sql_user'] naming the cluster's superuser would
 * map the exporter's account to it in pg_ident.conf.
 */
void check_refused(struct build *b, const struct assign_svc *w, const struct svc *s)
{
	const struct cat_service *def = w->def;
	for (size_t i = 0; i < def->nsettings; i++) {
		const struct cat_setting *cs = &def->settings[i];
		const char *v = kv_get(&s->vars, cs->name);
		/* unset (no default, not in gitlab.rb) is no value */
		bool unset = v == NULL || (v[0] == '\0' && w->val[i] == NULL);
		if (!unset && cs->nvalues > 0 && !one_of(v, cs->values, cs->nvalues)) {
			struct buf all;
			buf_init(&all);
			buf_addf(&all, "is not one of ");
			for (size_t k = 0; k < cs->nvalues; k++)
				buf_addf(&all, "%s'%s'", k ? ", " : "", cs->values[k]);
			if (cs->refuse_because)
				buf_addf(&all, ": %s", cs->refuse_because);
			refuse_value(b, w, i, v, buf_str(&all));
			buf_free(&all);
			continue;
		}
		for (size_t k = 0; v != NULL && k < cs->nrefuse; k++) {
			char *bad = svc_expand(s, cs->refuse[k]);
			bool hit = bad != NULL && strcmp(bad, v) == 0;
			free(bad);
			if (!hit)
				continue;
			struct buf why;
			buf_init(&why);
			buf_addf(&why, "is refused: %s",
			         cs->refuse_because ? cs->refuse_because
			                            : "the catalog forbids it");
			refuse_value(b, w, i, v, buf_str(&why));
			buf_free(&why);
			break;
		}
	}
}

/*
 * A setting a role needs (redis['master_ip'] on a replica or a sentinel node) left empty, or an
 * int left 0 (redis['port']): an error at that role in roles([...]), which asks for it.
 */
void check_required(struct build *b, const struct assign_svc *w, const struct svc *s)
{
	const struct cat_service *def = w->def;
	for (size_t i = 0; i < def->nsettings; i++) {
		const struct cat_setting *cs = &def->settings[i];
		const char *v = kv_get(&s->vars, cs->name);
		/* an int's 0 is Redis' "no TCP port": no value either */
		bool zero = cs->type == ST_INT && v != NULL && strcmp(v, "0") == 0;
		if (cs->nrequired_by == 0 || (v != NULL && v[0] != '\0' && !zero))
			continue;
		for (size_t j = 0; j < b->as->nroles; j++) {
			if (!one_of(b->as->roles[j], cs->required_by, cs->nrequired_by))
				continue;
			diag_at(b->d, DIAG_ERR, b->as->role_locs[j], "role '%s' needs %s['%s'] set",
			        b->as->roles[j], def->config_name, cs->name);
			break;
		}
	}
}

/*
 * A service with TLS settings: tls_enabled = true (gitlab_exporter), or any of its TLS files
 * where it has no tls_enabled (redis_exporter, etcd), needs tls_cert_path and tls_key_path, as
 * Omnibus' validate_tls_config says, refused at that setting's line rather than left to a
 * server that cannot start (or, with a client CA alone, to one that serves plain HTTP).
 */
void check_tls(struct build *b, const struct assign_svc *w, const struct svc *s)
{
	const struct cat_service *def = w->def;
	const char *const *files = svc_tls_keys(s);
	bool has_switch = cat_setting_find(def, "tls_enabled") != NULL;
	const char *on = has_switch && svc_tls(s) ? "tls_enabled" : NULL;
	for (size_t k = 0; !has_switch && on == NULL && k < 3; k++) {
		const char *v = kv_get(&s->vars, files[k]);
		if (v != NULL && v[0] != '\0')
			on = files[k];
	}
	for (size_t i = 0; on != NULL && i < def->nsettings; i++) {
		if (strcmp(def->settings[i].name, on) != 0)
			continue;
		for (size_t k = 0; k < 2; k++) {
			const char *v = kv_get(&s->vars, files[k]);
			if (v == NULL || v[0] == '\0')
				diag_at(b->d, DIAG_ERR,
				        w->val[i] != NULL ? w->vloc[i]
				                          : cat_loc(def, def->settings[i].line),
				        "%s['%s']%s needs %s['%s'] (the PEM file the server reads)",
				        def->config_name, on,
				        strcmp(on, "tls_enabled") == 0 ? " = true" : "",
				        def->config_name, files[k]);
		}
	}
}
