/* The syntax of env and account names and one-line values (see names.h). */
#include <string.h>

#include "lib/ascii.h"
#include "lib/names.h"

bool name_env_ok(const char *name)
{
	if (name == NULL || !(ascii_alpha(name[0]) || name[0] == '_'))
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!(ascii_alpha(*p) || ascii_digit(*p) || *p == '_'))
			return false;
	return true;
}

bool name_account_ok(const char *name)
{
	if (name == NULL || *name == '\0' || *name == '-' || strlen(name) > 32)
		return false;
	for (const char *p = name; *p; p++)
		if (!(ascii_alpha(*p) || ascii_digit(*p) || *p == '_' || *p == '-' || *p == '.'))
			return false;
	return true;
}

bool text_has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

bool name_temp(const char *name, size_t *baselen)
{
	static const size_t mark = sizeof NAME_TEMP_MARK - 1;
	const char *dot = strrchr(name, '.');
	if (name[0] != '.' || dot == NULL || (size_t)(dot - name) <= mark + 1 ||
	    strncmp(dot - mark, NAME_TEMP_MARK, mark) != 0)
		return false;
	const char *sfx = dot + 1;
	size_t sl = strlen(sfx), digits = 0, alnum = 0;
	while (ascii_digit(sfx[digits]))
		digits++;
	while (ascii_alpha(sfx[alnum]) || ascii_digit(sfx[alnum]))
		alnum++;
	if (!(sl > 0 && digits == sl) && !(sl == 6 && alnum == 6))
		return false;
	*baselen = (size_t)(dot - mark - name - 1);
	return true;
}
