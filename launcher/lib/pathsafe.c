/* Path policy: normalisation, containment, gitlab.rb's own checks (see pathsafe.h). */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/pathsafe.h"

int pathsafe_normalize(const char *in, char *out, size_t outlen, const char **why)
{
	if (in[0] != '/') {
		*why = "is not an absolute path";
		return -1;
	}
	size_t o = 0;
	for (const char *p = in; *p != '\0';) {
		while (*p == '/')
			p++;
		size_t len = strcspn(p, "/");
		if (len == 0)
			break;
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			*why = "has a \"..\" component (write the path without it)";
			return -1;
		}
		if (!(len == 1 && p[0] == '.')) {
			if (o + 1 + len + 1 > outlen) {
				*why = "is too long";
				return -1;
			}
			out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p += len;
	}
	if (o == 0) {
		if (outlen < 2) {
			*why = "is too long";
			return -1;
		}
		out[o++] = '/';
	}
	out[o] = '\0';
	return 0;
}

bool pathsafe_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 0 && dir[n - 1] == '/')
		n--;
	if (n == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/*
 * Whoever can write a directory above gitlab.rb can put another file in its
 * place, so each one, as the kernel resolves it (realpath: a symlinked
 * /etc/gitlab is judged by its target), must be root's and writable by nobody
 * else; a sticky directory such as /tmp is fine, since there only the owner
 * may rename or remove root's entries.
 */
static int config_parents(const char *path, char *msg, size_t msglen)
{
	char given[PATH_MAX], dir[PATH_MAX];
	if (strlcpy(given, path, sizeof given) >= sizeof given ||
	    realpath(dirname(given), dir) == NULL)
		return 0; /* the loader reports what is wrong with the path */
	for (;;) {
		struct stat st;
		const char *d = dir[0] != '\0' ? dir : "/";
		if (stat(d, &st) == -1)
			return 0;
		bool others = (st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX);
		if (st.st_uid != 0 || others) {
			snprintf(msg, msglen,
			         "is in %s, which %s can write (owner uid %ld, mode %04o), so they "
			         "could replace it, and it decides what root runs; fix: chown root "
			         "%s && chmod go-w %s",
			         d, st.st_uid != 0 ? "its owner" : "group or others",
			         (long)st.st_uid, (unsigned)(st.st_mode & 07777), d, d);
			return -1;
		}
		char *slash = strrchr(dir, '/');
		if (slash == NULL || d[1] == '\0')
			return 0;
		*slash = '\0';
	}
}

int pathsafe_config_file(const char *path, char *msg, size_t msglen)
{
	struct stat st;
	if (stat(path, &st) == -1)
		return 0; /* missing or unreadable: the loader says so */
	if (!S_ISREG(st.st_mode)) {
		snprintf(msg, msglen, "is not a regular file");
		return -1;
	}
	if (st.st_uid != 0) {
		snprintf(msg, msglen,
		         "is owned by uid %ld, not root, and it decides what root runs; fix: "
		         "chown root %s",
		         (long)st.st_uid, path);
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(msg, msglen,
		         "is writable by group or others (mode %04o), and it decides what root "
		         "runs; fix: chmod 600 %s",
		         (unsigned)(st.st_mode & 07777), path);
		return -1;
	}
	return config_parents(path, msg, msglen);
}

int pathsafe_mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	if (strlcpy(buf, path, sizeof buf) >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* From the second byte of an absolute path; "" fails (ENOENT) without reading past it. */
	for (char *p = buf + (buf[0] == '/');; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		struct stat st;
		if (mkdir(buf, mode) == -1 &&
		    (errno != EEXIST || stat(buf, &st) == -1 || !S_ISDIR(st.st_mode))) {
			if (errno == EEXIST)
				errno = ENOTDIR; /* a file where a directory belongs: name it, not
				                    its child */
			return -1;
		}
		*p = saved;
		if (saved == '\0')
			break;
	}
	return 0;
}
