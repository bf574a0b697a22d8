/* /proc/PID readers for `inspect` and `upgrade`: whole-file reads, then small parsers. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/procinfo.h"
#include "lib/clock.h"
#include "lib/proctree.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/readfile.h"

#define PROC_MAX (64L * 1024 * 1024) /* maps of a huge process stays far below */

/* Free b and return r, errno kept. */
static int done(struct buf *b, int r)
{
	int e = errno;
	buf_free(b);
	errno = e;
	return r;
}

/* A whole /proc/PID file into b (their sizes are not known in advance); b freed on failure. */
static int slurp(pid_t pid, const char *what, struct buf *b)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, what);
	buf_init(b);
	return readfile(path, b, PROC_MAX) == -1 ? done(b, -1) : 0;
}

/* "Key:   123 kB" -> 123, when line starts with key. */
static int field_kb(const char *line, const char *key, long long *out)
{
	size_t klen = strlen(key);
	if (strncmp(line, key, klen) != 0 || line[klen] != ':')
		return 0;
	char *end;
	errno = 0;
	long long v = strtoll(line + klen + 1, &end, 10);
	if (errno != 0 || end == line + klen + 1 || v < 0)
		return -1;
	*out = v;
	return 1;
}

int procinfo_parse_mem(const char *text, struct pmem *m)
{
	long long rss = -1, pss = -1, pc = -1, pd = -1;
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (field_kb(l, "Rss", &rss) == -1 || field_kb(l, "Pss", &pss) == -1 ||
		    field_kb(l, "Private_Clean", &pc) == -1 ||
		    field_kb(l, "Private_Dirty", &pd) == -1) {
			errno = EINVAL;
			return -1;
		}
	}
	if (rss < 0 || pss < 0 || pc < 0 || pd < 0) {
		errno = EINVAL;
		return -1;
	}
	m->rss_kb = rss;
	m->pss_kb = pss;
	m->uss_kb = pc + pd;
	return 0;
}

int proc_mem(pid_t pid, struct pmem *m)
{
	struct buf t;
	return slurp(pid, "smaps_rollup", &t) == -1 ? -1
	                                            : done(&t, procinfo_parse_mem(buf_str(&t), m));
}

int procinfo_parse_maps(const char *text, const char *prefix, char *out, size_t len)
{
	size_t plen = strlen(prefix);
	for (const char *l = text; l && *l;) {
		const char *eol = strchr(l, '\n');
		size_t n = eol ? (size_t)(eol - l) : strlen(l);
		/* addr perms offset dev inode path: the path is the first '/' after the inode */
		const char *path = memchr(l, '/', n);
		if (path != NULL) {
			size_t plen_all = n - (size_t)(path - l);
			const char *base = path;
			for (const char *p = path; p < path + plen_all; p++)
				if (*p == '/')
					base = p + 1;
			if ((size_t)(path + plen_all - base) >= plen &&
			    strncmp(base, prefix, plen) == 0) {
				if (plen_all >= len) {
					errno = ENAMETOOLONG;
					return -1;
				}
				memcpy(out, path, plen_all);
				out[plen_all] = '\0';
				return 1;
			}
		}
		l = eol ? eol + 1 : NULL;
	}
	return 0;
}

int proc_tree_mem(pid_t pid, struct pmem *m, int *nprocs)
{
	struct pstat *v;
	size_t n;
	*nprocs = 0;
	if (proc_mem(pid, m) == -1 || proc_descendants(pid, NULL, 0, 0, &v, &n) == -1)
		return -1; /* the service itself must be readable */
	*nprocs = 1;
	for (size_t i = 0; i < n; i++) {
		struct pmem one;
		if (proc_mem(v[i].pid, &one) == -1)
			continue; /* a child that exited meanwhile */
		m->rss_kb += one.rss_kb;
		m->pss_kb += one.pss_kb;
		m->uss_kb += one.uss_kb;
		(*nprocs)++;
	}
	free(v);
	return 0;
}

int proc_maps_find(pid_t pid, const char *prefix, char *out, size_t len)
{
	struct buf t;
	return slurp(pid, "maps", &t) == -1
	           ? -1
	           : done(&t, procinfo_parse_maps(buf_str(&t), prefix, out, len));
}

/* The real uid of a "Uid:\treal\teffective..." line. 0, or -1 (EINVAL). */
static int parse_uid(const char *text, uid_t *uid)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, "Uid:", 4) != 0)
			continue;
		char *end;
		errno = 0;
		unsigned long v = strtoul(l + 4, &end, 10);
		if (errno != 0 || end == l + 4)
			break;
		*uid = (uid_t)v;
		return 0;
	}
	errno = EINVAL;
	return -1;
}

int proc_uid(pid_t pid, uid_t *uid)
{
	struct buf t;
	return slurp(pid, "status", &t) == -1 ? -1 : done(&t, parse_uid(buf_str(&t), uid));
}

void procinfo_parse_environ(const char *buf, size_t len, struct envv *e)
{
	for (size_t i = 0; i < len;) {
		const char *s = buf + i;
		size_t n = strnlen(s, len - i);
		const char *eq = memchr(s, '=', n);
		if (eq != NULL && eq != s) {
			/* the last entry need not be NUL-terminated within len */
			char *name = xstrndup(s, (size_t)(eq - s)),
			     *val = xstrndup(eq + 1, n - (size_t)(eq - s) - 1);
			envv_set(e, name, val);
			free(name);
			free(val);
		}
		i += n + 1;
	}
}

int proc_environ(pid_t pid, struct envv *e)
{
	struct buf t;
	if (slurp(pid, "environ", &t) == -1)
		return -1;
	procinfo_parse_environ(buf_str(&t), t.len, e);
	buf_free(&t);
	return 0;
}

/*
 * When pid started, in ns since the epoch: /proc/PID/stat counts clock ticks
 * since boot, and boot_epoch_ns() is exact to the ns (/proc/stat's btime is
 * whole seconds: a file written just before a start could look newer).
 */
static int proc_start_ns(pid_t pid, long long *ns)
{
	struct pstat ps;
	long hz = sysconf(_SC_CLK_TCK);
	long long boot = boot_epoch_ns();
	if (proc_stat(pid, &ps) == -1 || hz <= 0 || boot == -1)
		return -1;
	*ns = boot + (long long)(ps.start * 1000000000ULL / (unsigned long long)hz);
	return 0;
}

static long long ctime_ns(const struct stat *st)
{
	return st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
}

/* Its executable renamed over (dpkg): the mapping says "(deleted)"; else its command's ctime. */
int proc_program_changed(pid_t pid, const char *prog, char *why, size_t len)
{
	char path[64], exe[PATH_MAX];
	snprintf(path, sizeof path, "/proc/%ld/exe", (long)pid);
	ssize_t n = readlink(path, exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		const char *del = " (deleted)";
		size_t dl = strlen(del);
		if ((size_t)n > dl && strcmp(exe + n - dl, del) == 0) {
			snprintf(why, len, "%s", exe);
			return 1;
		}
	}
	long long started;
	if (prog == NULL || prog[0] != '/' || proc_start_ns(pid, &started) == -1)
		return 0;
	/* The clock tick of the start time is 10 ms: allow for it. */
	started += 10000000LL;
	struct stat st;
	if ((lstat(prog, &st) == 0 && ctime_ns(&st) > started) ||
	    (stat(prog, &st) == 0 && ctime_ns(&st) > started)) {
		snprintf(why, len, "%s", prog);
		return 1;
	}
	return 0;
}
