/*
 * tree: the desired file tree of reconfigure, held in memory, compared with
 * the disk, and written difference by difference.
 *
 * Everything is computed (and every template rendered) before anything is
 * written, so a bad config changes nothing. Files are replaced atomically
 * (temporary file in the same directory, fsync, rename, fsync of the
 * directory), so a crash or a concurrent reader never sees half a run script
 * or half an env value. Symlinks are replaced by renaming a new link over the
 * old one.
 *
 * Some directories (a service's home) belong to a service account, which
 * may swap anything in them at any time. So the writer works from directory
 * fds: from the anchor (--root, followed: the operator's choice) it descends
 * with openat(O_DIRECTORY | O_NOFOLLOW) (a symlinked directory is an error,
 * ELOOP, never followed) and acts with *at() calls relative to those fds.
 * A file is read, chowned or chmodded only through an fd opened O_NOFOLLOW |
 * O_NONBLOCK whose fstat shows a regular file with one link; anything else
 * in place of a managed file (symlink, fifo, socket, a hard link) is
 * replaced by renaming a fresh file over it, and said so. A directory in
 * place of a file is moved aside when its parent belongs to another account
 * (it is that account's data: kept), and an error in a directory of our own
 * (only we could have put it there). Every name the writer makes in such a
 * directory is random and made exclusively (temps: O_EXCL; links and
 * moved-aside directories: retried on EEXIST), so nothing an account plants
 * in advance can stop it. A moved-aside directory goes into root's aside
 * directory (tree_set_aside) when that is on the same file system, else
 * beside the file as .NAME.moved-aside.XXXXXX. Temp files of killed runs
 * (.NAME.gitlab-ctl-tmp.XXXXXX next to a managed file or link) are deleted.
 *
 * Failures are contained per service: a change that fails below a directory
 * the tree gives to a service account (its home: the account, or a volume
 * there, can make anything fail) drops that service's changes (node svc)
 * and nothing else; the rest of the batch is still published
 * (tree_failed() says what failed). Any other failure (root's own
 * directories: sv/, service/, env and log directories) fails the batch.
 *
 * Durability is batched: the changes of one batch (every change but the
 * TR_ENABLE links, which a caller publishes wave by wave) write their temp
 * files as they are applied; applying the batch's last change fsyncs every
 * temp file, renames them all, then fsyncs each touched directory once.
 * A failure or a tree_free before then unlinks the temps: nothing of the
 * batch is published (of a service's dropped changes, nothing of theirs).
 * Files below an account's directory are renamed first, so a service whose
 * rename fails there keeps all its root-owned files as they were. Directory fds are kept (a few,
 * most recently used first), so a run walks each shared directory once. An exclusive directory (the
 * env dir) may hold only its listed files, env files of earlier runs (regular files with env names)
 * and our temp files: anything else makes tree_diff fail before anything is written.
 */
#ifndef GITLAB_CTL_TREE_H
#define GITLAB_CTL_TREE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/buf.h"
#include "render/template.h"

enum tnode_kind { TN_DIR, TN_FILE, TN_LINK };

/* What a change to a node means for the service it belongs to. */
enum tnode_role {
	TR_NONE,       /* directories, the readiness check: nothing to do */
	TR_RUN,        /* run script: restart the service */
	TR_ENV,        /* env dir entry: restart the service */
	TR_CONFIG,     /* config the service reads at start: restart it */
	TR_CONFIG_HUP, /* config the service rereads on HUP: signal it, same pid */
	TR_LOG_CONFIG, /* svlogd config: HUP the log service only */
	TR_LOG_RUN,    /* log/run: restart the log service only */
	TR_ENABLE,     /* service/<svc> symlink: the service gets supervised */
};

#define TN_EXCLUSIVE  0x1u /* dir: entries the tree does not list are deleted (envdir) */
#define TN_IF_MISSING 0x2u /* created when nothing is there, never updated */
#define TN_SECRET     0x4u /* file: never show its content in a diff */
#define TN_MAY_SECRET 0x8u /* file: holds or held a secret: shown redacted (render/redact.h) */

#define TREE_NO_OWNER ((uid_t)-1) /* uid/gid not managed (not running as root) */

struct tnode {
	enum tnode_kind kind;
	char *path;
	char *data; /* file content, or link target */
	size_t len;
	mode_t mode; /* permission bits; ignored for links */
	uid_t uid;
	gid_t gid;
	int svc; /* caller's service index, -1 for none */
	enum tnode_role role;
	unsigned flags;
	struct tpl_span *spans; /* file: the bytes of data that came from a secret */
	size_t nspans;
};

enum tchange_kind { TC_CREATE, TC_UPDATE, TC_DELETE };

#define TC_CONTENT 0x1u
#define TC_MODE    0x2u
#define TC_OWNER   0x4u

#define TC_REPLACE 0x8u  /* a non-regular entry (or a directory) where a file belongs */
#define TC_RELINK  0x10u /* a file with several hard links: republished, never chmodded */

struct tchange {
	enum tchange_kind kind;
	unsigned what;   /* TC_UPDATE: TC_CONTENT | TC_MODE | TC_OWNER | TC_REPLACE | TC_RELINK */
	size_t node;     /* the node; for TC_DELETE its directory (or the file of a temp) */
	char *path;      /* TC_DELETE: the stray entry */
	bool stale_temp; /* TC_DELETE: a temp file of an earlier, killed run */
	mode_t old_mode; /* TC_UPDATE */
	mode_t old_type; /* TC_UPDATE: S_IFMT bits of what was there */
	uid_t old_uid;
	gid_t old_gid;
	nlink_t old_nlink;
	char *old;      /* TC_UPDATE of a regular file: its bytes, read through the checked fd */
	size_t old_len; /* (NULL when too large to compare) */
	char *tmp;      /* tree_apply: its temp entry, written and not yet renamed */
	char *aside;    /* tree_apply: where the directory in the file's place went, or NULL */
	bool published; /* tree_apply: it reached the disk (a dropped or unfinished one did not) */
};

/* Why a service's changes were dropped: the first failure in its account's directory. */
struct tree_fail {
	int err;
	char path[PATH_MAX];
	const char *why; /* "" or " (why)" */
};

#define TREE_DIRFDS   16 /* directory fds kept: a service's dirs and their shared parents */
#define TREE_TEMP_FDS 64 /* temp files kept open for one fsync pass, well below any fd limit */

struct tree_dirfd {
	int fd;      /* -1: free */
	bool listed; /* its offset moved (getdents64): rewind before listing it again */
	unsigned long used;
	char *path;
	size_t len;
};

struct tree {
	struct tnode *v;
	size_t n, cap;
	struct tchange *c; /* filled by tree_diff */
	size_t nc, ccap;
	char anchor[PATH_MAX]; /* "" for "/" */
	char **secrets;        /* values no diff may show */
	size_t nsecrets, secretcap;
	size_t *byname;         /* node indexes sorted by path */
	bool *scanned;          /* tree_diff: by node, a directory whose entries were read */
	size_t batch_end;       /* changes [0, batch_end) but TR_ENABLE ones: one durable batch */
	size_t staged;          /* changes whose temp waits for the batch's end */
	int tfd[TREE_TEMP_FDS]; /* temp files written and not yet fsynced */
	size_t tfc[TREE_TEMP_FDS]; /* the change of each */
	size_t ntfd;
	char **dirty; /* directories whose entries changed: fsynced once at the batch's end */
	size_t ndirty, dirtycap;
	struct tree_dirfd dirs[TREE_DIRFDS];
	size_t ndirs, ntemps;     /* how many of each to keep open: a share of RLIMIT_NOFILE */
	unsigned long clock;      /* for the most recently used directory fd */
	size_t last;              /* the last one found */
	struct buf rbuf;          /* tree_diff: the file being compared */
	struct tree_fail **fails; /* by service index: NULL, or why its changes were dropped */
	size_t nfails;
	char aside[PATH_MAX]; /* root's directory for moved-aside directories, "" for none */
	int aside_fd;         /* -1: not opened yet; -2: unusable (each goes beside its file) */
	uid_t euid;
	char missing[PATH_MAX]; /* tree_diff: a directory found missing, "" for none */
	char errpath[PATH_MAX]; /* the path of the last failure */
	const char *errwhy;     /* "" or " (why)", e.g. " (a symlink: not followed)" */
};

void tree_init(struct tree *t);
void tree_free(struct tree *t);

/* Paths below dir are reached from it without following symlinks (default "/"). 0 or -1. */
int tree_set_anchor(struct tree *t, const char *dir);

/*
 * Moved-aside directories go into dir (made 0700, root's), which should be on the file system
 * of the accounts' homes; one elsewhere (EXDEV) or unusable is not used. 0, or -1 (EINVAL).
 */
int tree_set_aside(struct tree *t, const char *dir);
#define TREE_ASIDE_DIR "moved-aside" /* its name in the install's var/ */

/* A file whose content holds value outside its secret spans gets no diff. */
void tree_add_secret(struct tree *t, const char *value);

/*
 * Where secret values landed in file node `node` (sp: its rendering); a
 * file rendered from a template naming a secret (sp->may) is TN_MAY_SECRET.
 */
void tree_set_spans(struct tree *t, int node, const struct tpl_spans *sp);

/*
 * Add a node (strings are copied). Returns its index (never fails: out of
 * memory dies, lib/alloc.h). The
 * role of an exclusive directory is the role of deleting a stray entry.
 */
int tree_add_dir(struct tree *t, const char *path, mode_t mode, uid_t uid, gid_t gid, int svc,
                 enum tnode_role role, unsigned flags);
int tree_add_file(struct tree *t, const char *path, const char *data, size_t len, mode_t mode,
                  uid_t uid, gid_t gid, int svc, enum tnode_role role, unsigned flags);
int tree_add_link(struct tree *t, const char *path, const char *target, int svc,
                  enum tnode_role role, unsigned flags);

/*
 * Compare every node with the disk and list the differences in t->c, in node
 * order (deletions right after their directory). Returns 0, or -1 with errno
 * and t->errpath (e.g. a directory where a file belongs).
 */
int tree_diff(struct tree *t);

/*
 * Make one change on disk; apply the changes of t->c in order. A file or
 * link of the batch is visible once the batch's last change is applied (see
 * above); c->published says when it is. Returns 0; 1 when the change is
 * dropped with its service's changes (this or an earlier one failed in the
 * account's directory: tree_failed(), the rest goes on); or -1 with errno
 * and t->errpath: the batch's temps are gone and nothing more is published.
 */
int tree_apply(struct tree *t, const struct tchange *c);

/* Why service svc's changes were dropped by tree_apply, or NULL when they were not. */
const struct tree_fail *tree_failed(const struct tree *t, int svc);

/* "create file /x (mode 0600)", "update file /x (content, mode 0644 -> 0600)", ... */
void tree_describe(const struct tree *t, const struct tchange *c, FILE *fp);

/*
 * A unified diff of a text file change (`diff -u` on two unlinked temp files:
 * the old side is the bytes tree_diff read through its checked fd, never the
 * path); binaries summarized. A TN_SECRET file shows no content at all; a
 * TN_MAY_SECRET one (or one whose old side holds a known secret) is diffed
 * redacted (render/redact.h).
 */
void tree_print_diff(const struct tree *t, const struct tchange *c, FILE *fp);

#endif
