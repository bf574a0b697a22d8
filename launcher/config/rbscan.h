/*
 * rbscan: the Ruby in gitlab.rb that gitlab-ctl cannot evaluate (a method
 * call, an interpolated string, ENV[...]) is skipped token by token, as Ruby
 * would tokenize it, to find where the value ends; rbconf keeps its text as
 * one opaque value. A statement's value ends before a modifier (`if`,
 * `unless`) or the next part of a block (`then`, `else`, `end`, ...). What
 * gitlab.rb may never hold (def, loops, blocks, an `if` inside a value,
 * control characters) is refused here with its location.
 */
#ifndef GITLAB_CTL_RBSCAN_H
#define GITLAB_CTL_RBSCAN_H

#include "config/rblex.h"

/*
 * Skip Ruby tokens. In a group (closer != 0, opened at `open`), stop after the
 * matching closer. At value level (closer == 0), stop before a ',' or a closer
 * when inside a literal container (ctx != 0), or before the end of the
 * statement (ctx == 0). p->tok_end is the end of the last token.
 */
void rbscan_tokens(struct parser *p, size_t open, int closer, int ctx);

#endif
