/* bcrypt through libxcrypt, dlopened, and the hashes kept across runs (see bcrypt.h). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/bcrypt.h"
#include "lib/fdio.h"
#include "lib/privdir.h"

#define BCRYPT_COST 10
#define HASH_LEN    60 /* "$2b$10$", 22 characters of salt, 31 of checksum */
#define SETTING_LEN 29 /* the part before the checksum */
#define KEEP_MAX    8  /* hashes kept: the run's first, then the older ones */
#define KEEP_FILE   "bcrypt"

typedef char *(*gensalt_fn)(const char *prefix, unsigned long count, const char *rbytes,
                            int nrbytes, char *output, int output_size);
typedef char *(*crypt_fn)(const char *phrase, const char *setting, void *data, int size);

/* The run's hashes: made in it, or read from the record (newest first). */
static struct {
	char vardir[PATH_MAX]; /* "" unless kept across runs */
	bool write, dirty;
	size_t n;
	char h[KEEP_MAX][HASH_LEN + 1];
} keep;

static int load(gensalt_fn *gs, crypt_fn *cr)
{
	static void *h;
	if (h == NULL)
		h = dlopen("libcrypt.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (h == NULL)
		return -1;
	void *g = dlsym(h, "crypt_gensalt_rn"), *c = dlsym(h, "crypt_rn");
	if (g == NULL || c == NULL)
		return -1;
	/* POSIX lets a data pointer hold a function's address (dlsym's own contract). */
	memcpy(gs, &g, sizeof g);
	memcpy(cr, &c, sizeof c);
	return 0;
}

/* A whole "$2b$10$" hash in bcrypt's base64: anything else in the record is not used. */
static bool hash_ok(const char *h, size_t n)
{
	static const char b64[] =
	    "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	if (n != HASH_LEN || strncmp(h, "$2b$10$", 7) != 0)
		return false;
	for (size_t i = 7; i < n; i++)
		if (h[i] == '\0' || strchr(b64, h[i]) == NULL)
			return false;
	return true;
}

static const char *keep_find(const char *setting)
{
	for (size_t i = 0; i < keep.n; i++)
		if (strncmp(keep.h[i], setting, SETTING_LEN) == 0)
			return keep.h[i];
	return NULL;
}

/* In front; the oldest goes when the list is full. */
static void keep_add(const char *h)
{
	size_t n = keep.n < KEEP_MAX ? keep.n : KEEP_MAX - 1;
	memmove(keep.h[1], keep.h[0], n * sizeof keep.h[0]);
	memcpy(keep.h[0], h, HASH_LEN + 1);
	keep.n = n + 1;
}

static int secrets_dir(char *out, size_t len)
{
	int n = snprintf(out, len, "%s/secrets", keep.vardir);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

void bcrypt_keep_open(const char *vardir, bool write)
{
	bcrypt_keep_close();
	char dir[PATH_MAX], text[KEEP_MAX * (HASH_LEN + 1) + 1];
	if (geteuid() != 0 || vardir == NULL || vardir[0] == '\0' ||
	    strlcpy(keep.vardir, vardir, sizeof keep.vardir) >= sizeof keep.vardir ||
	    secrets_dir(dir, sizeof dir) == -1) {
		keep.vardir[0] = '\0';
		return;
	}
	keep.write = write;
	int dfd = privdir_open(keep.vardir, dir, false);
	int fd =
	    dfd == -1 ? -1 : openat(dfd, KEEP_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	ssize_t got = -1;
	if (fd != -1 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
	    (st.st_mode & 07777) == 0600)
		got = fdio_read_all(fd, text, sizeof text - 1);
	if (fd != -1)
		close(fd);
	if (dfd != -1)
		close(dfd);
	text[got > 0 ? got : 0] = '\0';
	size_t n = 0;
	for (char *p = text; *p != '\0' && n < KEEP_MAX;) {
		size_t len = strcspn(p, "\n");
		if (hash_ok(p, len)) {
			memcpy(keep.h[n], p, HASH_LEN);
			keep.h[n++][HASH_LEN] = '\0';
		}
		p += len + (p[len] == '\n');
	}
	keep.n = n;
}

/* The record replaced whole (temp file, fsync, rename): a reader sees old or new. */
static void keep_save(void)
{
	char dir[PATH_MAX], tmp[32], text[KEEP_MAX * (HASH_LEN + 1)];
	if (secrets_dir(dir, sizeof dir) == -1)
		return;
	int dfd = privdir_open(keep.vardir, dir, true);
	if (dfd == -1)
		return;
	size_t len = 0;
	for (size_t i = 0; i < keep.n; i++) {
		memcpy(text + len, keep.h[i], HASH_LEN);
		text[len + HASH_LEN] = '\n';
		len += HASH_LEN + 1;
	}
	snprintf(tmp, sizeof tmp, "." KEEP_FILE ".%ld", (long)getpid());
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool ok = fd != -1 && fdio_write_all(fd, text, len) == 0 && fsync(fd) == 0;
	if (fd != -1 && close(fd) == -1)
		ok = false;
	if (!ok || renameat(dfd, tmp, dfd, KEEP_FILE) == -1 || fsync(dfd) == -1)
		(void)unlinkat(dfd, tmp, 0);
	close(dfd);
}

void bcrypt_keep_close(void)
{
	if (keep.vardir[0] != '\0' && keep.write && keep.dirty)
		keep_save();
	explicit_bzero(&keep, sizeof keep);
}

int bcrypt_hash(const char *pw, char *out, size_t len, const char **why)
{
	static _Alignas(16) char data[32768]; /* >= sizeof(struct crypt_data) in libxcrypt */
	gensalt_fn gensalt;
	crypt_fn crypt;
	char salt[64];
	if (load(&gensalt, &crypt) == -1) {
		*why = "libcrypt.so.1 (libxcrypt) with crypt_gensalt_rn cannot be loaded";
		return -1;
	}
	/* 16 salt bytes from the password's sha256-crypt: stable for one password */
	const char *d = crypt(pw, "$5$rounds=1000$gitlab-ctl-web$", data, sizeof data);
	const char *tail = d != NULL ? strrchr(d, '$') : NULL;
	if (tail == NULL || strlen(tail + 1) < 16) {
		*why = "libcrypt's sha256-crypt failed";
		return -1;
	}
	if (gensalt("$2b$", BCRYPT_COST, tail + 1, 16, salt, sizeof salt) == NULL ||
	    strlen(salt) != SETTING_LEN) {
		*why = "libcrypt has no bcrypt ($2b$)";
		return -1;
	}
	/*
	 * Made or kept already (Prometheus' and Alertmanager's web.yml share the generated
	 * password; a no-op reconfigure finds every one in the record): found by the salt.
	 */
	const char *kept = keep_find(salt);
	if (kept != NULL && len > HASH_LEN) {
		memcpy(out, kept, HASH_LEN + 1);
		explicit_bzero(data, sizeof data);
		return 0;
	}
	const char *h = crypt(pw, salt, data, sizeof data);
	if (h == NULL || h[0] != '$' || strlen(h) >= len) {
		*why = "libcrypt's bcrypt failed";
		return -1;
	}
	memcpy(out, h, strlen(h) + 1);
	if (hash_ok(h, strlen(h))) {
		keep_add(h);
		keep.dirty = true;
	}
	explicit_bzero(data, sizeof data);
	return 0;
}
