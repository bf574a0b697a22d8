/* What gitlab-ctl never shows (see secret.h). */
#include <string.h>

#include "config/secret.h"

bool env_is_secret(const char *name)
{
	static const char *const words[] = {"PASSWORD", "SECRET", "TOKEN", "KEY"};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strcasestr(name, words[i]) != NULL)
			return true;
	return false;
}

struct loc secret_loc(struct loc l, struct src *nosrc)
{
	*nosrc = (struct src){.name = l.src ? l.src->name : NULL};
	l.src = nosrc;
	return l;
}
