/* bcrypt through libxcrypt, dlopened, and the hashes kept across runs (see bcrypt.h). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/bcrypt.h"
#include "lib/fdio.h"
#include "lib/privdir.h"

#define BCRYPT_COST 10
#define HASH_LEN    60 /* "$2b$10$", 22 characters of salt, 31 of checksum */
#define KEY_LEN     16 /* the record's digest key, in bcrypt's base64 */
#define DIGEST_MAX  64 /* sha256-crypt's checksum: 43 characters */
#define KEEP_MAX    8  /* hashes kept: the run's first, then the older ones */
#define KEEP_FILE   "bcrypt"

typedef char *(*gensalt_fn)(const char *prefix, unsigned long count, const char *rbytes,
                            int nrbytes, char *output, int output_size);
typedef char *(*crypt_fn)(const char *phrase, const char *setting, void *data, int size);

static const char b64[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* The run's hashes, each by its password's keyed digest: made in it, or read from the record. */
static struct {
	char vardir[PATH_MAX]; /* "" unless kept across runs */
	bool write, dirty;
	char key[KEY_LEN + 1]; /* the record's, or this run's own when there is none */
	size_t n;
	struct {
		char digest[DIGEST_MAX];
		char hash[HASH_LEN + 1];
	} v[KEEP_MAX];
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

static bool in_b64(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\0' || strchr(b64, s[i]) == NULL)
			return false;
	return true;
}

/* A whole "$2b$10$" hash: anything else in the record is not used. */
static bool hash_ok(const char *h, size_t n)
{
	return n == HASH_LEN && strncmp(h, "$2b$10$", 7) == 0 && in_b64(h + 7, n - 7);
}

static int random_b64(char *out, size_t n)
{
	unsigned char r[64];
	if (n > sizeof r || getrandom(r, n, 0) != (ssize_t)n)
		return -1;
	for (size_t i = 0; i < n; i++)
		out[i] = b64[r[i] & 63];
	out[n] = '\0';
	explicit_bzero(r, sizeof r);
	return 0;
}

static const char *keep_find(const char *digest)
{
	for (size_t i = 0; i < keep.n; i++)
		if (strcmp(keep.v[i].digest, digest) == 0)
			return keep.v[i].hash;
	return NULL;
}

/* In front; the oldest goes when the list is full. */
static void keep_add(const char *digest, const char *h)
{
	size_t n = keep.n < KEEP_MAX ? keep.n : KEEP_MAX - 1;
	memmove(&keep.v[1], &keep.v[0], n * sizeof keep.v[0]);
	strlcpy(keep.v[0].digest, digest, sizeof keep.v[0].digest);
	memcpy(keep.v[0].hash, h, HASH_LEN + 1);
	keep.n = n + 1;
}

static int secrets_dir(char *out, size_t len)
{
	int n = snprintf(out, len, "%s/secrets", keep.vardir);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* "key KEY", then "DIGEST HASH" lines: 0 when it is that, -1 (nothing taken) otherwise. */
static int keep_parse(char *text)
{
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	if (line == NULL || strncmp(line, "key ", 4) != 0 || strlen(line + 4) != KEY_LEN ||
	    !in_b64(line + 4, KEY_LEN))
		return -1;
	memcpy(keep.key, line + 4, KEY_LEN + 1);
	while ((line = strtok_r(NULL, "\n", &save)) != NULL && keep.n < KEEP_MAX) {
		char *sp = strchr(line, ' ');
		if (sp == NULL || sp - line >= DIGEST_MAX || !in_b64(line, (size_t)(sp - line)) ||
		    sp == line || !hash_ok(sp + 1, strlen(sp + 1)))
			continue;
		*sp = '\0';
		strlcpy(keep.v[keep.n].digest, line, sizeof keep.v[0].digest);
		memcpy(keep.v[keep.n++].hash, sp + 1, HASH_LEN + 1);
	}
	return 0;
}

void bcrypt_keep_open(const char *vardir, bool write)
{
	bcrypt_keep_close();
	char dir[PATH_MAX], text[(DIGEST_MAX + HASH_LEN + 2) * KEEP_MAX + 32];
	if (vardir == NULL || vardir[0] == '\0' ||
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
	if (fd != -1 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    (st.st_mode & 07777) == 0600)
		got = fdio_read_all(fd, text, sizeof text - 1);
	if (fd != -1)
		close(fd);
	if (dfd != -1)
		close(dfd);
	text[got > 0 ? got : 0] = '\0';
	if (keep_parse(text) == -1) {
		keep.n = 0;
		keep.key[0] = '\0';
	}
	explicit_bzero(text, sizeof text);
}

/* The record replaced whole (temp file, fsync, rename): a reader sees old or new. */
static void keep_save(void)
{
	char dir[PATH_MAX], tmp[32], text[(DIGEST_MAX + HASH_LEN + 2) * KEEP_MAX + 32];
	if (secrets_dir(dir, sizeof dir) == -1)
		return;
	int dfd = privdir_open(keep.vardir, dir, true);
	if (dfd == -1)
		return;
	size_t len = (size_t)snprintf(text, sizeof text, "key %s\n", keep.key);
	for (size_t i = 0; i < keep.n; i++)
		len += (size_t)snprintf(text + len, sizeof text - len, "%s %s\n", keep.v[i].digest,
		                        keep.v[i].hash);
	snprintf(tmp, sizeof tmp, "." KEEP_FILE ".%ld", (long)getpid());
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool ok = fd != -1 && fdio_write_all(fd, text, len) == 0 && fsync(fd) == 0;
	if (fd != -1 && close(fd) == -1)
		ok = false;
	if (!ok || renameat(dfd, tmp, dfd, KEEP_FILE) == -1 || fsync(dfd) == -1)
		(void)unlinkat(dfd, tmp, 0);
	close(dfd);
	explicit_bzero(text, sizeof text);
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
	char salt[64], setting[64], digest[DIGEST_MAX], rnd[17];
	if (load(&gensalt, &crypt) == -1) {
		*why = "libcrypt.so.1 (libxcrypt) with crypt_gensalt_rn cannot be loaded";
		return -1;
	}
	if (keep.key[0] == '\0' && random_b64(keep.key, KEY_LEN) == -1) {
		*why = "getrandom failed";
		return -1;
	}
	/* The password's digest keyed by the record's random key: what finds its hash. */
	snprintf(setting, sizeof setting, "$5$rounds=1000$%s$", keep.key);
	const char *d = crypt(pw, setting, data, sizeof data);
	const char *tail = d != NULL ? strrchr(d, '$') : NULL;
	if (tail == NULL || strlen(tail + 1) < 16 ||
	    strlcpy(digest, tail + 1, sizeof digest) >= sizeof digest) {
		explicit_bzero(data, sizeof data);
		*why = "libcrypt's sha256-crypt failed";
		return -1;
	}
	explicit_bzero(data, sizeof data);
	/*
	 * Made or kept already (Prometheus' and Alertmanager's web.yml share the generated
	 * password; a no-op reconfigure finds every one in the record).
	 */
	const char *kept = keep_find(digest);
	if (kept != NULL && len > HASH_LEN) {
		memcpy(out, kept, HASH_LEN + 1);
		explicit_bzero(digest, sizeof digest);
		return 0;
	}
	/* A random salt: the hash in web.yml tells nothing cheaper to test than bcrypt itself. */
	if (random_b64(rnd, 16) == -1 ||
	    gensalt("$2b$", BCRYPT_COST, rnd, 16, salt, sizeof salt) == NULL) {
		*why = "libcrypt has no bcrypt ($2b$)";
		return -1;
	}
	const char *h = crypt(pw, salt, data, sizeof data);
	if (h == NULL || h[0] != '$' || strlen(h) >= len) {
		explicit_bzero(data, sizeof data);
		*why = "libcrypt's bcrypt failed";
		return -1;
	}
	memcpy(out, h, strlen(h) + 1);
	if (hash_ok(h, strlen(h))) {
		keep_add(digest, h);
		keep.dirty = true;
	}
	explicit_bzero(data, sizeof data);
	explicit_bzero(digest, sizeof digest);
	return 0;
}
