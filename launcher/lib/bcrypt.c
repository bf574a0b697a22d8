/* bcrypt through libxcrypt, dlopened (see bcrypt.h). */
#include <dlfcn.h>
#include <string.h>

#include "lib/bcrypt.h"

#define BCRYPT_COST 10

typedef char *(*gensalt_fn)(const char *prefix, unsigned long count, const char *rbytes,
                            int nrbytes, char *output, int output_size);
typedef char *(*crypt_fn)(const char *phrase, const char *setting, void *data, int size);

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
	/*
	 * The same password twice in a run (Prometheus' and Alertmanager's web.yml share the
	 * generated one): bcrypt once, keyed by the salt it derives, never by the password.
	 */
	static char memo_salt[64], memo_hash[128];
	char key[64]; /* tail lies in data, which the bcrypt below overwrites */
	strlcpy(key, tail + 1, sizeof key);
	if (memo_salt[0] != '\0' && strcmp(memo_salt, key) == 0 && strlen(memo_hash) < len) {
		memcpy(out, memo_hash, strlen(memo_hash) + 1);
		explicit_bzero(data, sizeof data);
		return 0;
	}
	if (gensalt("$2b$", BCRYPT_COST, tail + 1, 16, salt, sizeof salt) == NULL) {
		*why = "libcrypt has no bcrypt ($2b$)";
		return -1;
	}
	const char *h = crypt(pw, salt, data, sizeof data);
	if (h == NULL || h[0] != '$' || strlen(h) >= len) {
		*why = "libcrypt's bcrypt failed";
		return -1;
	}
	memcpy(out, h, strlen(h) + 1);
	if (strlen(h) < sizeof memo_hash) {
		strlcpy(memo_salt, key, sizeof memo_salt);
		strlcpy(memo_hash, h, sizeof memo_hash);
	}
	explicit_bzero(data, sizeof data);
	return 0;
}
