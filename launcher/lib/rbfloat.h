/*
 * rbfloat: a double as Ruby's Float#to_s writes it, so that a float in
 * gitlab.rb reaches an env file or a flag exactly as Omnibus' Chef would
 * have written it (1.0e+16, 0.0001, 2.5, -Infinity, NaN).
 */
#ifndef GITLAB_CTL_RBFLOAT_H
#define GITLAB_CTL_RBFLOAT_H

#include <stddef.h>

/*
 * The shortest digits that read back as x, in fixed notation for
 * 1e-4 <= |x| < 1e16 (always with a fraction, "2.0"), else d.ddde+XX.
 * Truncated to len - 1 bytes; 32 bytes hold every double.
 */
void rb_float_to_s(double x, char *buf, size_t len);

#endif
