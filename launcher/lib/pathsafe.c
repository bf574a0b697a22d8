/* Path policy: normalisation, containment, StrictModes walk (see pathsafe.h). */
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

static bool trusted_uid(uid_t u)
{
	return u == 0 || u == geteuid();
}

static int refuse(const char *path, char *bad, size_t badlen, const char **why, const char *w)
{
	strlcpy(bad, path, badlen);
	*why = w;
	return -1;
}

int pathsafe_trusted(const char *root, const char *path, char *bad, size_t badlen, const char **why)
{
	char cur[PATH_MAX], loose[PATH_MAX] = "";
	size_t n = strlen(path), rootlen = strlen(root);
	if (path[0] != '/' || n >= sizeof cur)
		return refuse(path, bad, badlen, why, "is not a usable absolute path");
	for (size_t i = 1; i <= n; i++) {
		if (i > 1 && path[i] != '/' && path[i] != '\0')
			continue;
		size_t len = i == 1 ? 1 : i;
		bool last = i == n || (i == 1 && n == 1);
		memcpy(cur, path, len);
		cur[len] = '\0';
		/* Up to the root the operator chose its path; below it nothing is followed. */
		bool follow = len <= rootlen && pathsafe_below(root, cur);
		struct stat st;
		if ((follow ? stat(cur, &st) : lstat(cur, &st)) == -1) {
			if (errno != ENOENT)
				return refuse(cur, bad, badlen, why, "cannot be examined");
			if (loose[0] != '\0')
				return refuse(
				    loose, bad, badlen, why,
				    "is writable by others, and what root would create in "
				    "it does not exist yet");
			return 0; /* root creates the rest */
		}
		if (S_ISLNK(st.st_mode))
			return refuse(cur, bad, badlen, why,
			              "is a symlink below the root (root does not follow it)");
		if (!trusted_uid(st.st_uid))
			return refuse(cur, bad, badlen, why,
			              "is owned by an account other than root");
		loose[0] = '\0';
		if (st.st_mode & (S_IWGRP | S_IWOTH)) {
			if (!S_ISDIR(st.st_mode) || !(st.st_mode & S_ISVTX) || last)
				return refuse(cur, bad, badlen, why,
				              "is writable by group or others");
			strlcpy(loose, cur, sizeof loose); /* sticky: the next one must be ours */
		}
		if (last)
			break;
	}
	return 0;
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
