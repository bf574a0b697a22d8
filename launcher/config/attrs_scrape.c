/* Prometheus' scrape jobs: ours for each enabled service, then the user's; the timeout cap. */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "config/assign.h"
#include "config/attrs.h"
#include "config/attrs_int.h"
#include "lib/alloc.h"
#include "lib/connhost.h"
#include "lib/grow.h"

/*
 * Prometheus refuses a scrape timeout above the scrape interval, and its own rule for a timeout
 * left unset is the smaller of the default and the interval: a service with both int settings
 * (prometheus) follows that rule where gitlab.rb sets only scrape_interval.
 */
void cap_scrape_timeout(struct comp *c)
{
	const struct cat_setting *t = cat_setting_find(c->def, "scrape_timeout"),
	                         *i = cat_setting_find(c->def, "scrape_interval");
	if (t == NULL || i == NULL || t->type != ST_INT || i->type != ST_INT ||
	    c->w->val[t - c->def->settings] != NULL)
		return;
	struct var *tv = var_find(c, t->name, strlen(t->name)),
	           *iv = var_find(c, i->name, strlen(i->name));
	if (tv == NULL || iv == NULL || iv->expand)
		return;
	const char *e1 = NULL, *e2 = NULL;
	long long tn = strtonum(tv->raw, 1, LLONG_MAX, &e1),
	          in = strtonum(iv->raw, 1, LLONG_MAX, &e2);
	if (e1 != NULL || e2 != NULL || in >= tn)
		return;
	free(tv->raw);
	tv->raw = xstrdup(iv->raw);
	tv->expand = false;
	tv->from = iv->from;
}

/*
 * How Prometheus reaches s, by Omnibus' names (monitoring/libraries/prometheus.rb):
 * prometheus_scrape_scheme, unset: https exactly when tls_enabled; with https a
 * tls_config naming prometheus_scrape_tls_server_name (else the listen address unless a
 * wildcard) and prometheus_scrape_tls_skip_verification, trusting the certificate the
 * service serves (tls_cert_path, Patroni's tls_certificate_file; Omnibus leaves that to the
 * system's CAs), and presenting prometheus_scrape_tls_cert_path/_key_path where the service
 * asks for a client certificate (redis_exporter, Patroni).
 */
static void scrape_tls(struct yval *job, const struct svc *s)
{
	const char *scheme = svc_var(s, "prometheus_scrape_scheme");
	if (scheme == NULL || scheme[0] == '\0')
		scheme = svc_tls(s) ? "https" : "http";
	if (strcmp(scheme, "https") != 0) /* the catalog allows http and https only */
		return;
	yval_put(job, "scheme", yval_scalar(YV_STR, "https"));
	struct yval *tls = yval_map();
	const char *name = svc_var(s, "prometheus_scrape_tls_server_name");
	/* A wildcard listen address names no host: the target's own (localhost) is checked. */
	if ((name == NULL || name[0] == '\0') && s->listen_host != NULL &&
	    strcmp(connect_host(s->listen_host), s->listen_host) == 0)
		name = s->listen_host;
	if (name != NULL && name[0] != '\0')
		yval_put(tls, "server_name", yval_scalar(YV_STR, name));
	const char *ca = svc_var(s, svc_tls_keys(s)[0]);
	if (ca != NULL && ca[0] != '\0')
		yval_put(tls, "ca_file", yval_scalar(YV_STR, ca));
	/* The certificate Prometheus presents where the service asks for one. */
	static const char *const client[][2] = {{"prometheus_scrape_tls_cert_path", "cert_file"},
	                                        {"prometheus_scrape_tls_key_path", "key_file"}};
	for (size_t i = 0; i < 2; i++) {
		const char *f = svc_var(s, client[i][0]);
		if (f != NULL && f[0] != '\0')
			yval_put(tls, client[i][1], yval_scalar(YV_STR, f));
	}
	const char *skip = svc_var(s, "prometheus_scrape_tls_skip_verification");
	yval_put(
	    tls, "insecure_skip_verify",
	    yval_scalar(YV_BOOL, skip != NULL && strcmp(skip, "true") == 0 ? "true" : "false"));
	yval_put(job, "tls_config", tls);
}

/*
 * One scrape job of ours: job_name, metrics_path, the service's own address, and its
 * web_username/web_password as basic_auth when it has one (yaml.c redacts it in --diff).
 */
static struct yval *scrape_job(const struct cat_scrape *j, const struct svc *s)
{
	struct yval *job = yval_map(), *sc = yval_seq(), *st = yval_map(), *tg = yval_seq();
	yval_put(job, "job_name", yval_scalar(YV_STR, j->job));
	yval_put(job, "metrics_path", yval_scalar(YV_STR, j->path));
	scrape_tls(job, s);
	const char *pw = svc_var(s, "web_password"), *user = svc_var(s, "web_username");
	if (pw != NULL && pw[0] != '\0') {
		struct yval *ba = yval_map();
		yval_put(ba, "username", yval_scalar(YV_STR, user ? user : ""));
		yval_put(ba, "password", yval_scalar(YV_STR, pw));
		yval_put(job, "basic_auth", ba);
	}
	yval_push(tg, yval_scalar(YV_STR, svc_var(s, "scrape_target")));
	yval_put(st, "targets", tg);
	yval_push(sc, st);
	yval_put(job, "static_configs", sc);
	return job;
}

struct job_ref {
	const struct cat_scrape *j;
	const struct svc *s;
};

static int job_ref_cmp(const void *a, const void *b)
{
	const struct job_ref *x = a, *y = b;
	if (x->j->order != y->j->order)
		return x->j->order < y->j->order ? -1 : 1;
	return strcmp(x->j->job, y->j->job);
}

/* The index in jobs of the job named name, or jobs->n. */
static size_t job_index(const struct yval *jobs, const char *name)
{
	size_t i = 0;
	for (; i < jobs->n; i++) {
		const struct yval *n = yval_get(jobs->items[i], "job_name");
		if (n != NULL && n->kind == YV_STR && strcmp(n->text, name) == 0)
			break;
	}
	return i;
}

/* The user's jobs after ours; one named like ours takes its place, with a warning. */
static void merge_user_jobs(struct build *b, const struct svc *s, struct yval *jobs,
                            const struct svc_data *user, size_t nours)
{
	const char *cn = s->def->config_name;
	if (user->v->kind != YV_SEQ) {
		diag_at(b->d, DIAG_ERR, user->loc, "%s['%s'] must be an array of scrape jobs", cn,
		        user->name);
		return;
	}
	for (size_t i = 0; i < user->v->n; i++) {
		const struct yval *u = user->v->items[i];
		const struct yval *name = yval_get(u, "job_name");
		struct loc at = {user->loc.src, u->line, u->col};
		if (name == NULL || name->kind != YV_STR) {
			diag_at(b->d, DIAG_ERR, at,
			        "each job of %s['%s'] needs a string 'job_name'", cn, user->name);
			continue;
		}
		size_t k = job_index(jobs, name->text);
		if (k < nours) {
			diag_at(b->d, DIAG_WARN, at,
			        "scrape job '%s' of %s['%s'] replaces gitlab-ctl's own job of that "
			        "name",
			        name->text, cn, user->name);
			yval_free(jobs->items[k]);
			jobs->items[k] = yval_dup(u);
		} else {
			yval_push(jobs, yval_dup(u));
		}
	}
}

/* needs, "a" or "a|b": is any of them enabled? */
static bool needs_enabled(const struct attrs *a, const char *needs)
{
	for (const char *p = needs; p != NULL;) {
		const char *bar = strchr(p, '|');
		size_t len = bar != NULL ? (size_t)(bar - p) : strlen(p);
		char one[128];
		if (len < sizeof one) {
			memcpy(one, p, len);
			one[len] = '\0';
			const struct svc *o = attrs_svc(a, one);
			if (o != NULL && o->enabled)
				return true;
		}
		p = bar != NULL ? bar + 1 : NULL;
	}
	return false;
}

/* scrape_jobs of a service with scrape_collect (see attrs.h). */
void collect_scrape(struct build *b, struct svc *out)
{
	struct job_ref *refs = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < b->out->nsvcs; i++) {
		const struct svc *s = &b->out->svcs[i];
		const char *target = svc_var(s, "scrape_target");
		if (!s->enabled || target == NULL)
			continue;
		grow(&refs, &cap, n + s->def->nscrape + 1, sizeof *refs, 8);
		for (size_t j = 0; j < s->def->nscrape; j++) {
			const char *needs = s->def->scrape[j].needs, *when = s->def->scrape[j].when;
			const char *on = when ? svc_var(s, when) : NULL;
			if ((needs == NULL || needs_enabled(b->out, needs)) &&
			    (when == NULL || (on != NULL && strcmp(on, "true") == 0)))
				refs[n++] = (struct job_ref){&s->def->scrape[j], s};
		}
	}
	if (n > 0)
		qsort(refs, n, sizeof *refs, job_ref_cmp);
	struct yval *jobs = yval_seq();
	for (size_t i = 0; i < n; i++)
		yval_push(jobs, scrape_job(refs[i].j, refs[i].s));
	free(refs);
	const struct yval *user = svc_data(out, out->def->scrape_collect);
	for (size_t i = 0; user != NULL && i < out->ndata; i++)
		if (out->data[i].v == user)
			merge_user_jobs(b, out, jobs, &out->data[i], n);
	data_add(out, "scrape_jobs", jobs, (struct loc){0});
}
