/* Processes by parentage and group from /proc (see proctree.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/grow.h"
#include "lib/proctree.h"
#include "lib/readfile.h"

/* Seven digits and a space for each of the at most 2^22 pids: no real list comes near. */
#define CHILDREN_MAX (8 * 4194304)

int proc_stat_parse(const char *text, struct pstat *ps)
{
	/* comm may hold spaces and parentheses: it ends at the last ')'. */
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	long pid, ppid, pgrp, sid;
	if (open == NULL || close == NULL || close < open || sscanf(text, "%ld", &pid) != 1)
		goto bad;
	memset(ps, 0, sizeof *ps);
	size_t n = (size_t)(close - open - 1);
	if (n >= sizeof ps->comm)
		n = sizeof ps->comm - 1;
	memcpy(ps->comm, open + 1, n);
	ps->comm[n] = '\0';
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime
	 * stime cutime cstime priority nice num_threads itrealvalue starttime */
	if (sscanf(close + 1,
	           " %c %ld %ld %ld %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
	           "%*d %llu",
	           &ps->state, &ppid, &pgrp, &sid, &ps->start) != 5)
		goto bad;
	ps->pid = (pid_t)pid;
	ps->ppid = (pid_t)ppid;
	ps->pgrp = (pid_t)pgrp;
	ps->sid = (pid_t)sid;
	return 0;
bad:
	errno = EBADMSG;
	return -1;
}

int proc_stat(pid_t pid, struct pstat *ps)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	ssize_t n = readfile_small_at(AT_FDCWD, path, buf, sizeof buf);
	if (n <= 0) {
		if (n == 0)
			errno = ESRCH;
		return -1;
	}
	return proc_stat_parse(buf, ps);
}

int proc_group_is(pid_t pgrp, unsigned long long leader_start)
{
	struct pstat ps;
	if (proc_stat(pgrp, &ps) == -1)
		return errno == ENOENT || errno == ESRCH;
	return ps.start == leader_start;
}

int proc_children(pid_t pid, pid_t *out, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)pid, (long)pid);
	struct buf b;
	buf_init(&b);
	if (readfile(path, &b, CHILDREN_MAX) == -1) {
		int e = errno;
		buf_free(&b);
		errno = e;
		return -1;
	}
	int n = 0;
	for (char *p = b.p, *end; p != NULL && *p; p = end) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if ((size_t)n < cap)
			out[n] = (pid_t)v;
		n++;
	}
	buf_free(&b);
	return n;
}

struct ptable {
	struct pstat *v;
	size_t n, cap;
	bool *mark;
};

static int ptable_load(struct ptable *t)
{
	DIR *d = opendir("/proc");
	if (d == NULL)
		return -1;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		const char *errstr;
		long long pid = strtonum(de->d_name, 1, INT32_MAX, &errstr);
		struct pstat ps;
		if (errstr != NULL || proc_stat((pid_t)pid, &ps) == -1)
			continue; /* not a process, or gone meanwhile */
		grow(&t->v, &t->cap, t->n + 1, sizeof *t->v, 256);
		t->v[t->n++] = ps;
	}
	closedir(d);
	t->mark = xcalloc(t->n, sizeof *t->mark);
	return 0;
}

static const struct pstat *find(const struct ptable *t, pid_t pid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].pid == pid)
			return &t->v[i];
	return NULL;
}

static bool skipped(pid_t pid, const pid_t *skip, size_t nskip)
{
	for (size_t i = 0; i < nskip; i++)
		if (skip[i] == pid)
			return true;
	return false;
}

/* An adopted orphan: its group's leader is gone, or is itself a child of root. */
static bool orphan(const struct ptable *t, const struct pstat *ps, pid_t root)
{
	const struct pstat *leader = find(t, ps->pgrp);
	return leader == NULL || leader->ppid == root;
}

/* Grow the marked set to a fixed point: children of marked, with groups members of marked groups.
 */
static void close_over(struct ptable *t, bool groups)
{
	pid_t self_pgrp = getpgrp();
	for (bool more = true; more;) {
		more = false;
		for (size_t i = 0; i < t->n; i++) {
			const struct pstat *ps = &t->v[i];
			if (t->mark[i] || ps->pid <= 1 || (groups && ps->pgrp == self_pgrp))
				continue;
			for (size_t j = 0; j < t->n && !t->mark[i]; j++)
				if (t->mark[j] &&
				    (t->v[j].pid == ps->ppid ||
				     (groups && t->v[j].pgrp == ps->pgrp && ps->pgrp > 1)))
					t->mark[i] = more = true;
		}
	}
}

int proc_descendants(pid_t root, const pid_t *skip, size_t nskip, int how, struct pstat **out,
                     size_t *n)
{
	struct ptable t = {0};
	*out = NULL;
	*n = 0;
	if (ptable_load(&t) == -1)
		return -1;
	size_t seeds = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct pstat *ps = &t.v[i];
		if (ps->ppid != root || skipped(ps->pid, skip, nskip))
			continue;
		if ((how & PROC_ORPHANS) && !orphan(&t, ps, root))
			continue;
		t.mark[i] = true;
		seeds++;
	}
	if (seeds > 0)
		close_over(&t, how & PROC_GROUPS);
	for (size_t i = 0; i < t.n; i++) {
		/* Never root, us, or what skip names (runsvdir and its runsv's stay). */
		if (!t.mark[i] || t.v[i].pid == root || t.v[i].pid == getpid() ||
		    skipped(t.v[i].pid, skip, nskip))
			continue;
		t.v[(*n)++] = t.v[i];
	}
	free(t.mark);
	*out = t.v;
	return 0;
}
