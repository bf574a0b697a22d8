/* tree_print: what a change is, and its diff, for --dry-run and --diff (see tree.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "lib/alloc.h"
#include "lib/fdio.h"
#include "lib/readfile.h"
#include "lib/spawn.h"
#include "render/redact.h"
#include "render/tree.h"
#include "render/tree_int.h"

/* ---- output ------------------------------------------------------------------------------- */

static const char *kind_name(enum tnode_kind k)
{
	return k == TN_DIR ? "directory" : k == TN_FILE ? "file" : "symlink";
}

static const char *type_name(mode_t type)
{
	switch (type) {
	case S_IFLNK:
		return "symlink";
	case S_IFIFO:
		return "fifo";
	case S_IFSOCK:
		return "socket";
	case S_IFDIR:
		return "directory";
	case S_IFCHR:
	case S_IFBLK:
		return "device";
	default:
		return "file";
	}
}

static void describe_update(const struct tree *t, const struct tchange *c, FILE *fp)
{
	const struct tnode *n = &t->v[c->node];
	if (c->what & TC_REPLACE) {
		fprintf(fp, "replace %s %s with %s (mode %04o)%s\n", type_name(c->old_type),
		        n->path, kind_name(n->kind), (unsigned)n->mode,
		        c->old_type == S_IFDIR ? " (the directory is moved aside)" : "");
		return;
	}
	fprintf(fp, "update %s %s (", kind_name(n->kind), n->path);
	const char *sep = "";
	if (c->what & TC_CONTENT) {
		if (n->kind == TN_LINK)
			fprintf(fp, "target -> %s", n->data);
		else
			fprintf(fp, "content");
		sep = ", ";
	}
	if (c->what & TC_RELINK) {
		fprintf(fp, "%s%ld hard links: republished", sep, (long)c->old_nlink);
		sep = ", ";
	}
	if (c->what & TC_MODE) {
		fprintf(fp, "%smode %04o -> %04o", sep, (unsigned)c->old_mode, (unsigned)n->mode);
		sep = ", ";
	}
	if (c->what & TC_OWNER)
		fprintf(fp, "%sowner %ld:%ld -> %ld:%ld", sep, (long)c->old_uid, (long)c->old_gid,
		        (long)n->uid, (long)n->gid);
	fprintf(fp, ")\n");
}

void tree_describe(const struct tree *t, const struct tchange *c, FILE *fp)
{
	const struct tnode *n = &t->v[c->node];

	if (c->kind == TC_DELETE) {
		fprintf(fp, "delete %s%s\n", c->stale_temp ? "stale temp file " : "", c->path);
		return;
	}
	if (c->kind == TC_CREATE) {
		if (n->kind == TN_LINK)
			fprintf(fp, "create symlink %s -> %s\n", n->path, n->data);
		else
			fprintf(fp, "create %s %s (mode %04o)\n", kind_name(n->kind), n->path,
			        (unsigned)n->mode);
		return;
	}
	describe_update(t, c, fp);
}

/* An anonymous file holding p, inherited by diff as /dev/fd/N: no path anywhere. -1 on failure. */
static int memfile(const char *p, size_t len)
{
	int fd = memfd_create("gitlab-ctl-diff", 0);
	if (fd == -1)
		return -1;
	if (fdio_write_all(fd, p, len) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Run `diff -u` on the two fds (fixed argv, no shell); its output goes to fp's descriptor. */
static void run_diff(int a, int b, const char *label, FILE *fp)
{
	char la[PATH_MAX + 8], lb[PATH_MAX + 8], fa[32], fb[32];
	snprintf(la, sizeof la, "a%s", label);
	snprintf(lb, sizeof lb, "b%s", label);
	snprintf(fa, sizeof fa, "/dev/fd/%d", a);
	snprintf(fb, sizeof fb, "/dev/fd/%d", b);
	fflush(fp);
	char *argv[] = {"diff", "-u", "--label", la, "--label", lb, fa, fb, NULL};
	const struct spawn sp = {.out = fileno(fp), .err = SPAWN_INHERIT, .search = true};
	(void)spawn_wait("diff", argv, &sp); /* 1 means "differ"; a failure shows no diff */
}

/* Does p hold a known secret value outside the spans (none: anywhere)? */
static bool holds_secret(const struct tree *t, const char *p, size_t len,
                         const struct tpl_span *spans, size_t nspans)
{
	for (size_t i = 0; p != NULL && i < t->nsecrets; i++) {
		size_t sl = strlen(t->secrets[i]);
		for (const char *at = p;
		     (at = memmem(at, len - (size_t)(at - p), t->secrets[i], sl)) != NULL; at++) {
			size_t off = (size_t)(at - p);
			bool inside = false;
			for (size_t k = 0; k < nspans && !inside; k++)
				inside =
				    off >= spans[k].off && off + sl <= spans[k].off + spans[k].len;
			if (!inside)
				return true;
		}
	}
	return false;
}

static void diff_bufs(const char *a, size_t alen, const char *b, size_t blen, const char *label,
                      FILE *fp)
{
	int fa = memfile(a, alen);
	int fb = memfile(b, blen);
	if (fa != -1 && fb != -1)
		run_diff(fa, fb, label, fp);
	if (fa != -1)
		close(fa);
	if (fb != -1)
		close(fb);
}

/* Both sides as redact.h allows: nothing of a secret, old or new, is printed. */
static void print_redacted(const struct tnode *n, const struct tchange *c, FILE *fp)
{
	struct buf a, b;
	buf_init(&a);
	buf_init(&b);
	if (c->old != NULL)
		redact_old(c->old, c->old_len, n->data, n->len, n->spans, n->nspans, &a);
	redact_new(n->data, n->len, n->spans, n->nspans, &b);
	if (c->old != NULL && a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0))
		fprintf(fp, "    (secret changed)\n"); /* only redacted bytes differ */
	else
		diff_bufs(a.p ? a.p : "", a.len, b.p ? b.p : "", b.len, n->path, fp);
	buf_free(&a);
	buf_free(&b);
}

void tree_print_diff(const struct tree *t, const struct tchange *c, FILE *fp)
{
	const struct tnode *n = &t->v[c->node];

	if (c->kind == TC_DELETE || n->kind != TN_FILE ||
	    (c->kind == TC_UPDATE && !(c->what & (TC_CONTENT | TC_REPLACE))))
		return;
	if ((n->flags & TN_SECRET) || holds_secret(t, n->data, n->len, n->spans, n->nspans)) {
		fprintf(fp, "    (%s)\n",
		        c->kind == TC_CREATE || c->old == NULL ? "content hidden: secret"
		                                               : "secret changed");
		return;
	}
	if (memchr(n->data, '\0', n->len) != NULL ||
	    (c->old != NULL && memchr(c->old, '\0', c->old_len) != NULL)) {
		fprintf(fp, "    (binary content)\n");
		return;
	}
	if (c->kind == TC_UPDATE && (c->what & TC_CONTENT) && c->old == NULL &&
	    !(c->what & TC_REPLACE)) {
		fprintf(fp, "    (old content too large to compare)\n");
		return;
	}
	if ((n->flags & TN_MAY_SECRET) || holds_secret(t, c->old, c->old_len, NULL, 0)) {
		print_redacted(n, c, fp);
		return;
	}
	/* Old side: the bytes read through the checked fd (nothing for a replaced entry). */
	diff_bufs(c->old ? c->old : "", c->old ? c->old_len : 0, n->data, n->len, n->path, fp);
}
