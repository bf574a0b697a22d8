/*
 * libFuzzer harness for the catalog cache reader (catalog_codec.c,
 * catalog_cache.c). First byte 0: the bytes as an encoded catalog; else: as a
 * whole cache file. Contracts checked: no crash, no leak; a decoded catalog
 * has every field the rest of the program relies on (names, command, argv
 * ends in NULL) and encodes back to exactly the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/catalog_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_argv(char *const *v, size_t n)
{
	if (v != NULL && v[n] != NULL)
		abort();
	for (size_t i = 0; v && i < n; i++)
		if (v[i] == NULL)
			abort();
}

static void check_service(const struct cat_service *s)
{
	if (!s->file || !s->name || !s->config_name || !s->command || s->src.name != s->file)
		abort();
	check_argv(s->command, s->ncommand);
	check_argv(s->after, s->nafter);
	check_argv(s->roles, s->nroles);
	for (size_t i = 0; i < s->nsettings; i++)
		if (s->settings[i].name == NULL)
			abort();
	for (size_t i = 0; i < s->nsetup; i++) {
		if (s->setup[i].name == NULL)
			abort();
		check_argv(s->setup[i].argv, s->setup[i].argc);
	}
	for (size_t i = 0; i < s->ntemplates; i++)
		if (s->templates[i].dest == NULL)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct catalog c;
	if (size == 0)
		return 0;
	if (data[0] != 0) {
		struct buf key;
		buf_init(&key);
		buf_adds(&key, "fuzz");
		if (catcache_parse(data + 1, size - 1, &key, &c) == 0)
			catalog_free(&c);
		buf_free(&key);
		return 0;
	}
	if (catcodec_decode(data + 1, size - 1, &c) == -1) {
		if (c.n != 0 || c.v != NULL)
			abort();
		return 0;
	}
	for (size_t i = 0; i < c.n; i++)
		check_service(&c.v[i]);
	struct buf b;
	buf_init(&b);
	catcodec_encode(&b, &c);
	if (b.len != size - 1 || memcmp(b.p, data + 1, b.len) != 0)
		abort();
	buf_free(&b);
	catalog_free(&c);
	return 0;
}
