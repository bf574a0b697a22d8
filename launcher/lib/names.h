/*
 * names: the syntax of the names (and one-line values) gitlab-ctl passes on
 * to other programs.
 * One definition each, so that the catalog, gitlab.rb, env directories and
 * account creation cannot disagree about what a valid name is.
 */
#ifndef GITLAB_CTL_NAMES_H
#define GITLAB_CTL_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* An environment variable name a shell could set: [A-Za-z_][A-Za-z0-9_]*. */
bool name_env_ok(const char *name);

/*
 * A name useradd accepts and no option parser can mistake for a flag:
 * letters, digits, '_', '-', '.', not starting with '-', at most 32 bytes.
 */
bool name_account_ok(const char *name);

/*
 * A value that would break the line it is written on (a newline injecting
 * lines into a config, log or env file): any C0 control character or DEL.
 */
bool text_has_control(const char *s);

/*
 * The temp files gitlab-ctl writes before renaming them into place:
 * ".BASE.gitlab-ctl-tmp.SUFFIX", SUFFIX six letters and digits (files) or a
 * pid (links). The marker keeps a service's own dotfiles beside a file we
 * write (".gitlab-exporter.yml.orig1") from passing for our leftovers.
 */
#define NAME_TEMP_MARK ".gitlab-ctl-tmp"

/* Whether name is such a temp; BASE (at name + 1) is *baselen bytes. */
bool name_temp(const char *name, size_t *baselen);

#endif
