/*
 * diag: collected errors and warnings with source locations.
 *
 * Modules record problems here instead of printing them, so that one place
 * (the command) decides how and whether to report, and so that validation can
 * report every problem of a file at once rather than stopping at the first.
 * A long stage (engine/) also writes its lines through here, to the streams the
 * command set (live, report), and reports each step's problems as it ends.
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
	bool text;     /* diag_text's: msg printed as it is, len bytes (they may hold NUL) */
	size_t len;
};

struct diags {
	struct diag *v;
	size_t n, cap;
	size_t nerr;
	size_t nnote;
	/*
	 * Set by the command, NULL (diags_init) for none. live: its output, where diag_out and
	 * diag_progress write (a stage's progress, control's result lines). report: where
	 * diags_report prints the records as a stage's step ends; NULL keeps them for the command.
	 */
	FILE *live;
	FILE *report;
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
 * Record text that follows a problem as it is (a step's output, a log's last lines, a -v
 * timing): printed without prefix, a note (not counted as a warning). p[0..n), its own newlines.
 */
void diag_text(struct diags *d, const char *p, size_t n);
/*
 * What an account printed (a step's output, a check's complaint), recorded as diag_text: line
 * by line through safetext, each line after prefix, trailing blank lines dropped, so no byte
 * of it reaches root's terminal as a control sequence.
 */
void diag_text_safe(struct diags *d, const char *prefix, const char *p, size_t n);

/*
 * A line of the command's own output (what the stage did, control's result lines): written to
 * d->live as given, buffered as the command set that stream; not recorded.
 */
void diag_out(struct diags *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* d->live's buffered lines out now: before a wait, and where problems follow on d->report. */
void diags_live_flush(struct diags *d);
/*
 * A line the user must see while the stage still runs (what it waits for): diag_out, then
 * written out at once.
 */
void diag_progress(struct diags *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A stage's step ended: its records so far printed to d->report and forgotten, so a problem
 * shows where it happens in a long run. Kept for the command when it set no d->report.
 */
void diags_report(struct diags *d);
/* from's records appended to to's, from left empty (its streams kept). */
void diags_move(struct diags *to, struct diags *from);

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
 * mean", "install the Debian package", "quote it", "write a literal", "write the value",
 * "add '", "use '", "set ", "run gitlab-ctl", "chmod " or "chown " (at the start or after "; ",
 * ": ", " ("), a closing ")" of the clause left out. *len gets its length; NULL when the message
 * names no fix.
 */
const char *diag_hint(const char *msg, size_t *len);
/*
 * d's records as a JSON array, in position order of d as it stands: each {"file", "line",
 * "col", "severity", "message", "hint"} (file and hint null when unknown / none).
 */
void diags_print_json(const struct diags *d, FILE *fp);

#endif
