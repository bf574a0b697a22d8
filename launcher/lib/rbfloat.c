/* Ruby's Float#to_s (see rbfloat.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rbfloat.h"

/* Append n bytes of s to buf (truncating like strlcat). */
static void put(char *buf, size_t len, const char *s, size_t n)
{
	size_t used = strlen(buf);
	if (used + 1 >= len)
		return;
	if (n > len - used - 1)
		n = len - used - 1;
	memcpy(buf + used, s, n);
	buf[used + n] = '\0';
}

static void put_zeros(char *buf, size_t len, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put(buf, len, "0", 1);
}

/* The shortest %e digits that read back as x: mant gets them without the point. */
static int shortest(double x, char *mant, size_t *m)
{
	char digits[40];
	int prec;
	for (prec = 1; prec < 17; prec++) {
		snprintf(digits, sizeof digits, "%.*e", prec - 1, x);
		if (strtod(digits, NULL) == x)
			break;
	}
	snprintf(digits, sizeof digits, "%.*e", prec - 1, fabs(x));
	char *e = strchr(digits, 'e'); /* digits: d[.ddd]e[+-]XX */
	int exp = atoi(e + 1);
	*m = 0;
	for (const char *p = digits; p < e; p++)
		if (*p != '.')
			mant[(*m)++] = *p;
	mant[*m] = '\0';
	return exp;
}

void rb_float_to_s(double x, char *buf, size_t len)
{
	char mant[40];
	size_t m;
	if (len == 0)
		return;
	buf[0] = '\0';
	if (isnan(x) || isinf(x)) {
		snprintf(buf, len, "%s", isnan(x) ? "NaN" : x < 0 ? "-Infinity" : "Infinity");
		return;
	}
	int exp = shortest(x, mant, &m);
	if (signbit(x))
		put(buf, len, "-", 1);
	if (exp < -4 || exp >= 15) {
		char e10[16];
		put(buf, len, mant, 1);
		put(buf, len, ".", 1);
		put(buf, len, m > 1 ? mant + 1 : "0", m > 1 ? m - 1 : 1);
		snprintf(e10, sizeof e10, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
		put(buf, len, e10, strlen(e10));
	} else if (exp < 0) {
		put(buf, len, "0.", 2);
		put_zeros(buf, len, (size_t)(-exp - 1));
		put(buf, len, mant, m);
	} else {
		size_t ip = (size_t)exp + 1;
		put(buf, len, mant, ip < m ? ip : m);
		put_zeros(buf, len, ip > m ? ip - m : 0);
		put(buf, len, ".", 1);
		put(buf, len, ip < m ? mant + ip : "0", ip < m ? m - ip : 1);
	}
}
