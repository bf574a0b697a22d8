/* /proc/PID readers for `inspect`: whole-file reads, then small parsers. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/procinfo.h"

#define PROC_MAX (64L * 1024 * 1024) /* maps of a huge process stays far below */

/* Read a whole /proc file (their sizes are not known in advance). NUL-terminated. */
static char *slurp(pid_t pid, const char *what, size_t *lenp)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, what);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return NULL;
	size_t cap = 16384, len = 0;
	char *buf = malloc(cap);
	while (buf != NULL) {
		if (len + 1 >= cap) {
			char *nb = cap < (size_t)PROC_MAX ? realloc(buf, cap * 2) : NULL;
			if (nb == NULL) {
				free(buf);
				buf = NULL;
				errno = ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			int e = errno;
			free(buf);
			buf = NULL;
			errno = e;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	int e = errno;
	close(fd);
	errno = e;
	if (buf != NULL) {
		buf[len] = '\0';
		if (lenp != NULL)
			*lenp = len;
	}
	return buf;
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
	char *t = slurp(pid, "smaps_rollup", NULL);
	if (t == NULL)
		return -1;
	int r = procinfo_parse_mem(t, m);
	int e = errno;
	free(t);
	errno = e;
	return r;
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

int proc_maps_find(pid_t pid, const char *prefix, char *out, size_t len)
{
	char *t = slurp(pid, "maps", NULL);
	if (t == NULL)
		return -1;
	int r = procinfo_parse_maps(t, prefix, out, len);
	int e = errno;
	free(t);
	errno = e;
	return r;
}

int proc_uid(pid_t pid, uid_t *uid)
{
	char *t = slurp(pid, "status", NULL);
	if (t == NULL)
		return -1;
	int r = -1;
	errno = EINVAL;
	for (const char *l = t; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, "Uid:", 4) != 0)
			continue;
		char *end;
		errno = 0;
		unsigned long v = strtoul(l + 4, &end, 10);
		if (errno == 0 && end != l + 4) {
			*uid = (uid_t)v;
			r = 0;
		} else {
			errno = EINVAL;
		}
		break;
	}
	int e = errno;
	free(t);
	errno = e;
	return r;
}

int procinfo_parse_environ(const char *buf, size_t len, struct envv *e)
{
	for (size_t i = 0; i < len;) {
		const char *s = buf + i;
		size_t n = strnlen(s, len - i);
		char *eq = memchr(s, '=', n);
		if (eq != NULL && eq != s) {
			char name[256];
			size_t nl = (size_t)(eq - s);
			if (nl < sizeof name) {
				memcpy(name, s, nl);
				name[nl] = '\0';
				/* the last entry need not be NUL-terminated within len */
				char *val = strndup(eq + 1, n - nl - 1);
				int r = val ? envv_set(e, name, val) : -1;
				free(val);
				if (r == -1)
					return -1;
			}
		}
		i += n + 1;
	}
	return 0;
}

int proc_environ(pid_t pid, struct envv *e)
{
	size_t len;
	char *t = slurp(pid, "environ", &len);
	if (t == NULL)
		return -1;
	int r = procinfo_parse_environ(t, len, e);
	int err = errno;
	free(t);
	errno = err;
	return r;
}
