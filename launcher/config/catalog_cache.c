/*
 * The cache file: [magic][version][key length][key][payload length][payload][checksum].
 * Only root's private file is read (a cache an account could write would let
 * it choose every service's command), and it is replaced by rename, so a
 * reader sees the old file or the new one, never half of one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/catalog_cache.h"
#include "lib/fdio.h"
#include "lib/pathjoin.h"
#include "lib/readfile.h"

#define CACHE_MAGIC   0x47434354u /* "TCCG" */
#define CACHE_VERSION 4u
/* A catalog of a thousand services encodes to a few MiB; more is not a cache of ours. */
#define CACHE_MAX (64u << 20)

/* FNV-1a over 64-bit words: catches a damaged file, not a forged one (ownership does that). */
static uint64_t checksum(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, sizeof w);
		h = (h ^ w) * 0x100000001b3u;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3u;
	return h;
}

static uint32_t load_u32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

int catcache_parse(const void *p, size_t len, const struct buf *key, struct catalog *out)
{
	const unsigned char *b = p;
	uint64_t sum, plen;
	size_t klen;
	memset(out, 0, sizeof *out);
	if (len < 12 + 8 + 8 || load_u32(b) != CACHE_MAGIC || load_u32(b + 4) != CACHE_VERSION)
		return -1;
	klen = load_u32(b + 8);
	if (klen != key->len || klen > len - 12 - 16 || memcmp(b + 12, key->p, klen) != 0)
		return -1;
	memcpy(&plen, b + 12 + klen, sizeof plen);
	if (plen != len - 12 - klen - 16)
		return -1;
	memcpy(&sum, b + len - 8, sizeof sum);
	if (sum != checksum(b, len - 8))
		return -1;
	return catcodec_decode(b + 12 + klen + 8, (size_t)plen, out);
}

/* Root's own: a regular file of this uid, no access for others, no second name. */
static bool trusted(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() && (st->st_mode & 077) == 0 &&
	       st->st_nlink == 1 && st->st_size <= (off_t)CACHE_MAX;
}

int catcache_read(const char *path, const struct buf *key, struct catalog *out)
{
	struct stat st;
	struct buf b;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	memset(out, 0, sizeof *out);
	if (fd == -1)
		return -1;
	buf_init(&b);
	int rc = -1;
	if (fstat(fd, &st) == 0 && trusted(&st)) {
		ssize_t n =
		    read_full(fd, buf_room(&b, (size_t)st.st_size + 1), (size_t)st.st_size + 1);
		if (n == st.st_size) {
			buf_commit(&b, (size_t)n);
			rc = catcache_parse(b.p, b.len, key, out);
		}
	}
	close(fd);
	buf_free(&b);
	return rc;
}

static void put_file_header(struct buf *b, const struct buf *key)
{
	uint32_t h[3] = {CACHE_MAGIC, CACHE_VERSION, (uint32_t)key->len};
	buf_add(b, h, sizeof h);
	buf_add(b, key->p, key->len);
}

/* The directory holding path: root's, writable by no one else (else a cache there is not ours). */
static int dir_ok(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;
	const char *slash = strrchr(path, '/');
	if (slash == NULL || path_fmt(dir, sizeof dir, "%.*s", (int)(slash - path), path) == -1)
		return -1;
	if (stat(dir[0] ? dir : "/", &st) == -1)
		return -1;
	return S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 022) == 0 ? 0 : -1;
}

static int write_tmp(int fd, const struct buf *b)
{
	return fdio_write_all(fd, b->p, b->len) == 0 && fsync(fd) == 0 ? 0 : -1;
}

/*
 * Temp files a killed writer left beside path ("<name>.XXXXXX"). A concurrent
 * writer's temp may go too: its rename then fails, and it only skips caching.
 */
static void sweep_temps(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	if (slash == NULL || path_fmt(dir, sizeof dir, "%.*s", (int)(slash - path), path) == -1)
		return;
	DIR *dp = opendir(dir[0] ? dir : "/");
	if (dp == NULL)
		return;
	size_t n = strlen(slash + 1);
	struct dirent *de;
	while ((de = readdir(dp)) != NULL)
		if (strncmp(de->d_name, slash + 1, n) == 0 && de->d_name[n] == '.' &&
		    strlen(de->d_name + n + 1) == 6)
			(void)unlinkat(dirfd(dp), de->d_name, 0);
	closedir(dp);
}

int catcache_write(const char *path, const struct buf *key, const struct catalog *c)
{
	char tmp[PATH_MAX];
	struct buf b;
	if (dir_ok(path) == -1 || path_fmt(tmp, sizeof tmp, "%s.XXXXXX", path) == -1)
		return -1;
	int fd = mkostemp(tmp, O_CLOEXEC); /* 0600, a name no one predicts */
	if (fd == -1)
		return -1;
	buf_init(&b);
	put_file_header(&b, key);
	size_t at = b.len;
	uint64_t plen = 0;
	buf_add(&b, &plen, sizeof plen);
	catcodec_encode(&b, c);
	plen = b.len - at - sizeof plen;
	memcpy(b.p + at, &plen, sizeof plen);
	uint64_t sum = checksum((const unsigned char *)b.p, b.len);
	buf_add(&b, &sum, sizeof sum);
	int rc = write_tmp(fd, &b);
	rc = close(fd) == 0 ? rc : -1;
	buf_free(&b);
	if (rc == 0 && rename(tmp, path) == 0) {
		sweep_temps(path);
		return 0;
	}
	int e = errno;
	(void)unlink(tmp);
	errno = e;
	return -1;
}
