/*
 * rbfloat: a double as Ruby's Float#to_s writes it, so that a float in
 * gitlab.rb reaches an env file or a flag exactly as Omnibus' Chef would
 * have written it (1.0e+15, 0.0001, 2.5, -Infinity, NaN).
 */
#ifndef GITLAB_CTL_RBFLOAT_H
#define GITLAB_CTL_RBFLOAT_H

#include <stddef.h>

/*
 * The shortest digits that read back as x, in fixed notation for
 * 1e-4 <= |x| < 1e15 (always with a fraction, "2.0"), else d.ddde+XX, as
 * Ruby 3.1's flo_to_s does (1e15.to_s is "1.0e+15").
 * Truncated to len - 1 bytes; 32 bytes hold every double.
 */
void rb_float_to_s(double x, char *buf, size_t len);

#endif
