/*
 * libFuzzer harness for the parsers of inspect and status: /proc smaps_rollup,
 * maps and environ text (procinfo.c), HTTP status lines (httpprobe.c) and
 * runsv's 20-byte status record (runit.c). Contracts checked: no crash, no
 * leak, results within the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/httpprobe.h"
#include "proc/procinfo.h"
#include "runit/runit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	struct pmem m;
	if (procinfo_parse_mem(text, &m) == 0 && (m.rss_kb < 0 || m.pss_kb < 0 || m.uss_kb < 0))
		abort();
	char path[64];
	if (procinfo_parse_maps(text, "libjemalloc", path, sizeof path) == 1 &&
	    strstr(text, path) == NULL)
		abort();
	struct envv e;
	envv_init(&e);
	procinfo_parse_environ((const char *)data, size, &e);
	for (size_t i = 0; i < e.n; i++)
		if (strchr(e.v[i], '=') == NULL)
			abort();
	envv_free(&e);
	int code = http_status_code(text, size);
	if (code < -1 || code > 999)
		abort();
	if (size >= SV_STATUS_LEN) {
		struct sv_status st;
		char line[256];
		if (sv_status_decode(data, &st) == 0) {
			sv_status_age(&st, 0);
			sv_status_format(line, sizeof line, "svc", &st, size % 2, 1800000000);
		}
	}
	free(text);
	return 0;
}
