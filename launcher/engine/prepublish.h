/*
 * prepublish: what the rendered files and commands must pass before reconfigure publishes
 * anything, the one check that reconfigure and check-config both run, so that check-config's
 * "gitlab.rb OK" means reconfigure's validation passes.
 *
 * - Each rendered file with a catalog `validate` command (promtool check config and rules,
 *   amtool check-config) goes through it (proc/validate.h: the bytes on a sealed memfd, never
 *   a path in the live tree or an account's home; run as the service's account, killed at the
 *   deadline).
 * - Each service with a flags setting (the exporters, Prometheus, Alertmanager): every option
 *   of its command is one the installed binary's own --help lists (kingpin's --no-X of a
 *   boolean included).
 *
 * A refusal is an error at the gitlab.rb line that wrote the refused part (the tool's
 * "line N", or the line of a value it quotes back, mapped through the file's source map; the
 * flag's own entry), else at the lines of the service's settings, with the fix where the
 * tool's message is known. What the tool printed follows, redacted with the file's secret
 * spans (render/toolout.h) and made safe for a terminal.
 */
#ifndef GITLAB_CTL_PREPUBLISH_H
#define GITLAB_CTL_PREPUBLISH_H

#include <stdbool.h>

#include "config/attrs.h"
#include "lib/ctl.h"
#include "lib/diag.h"
#include "render/plan.h"

/*
 * Check ps (plan_services' output). only_changes: reconfigure after tree_diff, only the
 * files whose content ps->t changes and the commands of services whose run script changes;
 * false: every one (check-config). wait_ms: each tool's deadline (0: 30 s). 0, or -1 with
 * the refusals in d.
 */
int prepublish_check(const struct ctl *ctl, const struct attrs *a, const struct plans *ps,
                     bool only_changes, long wait_ms, struct diags *d);

#endif
