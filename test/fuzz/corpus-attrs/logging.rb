logging['svlogd_size'] = 200 * 1024 * 1024
logging['svlogd_num'] = 30
logging['svlogd_timeout'] = 24 * 60 * 60
logging['svlogd_filter'] = "gzip"
logging['svlogd_udp'] = nil
logging['svlogd_prefix'] = 'exp'
gitlab_exporter['log_directory'] = '/var/log/gitlab/gitlab-exporter'
gitlab_exporter['svlogd_num'] = 5
