/*
 * Across the catalog's files: unique names, dependencies that exist and form
 * no cycle, and the dependency order.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "config/catalog.h"
#include "config/catalog_int.h"
#include "lib/alloc.h"
#include "lib/grow.h"

/* A service's name or config name, with the service's index, for finding clashes by sorting. */
struct name_ref {
	const char *name;
	size_t svc;
};

static int name_ref_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->svc > y->svc) - (x->svc < y->svc);
}

/* A clash between services i and j (j < i): reported once, in (i, j) order. */
static int clash_cmp(const void *a, const void *b)
{
	const size_t *x = a, *y = b;
	if (x[0] != y[0])
		return (x[0] > y[0]) - (x[0] < y[0]);
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Clashing pairs (i, j < i) among the services of one run of equal names. */
static void run_clashes(const struct name_ref *r, size_t n, size_t (**pairs)[2], size_t *np,
                        size_t *cap)
{
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < a; b++) {
			if (r[a].svc == r[b].svc)
				continue; /* a service's name may equal its own config name */
			grow(pairs, cap, *np + 1, sizeof **pairs, 8);
			(*pairs)[*np][0] = r[a].svc;
			(*pairs)[(*np)++][1] = r[b].svc;
		}
}

/* Sorting the 2n names keeps this linear in practice (a pairwise search was N^2). */
void catalog_check_unique(struct catalog *c, struct diags *d)
{
	struct name_ref *refs = xcalloc(2 * c->n + 1, sizeof *refs);
	for (size_t i = 0; i < c->n; i++) {
		refs[2 * i] = (struct name_ref){c->v[i].name, i};
		refs[2 * i + 1] = (struct name_ref){c->v[i].config_name, i};
	}
	qsort(refs, 2 * c->n, sizeof *refs, name_ref_cmp);
	size_t(*pairs)[2] = NULL;
	size_t np = 0, cap = 0;
	for (size_t i = 0, k; i < 2 * c->n; i = k) {
		for (k = i + 1; k < 2 * c->n && strcmp(refs[k].name, refs[i].name) == 0;)
			k++;
		if (k - i > 1)
			run_clashes(&refs[i], k - i, &pairs, &np, &cap);
	}
	if (np > 0)
		qsort(pairs, np, sizeof *pairs, clash_cmp);
	for (size_t p = 0; p < np; p++) {
		if (p > 0 && clash_cmp(pairs[p], pairs[p - 1]) == 0)
			continue;
		const struct cat_service *a = &c->v[pairs[p][0]], *b = &c->v[pairs[p][1]];
		diag_file(d, DIAG_ERR, a->file, a->line,
		          "service %s (%s) clashes with %s (%s) in %s", a->name, a->config_name,
		          b->name, b->config_name, b->file);
	}
	free(pairs);
	free(refs);
}

/* Depth-first search for a cycle through `after`; state: 0 new, 1 on the path, 2 done. */
static bool dep_cycle(const struct catalog *c, size_t i, int *state, size_t *path, size_t depth,
                      struct diags *d)
{
	if (state[i] == 2)
		return false;
	path[depth] = i;
	if (state[i] == 1) {
		const struct cat_service *s = &c->v[i];
		char text[1024] = "";
		size_t from = 0;
		while (path[from] != i)
			from++;
		for (size_t k = from; k <= depth; k++) {
			if (k > from)
				strlcat(text, " -> ", sizeof text);
			strlcat(text, c->v[path[k]].name, sizeof text);
		}
		diag_file(d, DIAG_ERR, s->file, s->after_line, "after: dependency cycle %s", text);
		return true;
	}
	state[i] = 1;
	for (size_t k = 0; k < c->v[i].nafter; k++) {
		const struct cat_service *dep = catalog_find(c, c->v[i].after[k]);
		if (dep && dep_cycle(c, (size_t)(dep - c->v), state, path, depth + 1, d))
			return true;
	}
	state[i] = 2;
	return false;
}

/* Every `after` names a catalog service other than itself, and they form no cycle. */
/* A scrape job's needs ("a" or "a|b": any of them) names catalog services (a typo would
 * drop the job silently). */
static void check_scrape_needs(const struct catalog *c, struct diags *d)
{
	for (size_t i = 0; i < c->n; i++)
		for (size_t k = 0; k < c->v[i].nscrape; k++) {
			const struct cat_scrape *j = &c->v[i].scrape[k];
			for (const char *p = j->needs; p != NULL;) {
				const char *bar = strchr(p, '|');
				size_t len = bar != NULL ? (size_t)(bar - p) : strlen(p);
				char one[128];
				bool fits = len < sizeof one;
				if (fits) {
					memcpy(one, p, len);
					one[len] = '\0';
				}
				if (!fits || catalog_find(c, one) == NULL)
					diag_file(d, DIAG_ERR, c->v[i].file, j->line,
					          "scrape job %s: needs unknown service '%.*s'",
					          j->job, (int)len, p);
				p = bar != NULL ? bar + 1 : NULL;
			}
		}
}

void catalog_check_deps(const struct catalog *c, struct diags *d)
{
	size_t nerr = d->nerr;
	check_scrape_needs(c, d);
	for (size_t i = 0; i < c->n; i++) {
		const struct cat_service *s = &c->v[i];
		const struct cat_service *w = s->off_with ? catalog_find(c, s->off_with) : NULL;
		if (s->off_with != NULL && (w == NULL || w == s || w->off_with != NULL))
			diag_file(d, DIAG_ERR, s->file, s->off_with_line,
			          "off_with: '%s' is not another catalog service without off_with",
			          s->off_with);
	}
	for (size_t i = 0; i < c->n; i++)
		for (size_t k = 0; k < c->v[i].nafter; k++) {
			const struct cat_service *s = &c->v[i];
			const struct cat_service *dep = catalog_find(c, s->after[k]);
			if (dep == NULL)
				diag_file(d, DIAG_ERR, s->file, s->after_line,
				          "after: unknown service '%s'", s->after[k]);
			else if (dep == s)
				diag_file(d, DIAG_ERR, s->file, s->after_line,
				          "after: %s cannot depend on itself", s->name);
		}
	if (d->nerr > nerr)
		return;
	int *state = xcalloc(c->n + 1, sizeof *state);
	size_t *path = xcalloc(c->n + 2, sizeof *path);
	for (size_t i = 0; i < c->n; i++)
		if (dep_cycle(c, i, state, path, 0, d))
			break;
	free(state);
	free(path);
}

static void order_visit(const struct catalog *c, size_t i, bool *done, size_t *order, size_t *n)
{
	if (done[i])
		return;
	done[i] = true; /* acyclic: marking on entry cannot cut a real dependency short */
	for (size_t k = 0; k < c->v[i].nafter; k++) {
		const struct cat_service *dep = catalog_find(c, c->v[i].after[k]);
		if (dep)
			order_visit(c, (size_t)(dep - c->v), done, order, n);
	}
	order[(*n)++] = i;
}

void catalog_order(const struct catalog *c, size_t *order)
{
	bool *done = xcalloc(c->n + 1, sizeof *done);
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		order_visit(c, i, done, order, &n);
	free(done);
}
