/* Listen host to connect host (see connhost.h). */
#include <string.h>

#include "lib/connhost.h"

const char *connect_host(const char *listen)
{
	if (listen == NULL || listen[0] == '\0' || strcmp(listen, "*") == 0 ||
	    strcmp(listen, "0.0.0.0") == 0)
		return "127.0.0.1";
	if (strcmp(listen, "::") == 0 || strcmp(listen, "[::]") == 0)
		return "::1";
	return listen;
}
