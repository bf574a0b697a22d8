gitlab_exporter['probe_sidekiq'] = false
gitlab_exporter['probe_elasticsearch'] = true
gitlab_exporter['elasticsearch_url'] = 'http://localhost:9200'
gitlab_exporter['tls_enabled'] = true
gitlab_exporter['tls_cert_path'] = '/etc/gitlab/ssl/e.crt'
gitlab_exporter['tls_key_path'] = '/etc/gitlab/ssl/e.key'
