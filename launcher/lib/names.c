/*
 * ASCII classes spelled out rather than <ctype.h>: the answer must not depend
 * on the locale the operator happens to run in.
 */
#include <string.h>

#include "lib/names.h"

static bool is_alpha(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

bool name_env_ok(const char *name)
{
	if (name == NULL || !(is_alpha(name[0]) || name[0] == '_'))
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!(is_alpha(*p) || is_digit(*p) || *p == '_'))
			return false;
	return true;
}

bool name_account_ok(const char *name)
{
	if (name == NULL || *name == '\0' || *name == '-' || strlen(name) > 32)
		return false;
	for (const char *p = name; *p; p++)
		if (!(is_alpha(*p) || is_digit(*p) || *p == '_' || *p == '-' || *p == '.'))
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
	while (is_digit(sfx[digits]))
		digits++;
	while (is_alpha(sfx[alnum]) || is_digit(sfx[alnum]))
		alnum++;
	if (!(sl > 0 && digits == sl) && !(sl == 6 && alnum == 6))
		return false;
	*baselen = (size_t)(dot - mark - name - 1);
	return true;
}
