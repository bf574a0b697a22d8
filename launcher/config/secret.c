/* What gitlab-ctl never shows (see secret.h). */
#include <string.h>

#include "lib/ascii.h"
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

bool text_names_secret(const char *text, size_t len)
{
	static const char *const words[] = {"PASSWORD", "PASSWD", "SECRET", "TOKEN", "KEY", "AUTH"};
	for (size_t i = 0; i < len; i++) {
		if (strchr("PSTKAapstk", text[i]) == NULL || text[i] == '\0')
			continue; /* no word starts here: a 16 MiB gitlab.rb stays quick */
		for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
			size_t n = strlen(words[w]);
			if (n <= len - i && strncasecmp(text + i, words[w], n) == 0)
				return true;
		}
	}
	return false;
}

/* Does the line end (trailing blanks aside) with `=` or `=>`: its value is on the next line? */
static bool value_follows(const char *p, size_t n)
{
	while (n > 0 && ascii_space(p[n - 1]))
		n--;
	return n > 0 && (p[n - 1] == '=' || (n > 1 && p[n - 2] == '=' && p[n - 1] == '>'));
}

void secret_guess_lines(const char *text, size_t len, unsigned char *hidden, size_t nhidden)
{
	bool next = false;
	size_t line = 1;
	for (size_t off = 0; off <= len && line < nhidden; line++) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
		bool named = text_names_secret(text + off, n);
		if (named || next)
			hidden[line] = 1;
		next = named && value_follows(text + off, n);
		if (nl == NULL)
			break;
		off += n + 1;
	}
}
