/*
 * diag: collected errors and warnings with source locations.
 *
 * Modules record problems here instead of printing them, so that one place
 * (the command) decides how and whether to report, and so that validation can
 * report every problem of a file at once rather than stopping at the first.
 */
#ifndef GITLAB_CTL_DIAG_H
#define GITLAB_CTL_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A note is a detail of another record (what -v adds): not counted as a warning. */
enum diag_sev { DIAG_WARN, DIAG_ERR, DIAG_NOTE };

/* A long source line is shown this many bytes either side of the column. */
#define DIAG_WINDOW 80

/*
 * A source buffer; diagnostics copy the offending line out of it for the
 * caret, unless the line is marked hidden (it may hold a secret value).
 */
struct src {
	const char *name; /* file name as given by the user */
	const char *text;
	size_t len;
	unsigned char *hidden; /* per line, index = line number: nonzero = never echoed; or NULL */
	size_t nhidden;
};

/* 1-based line and column; line 0 means "no position" (file-level message). */
struct loc {
	const struct src *src;
	int line;
	int col;
};

struct diag {
	enum diag_sev sev;
	char *file;    /* may be NULL */
	int line, col; /* 0 when unknown */
	char *msg;
	char *srcline; /* the source line (a window of it when long), NULL when not known */
	int caret;     /* col within srcline */
	bool hidden;   /* the line is known but not shown: it may hold a secret */
	bool plain;    /* diag_add's: printed as warnx(3) would, "gitlab-ctl VERB: MSG" */
};

struct diags {
	struct diag *v;
	size_t n, cap;
	size_t nerr;
	size_t nnote;
	FILE *live; /* where diag_progress writes at once; NULL (diags_init): nowhere */
};

void diags_init(struct diags *d);
void diags_free(struct diags *d);

/* Record a problem at a location inside a parsed source. */
void diag_at(struct diags *d, enum diag_sev sev, struct loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Record a problem in a file where only a line (or nothing: 0) is known, e.g. libconfig's. */
void diag_file(struct diags *d, enum diag_sev sev, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/*
 * Record a problem of a run (no file, no position: a failed useradd, a root that cannot be
 * locked): printed as warnx(3) prints, "gitlab-ctl VERB: MSG", the words the stage printed itself
 * before it recorded them, so that a command printing d where the stage used to print changes no
 * output.
 */
void diag_add(struct diags *d, enum diag_sev sev, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * A line the user must see while the stage still runs (what it waits for): written to d->live
 * at once, as given, when the command set one; not recorded.
 */
void diag_progress(struct diags *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* diags_print, then forget the records: for a command that reports each stage as it ends. */
void diags_flush(struct diags *d, FILE *fp);

/*
 * Print every record: "FILE:LINE:COL: error: MSG", then the source line and a
 * caret under the column (for a hidden line, a note that it is not shown).
 * Warnings say "warning:". In position order: files as first mentioned, by
 * line and column within one, file-level messages after the located ones.
 */
void diags_print(const struct diags *d, FILE *fp);
/*
 * For the commands that only read the configuration (show-config, inspect, exec, tail): the
 * errors as diags_print has them, the warnings as one line, "gitlab-ctl VERB: N config
 * warnings: run gitlab-ctl check-config": check-config and reconfigure show them in full.
 */
void diags_print_quiet(const struct diags *d, const char *verb, FILE *fp);
/* Reorder d's records into diags_print's position order (for JSON output). */
void diags_sort(struct diags *d);
/*
 * The fix a message carries, by this project's phrasing: the clause from its first "did you
 * mean", "install the Debian package", "quote it", "write a literal", "use '", "set ",
 * "run gitlab-ctl", "chmod " or "chown " (at the start or after "; ", ": ", " ("), a closing ")" of
 * the clause left out. *len gets its length; NULL when the message names no fix.
 */
const char *diag_hint(const char *msg, size_t *len);
/*
 * d's records as a JSON array, in position order of d as it stands: each {"file", "line",
 * "col", "severity", "message", "hint"} (file and hint null when unknown / none).
 */
void diags_print_json(const struct diags *d, FILE *fp);

#endif
