/*
 * yval: a tree of plain data (null, boolean, number, string, array, hash)
 * that gitlab.rb wrote for a YAML file (prometheus['scrape_configs'],
 * alertmanager['receivers']) or that gitlab-ctl builds for one (the scrape
 * jobs of enabled services). Scalars keep their text: numbers as Ruby wrote
 * them out, booleans as true/false. render/yaml.c writes a tree as YAML.
 */
#ifndef GITLAB_CTL_YVAL_H
#define GITLAB_CTL_YVAL_H

#include <stdbool.h>
#include <stddef.h>

enum yval_kind { YV_NULL, YV_BOOL, YV_INT, YV_FLOAT, YV_STR, YV_SEQ, YV_MAP };

struct yval {
	enum yval_kind kind;
	char *text;          /* scalars (NULL for YV_NULL) */
	struct yval **items; /* YV_SEQ elements, YV_MAP values */
	char **keys;         /* YV_MAP keys, unique, in the order written */
	size_t n, cap, kcap;
	int line, col; /* where gitlab.rb wrote it; 0: built by gitlab-ctl */
};

struct yval *yval_null(void);
/* A boolean, number or string with its text (not NULL). */
struct yval *yval_scalar(enum yval_kind kind, const char *text);
struct yval *yval_seq(void);
struct yval *yval_map(void);
/* Append to a sequence; seq takes v over. */
void yval_push(struct yval *seq, struct yval *v);
/* Set key in a map (a later value replaces an earlier one in place); map takes v over. */
void yval_put(struct yval *map, const char *key, struct yval *v);
/* A map's value for key, or NULL (also when m is not a map). */
const struct yval *yval_get(const struct yval *m, const char *key);
struct yval *yval_dup(const struct yval *v);
void yval_free(struct yval *v);
/* A collection with no elements, or null. */
bool yval_empty(const struct yval *v);

#endif
