/*
 * railsmtp: Alertmanager's SMTP settings from GitLab's own, as Omnibus derives them
 * (monitoring/libraries/prometheus.rb), so that alertmanager['admin_email'] mails through
 * gitlab_rails['smtp_*']. With gitlab_rails['smtp_enable'] = true: smtp_smarthost is
 * smtp_address:smtp_port (25 by default), smtp_from is gitlab_email_from, and where
 * smtp_authentication is 'login' or 'plain', smtp_auth_username and smtp_auth_password are
 * smtp_user_name and smtp_password. A field gitlab.rb does not give is left out rather than
 * written "unconfigured" as Omnibus does, so amtool refuses it and check-config names the
 * gitlab_rails key to set. The keys of alertmanager['global'] win over these.
 */
#ifndef GITLAB_CTL_RAILSMTP_H
#define GITLAB_CTL_RAILSMTP_H

#include <stdbool.h>

#include "config/rbconf.h"
#include "lib/yval.h"

/* Whether st is a gitlab_rails key read here (not an ignored Omnibus setting). */
bool railsmtp_reads(const struct rb_stmt *st);

/* The global map (values carry their gitlab.rb lines), or NULL without smtp_enable = true. */
struct yval *railsmtp_global(const struct rb_file *f);

#endif
