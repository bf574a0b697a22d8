/*
 * Replays fuzz inputs through a harness without libFuzzer, so that ctest
 * checks every seed of the corpora in a normal build: each argument is a
 * file or a directory of files, each file one call of
 * LLVMFuzzerTestOneInput. A harness reports a broken contract by abort(),
 * which fails the test.
 */
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

#define REPLAY_MAX (1u << 20)

static int replay_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	if (fp == NULL) {
		perror(path);
		return -1;
	}
	uint8_t *buf = malloc(REPLAY_MAX);
	size_t n = buf ? fread(buf, 1, REPLAY_MAX, fp) : 0;
	int bad = buf == NULL || ferror(fp);
	fclose(fp);
	if (!bad)
		LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return bad ? -1 : 0;
}

static int replay(const char *path, size_t *count)
{
	struct stat st;
	if (stat(path, &st) == -1) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	struct dirent **names;
	int n = scandir(path, &names, NULL, alphasort);
	if (n == -1) {
		perror(path);
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		char sub[PATH_MAX];
		if (names[i]->d_name[0] != '.' &&
		    (size_t)snprintf(sub, sizeof sub, "%s/%s", path, names[i]->d_name) <
		        sizeof sub &&
		    replay(sub, count) == -1)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	size_t count = 0;
	int rc = 0;
	for (int i = 1; i < argc; i++)
		if (replay(argv[i], &count) == -1)
			rc = 1;
	printf("%zu inputs replayed\n", count);
	return count == 0 ? 1 : rc;
}
