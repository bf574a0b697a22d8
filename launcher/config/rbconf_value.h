/*
 * rbconf_value: the values a gitlab.rb parse yields (rbconf.h has the language
 * and the API), apart so that the parser's own files can share them without
 * including the API they implement.
 */
#ifndef GITLAB_CTL_RBCONF_VALUE_H
#define GITLAB_CTL_RBCONF_VALUE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/diag.h"

/* Hostile-input limits: exceeding one is a located parse error, never a crash. */
#define RB_MAX_FILE  (16u * 1024u * 1024u) /* bytes */
#define RB_MAX_DEPTH 64                    /* nesting of [] {} () and heredocs */

enum rb_kind { RB_NIL, RB_BOOL, RB_INT, RB_FLOAT, RB_STR, RB_SYM, RB_ARRAY, RB_HASH, RB_OPAQUE };

struct rb_value;

struct rb_pair {
	struct rb_value *key; /* RB_STR or RB_SYM for literal hashes */
	struct rb_value *val;
};

struct rb_value {
	enum rb_kind kind;
	struct loc loc; /* where the value starts */
	union {
		bool b;
		long long i;
		double f;
		struct {
			char
			    *ptr; /* NUL-terminated; len excludes the NUL, may hold '\0' for "\0" */
			size_t len;
		} s; /* RB_STR, RB_SYM (name without ':'), RB_OPAQUE (source text) */
		struct {
			struct rb_value **v;
			size_t n;
		} a;
		struct {
			struct rb_pair *v;
			size_t n;
		} h;
	} u;
};

#endif
