user['username'] = 'gitlab'
user['group'] = "gitlab's"
manage_accounts['enable'] = false
gitlab_exporter['home'] = '/var/opt/gitlab/gitlab exporter'
gitlab_exporter['env_directory'] = '/opt/gitlab/etc/gitlab-exporter/env'
gitlab_exporter['command'] = '/usr/bin/gitlab-exporter'
gitlab_exporter['server_name'] = 'webrick'
