/* gitlab.rb literals as plain data (see rbdata.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/rbdata.h"
#include "lib/alloc.h"
#include "lib/rbfloat.h"

static bool holds_nul(const struct rb_value *v)
{
	return strlen(v->u.s.ptr) != v->u.s.len;
}

static struct yval *at(struct yval *y, const struct rb_value *v)
{
	y->line = v->loc.line;
	y->col = v->loc.col;
	return y;
}

static struct yval *scalar(const char *path, const struct rb_value *v, struct diags *d)
{
	char buf[64];
	switch (v->kind) {
	case RB_NIL:
		return at(yval_null(), v);
	case RB_BOOL:
		return at(yval_scalar(YV_BOOL, v->u.b ? "true" : "false"), v);
	case RB_INT:
		snprintf(buf, sizeof buf, "%lld", v->u.i);
		return at(yval_scalar(YV_INT, buf), v);
	case RB_FLOAT:
		if (!isfinite(v->u.f)) {
			diag_at(d, DIAG_ERR, v->loc, "%s holds a float that is not finite", path);
			return NULL;
		}
		rb_float_to_s(v->u.f, buf, sizeof buf);
		return at(yval_scalar(YV_FLOAT, buf), v);
	case RB_STR:
	case RB_SYM:
		if (holds_nul(v)) {
			diag_at(d, DIAG_ERR, v->loc, "%s contains a NUL byte", path);
			return NULL;
		}
		return at(yval_scalar(YV_STR, v->u.s.ptr), v);
	default:
		diag_at(d, DIAG_ERR, v->loc,
		        "%s uses Ruby that gitlab-ctl cannot evaluate: " RB_LITERAL_HINT, path);
		return NULL;
	}
}

static struct yval *array(const char *path, const struct rb_value *v, struct diags *d)
{
	struct yval *y = at(yval_seq(), v);
	bool ok = true;
	for (size_t i = 0; i < v->u.a.n; i++) {
		char *p = xasprintf("%s[%zu]", path, i);
		struct yval *e = rbdata_from(p, v->u.a.v[i], d);
		free(p);
		if (e == NULL)
			ok = false;
		else
			yval_push(y, e);
	}
	if (!ok) {
		yval_free(y);
		return NULL;
	}
	return y;
}

static struct yval *hash(const char *path, const struct rb_value *v, struct diags *d)
{
	struct yval *y = at(yval_map(), v);
	bool ok = true;
	for (size_t i = 0; i < v->u.h.n; i++) {
		const struct rb_value *k = v->u.h.v[i].key;
		if ((k->kind != RB_STR && k->kind != RB_SYM) || holds_nul(k)) {
			diag_at(d, DIAG_ERR, k->loc, "keys of %s must be strings without NUL bytes",
			        path);
			ok = false;
			continue;
		}
		char *p = xasprintf("%s['%s']", path, k->u.s.ptr);
		struct yval *e = rbdata_from(p, v->u.h.v[i].val, d);
		free(p);
		if (e == NULL)
			ok = false;
		else
			yval_put(y, k->u.s.ptr, e);
	}
	if (!ok) {
		yval_free(y);
		return NULL;
	}
	return y;
}

struct yval *rbdata_from(const char *path, const struct rb_value *v, struct diags *d)
{
	if (v->kind == RB_ARRAY)
		return array(path, v, d);
	if (v->kind == RB_HASH)
		return hash(path, v, d);
	return scalar(path, v, d);
}

void rbdata_set_path(struct yval **root, char *const *keys, size_t n, struct yval *v)
{
	if (n == 0) {
		yval_free(*root);
		*root = v;
		return;
	}
	if (*root == NULL || (*root)->kind != YV_MAP) {
		yval_free(*root);
		*root = yval_map();
	}
	struct yval *m = *root;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->keys[i], keys[0]) == 0) {
			rbdata_set_path(&m->items[i], keys + 1, n - 1, v);
			return;
		}
	struct yval *child = NULL;
	rbdata_set_path(&child, keys + 1, n - 1, v);
	yval_put(m, keys[0], child);
}
